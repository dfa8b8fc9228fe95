"""Caption and chapter tracks beside each movie clip, and what the other packaging modules share: reading a
clip's manifest, its duration and identity, its beat and chapter titles, writing a file by rename.

Beside each clip media/<quality>/<name>.mp4:
    <name>.en.vtt  <name>.en.srt  <name>.zh.vtt  <name>.zh.srt   captions: the narration lines, as shown
    <name>.chapters.vtt                                          chapters: one cue per beat, named by its title in
                                                                 the clip's language (WebVTT kind=chapters)

Packaging (this module, lecture_join, page, deck; pipeline.packaging runs them) reads clips and manifests and never
changes a clip, so it is no source of any clip: no module that a render imports may import it (see
pipeline.packaging). It never renders.
"""

from __future__ import annotations

import datetime
import html
import json
from pathlib import Path

import srt
import webvtt
from webvtt.models import Caption

LANGS = ("en", "zh")
COURSE_VERSION = "4"   # bump when what this module writes changes, so that the lecture is rebuilt
DURATION_SLACK = 1e-3  # seconds: cues are rounded to the millisecond


class PackagingError(Exception):
    """A clip or manifest that cannot be packaged: one line, exit 1."""


def write_text_atomic(path: Path, text: str) -> bool:
    """Write by rename, and only when the content changes (a rerun leaves every file as it was): changed?
    (speech.audio.write_text_atomic: the temporary file is removed if the write fails)."""
    from speech.audio import write_text_atomic as write
    return write(path, text, only_if_changed=True)


def read_manifest(clip: Path) -> dict:
    manifest = clip.with_name(clip.name + ".json")
    try:
        return json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise PackagingError(f"{manifest.name}: cannot read the manifest ({e})") from None


def clip_duration(manifest: dict) -> float:
    return manifest["timeline"][-1]["end"] if manifest.get("timeline") else 0.0


def clip_identity(clip: Path, manifest: dict) -> dict:
    st = clip.stat()
    return {"output": clip.name, "cache_key": manifest.get("cache_key"), "size": st.st_size,
            "mtime_ns": st.st_mtime_ns}


# The fastest a cue may ask to be read, in characters a second (line breaks aside): subtitling guidelines' adult
# ceilings (Netflix: 20 for English, 9-10 for Chinese). The scenes hold a line at 17 and 9 (scenes/lecture.py).
MAX_READING_RATE = {"en": 20.0, "zh": 10.0}


def reading_seconds(text: str, lang: str) -> float:
    """The least time a cue of `text` must stay up: its characters at MAX_READING_RATE."""
    return len(text.replace("\n", "")) / MAX_READING_RATE[lang]


def caption_cues(manifest: dict, lang: str) -> list[tuple[float, float, str]]:
    """The narration lines of a clip in `lang`, timed as the clip shows them: each from the manifest's start (when
    the line is fully shown) to its end (the span of its speech, or its hold in a silent clip), held on, if that is
    faster than MAX_READING_RATE in `lang`, until it can be read or the next line comes (or the clip ends).

    The manifest's span is the clip's own language's: a voice that speaks faster than a subtitle is read, or the
    other language's longer line on the same times, made cues too fast to read (softmax_temperature's English track
    had one at 22 characters a second) though the line stays on screen after its speech, until the next one."""
    lines = []
    for c in manifest.get("captions", []):
        text = (c.get("texts") or {}).get(lang)
        if text is None:
            raise PackagingError(f"{manifest.get('output')}: caption {c.get('key')!r} has no {lang} text")
        lines.append((c["start"], c["end"], text))
    duration = clip_duration(manifest)
    cues = []
    for i, (start, end, text) in enumerate(lines):
        room = lines[i + 1][0] if i + 1 < len(lines) else max(duration, end)
        need = round(start + reading_seconds(text, lang), 3)
        cues.append((start, max(end, min(need, room)), text))
    return cues


def clip_lang(manifest: dict) -> str:
    """The language a clip (or the full lecture) shows."""
    return manifest.get("lang") or (manifest.get("params") or {}).get("lang") or "en"


def beat_title(manifest: dict, section: str, lang: str) -> str:
    """A beat's chapter name in `lang`: the scene's title for its title card, else the beat's title that the scene
    declares (its beat_titles, recorded in the manifest). A manifest without it (rendered by older code) is an
    error: the clip must be rendered again."""
    if section == "title":
        return (manifest.get("titles") or {}).get(lang) or manifest["scene"]
    title = ((manifest.get("beat_titles") or {}).get(lang) or {}).get(section)
    if not title:
        raise PackagingError(f"{manifest.get('output', 'clip')}: beat {section!r} has no {lang} title in the "
                             f"manifest (rendered before beats had titles): render it again")
    return title


