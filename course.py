"""Course packaging from finished clips and their manifests: caption and chapter tracks, the full lecture, and the
offline course page. render.py runs it after its renders; it reads clips and manifests and never changes a clip,
so it is no source of any clip (render.py loads it by a computed name, outside the cache's import walk).

Beside each clip media/<quality>/<name>.mp4:
    <name>.en.vtt  <name>.en.srt  <name>.zh.vtt  <name>.zh.srt   captions: the narration lines, as shown
    <name>.chapters.vtt                                          chapters: one cue per beat, named by its title in
                                                                 the clip's language (WebVTT kind=chapters)
For a recipe (lecture.toml) rendered whole, in media/<quality>/:
    lecture[-lang-zh][-clean].mp4 (+ .json manifest, tracks)   the clips joined in recipe order, container chapters
    course/                                                      the course page (index.html, clips/, tracks)
    lecture[-lang-zh].slides.html (with --slides)                a single-file HTML deck, one slide per beat
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import html
import json
import os
import shutil
import sys
from fractions import Fraction
from pathlib import Path

LANGS = ("en", "zh")
COURSE_VERSION = "3"   # bump when what this module writes changes, so that the lecture is rebuilt
DURATION_SLACK = 1e-3  # seconds: cues are rounded to the millisecond


class PackagingError(Exception):
    """A clip or manifest that cannot be packaged: one line, exit 1."""


# --- writing files -------------------------------------------------------------------------------------
def write_text_atomic(path: Path, text: str) -> bool:
    """Write by rename, and only when the content changes (a rerun leaves every file as it was): changed?"""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return True


def read_manifest(clip: Path) -> dict:
    manifest = clip.with_name(clip.name + ".json")
    try:
        return json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise PackagingError(f"{manifest.name}: cannot read the manifest ({e})") from None


def clip_duration(manifest: dict) -> float:
    return manifest["timeline"][-1]["end"] if manifest.get("timeline") else 0.0


# --- cues ------------------------------------------------------------------------------------------------
def caption_cues(manifest: dict, lang: str) -> list[tuple[float, float, str]]:
    """The narration lines of a clip in `lang`, timed as the clip shows them (the manifest's captions)."""
    cues = []
    for c in manifest.get("captions", []):
        text = (c.get("texts") or {}).get(lang)
        if text is None:
            raise PackagingError(f"{manifest.get('output')}: caption {c.get('key')!r} has no {lang} text")
        cues.append((c["start"], c["end"], text))
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
    import webvtt
    from webvtt.models import Caption
    vtt = webvtt.WebVTT()
    for start, end, text in cues:   # "<0.1% … >99.9%" is text, not a tag: WebVTT escapes &, < and >
        vtt.captions.append(Caption(start=stamp(start, "."), end=stamp(end, "."), text=html.escape(text, quote=False)))
    return vtt.content


def srt_text(cues) -> str:
    import srt
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
    import webvtt
    return [(seconds_of(c.start), seconds_of(c.end), html.unescape(c.text)) for c in webvtt.from_string(text)]


def parsed_srt(text: str) -> list[tuple[float, float, str]]:
    import srt
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


# --- the full lecture ---------------------------------------------------------------------------------
def stream_signature(stream) -> dict:
    cc = stream.codec_context
    return {"codec": cc.name, "width": cc.width, "height": cc.height, "pix_fmt": cc.pix_fmt,
            # the nominal frame rate: the average one is counted from the duration, and ManimCE's own join of
            # partial movies leaves a frame a few ticks short now and then (mlp_steps at 1080p60: 251 of 256)
            "time_base": str(stream.time_base), "rate": str(stream.base_rate), "profile": cc.profile,
            "extradata": hashlib.sha256(bytes(cc.extradata or b"")).hexdigest()}


def lecture_stale(output: Path, record: dict) -> bool:
    try:
        old = json.loads(output.with_name(output.name + ".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    return not output.is_file() or old.get("inputs") != record["inputs"] or old.get("version") != COURSE_VERSION


def clip_identity(clip: Path, manifest: dict) -> dict:
    st = clip.stat()
    return {"output": clip.name, "cache_key": manifest.get("cache_key"), "size": st.st_size,
            "mtime_ns": st.st_mtime_ns}


def build_lecture(clips: list[Path], output: Path, lang: str) -> tuple[str, dict]:
    """Join the clips in order into `output` with a chapter mark at each clip; its manifest lists each clip's
    offset and the beats, captions and chapters of the whole. Rebuilt only when a clip changed: the status
    ("built", "re-encoded", "up to date") and the manifest."""
    manifests = [read_manifest(c) for c in clips]
    record = {"version": COURSE_VERSION, "output": output.name, "lang": lang,
              "inputs": [clip_identity(c, m) for c, m in zip(clips, manifests)]}
    offsets, t = [], 0.0
    for m in manifests:
        offsets.append(round(t, 3))
        t += clip_duration(m)
    record["duration"] = round(t, 3)
    record["clips"] = [{"scene": m["scene"], "output": c.name, "title": beat_title(m, "title", lang),
                        "offset": o, "duration": clip_duration(m)} for c, m, o in zip(clips, manifests, offsets)]
    record["timeline"] = [{"scene": m["scene"], "section": b["section"], "start": round(o + b["start"], 3),
                           "end": round(o + b["end"], 3), "title": lecture_chapter(m, b["section"], lang)}
                          for m, o in zip(manifests, offsets) for b in m["timeline"]]
    record["captions"] = [{**c, "scene": m["scene"], "start": round(o + c["start"], 3), "end": round(o + c["end"], 3)}
                          for m, o in zip(manifests, offsets) for c in m.get("captions", [])]
    if not lecture_stale(output, record):
        return "up to date", json.loads(output.with_name(output.name + ".json").read_text(encoding="utf-8"))
    status = join_clips(clips, output, [(r["offset"], r["offset"] + r["duration"], r["title"])
                                        for r in record["clips"]])
    record["joined"] = status
    write_text_atomic(output.with_name(output.name + ".json"), json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return status, record


def join_clips(clips: list[Path], output: Path, chapters: list[tuple[float, float, str]]) -> str:
    """Concatenate the clips' video streams (as ffmpeg's concat demuxer does: packets copied, timestamps shifted
    by the length of the clips before) when their stream parameters match, else decode and re-encode; write
    container chapters. Written to a temporary name and renamed."""
    import av
    tmp = output.with_name(f".{output.stem}.{os.getpid()}.tmp{output.suffix}")
    inputs = [av.open(str(c)) for c in clips]
    try:
        streams = []
        for c, container in zip(clips, inputs):
            if not container.streams.video:
                raise PackagingError(f"{c.name}: no video stream")
            streams.append(container.streams.video[0])
        signatures = [stream_signature(s) for s in streams]
        same = all(s == signatures[0] for s in signatures)
        with av.open(str(tmp), "w", format=output.suffix.lstrip(".").replace("mkv", "matroska")) as out:
            if same:
                copy_packets(inputs, streams, out)
            else:
                reencode(inputs, streams, out)
            tb = Fraction(1, 1000)
            out.set_chapters([{"id": i, "start": round(a * 1000), "end": round(b * 1000), "time_base": tb,
                               "metadata": {"title": title}} for i, (a, b, title) in enumerate(chapters, 1)])
    except BaseException:   # Ctrl-C too: nothing half-written left behind
        tmp.unlink(missing_ok=True)
        raise
    finally:
        for container in inputs:
            container.close()
    os.replace(tmp, output)
    return "joined without re-encoding" if same else \
        f"re-encoded: the clips' streams differ ({describe_difference(signatures)})"


def describe_difference(signatures: list[dict]) -> str:
    first = signatures[0]
    keys = sorted({k for s in signatures[1:] for k, v in s.items() if first.get(k) != v})
    return ", ".join(keys)


def copy_packets(inputs, streams, out) -> None:
    ostream = out.add_stream_from_template(streams[0])
    offset = 0   # in the first stream's time base (every stream has the same one)
    for container, stream in zip(inputs, streams):
        end = 0
        for packet in container.demux(stream):
            if packet.dts is None:   # the demuxer's flush packet
                continue
            end = max(end, packet.pts + (packet.duration or 0))
            packet.pts += offset
            packet.dts += offset
            packet.stream = ostream
            out.mux(packet)
        offset += end


def reencode(inputs, streams, out) -> None:
    first = streams[0]
    ostream = out.add_stream("libx264", rate=first.average_rate)
    ostream.width, ostream.height = first.codec_context.width, first.codec_context.height
    ostream.pix_fmt = "yuv420p"
    tick = 1 / Fraction(first.average_rate)
    ostream.codec_context.time_base = tick
    n = 0
    for container, stream in zip(inputs, streams):
        for frame in container.decode(stream):
            frame = frame.reformat(width=ostream.width, height=ostream.height, format="yuv420p")
            frame.pts, frame.time_base = n, tick   # one frame after another, at the first clip's rate
            n += 1
            for packet in ostream.encode(frame):
                out.mux(packet)
    for packet in ostream.encode(None):
        out.mux(packet)


# --- the course page -------------------------------------------------------------------------------------
UI = {   # the page's own words, in both languages
    "en": {"heading": "How a GPT works", "chapters": "Chapters", "lesson": "Lesson", "beats": "Chapters of this clip",
           "numbers": "Numbers on screen (from the clip's manifest)", "manifest": "the whole manifest (JSON)",
           "embed": "Embed this clip", "copy": "Copy", "copied": "Copied", "lang": "Language",
           "embed_note": "Put the files of clips/ named in it beside your page.",
           "more": "more", "numbers_count": "numbers", "missing": "Not rendered in this language: showing",
           "noscript": "The players need JavaScript; the clips and their tracks are in the folder clips/."},
    "zh": {"heading": "GPT 是怎样工作的", "chapters": "章节", "lesson": "课", "beats": "本片段的章节",
           "numbers": "画面上的数（来自片段的清单）", "manifest": "完整清单（JSON）",
           "embed": "嵌入此片段", "copy": "复制", "copied": "已复制", "lang": "语言",
           "embed_note": "把其中提到的 clips/ 文件放在网页旁边。",
           "more": "更多", "numbers_count": "个数", "missing": "此语言尚未渲染：显示",
           "noscript": "播放器需要 JavaScript；片段及其字幕文件在 clips/ 文件夹中。"},
}
LANG_NAMES = {"en": "English", "zh": "中文"}
SHOWN_ENTRIES = 6   # a long list of numbers: its first entries, an ellipsis, its last entry (the visual language)


def data_url(text: str, mime: str = "text/vtt") -> str:
    return f"data:{mime};charset=utf-8;base64,{base64.b64encode(text.encode('utf-8')).decode('ascii')}"


def place_file(src: Path, dest: Path) -> None:
    """dest becomes src's content: a hard link where the file system allows it, else a copy; by rename."""
    try:
        if dest.exists() and os.path.samefile(src, dest):
            return
    except OSError:
        pass
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dest)


def numbers_rows(values, path: str = "") -> list[tuple[str, str]]:
    """The manifest's values as rows (a dotted path, the value): a list of numbers as its first entries, an
    ellipsis and its last entry, with its length; nested tables and lists row by row."""
    rows = []
    if isinstance(values, dict):
        for k, v in values.items():
            rows += numbers_rows(v, f"{path}.{k}" if path else str(k))
    elif isinstance(values, list) and values and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                     for v in values):
        shown = [json.dumps(v) for v in values]
        if len(shown) > SHOWN_ENTRIES + 2:
            shown = shown[:SHOWN_ENTRIES] + ["…", shown[-1]]
        rows.append((path, f"[{', '.join(shown)}]" + (f"  ({len(values)})" if len(values) > 1 else "")))
    elif isinstance(values, list) and values and all(isinstance(v, (list, dict)) for v in values):
        for i, v in enumerate(values):
            rows += numbers_rows(v, f"{path}[{i}]")
    else:
        rows.append((path, json.dumps(values, ensure_ascii=False)))
    return rows


def variant_data(clip: Path, manifest: dict, lang: str) -> dict:
    """What the page needs of one clip in one language: its file, length, tracks (as data: URLs, which Chromium
    loads from file:// where it refuses <track> files), beats and embed snippet."""
    tracks = track_texts(manifest)
    beats = [{"start": m["start"], "end": m["end"], "title": {l: beat_title(manifest, m["section"], l) for l in LANGS}}
             for m in manifest["timeline"]]
    snippet = "\n".join([
        f'<video controls preload="metadata" width="{manifest["resolution"][0]}" src="{clip.name}">',
        *[f'  <track kind="captions" srclang="{l}" label="{LANG_NAMES[l]}" src="{clip.stem}.{l}.vtt"'
          f'{" default" if l == lang else ""}>' for l in LANGS],
        f'  <track kind="chapters" srclang="{lang}" src="{clip.stem}.chapters.vtt">',
        "</video>"])
    return {"clip": f"clips/{clip.name}", "manifest": f"clips/{clip.name}.json", "duration": clip_duration(manifest),
            "lang": lang, "clean": bool(manifest.get("clean")),
            "title": manifest.get("titles", {}),
            "captions": {l: data_url(tracks[f"{l}.vtt"]) for l in LANGS},
            "cues": {l: len(manifest.get("captions", [])) for l in LANGS},
            "chapters": data_url(tracks["chapters.vtt"]), "beats": beats, "embed": snippet}


def build_course(lessons: list[dict[str, Path]], folder: Path, lang: str, colours) -> Path:
    """The course page: folder/index.html and folder/clips/ (each clip with its manifest and tracks). `lessons`
    lists, in lecture order, each scene's clips by language (at least one each); `colours()` gives the page's
    colours. Made again only when a clip, the language or this module changed. Returns index.html."""
    clips_dir = folder / "clips"
    index = folder / "index.html"
    identity = {"lang": lang, "module": hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
                "lessons": [{l: clip_identity(c, read_manifest(c)) for l, c in v.items()} for v in lessons]}
    stamp_file = folder / ".course.json"
    try:
        if index.is_file() and json.loads(stamp_file.read_text()) == identity:
            return index
    except (OSError, ValueError):
        pass
    clips_dir.mkdir(parents=True, exist_ok=True)
    data, keep = [], {"index.html"}
    for i, variants in enumerate(lessons):
        lesson = {"id": f"lesson-{i + 1}", "variants": {}}
        for l, clip in variants.items():
            manifest = read_manifest(clip)
            lesson["scene"] = manifest["scene"]
            for src, name in [(clip, clip.name), (clip.with_name(clip.name + ".json"), clip.name + ".json")] + \
                    [(track_path(clip, sfx), track_path(clip, sfx).name)
                     for sfx in [f"{x}.{y}" for x in LANGS for y in ("vtt", "srt")] + ["chapters.vtt"]]:
                if not src.is_file():
                    write_tracks(clip)
                place_file(src, clips_dir / name)
                keep.add(f"clips/{name}")
            lesson["variants"][l] = variant_data(clip, manifest, l)
            lesson["variants"][l]["numbers"] = numbers_rows(manifest.get("values", {}))
        data.append(lesson)
    for old in clips_dir.iterdir():   # clips of an earlier recipe
        if f"clips/{old.name}" not in keep and not old.name.startswith("."):
            old.unlink(missing_ok=True)
    write_text_atomic(index, page_html(data, lang, colours()))
    write_text_atomic(stamp_file, json.dumps(identity))
    return index


def page_html(lessons: list[dict], lang: str, colours: dict) -> str:
    e = html.escape
    ui = UI[lang]
    toc, sections = [], []
    for n, lesson in enumerate(lessons, 1):
        first = lesson["variants"].get(lang) or next(iter(lesson["variants"].values()))
        title = first["title"].get(lang, lesson["scene"])
        toc.append(f'<li><a href="#{lesson["id"]}" data-lesson="{n - 1}">{e(title)}</a></li>')
        panels, shown = [], lang if lang in lesson["variants"] else next(iter(lesson["variants"]))
        for l, v in lesson["variants"].items():
            rows = "".join(f"<tr><th scope=\"row\">{e(k)}</th><td>{e(val)}</td></tr>" for k, val in v["numbers"])
            panels.append(
                f'<div class="variant" data-variant="{l}"{"" if l == shown else " hidden"}>'
                f'<details class="numbers"><summary data-ui="numbers">{e(ui["numbers"])}</summary>'
                f'<p><a href="{e(v["manifest"])}" data-ui="manifest">{e(ui["manifest"])}</a></p>'
                f'<div class="table"><table>{rows}</table></div></details>'
                f'<details class="embed"><summary data-ui="embed">{e(ui["embed"])}</summary>'
                f'<p data-ui="embed_note">{e(ui["embed_note"])}</p>'
                f'<textarea readonly rows="6" aria-label="{e(ui["embed"])}">{e(v["embed"])}</textarea>'
                f'<button type="button" class="copy" data-ui="copy">{e(ui["copy"])}</button></details></div>')
        sections.append(
            f'<section class="lesson" id="{lesson["id"]}" aria-labelledby="{lesson["id"]}-h">'
            f'<h2 id="{lesson["id"]}-h"><span class="n">{n}</span> <span class="title">{e(title)}</span></h2>'
            f'<p class="missing" hidden></p>'
            f'<div class="player"><video controls preload="metadata" playsinline></video></div>'
            f'<nav class="beats" aria-label="{e(ui["beats"])}"><ol></ol></nav>{"".join(panels)}</section>')
    course = json.dumps({"lang": lang, "ui": UI, "langNames": LANG_NAMES, "lessons": lessons}, ensure_ascii=False)
    course = course.replace("</", "<\\/")   # inside <script>
    c = colours
    return f"""<!doctype html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(ui["heading"])}</title>
<style>
:root {{ color-scheme: dark; --bg: {c["background"]}; --text: {c["text"]}; --muted: {c["muted"]};
        --accent: {c["accent"]}; --focus: {c["focus"]}; --panel: #111; --line: #333; }}
* {{ box-sizing: border-box; }}
body {{ margin: 0; background: var(--bg); color: var(--text); line-height: 1.5;
       font: 16px/1.5 system-ui, "Noto Sans CJK SC", "Noto Sans", sans-serif; }}
header {{ display: flex; flex-wrap: wrap; gap: .75rem 1.5rem; align-items: center; justify-content: space-between;
         padding: 1rem clamp(1rem, 4vw, 2.5rem); border-bottom: 1px solid var(--line); }}
h1 {{ font-size: clamp(1.3rem, 4vw, 1.9rem); margin: 0; }}
h2 {{ font-size: clamp(1.1rem, 3.4vw, 1.45rem); margin: 0 0 .6rem; }}
h2 .n {{ color: var(--accent); }}
.langs button, .beats button, button.copy {{ font: inherit; color: var(--text); background: var(--panel);
         border: 1px solid var(--line); border-radius: .4rem; padding: .35rem .8rem; cursor: pointer; min-height: 2.5rem; }}
.langs button[aria-pressed="true"] {{ border-color: var(--accent); color: var(--accent); }}
.beats button.current {{ border-color: var(--focus); color: var(--focus); }}
:focus-visible {{ outline: 3px solid var(--focus); outline-offset: 2px; }}
.layout {{ display: grid; grid-template-columns: minmax(12rem, 16rem) 1fr; gap: 2rem;
          padding: 1rem clamp(1rem, 4vw, 2.5rem); max-width: 90rem; margin: 0 auto; }}
nav.toc {{ position: sticky; top: 1rem; align-self: start; }}
nav.toc h2 {{ font-size: 1rem; color: var(--muted); }}
nav.toc ol {{ margin: 0; padding-left: 1.4rem; }}
nav.toc li {{ margin: .3rem 0; }}
a {{ color: var(--accent); }}
.lesson {{ margin: 0 0 2.5rem; padding-bottom: 1.5rem; border-bottom: 1px solid var(--line); }}
.player video {{ width: 100%; max-width: 960px; aspect-ratio: 16 / 9; background: #000; display: block; }}
.beats ol {{ list-style: none; display: flex; flex-wrap: wrap; gap: .4rem; padding: 0; margin: .6rem 0; }}
details {{ margin: .5rem 0; background: var(--panel); border: 1px solid var(--line); border-radius: .4rem;
          padding: .4rem .8rem; max-width: 960px; }}
summary {{ cursor: pointer; min-height: 2rem; }}
.table {{ overflow-x: auto; }}
table {{ border-collapse: collapse; font: 13px/1.4 ui-monospace, "Noto Sans Mono CJK SC", monospace; }}
th, td {{ text-align: left; vertical-align: top; padding: .15rem .6rem .15rem 0; border-top: 1px solid var(--line); }}
th {{ color: var(--muted); font-weight: normal; white-space: nowrap; }}
td {{ word-break: break-word; }}
textarea {{ width: 100%; background: #000; color: var(--text); border: 1px solid var(--line);
           font: 13px/1.4 ui-monospace, monospace; }}
.missing {{ color: var(--muted); }}
@media (max-width: 44rem) {{ .layout {{ grid-template-columns: 1fr; gap: 1rem; }} nav.toc {{ position: static; }} }}
</style>
</head>
<body>
<header>
<h1 data-ui="heading">{e(ui["heading"])}</h1>
<div class="langs" role="group" aria-label="{e(ui["lang"])}">
{"".join(f'<button type="button" lang="{l}" data-lang="{l}" aria-pressed="{str(l == lang).lower()}">'
         f'{LANG_NAMES[l]}</button>' for l in LANGS)}
</div>
</header>
<div class="layout">
<nav class="toc" aria-labelledby="toc-h"><h2 id="toc-h" data-ui="chapters">{e(ui["chapters"])}</h2><ol>{"".join(toc)}</ol></nav>
<main>
<noscript><p data-ui="noscript">{e(ui["noscript"])}</p></noscript>
{"".join(sections)}
</main>
</div>
<script id="course-data" type="application/json">{course}</script>
<script>
{PAGE_SCRIPT}
</script>
</body>
</html>
"""


PAGE_SCRIPT = r"""
"use strict";
const COURSE = JSON.parse(document.getElementById("course-data").textContent);
let lang = COURSE.lang;

function variantOf(lesson, l) {
  const first = Object.keys(lesson.variants)[0];
  return lesson.variants[l] ? [l, lesson.variants[l]] : [first, lesson.variants[first]];
}

function fmt(t) {
  const m = Math.floor(t / 60), s = Math.floor(t % 60);
  return m + ":" + String(s).padStart(2, "0");
}

// Captions shown: those in the page's language, unless the clip already shows that line on screen (a captioned
// clip in the page's language: its tracks stay in the player's menu). Chapters: loaded, not drawn.
function showTracks(video) {
  const v = video.variant;
  const burnt = v && !v.clean && v.lang === lang;
  for (const t of video.textTracks) {
    t.mode = t.kind === "chapters" ? "hidden" : (t.language === lang && !burnt ? "showing" : "disabled");
  }
}

// A captioned clip shows its own line at the bottom: another language's captions go to the top.
function placeCues(track, v) {
  if (v.clean || track.srclang === v.lang) return;
  track.addEventListener("load", () => {
    for (const cue of track.track.cues) { cue.snapToLines = true; cue.line = 0; }
  });
}

function setUp(section, lesson) {
  const video = section.querySelector("video");
  const [l, v] = variantOf(lesson, lang);
  const ui = COURSE.ui[lang];
  const missing = section.querySelector(".missing");
  missing.hidden = l === lang;
  missing.textContent = l === lang ? "" : ui.missing + " " + COURSE.langNames[l];
  section.querySelector("h2 .title").textContent = v.title[lang] || lesson.scene;
  if (video.dataset.src !== v.clip) {
    video.pause();
    video.querySelectorAll("track").forEach(t => t.remove());
    video.dataset.src = v.clip;
    video.variant = v;
    video.src = v.clip;
    // Chromium's automatic track selection runs after the tracks are added: choose again once it has.
    video.addEventListener("loadedmetadata", () => showTracks(video), {once: true});
    for (const cl of Object.keys(v.captions)) {
      const t = document.createElement("track");
      t.kind = "captions"; t.srclang = cl; t.label = COURSE.langNames[cl]; t.src = v.captions[cl];
      placeCues(t, v);
      video.appendChild(t);
    }
    const ch = document.createElement("track");
    ch.kind = "chapters"; ch.srclang = l; ch.label = "chapters"; ch.src = v.chapters;
    video.appendChild(ch);
  }
  showTracks(video);
  const list = section.querySelector(".beats ol");
  list.replaceChildren();
  v.beats.forEach((b, i) => {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.start = b.start;
    button.textContent = (i + 1) + ". " + (b.title[lang] || b.title.en) + " · " + fmt(b.start);
    button.addEventListener("click", () => {
      video.currentTime = b.start;
      list.querySelectorAll("button").forEach(x => x.classList.toggle("current", x === button));
    });
    li.appendChild(button);
    list.appendChild(li);
  });
  section.querySelector(".beats").setAttribute("aria-label", ui.beats);
  section.querySelectorAll(".variant").forEach(p => { p.hidden = p.dataset.variant !== l; });
}

function setLanguage(l) {
  lang = l;
  document.documentElement.lang = l;
  const ui = COURSE.ui[l];
  document.title = ui.heading;
  document.querySelectorAll("[data-ui]").forEach(el => { el.textContent = ui[el.dataset.ui]; });
  document.querySelectorAll(".langs button").forEach(b => b.setAttribute("aria-pressed", String(b.dataset.lang === l)));
  document.querySelector(".langs").setAttribute("aria-label", ui.lang);
  COURSE.lessons.forEach((lesson, i) => {
    const section = document.getElementById(lesson.id);
    setUp(section, lesson);
    const [, v] = variantOf(lesson, l);
    document.querySelector(`nav.toc a[data-lesson="${i}"]`).textContent = v.title[l] || lesson.scene;
  });
}

document.querySelectorAll(".langs button").forEach(b => b.addEventListener("click", () => setLanguage(b.dataset.lang)));
document.querySelectorAll("button.copy").forEach(b => b.addEventListener("click", () => {
  const area = b.parentElement.querySelector("textarea");
  area.focus(); area.select();
  const done = () => {
    b.textContent = COURSE.ui[lang].copied;
    setTimeout(() => { b.textContent = COURSE.ui[lang].copy; }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(area.value).then(done, () => { document.execCommand("copy"); done(); });
  } else { document.execCommand("copy"); done(); }
}));
setLanguage(lang);
"""


# --- the slide deck (manim-slides) ------------------------------------------------------------------------
def reveal_assets() -> Path:
    """reveal.js, of the version manim-slides' HTML deck is made for, as scripts/setup.sh unpacks it from the npm
    registry into the venv (manim-slides would fetch it from a CDN; a deck made here needs no network)."""
    from manim_slides.convert import RevealJS
    version = RevealJS.model_fields["reveal_version"].default
    return Path(os.environ.get("GPT_LECTURE_REVEALJS") or Path(sys.prefix) / "share" / f"reveal.js-{version}")


def beat_segments(clip: Path, manifest: dict, folder: Path) -> list[Path]:
    """The clip cut at its beats, one file per beat, packets copied: every beat starts a new play, and each play
    is its own encoded movie (ManimCE's partial movie files), so each beat starts on a key frame. Cut again only
    when the clip changed."""
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
                    for p in mine:
                        p.pts -= first
                        p.dts -= first
                        p.stream = ostream
                        out.mux(p)
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
