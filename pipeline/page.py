"""The offline course page: media/<quality>/course/ (index.html, clips/ with each clip's manifest and tracks),
every clip of the recipe in every language that is rendered and current, its beats, narration and numbers.

Packaging: it reads clips and manifests and never changes a clip, and is no source of any clip
(pipeline.packaging).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import shutil
from pathlib import Path

from . import tryit
from .tracks import (LANGS, beat_title, clip_duration, clip_identity, read_manifest, track_path, track_texts,
                     write_text_atomic, write_tracks)

# The code the page is made by (this module and the tracks it embeds): the page is made again when it changes
# (and when the "Try it" panel's code, the model or the style changes: tryit.identity).
PAGE_CODE = (Path(__file__), Path(__file__).with_name("tracks.py"))
DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "model" / "weights"

# The SCORM 1.2 hooks (scorm_hooks.js, see pipeline/scorm.py): a script block of their own in the page's head.
SCORM_HOOKS = Path(__file__).with_name("scorm_hooks.js")
PAGE_CODE += (SCORM_HOOKS,)

UI = {   # the page's own words, in both languages
    "en": {"heading": "How a GPT works", "chapters": "Chapters", "lesson": "Lesson", "beats": "Chapters of this clip",
           "numbers": "Numbers on screen (from the clip's manifest)", "manifest": "the whole manifest (JSON)",
           "embed": "Embed this clip", "copy": "Copy", "copied": "Copied", "lang": "Language",
           "embed_note": "Put the files of clips/ named in it beside your page.",
           "more": "more", "numbers_count": "numbers", "missing": "Not rendered in this language: showing",
           "noscript": "The players need JavaScript; the clips and their tracks are in the folder clips/.",
           "transcript": "Transcript", "caption_files": "Caption files:", "on_screen": "On screen: {title}.",
           "beat_numbers": "Its numbers, as the manifest records them for this beat: {rows}.",
           "no_beat_numbers": "The manifest records no numbers under this beat's name; the clip's numbers are "
                              "listed under “Numbers on screen”.",
           "said": "Narration", "more_rows": "and {n} more rows in the manifest",
           "languages_differ": "Where the languages differ:",
           **tryit.UI["en"]},
    "zh": {"heading": "GPT 是怎样工作的", "chapters": "章节", "lesson": "课", "beats": "本片段的章节",
           "numbers": "画面上的数（来自片段的清单）", "manifest": "完整清单（JSON）",
           "embed": "嵌入此片段", "copy": "复制", "copied": "已复制", "lang": "语言",
           "embed_note": "把其中提到的 clips/ 文件放在网页旁边。",
           "more": "更多", "numbers_count": "个数", "missing": "此语言尚未渲染：显示",
           "noscript": "播放器需要 JavaScript；片段及其字幕文件在 clips/ 文件夹中。",
           "transcript": "文字稿", "caption_files": "字幕文件：", "on_screen": "画面：{title}。",
           "beat_numbers": "清单为这一节拍记录的数：{rows}。",
           "no_beat_numbers": "清单中没有以这一节拍命名的数；片段的数列在“画面上的数”中。",
           "said": "旁白", "more_rows": "清单中还有 {n} 行",
           "languages_differ": "两种语言的不同之处：",
           **tryit.UI["zh"]},
}
LANG_NAMES = {"en": "English", "zh": "中文"}
# The border of every control: 4.2:1 against the page and the panels (#000, #111), WCAG 1.4.11 asks 3:1.
EDGE = "#7a7a7a"
PLAYER_BAND = "3.25rem"   # below the picture, for the player's control bar (Chromium's fits in it)
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


BEAT_ROWS = 12   # a beat's numbers in its transcript: at most this many rows, then how many more the manifest has


def clock(seconds: float) -> str:
    """m:ss, as the chapter buttons show a time."""
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


def leaf_rows(values, path: tuple = ()) -> list[tuple[tuple, object]]:
    """The manifest's values as (path, value) leaves: a path is the keys and list indices down to a number, a text
    or a list of numbers."""
    if isinstance(values, dict):
        return [row for k, v in values.items() for row in leaf_rows(v, path + (str(k),))]
    if isinstance(values, list) and values and all(isinstance(v, (list, dict)) for v in values):
        return [row for i, v in enumerate(values) for row in leaf_rows(v, path + (i,))]
    return [(path, values)]


def names_beat(key: str, section: str) -> bool:
    """A key of the manifest's values names a beat: the beat's name itself or in the singular ("logit" for
    "logits", also as a key's last word), or as a word of a key joined by "_" ("exp_sum" for "exp" and "sum",
    "token_ids" for "ids"); a caption rule is named by its last word ("sweep t0.5")."""
    words = key.replace(" ", "_").split("_")
    return section in (key, key + "s") or section in words or (section.endswith("s") and section[:-1] in words[-1:])


def beat_rows(manifest: dict, section: str) -> list[tuple[str, str]]:
    """The numbers a clip's manifest records under one beat's name (names_beat, on any key of a value's path;
    a caption rule's inputs by the rule's name), and, for a closing "summary" beat, the closing picture's numbers
    ("where", LectureScene.show_where); each as (its path, its value as spoken_value writes it). Nothing is
    inferred beyond the names."""
    values = dict(manifest.get("values") or {})
    rules = values.pop("caption_rules", None) or {}
    rows = []
    for path, value in leaf_rows(values) + [(("caption rule", name) + p, v) for name, rule in rules.items()
                                            if isinstance(rule, dict) for p, v in leaf_rows(rule.get("inputs") or {})]:
        keys = [k for k in path if isinstance(k, str)]
        if path[:1] == ("caption rule",):
            keys = [path[1].split()[-1]]
        if not (any(names_beat(k, section) for k in keys) or (section == "summary" and path[:1] == ("where",))):
            continue
        rows.append(("".join(f"[{k}]" if isinstance(k, int) else f" {k}" for k in path).strip().replace("_", " "),
                     spoken_value(value)))
    return rows


def spoken_value(value) -> str:
    """A value of the manifest as a transcript writes it: numbers to 4 significant digits (whole from 10,000 on), a
    list of numbers as its first entries, an ellipsis and its last one, with its length."""
    def num(v):
        if not isinstance(v, float):
            return json.dumps(v, ensure_ascii=False)
        return (f"{v:,.0f}" if abs(v) >= 1e4 else f"{v:.4g}").replace("-", "\u2212")
    if isinstance(value, list) and value and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        shown = [num(v) for v in value]
        if len(shown) > SHOWN_ENTRIES + 2:
            shown = shown[:SHOWN_ENTRIES] + ["…", shown[-1]]
        return f"[{', '.join(shown)}]" + (f" ({len(value)})" if len(value) > 1 else "")
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return num(value)


def beat_description(manifest: dict, section: str, lang: str) -> str:
    """What a beat draws, in words, in `lang`: its title, then the numbers its manifest records for it (beat_rows),
    or that it records none under the beat's name."""
    ui = UI[lang]
    text = ui["on_screen"].format(title=beat_title(manifest, section, lang))
    rows = beat_rows(manifest, section)
    if not rows:
        return f"{text} {ui['no_beat_numbers']}"
    shown = [f"{k}: {v}" for k, v in rows[:BEAT_ROWS]]
    if len(rows) > BEAT_ROWS:
        shown.append(ui["more_rows"].format(n=len(rows) - BEAT_ROWS))
    return f"{text} {ui['beat_numbers'].format(rows='; '.join(shown))}"


