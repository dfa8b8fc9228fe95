"""The slide deck (manim-slides): lecture[-lang-zh].slides.html (with --slides), an offline single-file HTML deck,
one slide per beat, each playing that beat's own cut of its clip.

Packaging: it reads clips and manifests and never changes a clip, and is no source of any clip
(pipeline.packaging).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from fractions import Fraction
from pathlib import Path

from .page import UI
from .tracks import COURSE_VERSION, PackagingError, clip_identity, lecture_chapter, read_manifest, write_text_atomic


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
                with av.open(str(tmp), "w") as out:
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
    lines. Returns the number of slides. Made again only when a clip changed (or the deck is gone)."""
    identity = {"version": COURSE_VERSION, "lang": lang, "clips": [clip_identity(c, read_manifest(c)) for c in clips]}
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
    configs = []
    for clip in clips:
        manifest = read_manifest(clip)
        files = beat_segments(clip, manifest, work / clip.stem)
        slides = []
        for beat, file in zip(manifest["timeline"], files):
            lines = [c["texts"][lang] for c in manifest.get("captions", []) if c["beat"] == beat["section"]]
            heading = f"### {lecture_chapter(manifest, beat['section'], lang)}"   # the beat's chapter name
            slides.append(SlideConfig(file=file, rev_file=file, notes="\n\n".join([heading, *lines])))
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
    except RuntimeError as e:   # a reveal.js file missing from the cache (manim-slides would go to the network)
        tmp.unlink(missing_ok=True)
        raise PackagingError(f"slides: {e}") from None
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
