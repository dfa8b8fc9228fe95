"""What a render leaves beside its clip: the manifest <clip>.json (manifest_record: every number the clip shows,
its timeline and narration lines in every language, the cache key and the sources; install: the clip, then its
manifest, each into place by one rename) and the plan of its plays for the next render (save_plan). write_json
writes each such file by rename.

The manifest module never renders and never judges whether a clip is up to date (pipeline.cache reads the
manifest for that): it records.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from scenes.catalog import SCENES

from .recipe import QUALITIES, manifest_path


def write_json(path: Path, data) -> None:
    """Write by rename: a reader sees the old file or the whole new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def manifest_record(job: dict, scene) -> dict:
    """The manifest's fields that come from the rendered scene."""
    from model import to_jsonable
    from scenes.style import LANGUAGES

    from . import encoder
    quality = QUALITIES[job["quality"]]
    model_dir = Path(job["model_dir"])
    try:
        model_dir_shown = str(model_dir.relative_to(Path(job["repo"])))
    except ValueError:
        model_dir_shown = str(model_dir)
    return {
        "scene": job["scene"], "class": SCENES[job["scene"]].cls,
        "titles": {lang: scene.strings("title", lang) for lang in LANGUAGES},
        "beat_titles": {lang: {name: scene.chapter_names[lang][name] for name in scene.section_names} for lang in LANGUAGES},
        "params": to_jsonable(scene.params),
        "output": Path(job["output"]).name, "quality": job["quality"], "resolution": [quality[1], quality[2]],
        "fps": quality[3], "format": job["format"], "transparent": job["transparent"],
        "clean": bool(job.get("clean")), "section": job["section"],
        "sections": scene.section_names,
        "timeline": scene.timeline() if job["format"] != "png" else [],
        "captions": scene_captions(scene) if job["format"] != "png" else [],
        "encoder": encoder.used() if job["format"] != "png" else {},   # this process's partial movies
        "model": {"dir": model_dir_shown, **job["model"], "config": scene.gpt.config.as_dict()},
        "manim_version": job["environment"]["distributions"]["manim"], "environment": job["environment"],
        "cache_key": job["cache_key"],
        "sources": {},
        "render_seconds": None,
        "values": to_jsonable(scene.values),
    }


def scene_captions(scene) -> list[dict]:
    """Every narration line of the clip, in the clip's own time: {"beat", "key", "start", "end", "text", "texts"}
    from when it is fully shown to when it starts to leave (the scene's clock, LectureScene.captions), with
    "plays" (the number of plays done at those two moments, for split_timeline; install() drops them). A
    one-beat clip keeps the lines on screen during its beat, cut to it and counted from its start; "texts" has
    the line in every language (the clip's own one is "text")."""
    end = float(scene.renderer.time)
    start = scene.beat_starts[scene.only_section] if scene.only_section is not None else 0.0
    out = []
    for c in scene.captions:
        shown = max(c["shown"], start)
        left = min(c["left"] if c["left"] is not None else end, end)
        if left - shown <= 1e-9:
            continue
        out.append({"beat": c["beat"], "key": c["key"], "start": round(shown - start, 3),
                    "end": round(left - start, 3), "text": c["text"], "texts": caption_texts(scene, c),
                    "plays": [c["shown_play"], c["left_play"] if c["left_play"] is not None
                              else scene.renderer.num_plays]})
    return out


def caption_texts(scene, c: dict) -> dict:
    """A caption in every language the scene's strings have: the same key and values (the title card's note:
    the scene's title_note() in that language). The clip's own language is the text it showed."""
    from scenes.style import LANGUAGES
    texts = {}
    for lang in LANGUAGES:
        if lang == scene.lang:
            texts[lang] = c["text"]
        elif c["key"] == "title_note":
            own, scene.lang = scene.lang, lang
            try:
                texts[lang] = scene.title_note()
            finally:
                scene.lang = own
        else:
            texts[lang] = scene.strings(c["key"], lang, **c.get("values", {}))
    return texts


def install(job: dict, produced: Path, record: dict, seconds: float, sources: dict, changed=()) -> None:
    """Old manifest out, new clip in (one rename), new manifest in (one rename): never half-written.

    A render whose sources changed while it ran gets a manifest with no cache_key and no sources, and the
    changed files under changed_during_render: its numbers are recorded, but it claims no version of the code,
    so the next run renders it again."""
    output = Path(job["output"])
    manifest = manifest_path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    manifest.unlink(missing_ok=True)
    os.replace(produced, output)
    record = {**record, "cache_key": None if changed else job["cache_key"], "sources": {} if changed else sources,
              "render_seconds": round(seconds, 2),
              "captions": [{k: v for k, v in c.items() if k != "plays"} for c in record.get("captions", [])]}
    if changed:
        record["changed_during_render"] = list(changed)
    values = record.pop("values")   # last, as before: the long part
    write_json(manifest, {**record, "values": values})


def save_plan(job: dict, plays: list) -> None:
    """Remember the plays of this render (see split_ranges): a later render of the same variant, at any
    quality, splits by them without a planning pass. A stale plan only balances worse; it is never wrong."""
    plan = job.get("plan_file")
    if plan and plays and job["section"] is None and job["format"] != "png":
        Path(plan).parent.mkdir(parents=True, exist_ok=True)
        write_json(Path(plan), {"quality": job["quality"], "plays": plays})