def transcript_html(stem: str, manifest: dict, lang: str, shown: bool) -> str:
    """A clip's transcript in `lang`: per beat its title and times, what it draws (beat_description) and the
    narration lines said in it with their times (the manifest's captions, as the caption tracks hold them), and
    links to the clip's caption files. Part of the page's text; the page shows the one in its language."""
    e = html.escape
    ui = UI[lang]
    captions = manifest.get("captions", [])
    beats = []
    for i, beat in enumerate(manifest["timeline"], 1):
        last = i == len(manifest["timeline"])
        lines = [c for c in captions
                 if beat["start"] <= c["start"] < beat["end"] or (last and c["start"] >= beat["end"])]
        said = "".join(f'<li><span class="time">{clock(c["start"])}</span> '
                       f'{e(c["texts"][lang].replace(chr(10), " " if lang == "en" else ""))}'
                       f'</li>' for c in lines)
        beats.append(f'<li><p class="beat"><strong>{e(beat_title(manifest, beat["section"], lang))}</strong> '
                     f'<span class="time">{clock(beat["start"])}–{clock(beat["end"])}</span></p>'
                     f'<p class="drawn">{e(beat_description(manifest, beat["section"], lang))}</p>'
                     + (f'<ul class="said" aria-label="{e(ui["said"])}">{said}</ul>' if said else "") + "</li>")
    files = ", ".join(f'<a href="clips/{e(stem)}.{l}.{x}" hreflang="{l}" type="{t}">'
                      f'<span lang="{l}">{LANG_NAMES[l]}</span> .{x}</a>'
                      for l in LANGS for x, t in (("vtt", "text/vtt"), ("srt", "application/x-subrip")))
    return (f'<details class="transcript" open lang="{lang}" data-transcript="{lang}"{"" if shown else " hidden"}>'
            f'<summary>{e(ui["transcript"])}</summary>{notes_html(manifest, lang)}'
            f'<p class="files">{e(ui["caption_files"])} {files}</p>'
            f'<ol class="beats-said">{"".join(beats)}</ol></details>')


