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
           **tryit.UI["en"]},
    "zh": {"heading": "GPT 是怎样工作的", "chapters": "章节", "lesson": "课", "beats": "本片段的章节",
           "numbers": "画面上的数（来自片段的清单）", "manifest": "完整清单（JSON）",
           "embed": "嵌入此片段", "copy": "复制", "copied": "已复制", "lang": "语言",
           "embed_note": "把其中提到的 clips/ 文件放在网页旁边。",
           "more": "更多", "numbers_count": "个数", "missing": "此语言尚未渲染：显示",
           "noscript": "播放器需要 JavaScript；片段及其字幕文件在 clips/ 文件夹中。",
           **tryit.UI["zh"]},
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
                   else "") +
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
    scripted = [{**lesson, "variants": {l: {k: x for k, x in v.items() if k != "numbers"}   # the tables hold those
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
        --accent: {c["accent"]}; --focus: {c["focus"]}; --panel: #111; --line: #333;
        --mask-accent: {c.get("mask_accent", c["accent"])}; --cell-outline: {c.get("cell_outline", "#333")}; }}
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
    if (v.poster) video.poster = v.poster;
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
  document.dispatchEvent(new CustomEvent("course:language", {detail: l}));
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
