"""The slide deck (manim-slides): lecture[-lang-zh].slides.html (with --slides), an offline single-file HTML deck,
one slide per beat, each playing that beat's own cut of its clip.

Packaging: it reads clips and manifests and never changes a clip, and is no source of any clip
(pipeline.packaging).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import shutil
import sys
from fractions import Fraction
from pathlib import Path

from .encoder import muxer_options
from .page import UI, beat_description, clock
from .tracks import (COURSE_VERSION, PackagingError, clip_identity, lecture_chapter, read_manifest, vtt_text,
                     write_text_atomic)

# The deck's own words (its controls), in both languages.
DECK_UI = {"en": {"pause": "Pause", "play": "Play", "previous": "Previous slide", "next": "Next slide",
                  "slide": "Slide {n} of {total}: {title}", "said": "Narration"},
           "zh": {"pause": "暂停", "play": "播放", "previous": "上一张", "next": "下一张",
                  "slide": "第 {n} 张，共 {total} 张：{title}", "said": "旁白"}}
DECK_CODE = (Path(__file__), Path(__file__).with_name("page.py"))   # the deck is made again when these change


def reveal_assets() -> Path:
    """reveal.js, of the version manim-slides' HTML deck is made for, as scripts/setup.sh unpacks it from the npm
    registry into the venv (manim-slides would fetch it from a CDN; a deck made here needs no network)."""
    from manim_slides.convert import RevealJS
    version = RevealJS.model_fields["reveal_version"].default
    return Path(os.environ.get("GPT_LECTURE_REVEALJS") or Path(sys.prefix) / "share" / f"reveal.js-{version}")


def beat_segments(clip: Path, manifest: dict, folder: Path) -> list[Path]:
    """The clip cut at its beats, one file per beat, packets copied: every beat starts a new play, and each play
    is its own encoded movie (ManimCE's partial movie files), so each beat starts on a key frame. A spoken clip's
    beats carry their stretch of its sound (decoded from the clip, encoded again per beat). Cut again only when the
    clip changed."""
    import av
    folder.mkdir(parents=True, exist_ok=True)
    stamp_file = folder / "clip.json"
    identity = {**clip_identity(clip, manifest), "version": COURSE_VERSION}
    files = [folder / f"{i:03d}-{b['section']}.mp4" for i, b in enumerate(manifest["timeline"])]
    try:
        if json.loads(stamp_file.read_text()) == identity and all(f.is_file() for f in files):
            return files
    except (OSError, ValueError):
        pass
    from speech import mux
    sound = mux.clip_samples(clip)
    with av.open(str(clip)) as src:
        stream = src.streams.video[0]
        packets = [p for p in src.demux(stream) if p.dts is not None]
        tb = stream.time_base
        fps = Fraction(stream.average_rate)
        # A beat's first frame, as a timestamp, less half a frame: the manifest's times are rounded to the
        # millisecond, and a frame's timestamp may sit a few ticks before its nominal time (ManimCE's join of the
        # partial movies, and ours of a split clip's parts, leave a frame a few ticks short, and every frame after
        # it early by as much: architecture at 480p15 had its last beat's key frame 5/15360 s early). Counting
        # from half a frame early takes the beat's own first frame and never its neighbour's.
        half = 1 / (2 * fps * tb)
        bounds = [round(round(b["start"] * fps) / fps / tb - half) for b in manifest["timeline"]] + [None]
        for path, a, b in zip(files, bounds, bounds[1:]):
            mine = [p for p in packets if p.pts >= a and (b is None or p.pts < b)]
            if not mine or not min(mine, key=lambda p: p.pts).is_keyframe:
                raise PackagingError(f"{clip.name}: the beat at {float((a + half) * tb):.3f} s starts on no key "
                                     f"frame")
            first = min(p.pts for p in mine)
            tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.mp4")
            try:
                with av.open(str(tmp), "w", options=muxer_options(tmp)) as out:   # moov first
                    ostream = out.add_stream_from_template(stream)
                    audio = None
                    if sound is not None:   # this beat's stretch of the sound, from its first frame to the next's
                        start = round(float(first * tb) * mux.RATE)
                        end = len(sound) if b is None else round(float((b + half) * tb) * mux.RATE)
                        audio = mux.AudioTrack(out, sound[start:end], "mp4")
                    for p in mine:
                        p.pts -= first
                        p.dts -= first
                        p.stream = ostream
                        if audio is not None:
                            audio.mux_until(float(p.dts * tb))
                        out.mux(p)
                    if audio is not None:
                        audio.mux_until(None)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
            os.replace(tmp, path)
    write_text_atomic(stamp_file, json.dumps(identity))
    return files


def build_deck(clips: list[Path], dest: Path, lang: str, work: Path) -> int:
    """An offline, single-file HTML deck (manim-slides' reveal.js converter): one slide per beat of every clip,
    in order, each playing that beat; the speaker notes hold its chapter name ("scene — beat") and its narration
    lines, and the slide itself holds them too, for a screen reader, with its captions (accessible). Returns the
    number of slides. Made again only when a clip or the deck's code changed (or the deck is gone)."""
    identity = {"version": COURSE_VERSION, "lang": lang, "clips": [clip_identity(c, read_manifest(c)) for c in clips],
                "code": hashlib.sha256(b"".join(p.read_bytes() for p in DECK_CODE)).hexdigest()}
    stamp_file = work / f"{dest.name}.json"
    try:   # checked before importing manim-slides (and manim with it): a rerun with nothing to do stays quick
        old = json.loads(stamp_file.read_text())
        if dest.is_file() and old["identity"] == identity:
            return old["slides"]
    except (OSError, ValueError, KeyError):
        pass
    from manim_slides.config import PresentationConfig, SlideConfig
    from manim_slides.convert import RevealJS
    assets = reveal_assets()
    if not (assets / "dist" / "reveal.js").is_file():
        raise PackagingError(f"reveal.js is not at {assets} (scripts/setup.sh unpacks it there)")
    configs, readable = [], []
    for clip in clips:
        manifest = read_manifest(clip)
        files = beat_segments(clip, manifest, work / clip.stem)
        slides = []
        for beat, file in zip(manifest["timeline"], files):
            lines = [c["texts"][lang] for c in manifest.get("captions", []) if c["beat"] == beat["section"]]
            heading = f"### {lecture_chapter(manifest, beat['section'], lang)}"   # the beat's chapter name
            slides.append(SlideConfig(file=file, rev_file=file, notes="\n\n".join([heading, *lines])))
            readable.append(slide_text(manifest, beat, lang))
        configs.append(PresentationConfig(slides=slides, resolution=tuple(manifest["resolution"]),
                                          background_color="black"))
    # The converter inlines reveal.js from its cache (by file name) instead of the CDN: a cache made from the
    # unpacked package, in a folder of our own.
    cache = work / "xdg-cache"
    version = RevealJS.model_fields["reveal_version"].default
    reveal_cache = cache / "manim-slides" / f"revealjs{version}"
    reveal_cache.mkdir(parents=True, exist_ok=True)
    for rel in ("reveal.css", "theme/black.css", "plugin/highlight/zenburn.css", "reveal.js", "plugin/notes.js",
                "plugin/markdown.js"):
        shutil.copyfile(assets / "dist" / rel, reveal_cache / Path(rel).name)
    tmp = dest.with_name(f".{dest.stem}.{os.getpid()}.tmp.html")
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        deck = RevealJS(presentation_configs=configs, one_file=True, offline=True, title=UI[lang]["heading"])
        deck.convert_to(tmp)
        tmp.write_text(accessible(tmp.read_text(encoding="utf-8"), readable, lang), encoding="utf-8")
    except (RuntimeError, PackagingError) as e:   # a reveal.js file missing from the cache (manim-slides would go to
        # the network), or manim-slides' HTML not as accessible() knows it
        tmp.unlink(missing_ok=True)
        raise PackagingError(f"slides: {e}".replace("slides: slides: ", "slides: ")) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        if before is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = before
    os.replace(tmp, dest)
    slides = sum(len(c.slides) for c in configs)
    write_text_atomic(stamp_file, json.dumps({"identity": identity, "slides": slides}))
    return slides


def slide_text(manifest: dict, beat: dict, lang: str) -> dict:
    """What a slide says to one who cannot see it: its chapter name, what it draws (page.beat_description) and its
    narration lines, and its captions (the beat's lines, timed from the beat's start) as a WebVTT data: URL."""
    captions = manifest.get("captions", [])
    last = beat is manifest["timeline"][-1]
    mine = [c for c in captions if beat["start"] <= c["start"] < beat["end"] or (last and c["start"] >= beat["end"])]
    length = beat["end"] - beat["start"]
    cues = [(round(c["start"] - beat["start"], 3), round(min(c["end"], beat["end"]) - beat["start"], 3),
             c["texts"][lang]) for c in mine]
    cues = [(a, b, t) for a, b, t in cues if 0 <= a < b <= length + 1e-3]
    vtt = vtt_text(cues)
    return {"title": lecture_chapter(manifest, beat["section"], lang), "clean": bool(manifest.get("clean")),
            "time": f"{clock(beat['start'])}–{clock(beat['end'])}",
            "description": beat_description(manifest, beat["section"], lang),
            "lines": [c["texts"][lang].replace("\n", " " if lang == "en" else "") for c in mine],
            "captions": "data:text/vtt;charset=utf-8;base64," + base64.b64encode(vtt.encode("utf-8")).decode("ascii")}


SLIDE_TAG = re.compile(r"<section data-background-color=")
# The Play/Pause button sits above the corner where reveal.js shows its own "Unmute video" button (bottom: 20px,
# left: 15px) when the browser refuses to start a slide's sound by itself.
ACCESSIBLE_CSS = """
.deck-text { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
             clip: rect(0 0 0 0); white-space: normal; border: 0; }
.deck-pause { position: fixed; left: 15px; bottom: 4.5rem; z-index: 40; font: 1rem/1.2 system-ui, "Noto Sans CJK SC",
              sans-serif; color: #fff; background: #000; border: 2px solid #bbb; border-radius: .4rem;
              padding: .5rem 1rem; min-height: 2.75rem; cursor: pointer; }
.deck-pause:focus-visible { outline: 3px solid #ffd34d; outline-offset: 2px; }
.reveal video::cue { font-size: max(1rem, 1em); background: rgba(0, 0, 0, .85); color: #fff; }
"""


def accessible(text: str, slides: list[dict], lang: str) -> str:
    """manim-slides' reveal.js deck made readable and usable without sight or a mouse (WCAG 2.1 AA): <html lang>, a
    viewport that lets the reader zoom, each slide a named group holding its text (slide_text: chapter name, what it
    draws, the narration lines), each beat's video with its caption track in the deck's language, shown by
    default; no autoplay when the reader asks for reduced motion, a visible play/pause button (bottom left, above
    reveal.js's own "Unmute video" button) and reveal.js's
    controls named in the deck's language. A PackagingError if the HTML is not the template this knows."""
    ui = DECK_UI[lang]
    e = html.escape
    checks = [("<html>", f'<html lang="{lang}">'),
              ('<meta content="width=device-width, initial-scale=1.0, maximum-scale=1.0, user-scalable=no" '
               'name="viewport"/>', '<meta content="width=device-width, initial-scale=1.0" name="viewport"/>'),
              ("autoPlayMedia: null,",
               "autoPlayMedia: window.matchMedia('(prefers-reduced-motion: reduce)').matches ? false : null,"),
              ("controls: false,", "controls: true,")]
    for old, new in checks:
        if text.count(old) < 1:
            raise PackagingError(f"slides: manim-slides' HTML has no {old!r}: the deck cannot be made accessible")
        text = text.replace(old, new, 1)
    head_end = text.rfind("</head>", 0, max(text.rfind('<div class="reveal">'), 0))
    if head_end < 0:
        raise PackagingError("slides: manim-slides' HTML has no </head> before its slides")
    text = f"{text[:head_end]}<style>{ACCESSIBLE_CSS}</style>{text[head_end:]}"
    found = len(SLIDE_TAG.findall(text))
    if found != len(slides):
        raise PackagingError(f"slides: manim-slides' HTML has {found} slides, not {len(slides)}")
    parts = SLIDE_TAG.split(text)
    out = [parts[0]]
    for n, (slide, rest) in enumerate(zip(slides, parts[1:]), 1):
        name = ui["slide"].format(n=n, total=len(slides), title=slide["title"])
        said = "".join(f"<li>{e(line)}</li>" for line in slide["lines"])
        head, _, body = rest.partition(">")
        out.append(f'<section role="group" aria-roledescription="slide" aria-label="{e(name)}" '
                   f'data-captions="{slide["captions"]}"{"" if slide["clean"] else " data-captioned"} '
                   f'data-background-color={head}>'
                   f'<div class="deck-text"><h2>{e(slide["title"])} <span>{slide["time"]}</span></h2>'
                   f'<p>{e(slide["description"])}</p>'
                   + (f'<ul aria-label="{e(ui["said"])}">{said}</ul>' if said else "") + f"</div>{body}")
    text = "".join(out)
    script = DECK_SCRIPT.replace("__UI__", json.dumps(ui, ensure_ascii=False)).replace("__LANG__", json.dumps(lang))
    button = f'<button type="button" class="deck-pause">{e(ui["play"])}</button>'
    end = text.rfind("</body>")
    if end < 0:
        raise PackagingError("slides: manim-slides' HTML has no </body>")
    return f"{text[:end]}{button}<script>{script}</script>{text[end:]}"


# Each beat's video gets its caption track (in the deck's language, showing; at the top of a captioned clip, clear
# of its own line); the button pauses and plays the
# current slide's video and says which it will do; reveal.js's arrows are named in the deck's language.
DECK_SCRIPT = r"""
(function () {
  "use strict";
  const UI = __UI__, LANG = __LANG__;
  const button = document.querySelector(".deck-pause");
  function video() {
    const slide = Reveal.getCurrentSlide();
    const box = slide && slide.slideBackgroundContentElement;
    return box ? box.querySelector("video") : null;
  }
  function captions() {
    document.querySelectorAll(".reveal .slides > section").forEach(slide => {
      const box = slide.slideBackgroundContentElement, v = box && box.querySelector("video");
      if (!v || v.querySelector("track")) return;
      const t = document.createElement("track");
      t.kind = "captions"; t.srclang = LANG; t.label = LANG; t.default = true; t.src = slide.dataset.captions;
      if ("captioned" in slide.dataset) {   // the clip shows its own line at the bottom: these go to the top
        t.addEventListener("load", () => { for (const cue of t.track.cues) { cue.snapToLines = true; cue.line = 0; } });
      }
      v.appendChild(t);
      t.track.mode = "showing";
    });
  }
  function label() {
    const v = video();
    const playing = v && !v.paused;
    button.textContent = playing ? UI.pause : UI.play;
  }
  button.addEventListener("click", () => {
    const v = video();
    if (!v) return;
    if (v.paused) v.play(); else v.pause();
    label();
  });
  document.addEventListener("play", label, true);
  document.addEventListener("pause", label, true);
  document.addEventListener("ended", label, true);
  function named() {
    const names = {".navigate-left": UI.previous, ".navigate-right": UI.next};
    for (const [sel, name] of Object.entries(names)) {
      document.querySelectorAll(".reveal .controls " + sel).forEach(b => b.setAttribute("aria-label", name));
    }
  }
  const ready = () => { captions(); label(); named(); };
  Reveal.on("ready", ready);
  Reveal.on("slidechanged", () => { setTimeout(() => { captions(); label(); named(); }, 0); });
  new MutationObserver(captions).observe(document.querySelector(".reveal .backgrounds") || document.body,
                                        {childList: true, subtree: true});
})();
"""