def language_notes(manifest: dict, lang: str) -> list[str]:
    """The clip's notes where the model differs by language, in `lang`: each entry of the manifest's
    values["languages_differ"] (LectureScene.languages_differ) carries its note in both languages. A clip never says
    the other language's results (docs/teaching.md §6); the page does, beside it."""
    entries = (manifest.get("values") or {}).get("languages_differ") or {}
    return [entry["note"][lang].strip() for entry in entries.values()
            if isinstance(entry, dict) and isinstance(entry.get("note"), dict) and entry["note"].get(lang)]


def notes_html(manifest: dict, lang: str) -> str:
    notes = language_notes(manifest, lang)
    if not notes:
        return ""
    e = html.escape
    items = "".join(f"<li>{e(n.replace(chr(10), ' ' if lang == 'en' else ''))}</li>" for n in notes)
    return f'<div class="notes"><p>{e(UI[lang]["languages_differ"])}</p><ul>{items}</ul></div>'


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


def build_course(lessons: list[dict[str, Path]], folder: Path, lang: str, colours, model_dir: Path = DEFAULT_MODEL) -> Path:
    """The course page: folder/index.html, folder/clips/ (each clip with its manifest and tracks), folder/posters/
    (each clip's first beat's still) and folder/tryit/ (the model in the page: pipeline.tryit). `lessons` lists, in
    lecture order, each scene's clips by language (at least one each); `colours()` gives the page's colours. Made
    again only when a clip, the language, the model or the page's code (PAGE_CODE, tryit.identity) changed.
    Returns index.html."""
    clips_dir, posters_dir = folder / "clips", folder / "posters"
    index = folder / "index.html"
    identity = {"lang": lang, "module": hashlib.sha256(b"".join(p.read_bytes() for p in PAGE_CODE)).hexdigest(),
                "tryit": tryit.identity(model_dir),
                "lessons": [{l: clip_identity(c, read_manifest(c)) for l, c in v.items()} for v in lessons]}
    stamp_file = folder / ".course.json"
    try:
        if index.is_file() and json.loads(stamp_file.read_text()) == identity:
            return index
    except (OSError, ValueError):
        pass
    clips_dir.mkdir(parents=True, exist_ok=True)
    posters_dir.mkdir(exist_ok=True)
    absent = tryit.unsupported(model_dir)     # a checkpoint of one's own: the page without the panel, saying why
    if absent is None:
        scripts = tryit.write_assets(folder, model_dir)
    else:
        scripts = []
        shutil.rmtree(folder / "tryit", ignore_errors=True)
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
            lesson["variants"][l]["transcripts"] = {t: transcript_html(clip.stem, manifest, t, t == lang)
                                                    for t in LANGS}
            lesson["variants"][l]["try"] = tryit.scene_numbers(manifest) if absent is None else None
            poster = posters_dir / f"{clip.stem}.webp"
            tryit.write_poster(clip, manifest, poster)
            lesson["variants"][l]["poster"] = f"posters/{poster.name}"
            keep.add(f"posters/{poster.name}")
        data.append(lesson)
    for old in [*clips_dir.iterdir(), *posters_dir.iterdir()]:   # clips and posters of an earlier recipe
        if f"{old.parent.name}/{old.name}" not in keep and not old.name.startswith("."):
            old.unlink(missing_ok=True)
    write_text_atomic(index, page_html(data, lang, colours(), scripts, absent))
    write_text_atomic(stamp_file, json.dumps(identity))
    return index


