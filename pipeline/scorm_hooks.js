// The course page's SCORM 1.2 hooks (pipeline/scorm.py packages the page; pipeline/page.py puts this script in
// every course page, in a block of its own). Where the page finds an LMS's SCORM 1.2 API (window.API, in this
// window, a window that frames it, or the window that opened it, as the SCORM 1.2 run-time environment says an
// SCO looks for it), it reports to it:
//   LMSInitialize; cmi.core.lesson_status "incomplete", then "completed" once every clip has been watched to
//   the end of its last beat (the beats' times are the manifests'); cmi.core.lesson_location, the clip being
//   watched and its time ("lesson-3@41.2"), read back when the page opens to open that clip there again;
//   cmi.suspend_data, the clips watched so far ("watched=1,3"), so that completion counts over sessions;
//   cmi.core.exit "suspend" right after LMSInitialize (the LMS keeps the location for the next session, completed
//   or not, however the session ends); LMSCommit after each of these changes and when the learner pauses;
//   cmi.core.session_time and LMSFinish when the page is left, and no LMSCommit then: LMSFinish commits, and a
//   browser refuses the synchronous request an LMS's LMSCommit may make while a page is dismissed (scorm-again's
//   LMSFinish sends with sendBeacon). Nothing is called after LMSFinish. Without the API the page works on its
//   own and none of this runs.
document.addEventListener("DOMContentLoaded", () => {
  "use strict";
  const MAX_PARENTS = 500;     // how far up the frames to look, as the run-time environment's search does
  const END_SLACK = 0.25;      // seconds: a clip seen up to this close to its last beat's end has been watched
  const LOCATION_STEP = 5;     // seconds of play between two reports of the location while a clip plays

  function apiIn(win) {
    try {
      const api = win.API;
      return api && typeof api.LMSInitialize === "function" ? api : null;
    } catch (e) {
      return null;             // a window of another origin
    }
  }

  function findApi(win) {
    for (let tries = 0; win && tries <= MAX_PARENTS; tries++) {
      const api = apiIn(win);
      if (api) return api;
      let parent = null;
      try { parent = win.parent; } catch (e) { parent = null; }
      if (!parent || parent === win) return null;
      win = parent;
    }
    return null;
  }

  let api = findApi(window);
  if (!api) {
    try { if (window.opener) api = findApi(window.opener); } catch (e) { api = null; }
  }
  if (!api || String(api.LMSInitialize("")) !== "true") return;

  const started = Date.now();
  let finished = false;        // after LMSFinish the API is not called again
  const sections = [...document.querySelectorAll("section.lesson")];
  const number = section => sections.indexOf(section) + 1;
  const get = key => String(api.LMSGetValue(key) ?? "");
  const set = (key, value) => !finished && String(api.LMSSetValue(key, String(value))) === "true";
  const commit = () => { if (!finished) api.LMSCommit(""); };
  set("cmi.core.exit", "suspend");

  const watched = new Set();
  const saved = /^watched=([\d,]*)$/.exec(get("cmi.suspend_data"));
  if (saved) saved[1].split(",").filter(Boolean).map(Number)
    .filter(n => n >= 1 && n <= sections.length).forEach(n => watched.add(n));
  let status = get("cmi.core.lesson_status");
  const done = () => status === "completed" || status === "passed";

  function report() {
    set("cmi.suspend_data", "watched=" + [...watched].sort((a, b) => a - b).join(","));
    if (!done()) {
      status = watched.size === sections.length ? "completed" : "incomplete";
      set("cmi.core.lesson_status", status);
    }
    commit();
  }
  report();

  let location = get("cmi.core.lesson_location");
  let reported = -Infinity;
  function place(section, video) {
    const here = section.id + "@" + (video.currentTime || 0).toFixed(1);
    if (here !== location) { location = here; set("cmi.core.lesson_location", here); }
  }

  // The end of a clip: its last beat's end, as its manifest says (the page's data), or the video's own length.
  function end(video) {
    const beats = (video.variant && video.variant.beats) || [];
    return beats.length ? beats[beats.length - 1].end : video.duration;
  }

  function seen(section, video, ended) {
    const n = number(section);
    if (watched.has(n)) return;
    if (ended || (isFinite(end(video)) && video.currentTime >= end(video) - END_SLACK)) {
      watched.add(n);
      report();
    }
  }

  for (const section of sections) {
    const video = section.querySelector("video");
    if (!video) continue;
    video.addEventListener("timeupdate", () => {
      seen(section, video, false);
      if (!video.paused && Math.abs(video.currentTime - reported) >= LOCATION_STEP) {
        reported = video.currentTime;
        place(section, video);
      }
    });
    video.addEventListener("play", () => { reported = video.currentTime; place(section, video); commit(); });
    video.addEventListener("seeked", () => { seen(section, video, false); place(section, video); });
    video.addEventListener("pause", () => { place(section, video); commit(); });
    video.addEventListener("ended", () => { seen(section, video, true); place(section, video); commit(); });
  }

  // Where the learner was: that clip, scrolled to and cued at that time (not played: the learner presses play).
  const at = /^(lesson-\d+)@(\d+(?:\.\d+)?)$/.exec(location);
  const back = at && document.getElementById(at[1]);
  if (back && sections.includes(back)) {
    const video = back.querySelector("video");
    const cue = () => { video.currentTime = Math.min(Number(at[2]), video.duration || Infinity); };
    if (video.readyState >= 1) cue(); else video.addEventListener("loadedmetadata", cue, {once: true});
    back.style.scrollMarginTop = "1rem";   // the heading's focus ring shows whole
    back.scrollIntoView({block: "start"});
    back.querySelector("h2").setAttribute("tabindex", "-1");
    back.querySelector("h2").focus({preventScroll: true});
  }

  // SCORM 1.2's CMITimespan, HHHH:MM:SS.SS: counted in whole hundredths first, so that 59.996 s is "00:01:00.00",
  // never "00:00:60.00"; at most 9999:59:59.99.
  function sessionTime(ms) {
    const cs = Math.min(Math.round(Math.max(0, ms) / 10), 9999 * 360000 + 359999);
    const h = Math.floor(cs / 360000), m = Math.floor(cs / 6000) % 60, s = Math.floor(cs / 100) % 60;
    const two = n => String(n).padStart(2, "0");
    return two(h) + ":" + two(m) + ":" + two(s) + "." + two(cs % 100);
  }

  function finish() {
    if (finished) return;
    set("cmi.core.session_time", sessionTime(Date.now() - started));
    finished = true;
    api.LMSFinish("");
  }
  window.addEventListener("pagehide", finish);
  window.addEventListener("beforeunload", finish);
});
