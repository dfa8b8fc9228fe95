"""The course page as a SCORM 1.2 package (pipeline.scorm, `render.py --scorm`): its imsmanifest.xml read with lxml,
the zip the same bytes on a rerun, the page reporting to an LMS (scorm-again playing the LMS, in headless Chromium:
status, location, resuming), and bad input as one line and exit 2 with nothing left half-written."""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import sys
import threading
import time
import zipfile
from pathlib import Path
from urllib.parse import unquote

import pytest

from conftest import REPO, render_recipe, run_render
from test_course import browser, wait_for  # noqa: F401  (the headless Chromium of the course page's tests)

from pipeline import scorm, tryit

# Two one-beat clips (about 8 s each), the smallest recipe with more than one clip to watch.
RECIPE = """
[lecture]
quality = "preview"
scorm = true

[[scene]]
name = "token_embedding"
section = "title"

[[scene]]
name = "positional_encoding"
section = "title"
"""
CLIPS = ["token_embedding-section-title", "positional_encoding-section-title"]
NS = {"cp": scorm.NS_CP, "adlcp": scorm.NS_ADLCP}
SCORM_AGAIN = Path(sys.prefix) / "share" / "scorm-again-3.4.3" / "dist" / "scorm12.min.js"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    made = render_recipe(tmp_path_factory.mktemp("scorm"), RECIPE, timeout=600)
    return {**made, "zip": made["dir"] / "lecture.scorm.zip"}


def copy_media(made, tmp_path) -> Path:
    media = tmp_path / "media"
    shutil.copytree(made["media"], media, symlinks=True)
    return media


# --- the package ------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_manifest_lists_every_file_of_the_zip_and_nothing_else(made):
    from lxml import etree
    with zipfile.ZipFile(made["zip"]) as z:
        names = z.namelist()
    course = made["dir"] / "course"
    course_files = {str(p.relative_to(course)) for p in course.rglob("*")
                    if p.is_file() and not p.relative_to(course).parts[0].startswith(".")}
    assert f"scorm: written ({len(names)} files, " in made["stdout"]
    assert set(names) == course_files | {"imsmanifest.xml"}   # the course folder (not its stamp) and the manifest
    assert {"posters", "tryit"} <= {n.split("/")[0] for n in names}
    with zipfile.ZipFile(made["zip"]) as z:
        manifest = etree.fromstring(z.read("imsmanifest.xml"))
    assert manifest.tag == f"{{{scorm.NS_CP}}}manifest"
    assert manifest.xpath("cp:metadata/cp:schema/text()", namespaces=NS) == ["ADL SCORM"]
    assert manifest.xpath("cp:metadata/cp:schemaversion/text()", namespaces=NS) == ["1.2"]
    ids = manifest.xpath("//@identifier")
    assert len(ids) == len(set(ids)) == 4   # the manifest, the organization, its item, the SCO
    organizations = manifest.xpath("cp:organizations/cp:organization", namespaces=NS)
    assert len(organizations) == 1
    assert manifest.xpath("cp:organizations/@default", namespaces=NS) == [organizations[0].get("identifier")]
    assert organizations[0].xpath("cp:title/text()", namespaces=NS) == ["How a GPT works"]
    items = organizations[0].xpath(".//cp:item", namespaces=NS)
    scos = manifest.xpath("cp:resources/cp:resource[@adlcp:scormtype='sco']", namespaces=NS)
    assert len(items) == len(scos) == 1 and items[0].get("identifierref") == scos[0].get("identifier")
    assert manifest.xpath("cp:resources/cp:resource", namespaces=NS) == scos
    assert scos[0].get("type") == "webcontent" and scos[0].get("href") == "index.html"
    listed = [unquote(h) for h in scos[0].xpath("cp:file/@href", namespaces=NS)]
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(n for n in names if n != "imsmanifest.xml")   # each listed file is in the zip,
    assert names == sorted(names)                                                # and each file of the zip listed
    expected = {"index.html"} | {f"clips/{c}{s}" for c in CLIPS for s in
                                 (".mp4", ".mp4.json", ".en.vtt", ".zh.vtt", ".en.srt", ".zh.srt", ".chapters.vtt")} \
        | {f"posters/{c}.webp" for c in CLIPS} | {f"tryit/{n}" for n in tryit.SCRIPTS}
    assert set(listed) == expected
    with zipfile.ZipFile(made["zip"]) as z:   # the files are the course folder's, byte for byte
        for name in expected:
            assert z.read(name) == (made["dir"] / "course" / name).read_bytes(), name
        assert {i.date_time for i in z.infolist()} == {scorm.ZIP_TIME}