def page_html(lessons: list[dict], lang: str, colours: dict, scripts: list[str] = (), absent: dict | None = None) -> str:
    """The page; `scripts` are files beside it, loaded in order before the page's own script."""
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
                + (f'<p><button type="button" class="try-scene" data-ui="try_scene" data-try="'
                   f'{e(json.dumps(v["try"], ensure_ascii=False))}">{e(ui["try_scene"])}</button></p>' if v.get("try")
                   else "")
                + "".join(v.get("transcripts", {}).values()) +
                f'<details class="numbers"><summary data-ui="numbers">{e(ui["numbers"])}</summary>'
                f'<p><a href="{e(v["manifest"])}" data-ui="manifest">{e(ui["manifest"])}</a></p>'
                f'<div class="table" tabindex="0" role="region" aria-label="{e(ui["numbers"])}" data-ui-label="numbers">'
                f'<table>{rows}</table></div></details>'
                f'<details class="embed"><summary data-ui="embed">{e(ui["embed"])}</summary>'
                f'<p data-ui="embed_note">{e(ui["embed_note"])}</p>'
                f'<textarea readonly rows="6" aria-label="{e(ui["embed"])}" data-ui-label="embed">{e(v["embed"])}</textarea>'
                f'<button type="button" class="copy" data-ui="copy">{e(ui["copy"])}</button></details></div>')
        sections.append(
            f'<section class="lesson" id="{lesson["id"]}" aria-labelledby="{lesson["id"]}-h">'
            f'<h2 id="{lesson["id"]}-h"><span class="n">{n}</span> <span class="title">{e(title)}</span></h2>'
            f'<p class="missing" hidden></p>'
            f'<div class="player"><video controls preload="metadata" playsinline></video></div>'
            f'<nav class="beats" aria-label="{e(ui["beats"])}"><ol></ol></nav>{"".join(panels)}</section>')
    scripted = [{**lesson, "variants": {l: {k: x for k, x in v.items() if k not in ("numbers", "transcripts")}
                                        for l, v in lesson["variants"].items()}} for lesson in lessons]
    ui_all = UI if absent is None else {l: {**UI[l], "try_absent_note": tryit.absent_note(l, absent)} for l in UI}
    course = json.dumps({"lang": lang, "ui": ui_all, "langNames": LANG_NAMES, "lessons": scripted},
                        ensure_ascii=False)
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
        --accent: {c["accent"]}; --focus: {c["focus"]}; --panel: #111; --line: #333; --edge: {EDGE};
        --mask-accent: {c.get("mask_accent", c["accent"])}; --cell-outline: {c.get("cell_outline", "#333")}; }}
* {{ box-sizing: border-box; }}
body {{ margin: 0; background: var(--bg); color: var(--text); line-height: 1.5;
       font: 1rem/1.5 system-ui, "Noto Sans CJK SC", "Noto Sans", sans-serif; }}
header {{ display: flex; flex-wrap: wrap; gap: .75rem 1.5rem; align-items: center; justify-content: space-between;
         padding: 1rem clamp(1rem, 4vw, 2.5rem); border-bottom: 1px solid var(--line); }}
h1 {{ font-size: clamp(1.3rem, 4vw, 1.9rem); margin: 0; }}
h2 {{ font-size: clamp(1.1rem, 3.4vw, 1.45rem); margin: 0 0 .6rem; }}
h2 .n {{ color: var(--accent); }}
.langs button, .beats button, button.copy, button.try-scene {{ font: inherit; color: var(--text); background: var(--panel);
         border: 1px solid var(--edge); border-radius: .4rem; padding: .35rem .8rem; cursor: pointer; min-height: 2.5rem; }}