CHAPTER_SEPARATOR = {"en": " — ", "zh": "——"}   # "scene — beat" (a dash: titles may hold a colon)


def lecture_chapter(manifest: dict, section: str, lang: str) -> str:
    """A beat's chapter name in the full lecture (and the deck): its scene's title, then its own."""
    title = beat_title(manifest, "title", lang)
    return title if section == "title" else f"{title}{CHAPTER_SEPARATOR[lang]}{beat_title(manifest, section, lang)}"


def chapter_cues(manifest: dict) -> list[tuple[float, float, str]]:
    """One cue per beat, named in the clip's language; the full lecture's timeline already names each beat
    "scene — beat" ("title")."""
    if "clips" in manifest:
        return [(m["start"], m["end"], m["title"]) for m in manifest.get("timeline", [])]
    lang = clip_lang(manifest)
    return [(m["start"], m["end"], beat_title(manifest, m["section"], lang)) for m in manifest.get("timeline", [])]


def vtt_text(cues) -> str:
    vtt = webvtt.WebVTT()
    for start, end, text in cues:   # "<0.1% … >99.9%" is text, not a tag: WebVTT escapes &, < and >
        vtt.captions.append(Caption(start=stamp(start, "."), end=stamp(end, "."), text=html.escape(text, quote=False)))
    return vtt.content


def srt_text(cues) -> str:
    return srt.compose([srt.Subtitle(index=i, start=datetime.timedelta(seconds=a), end=datetime.timedelta(seconds=b),
                                     content=text) for i, (a, b, text) in enumerate(cues, 1)], reindex=False)


def stamp(seconds: float, point: str) -> str:
    ms = round(seconds * 1000)
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{point}{ms:03d}"


def check_cues(cues, duration: float, where: str) -> None:
    """Every cue inside the clip, in order, none overlapping the next."""
    last_end = 0.0
    for start, end, _ in cues:
        if not (0.0 <= start < end <= duration + DURATION_SLACK) or start < last_end - DURATION_SLACK:
            raise PackagingError(f"{where}: cue {start:.3f}-{end:.3f} s does not fit the {duration:.3f} s clip "
                                 f"after the cue ending at {last_end:.3f} s")
        last_end = end


def parsed_vtt(text: str) -> list[tuple[float, float, str]]:
    return [(seconds_of(c.start), seconds_of(c.end), html.unescape(c.text)) for c in webvtt.from_string(text)]


def parsed_srt(text: str) -> list[tuple[float, float, str]]:
    return [(s.start.total_seconds(), s.end.total_seconds(), s.content) for s in srt.parse(text)]


def seconds_of(stamp_text: str) -> float:
    h, m, s = stamp_text.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def track_texts(manifest: dict) -> dict[str, str]:
    """{file suffix: text} of a clip's caption tracks (every language, VTT and SRT) and its chapter track,
    each checked: inside the clip, no overlap, and read back by webvtt-py / srt to the same cues."""
    duration = clip_duration(manifest)
    where = manifest.get("output", "clip")
    out = {}
    for lang in LANGS:
        cues = caption_cues(manifest, lang)
        check_cues(cues, duration, f"{where}: {lang} captions")
        out[f"{lang}.vtt"], out[f"{lang}.srt"] = vtt_text(cues), srt_text(cues)
        for suffix, parse in ((f"{lang}.vtt", parsed_vtt), (f"{lang}.srt", parsed_srt)):
            back = parse(out[suffix])
            if [(round(a, 3), round(b, 3), t) for a, b, t in back] != [(round(a, 3), round(b, 3), t)
                                                                      for a, b, t in cues]:
                raise PackagingError(f"{where}: the {suffix} track does not read back as written")
    chapters = chapter_cues(manifest)
    check_cues(chapters, duration, f"{where}: chapters")
    out["chapters.vtt"] = vtt_text(chapters)
    return out


def track_path(clip: Path, suffix: str) -> Path:
    return clip.with_name(f"{clip.stem}.{suffix}")


def write_tracks(clip: Path) -> list[Path]:
    """Write a clip's caption and chapter tracks beside it; returns the files."""
    manifest = read_manifest(clip)
    written = []
    for suffix, text in track_texts(manifest).items():
        path = track_path(clip, suffix)
        write_text_atomic(path, text)
        written.append(path)
    return written