@pytest.mark.slow
def test_the_package_carries_every_clips_transcript_in_both_languages(made):
    """The page in the zip holds each clip's transcript (its narration lines, in both languages) as text, and the
    caption files its transcript links to are in the zip beside it."""
    import html
    from pipeline import page
    with zipfile.ZipFile(made["zip"]) as z:
        index = z.read("index.html").decode("utf-8")
        names = set(z.namelist())
    for name in CLIPS:
        m = json.loads((made["dir"] / f"{name}.mp4.json").read_text(encoding="utf-8"))
        for lang in ("en", "zh"):
            assert f'data-transcript="{lang}"' in index
            for c in m["captions"]:
                assert html.escape(c["texts"][lang].replace("\n", " " if lang == "en" else "")) in index
            assert html.escape(page.beat_description(m, m["timeline"][0]["section"], lang)) in index
            for x in ("vtt", "srt"):
                assert f'href="clips/{name}.{lang}.{x}"' in index and f"clips/{name}.{lang}.{x}" in names


@pytest.mark.slow
def test_a_rerun_writes_the_same_bytes_and_an_unchanged_package_is_left_alone(made, tmp_path):
    media = copy_media(made, tmp_path)
    dest = media / "preview" / "lecture.scorm.zip"
    before = dest.read_bytes()
    dest.unlink()
    r = run_render("--config", made["recipe"], media=media)
    assert r.returncode == 0, r.stderr
    files = len(zipfile.ZipFile(dest).namelist())
    assert f"scorm: written ({files} files, " in r.stdout
    assert dest.read_bytes() == before
    r = run_render("--config", made["recipe"], "--scorm", media=media)
    assert r.returncode == 0 and f"scorm: up to date ({files} files, " in r.stdout
    assert not [p for p in dest.parent.iterdir() if p.name.endswith(".tmp")]


# --- the page and an LMS ------------------------------------------------------------------------------------------
class QuietFiles(http.server.SimpleHTTPRequestHandler):
    """Static files for the browser, with byte ranges (a browser seeks a video by asking for a range); and the LMS's
    commit URL, /commit: every POST's body kept in the server's `commits`, answered as an LMS does."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/commit":
            self.send_error(404)
            return
        self.server.commits.append(json.loads(body.decode("utf-8")))
        answer = json.dumps({"result": "true", "errorCode": 0}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def send_head(self):
        spec = self.headers.get("Range", "")
        path = Path(self.translate_path(self.path))
        if not spec.startswith("bytes=") or not path.is_file():
            return super().send_head()
        size = path.stat().st_size
        first, _, last = spec[len("bytes="):].partition("-")
        start = int(first) if first else max(0, size - int(last))
        end = min(int(last), size - 1) if first and last else size - 1
        f = path.open("rb")
        f.seek(start)
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        self.range_left = end - start + 1
        return f

    def copyfile(self, source, outputfile):
        left = getattr(self, "range_left", None)
        if left is None:
            return super().copyfile(source, outputfile)
        while left > 0:
            chunk = source.read(min(left, 1 << 16))
            if not chunk:
                break
            outputfile.write(chunk)
            left -= len(chunk)


@pytest.fixture
def lms(made, tmp_path):
    """A web server on this machine with the package unzipped under /package/ and scorm-again beside it; yields a
    function that writes a host page (the LMS's frame: window.API, optionally with the saved data of an earlier
    session) and returns its URL. scorm-again commits to the server as an LMS's run-time does: LMSCommit with a
    synchronous request, LMSFinish's own commit with sendBeacon (host.commits: what it received). Every API call the
    page makes is kept with LMSGetLastError() just after it (window.errors)."""
    assert SCORM_AGAIN.is_file(), "scripts/setup.sh test unpacks scorm-again into the venv"
    root = tmp_path / "site"
    with zipfile.ZipFile(made["zip"]) as z:
        z.extractall(root / "package")
    shutil.copyfile(SCORM_AGAIN, root / "scorm12.min.js")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietFiles, directory=str(root)))
    server.commits = []
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def host(name: str, saved: dict | None) -> str:
        (root / name).write_text(f"""<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><script src="scorm12.min.js"></script>