.langs button[aria-pressed="true"] {{ border-color: var(--accent); color: var(--accent); }}
.beats button[aria-current="true"] {{ border-color: var(--focus); color: var(--focus); }}
:focus-visible {{ outline: 3px solid var(--focus); outline-offset: 2px; }}
.layout {{ display: grid; grid-template-columns: minmax(12rem, 16rem) 1fr; gap: 2rem;
          padding: 1rem clamp(1rem, 4vw, 2.5rem); max-width: 90rem; margin: 0 auto; }}
nav.toc {{ position: sticky; top: 1rem; align-self: start; }}
nav.toc h2 {{ font-size: 1rem; color: var(--muted); }}
nav.toc ol {{ margin: 0; padding-left: 1.4rem; }}
nav.toc li {{ margin: .3rem 0; }}
a {{ color: var(--accent); }}
.lesson {{ margin: 0 0 2.5rem; padding-bottom: 1.5rem; border-bottom: 1px solid var(--line); }}
/* The player: the picture at the top of the box and a band below it for the control bar (its height: PLAYER_BAND),
   so the bar never covers the picture's own line; captions drawn by the browser, in the page's text size. */
.player {{ max-width: 60rem; container-type: inline-size; }}
.player video {{ width: 100%; height: calc(100cqw * 9 / 16 + {PLAYER_BAND}); background: #000; display: block;
                object-fit: contain; object-position: top; }}
.player video::cue {{ font-size: max(1rem, 1.1em); line-height: 1.35; background: rgba(0, 0, 0, .85); color: #fff; }}
.sr-only {{ position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
           clip: rect(0 0 0 0); white-space: nowrap; border: 0; }}
.transcript ol.beats-said {{ margin: .3rem 0; padding-left: 1.4rem; }}
.transcript ol.beats-said > li {{ margin: .5rem 0; }}
.transcript p {{ margin: .2rem 0; }}
.transcript .time {{ color: var(--muted); font-variant-numeric: tabular-nums; margin-right: .3rem; }}
.transcript .drawn {{ color: var(--muted); }}
.transcript .notes {{ border-left: 3px solid var(--muted); padding-left: .6rem; margin: .4rem 0; }}
.transcript ul.said {{ margin: .2rem 0; padding-left: 1.2rem; }}
.beats ol {{ list-style: none; display: flex; flex-wrap: wrap; gap: .4rem; padding: 0; margin: .6rem 0; }}
details {{ margin: .5rem 0; background: var(--panel); border: 1px solid var(--line); border-radius: .4rem;
          padding: .4rem .8rem; max-width: 60rem; }}
summary {{ cursor: pointer; min-height: 2rem; }}
.table {{ overflow-x: auto; }}
table {{ border-collapse: collapse; font: .8125rem/1.4 ui-monospace, "Noto Sans Mono CJK SC", monospace; }}
th, td {{ text-align: left; vertical-align: top; padding: .15rem .6rem .15rem 0; border-top: 1px solid var(--line); }}
th {{ color: var(--muted); font-weight: normal; white-space: nowrap; }}
td {{ word-break: break-word; }}
textarea {{ width: 100%; background: #000; color: var(--text); border: 1px solid var(--edge);
           font: .8125rem/1.4 ui-monospace, monospace; }}
.missing {{ color: var(--muted); }}
{tryit.PANEL_CSS}
@media (max-width: 44rem) {{ .layout {{ grid-template-columns: 1fr; gap: 1rem; }} nav.toc {{ position: static; }} }}
</style>
<script>
{SCORM_HOOKS.read_text(encoding="utf-8")}
</script>
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
<nav class="toc" aria-labelledby="toc-h"><h2 id="toc-h" data-ui="chapters">{e(ui["chapters"])}</h2><ol>{"".join(toc)}</ol>
<p><a href="#try" data-ui="try">{e(ui["try"])}</a></p></nav>
<main>
<p class="sr-only" role="status" aria-live="polite" id="page-status"></p>
<noscript><p data-ui="noscript">{e(ui["noscript"])}</p></noscript>
{"".join(sections)}
{tryit.panel_html(lang, lessons) if absent is None else tryit.absent_html(lang, absent)}
</main>
</div>
<script id="course-data" type="application/json">{course}</script>
{"".join(f'<script src="{e(s)}"></script>' for s in scripts)}
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

// Captions shown by default: those in the page's language (WCAG 1.2.2), drawn by the browser in the page's text
// size (readable at 320 px, where a clip's own line is a few pixels high). Chapters: loaded, not drawn.
function showTracks(video) {
  for (const t of video.textTracks) {
    t.mode = t.kind === "chapters" ? "hidden" : (t.language === lang ? "showing" : "disabled");
  }
}

// A captioned clip shows its own line at the bottom: the captions drawn over it go to the top.
function placeCues(track, v) {
  if (v.clean) return;
  track.addEventListener("load", () => {
    for (const cue of track.track.cues) { cue.snapToLines = true; cue.line = 0; }
  });
}

// The chapter being played, for assistive technology as well as by colour (aria-current).
function markBeat(list, video) {
  const t = video.currentTime;
  let current = null;
  list.querySelectorAll("button").forEach(b => { if (Number(b.dataset.start) <= t + 0.01) current = b; });
  list.querySelectorAll("button").forEach(b => {
    if (b === current) b.setAttribute("aria-current", "true"); else b.removeAttribute("aria-current");
  });
}

function announce(text) {
  const status = document.getElementById("page-status");
  status.textContent = "";
  setTimeout(() => { status.textContent = text; }, 50);
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
    if (v.poster) video.poster = v.poster;
    // Chromium's automatic track selection runs after the tracks are added: choose again once it has.
    video.addEventListener("loadedmetadata", () => showTracks(video), {once: true});
    for (const cl of Object.keys(v.captions)) {
      const t = document.createElement("track");
      t.kind = "captions"; t.srclang = cl; t.label = COURSE.langNames[cl]; t.src = v.captions[cl];
      t.default = cl === lang;
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
      list.querySelectorAll("button").forEach(x => {
        if (x === button) x.setAttribute("aria-current", "true"); else x.removeAttribute("aria-current");
      });
    });
    li.appendChild(button);
    list.appendChild(li);
  });
  if (!video.beatsMarked) {
    video.beatsMarked = true;
    video.addEventListener("timeupdate", () => markBeat(section.querySelector(".beats ol"), video));
  }
  section.querySelector(".beats").setAttribute("aria-label", ui.beats);
  section.querySelectorAll(".variant").forEach(p => { p.hidden = p.dataset.variant !== l; });
  section.querySelectorAll("[data-transcript]").forEach(t => { t.hidden = t.dataset.transcript !== lang; });
}