<script>
window.API = new Scorm12API({{logLevel: 5, lmsCommitUrl: "/commit"}});
const saved = {json.dumps(saved)};
if (saved) window.API.loadFromJSON(saved);
window.calls = [];
for (const name of ["LMSInitialize", "LMSSetValue", "LMSCommit", "LMSFinish"]) {{
  window.API.on(name, (key, value) => window.calls.push([name, key === undefined ? null : key,
                                                         value === undefined ? null : value]));
}}
window.errors = [];   // [call, its first argument, LMSGetLastError() just after it, what it returned]
for (const name of ["LMSInitialize", "LMSGetValue", "LMSSetValue", "LMSCommit", "LMSFinish"]) {{
  const call = window.API[name].bind(window.API);
  window.API[name] = (...args) => {{
    const result = call(...args);
    window.errors.push([name, args.length ? String(args[0]) : null, String(window.API.LMSGetLastError()),
                        String(result)]);
    return result;
  }};
}}
</script></head>
<body><iframe id="sco" src="package/index.html" style="width: 1100px; height: 700px"></iframe></body></html>
""")
        return f"http://127.0.0.1:{server.server_address[1]}/{name}"
    host.commits = server.commits
    yield host
    server.shutdown()
    server.server_close()


def cmi(d, key: str):
    return d.execute_script(f"return window.API.cmi.core.{key}" if "." not in key else f"return window.API.cmi.{key}")


def set_values(d, key: str) -> list:
    return [c[2] for c in d.execute_script("return window.calls") if c[0] == "LMSSetValue" and c[1] == key]


def seek(d, lesson: int, seconds: float | None = None):
    """In the course page's frame: play lesson `lesson`'s clip to `seconds` (its end if None), as a learner
    dragging the slider does (the browser's own seek and its events)."""
    d.switch_to.frame("sco")
    wait_for(d, f"return document.querySelector('#lesson-{lesson} video').readyState >= 1")
    target = "v.duration" if seconds is None else str(seconds)
    d.execute_script(f"const v = document.querySelector('#lesson-{lesson} video'); v.currentTime = {target};")
    wait_for(d, f"const v = document.querySelector('#lesson-{lesson} video');"
                f"return !v.seeking && Math.abs(v.currentTime - {target}) < 0.01")
    d.switch_to.default_content()


def leave(d):
    """The learner leaves the page: the frame goes elsewhere, as an LMS's player does when it closes a SCO."""
    d.execute_script("document.getElementById('sco').src = 'about:blank'")
    wait_for(d, "return window.calls.some(c => c[0] === 'LMSFinish')")


def assert_every_call_succeeded(d, lms, commits_before: int) -> list:
    """LMSGetLastError() was "0" after every call the page made, each returned "true" (or a value), LMSFinish was the
    last, and the session's end made no LMSCommit: LMSFinish's own commit reached the LMS with the session's time
    and exit. Returns the calls."""
    calls = d.execute_script("return window.errors")
    assert calls and calls[0][0] == "LMSInitialize" and calls[-1][0] == "LMSFinish", calls
    failed = [c for c in calls if c[2] != "0" or (c[0] != "LMSGetValue" and c[3] != "true")]
    assert failed == [], failed
    assert calls[1][:2] == ["LMSSetValue", "cmi.core.exit"], calls[:3]     # exit "suspend" right after LMSInitialize
    assert [c[0] for c in calls[-2:]] == ["LMSSetValue", "LMSFinish"] and calls[-2][1] == "cmi.core.session_time"
    assert calls.count(calls[-1]) == 1                                     # one LMSFinish, nothing after it
    for _ in range(100):              # LMSFinish's commit (a beacon) reaches the server a moment later
        if len(lms.commits) > commits_before:
            break
        time.sleep(0.05)
    last = lms.commits[-1]
    assert len(lms.commits) > commits_before and last["cmi"]["core"]["exit"] == "suspend", lms.commits[-1:]
    assert re.fullmatch(r"\d{2,4}:[0-5]\d:[0-5]\d(\.\d{1,2})?", last["cmi"]["core"]["session_time"]), last
    return calls


@pytest.mark.slow
def test_the_page_reports_to_the_lms_and_resumes_where_the_learner_was(made, lms, browser):
    d = browser
    manifests = [json.loads((made["dir"] / f"{c}.mp4.json").read_text()) for c in CLIPS]
    d.set_window_size(1280, 900)
    # First session: the first clip watched to its end, the second one left part way.
    d.get(lms("host1.html", None))
    wait_for(d, "return window.calls.some(c => c[0] === 'LMSSetValue' && c[1] === 'cmi.core.lesson_status')")
    assert d.execute_script("return window.calls[0]")[0] == "LMSInitialize"
    assert d.execute_script("return window.calls[1]") == ["LMSSetValue", "cmi.core.exit", "suspend"]
    assert cmi(d, "lesson_status") == "incomplete"
    seek(d, 1)
    wait_for(d, "return window.API.cmi.suspend_data === 'watched=1'")
    assert cmi(d, "lesson_status") == "incomplete"
    assert cmi(d, "lesson_location") == f"lesson-1@{manifests[0]['timeline'][-1]['end']:.1f}"
    seek(d, 2, 3.4)
    wait_for(d, "return window.API.cmi.core.lesson_location === 'lesson-2@3.4'")
    assert cmi(d, "lesson_status") == "incomplete"   # the second clip is not watched to its last beat
    commits = len(lms.commits)
    leave(d)
    names = [c[0] for c in d.execute_script("return window.calls")]
    assert "LMSCommit" in names and names[-1] == "LMSFinish"
    assert set_values(d, "cmi.core.exit") == ["suspend"]
    assert len(set_values(d, "cmi.core.session_time")) == 1
    assert_every_call_succeeded(d, lms, commits)
    saved = d.execute_script("return JSON.parse(JSON.stringify(window.API.cmi))")
    assert saved["core"]["lesson_location"] == "lesson-2@3.4" and saved["suspend_data"] == "watched=1"
    saved["core"]["entry"] = "resume"   # as an LMS launches a suspended SCO again

    # Second session, with what the LMS kept: the page opens the second clip where the learner was.
    d.get(lms("host2.html", saved))
    wait_for(d, "return window.calls.some(c => c[0] === 'LMSInitialize')")
    d.switch_to.frame("sco")
    wait_for(d, "return Math.abs(document.querySelector('#lesson-2 video').currentTime - 3.4) < 0.01")
    assert d.execute_script("return document.querySelector('#lesson-1 video').currentTime") == 0
    # scrolled to the clip the learner was watching: it is at the top, or the page as far down as it goes
    top, scrolled, bottom = d.execute_script(
        "const e = document.documentElement; return [document.getElementById('lesson-2').getBoundingClientRect().top,"
        " window.scrollY, e.scrollHeight - e.clientHeight]")
    assert scrolled > 0 and (0 < top < 40 or abs(scrolled - bottom) < 1)
    assert d.execute_script("return document.activeElement.id") == "lesson-2-h"
    d.switch_to.default_content()
    assert cmi(d, "lesson_status") == "incomplete"
    seek(d, 2)   # the second clip to its last beat: every clip watched, over two sessions
    wait_for(d, "return window.API.cmi.core.lesson_status === 'completed'")
    assert set_values(d, "cmi.core.lesson_status") == ["incomplete", "completed"]
    assert cmi(d, "suspend_data") == "watched=1,2"
    assert cmi(d, "lesson_location") == f"lesson-2@{manifests[1]['timeline'][-1]['end']:.1f}"
    commits = len(lms.commits)
    leave(d)
    assert cmi(d, "lesson_status") == "completed"
    assert_every_call_succeeded(d, lms, commits)
    assert lms.commits[-1]["cmi"]["core"]["lesson_status"] == "completed"
    assert [e for e in d.get_log("browser") if e["level"] == "SEVERE"] == []


@pytest.mark.slow
def test_watching_everything_in_one_session_completes_with_no_error(made, lms, browser):
    """Both clips watched to their end, then the page left: every call's error code 0, completion and the session's
    end committed by LMSFinish."""
    d = browser
    d.get(lms("host-all.html", None))
    wait_for(d, "return window.calls.some(c => c[0] === 'LMSSetValue' && c[1] === 'cmi.core.lesson_status')")
    seek(d, 1)
    seek(d, 2)
    wait_for(d, "return window.API.cmi.core.lesson_status === 'completed'")
    statuses = set_values(d, "cmi.core.lesson_status")   # "incomplete" at the start and when the first clip is seen
    assert statuses[-1] == "completed" and set(statuses[:-1]) == {"incomplete"}
    commits = len(lms.commits)
    leave(d)
    calls = assert_every_call_succeeded(d, lms, commits)
    assert [c[0] for c in calls].count("LMSCommit") >= 2             # the changes before the end were committed
    assert lms.commits[-1]["cmi"]["core"]["lesson_status"] == "completed"
    assert lms.commits[-1]["cmi"]["suspend_data"] == "watched=1,2"
    assert [e for e in d.get_log("browser") if e["level"] == "SEVERE"] == []


@pytest.mark.slow
def test_session_time_is_a_scorm_timespan_at_every_length(browser):
    """cmi.core.session_time (the hooks' sessionTime, run in Chromium): HHHH:MM:SS.SS counted in hundredths, so a
    time a few milliseconds under a minute or an hour carries over, never ':60.00'."""
    source = (REPO / "pipeline" / "scorm_hooks.js").read_text(encoding="utf-8")
    body = re.search(r"\n  function sessionTime\(ms\) \{\n.*?\n  \}\n", source, flags=re.S).group(0)
    cases = {0: "00:00:00.00", 4: "00:00:00.00", 5: "00:00:00.01", 59994: "00:00:59.99", 59995: "00:01:00.00",
             59996: "00:01:00.00", 3599996: "01:00:00.00", 3599994: "00:59:59.99", 36000000 * 100: "1000:00:00.00",
             10000 * 3600000: "9999:59:59.99", -5: "00:00:00.00"}
    got = browser.execute_script(body + "return arguments[0].map(sessionTime);", list(cases))
    assert dict(zip(cases, got)) == cases
    assert all(re.fullmatch(r"\d{2,4}:[0-5]\d:[0-5]\d\.\d\d", t) for t in got)


@pytest.mark.slow
def test_every_mp4_is_ready_for_the_web(made):
    """Issue 44: the clips, the joined lecture, the course page's copies and the SCORM package's: each mp4's index
    (moov) before its media data (mdat), read from its top-level boxes."""
    from helpers import assert_moov_before_mdat
    found = sorted(made["dir"].rglob("*.mp4"))
    names = {p.relative_to(made["dir"]).as_posix() for p in found}
    assert {f"{c}.mp4" for c in CLIPS} | {f"course/clips/{c}.mp4" for c in CLIPS} | {"lecture.mp4"} <= names, names
    for path in found:
        assert_moov_before_mdat(path.read_bytes(), path.name)
    with zipfile.ZipFile(made["zip"]) as z:
        packed = [n for n in z.namelist() if n.endswith(".mp4")]
        assert len(packed) == len(CLIPS)
        for name in packed:
            assert_moov_before_mdat(z.read(name), name)


@pytest.mark.slow
def test_without_an_lms_the_packaged_page_plays_on_its_own(made, browser, tmp_path):
    with zipfile.ZipFile(made["zip"]) as z:
        z.extractall(tmp_path / "package")
    browser.get((tmp_path / "package" / "index.html").as_uri())
    wait_for(browser, "return [...document.querySelectorAll('video')].every(v => v.readyState >= 1)")
    browser.execute_script("const v = document.querySelector('video'); v.currentTime = v.duration;")
    wait_for(browser, "return !document.querySelector('video').seeking")
    assert browser.execute_script("return typeof window.API") == "undefined"
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


# --- bad input: one line, exit 2, no zip half-written --------------------------------------------------------------
def no_partial(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.slow
def test_a_clip_missing_from_the_course_folder_is_one_line(made, tmp_path):
    media = copy_media(made, tmp_path)
    out = media / "preview"
    (out / "lecture.scorm.zip").unlink()
    (out / "course" / "clips" / f"{CLIPS[1]}.mp4").unlink()   # the page is current by its stamp; its clip is gone
    r = run_render("--config", made["recipe"], media=media)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"render.py: packaging failed: course/clips/{CLIPS[1]}.mp4: missing "
                                             f"from the course folder (render the recipe again)"]
    assert not (out / "lecture.scorm.zip").exists() and no_partial(out)


@pytest.mark.slow
def test_a_clip_missing_from_the_media_folder_is_an_input_error(made, tmp_path):
    media = copy_media(made, tmp_path)
    out = media / "preview"
    gone = out / f"{CLIPS[0]}.mp4"
    gone.unlink()
    with pytest.raises(scorm.ScormInputError, match=rf"^{CLIPS[0]}\.mp4: the clip is missing from {out}"):
        scorm.package(out / "course", [{"en": gone}], out / "x.scorm.zip", "en", "t", "t", "id")
    assert not (out / "x.scorm.zip").exists() and no_partial(out)


def test_a_file_the_page_names_that_is_not_in_its_folder_is_an_input_error(tmp_path):
    """A poster, say, that the page shows and the course folder lacks; text that only looks like a path is no file."""
    course = tmp_path / "course"
    (course / "clips").mkdir(parents=True)
    (course / "index.html").write_text('<p>"model/weights/config.json"</p><video poster="clips/a.poster.png">')
    with pytest.raises(scorm.ScormInputError, match=r"^course/clips/a\.poster\.png: missing, though the course page "
                                                    r"shows it"):
        scorm.package(course, [], tmp_path / "x.scorm.zip", "en", "t", "t", "id")
    (course / "clips" / "a.poster.png").write_bytes(b"png")
    assert scorm.package(course, [], tmp_path / "x.scorm.zip", "en", "t", "t", "id")[:2] == ("written", 3)


@pytest.mark.slow
def test_a_stale_manifest_is_one_line_and_the_old_package_stays(made, tmp_path):
    """The first clip's file replaced by the second's: its manifest (beats to 8.067 s) no longer describes it."""
    media = copy_media(made, tmp_path)
    out = media / "preview"
    old = (out / "lecture.scorm.zip").read_bytes()
    (out / f"{CLIPS[0]}.mp4").unlink()
    shutil.copyfile(out / f"{CLIPS[1]}.mp4", out / f"{CLIPS[0]}.mp4")
    said = json.loads((out / f"{CLIPS[0]}.mp4.json").read_text())["timeline"][-1]["end"]
    lasts = scorm.clip_seconds(out / f"{CLIPS[1]}.mp4")
    r = run_render("--config", made["recipe"], media=media)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"render.py: packaging failed: {CLIPS[0]}.mp4.json: stale manifest: "
                                             f"its beats end at {said:.3f} s, the clip lasts {lasts:.3f} s (render "
                                             f"the recipe again, with --force)"]
    assert (out / "lecture.scorm.zip").read_bytes() == old and no_partial(out)


@pytest.mark.slow
def test_an_unwritable_package_is_one_line(made, tmp_path):
    media = copy_media(made, tmp_path)
    out = media / "preview"
    (out / "lecture.scorm.zip").unlink()
    (out / "lecture.scorm.zip").mkdir()
    r = run_render("--config", made["recipe"], media=media)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"render.py: packaging failed: lecture.scorm.zip: cannot write it: a "
                                             f"folder has that name ({out / 'lecture.scorm.zip'})"]
    assert no_partial(out)


def test_a_write_that_fails_half_way_leaves_the_old_zip_and_no_temporary_file(tmp_path):
    dest = tmp_path / "lecture.scorm.zip"
    dest.write_bytes(b"the package of an earlier run")
    (tmp_path / "a.txt").write_text("a")
    vanished = tmp_path / "b.mp4"   # listed, then gone before it is read
    with pytest.raises(scorm.ScormInputError, match=r"^lecture\.scorm\.zip: cannot write it \(No such file"):
        scorm.write_zip(dest, [("a.txt", tmp_path / "a.txt"), ("b.mp4", vanished)], b"")
    assert dest.read_bytes() == b"the package of an earlier run"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "lecture.scorm.zip"]


@pytest.mark.slow
@pytest.mark.parametrize("args, message", [
    (["token_embedding", "--scorm"], "--scorm packages the course page of a whole recipe: give --config "
                                     "lecture.toml and no scene names"),
    (["--format", "gif"], "--scorm needs --format mp4 or webm (got gif)"),
])
def test_scorm_settings_that_cannot_work_are_one_line(made, tmp_path, args, message):
    r = run_render(*(["--config", made["recipe"]] if args[0].startswith("--") else []), *args, "--dry-run",
                   media=tmp_path / "m")
    assert r.returncode == 2 and r.stderr.strip() == f"render.py: error: {message}"


def test_a_bad_scorm_setting_in_the_recipe_is_one_line(tmp_path):
    recipe_file = tmp_path / "r.toml"
    recipe_file.write_text('[lecture]\nscorm = "yes"\n[[scene]]\nname = "token_embedding"\n')
    r = run_render("--config", recipe_file, "--dry-run", media=tmp_path / "m")
    assert r.returncode == 2
    assert r.stderr.strip() == f"render.py: error: {recipe_file}: lecture.scorm must be true or false"


@pytest.mark.slow
def test_the_hooks_are_in_the_course_page_and_part_of_its_code(made):
    from pipeline import page
    assert scorm.CODE[1] in page.PAGE_CODE   # an edit to the hooks makes the page again
    assert scorm.CODE[1].read_text(encoding="utf-8") in (made["dir"] / "course" / "index.html").read_text()