function setLanguage(l) {
  lang = l;
  document.documentElement.lang = l;
  const ui = COURSE.ui[l];
  document.title = ui.heading;
  document.querySelectorAll("[data-ui]").forEach(el => { el.textContent = ui[el.dataset.ui]; });
  document.querySelectorAll("[data-ui-label]").forEach(el => el.setAttribute("aria-label", ui[el.dataset.uiLabel]));
  document.querySelectorAll(".langs button").forEach(b => b.setAttribute("aria-pressed", String(b.dataset.lang === l)));
  document.querySelector(".langs").setAttribute("aria-label", ui.lang);
  COURSE.lessons.forEach((lesson, i) => {
    const section = document.getElementById(lesson.id);
    setUp(section, lesson);
    const [, v] = variantOf(lesson, l);
    document.querySelector(`nav.toc a[data-lesson="${i}"]`).textContent = v.title[l] || lesson.scene;
  });
  document.dispatchEvent(new CustomEvent("course:language", {detail: l}));
}

document.querySelectorAll(".langs button").forEach(b => b.addEventListener("click", () => setLanguage(b.dataset.lang)));
document.querySelectorAll("button.copy").forEach(b => b.addEventListener("click", () => {
  const area = b.parentElement.querySelector("textarea");
  area.focus(); area.select();
  const done = () => {
    b.textContent = COURSE.ui[lang].copied;
    announce(COURSE.ui[lang].copied);
    setTimeout(() => { b.textContent = COURSE.ui[lang].copy; }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(area.value).then(done, () => { document.execCommand("copy"); done(); });
  } else { document.execCommand("copy"); done(); }
}));
setLanguage(lang);
"""
