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
        "pace": scene.pace.record(scene.only_section) if job["format"] != "png" else [],
        "narration": narration_record(scene),
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
    the line in every language (the clip's own one is "text").

    A spoken line also has its "line_id", its "spoken" form and "speech" (its seconds, its source, voice or
    recording, and its normalised WAV with the WAV's sha256), and its start and end are the span of its speech:
    from when it is fully shown, for its seconds. A one-beat clip leaves out the lines said before its beat."""
    end = float(scene.renderer.time)
    start = scene.beat_starts[scene.only_section] if scene.only_section is not None else 0.0
    out = []
    for c in scene.captions:
        shown = max(c["shown"], start)
        left = min(c["left"] if c["left"] is not None else end, end)
        speech = c.get("speech")
        if speech is not None:
            if c["shown"] < start:   # said in an earlier beat (each beat begins once the line before is said)
                continue
            left = min(left, shown + speech["seconds"])
        if left - shown <= 1e-9:
            continue
        entry = {"beat": c["beat"], "key": c["key"], "start": round(shown - start, 3),
                 "end": round(left - start, 3), "text": c["text"], "texts": caption_texts(scene, c),
                 "plays": [c["shown_play"], c["left_play"] if c["left_play"] is not None
                           else scene.renderer.num_plays]}
        if speech is not None:
            entry.update({"line_id": speech["line_id"], "spoken": speech["spoken"],
                          "speech": {k: speech[k] for k in ("seconds", "lead", "source", "audio", "sha256")}})
        out.append(entry)
    return out


def narration_record(scene) -> dict | None:
    """Who said the clip's lines: the voice, its licence, the lines recorded by the lecturer and those said by the
    voice, and recordings not used because their words changed (stale); None for a silent clip."""
    narrator = scene.narrator
    if narrator is None:
        return None
    stale, _ = narrator.unused_recordings()
    recorded = [line.line_id for line in narrator.lines if line.source == "recording"]
    return {"voice": narrator.voice.name, "licence": narrator.voice.licence, "lines": len(narrator.lines),
            "recorded": recorded,
            "synthetic": [line.line_id for line in narrator.lines if line.source != "recording"]
            if narrator.recordings else [],
            "stale": stale}


def caption_texts(scene, c: dict) -> dict:
    """A caption in every language the scene's strings have: the same key and values (the title card's note:
    the scene's title_line() in that language). The clip's own language is the text it showed."""
    from scenes.style import LANGUAGES
    texts = {}
    for lang in LANGUAGES:
        if lang == scene.lang:
            texts[lang] = c["text"]
        elif c["key"] == "title_note":
            own, scene.lang = scene.lang, lang
            try:
                texts[lang] = scene.title_line()
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
    if any(c.get("speech") for c in record.get("captions", [])):   # the narration, laid from the timeline
        record = {**record, "audio": voice_clip(produced, record)}
    manifest.unlink(missing_ok=True)
    os.replace(produced, output)
    record = {**record, "cache_key": None if changed else job["cache_key"], "sources": {} if changed else sources,
              "render_seconds": round(seconds, 2),
              "captions": [{k: v for k, v in c.items() if k != "plays"} for c in record.get("captions", [])]}
    if changed:
        record["changed_during_render"] = list(changed)
    values = record.pop("values")   # last, as before: the long part
    write_json(manifest, {**record, "values": values})


def voice_clip(produced: Path, record: dict) -> dict:
    """Put the clip's narration into `produced` (video packets copied): each line's WAV at its start. Returns the
    manifest's audio record: codec and rate. (Each line is normalised before it is laid; the clips' loudness and
    true peak are measured from their decoded sound by benchmarks/narration_audit.py and the tests.)"""
    from speech import mux
    duration = record["timeline"][-1]["end"] if record.get("timeline") else 0.0
    samples = mux.narration_track(record["captions"], duration)
    voiced = produced.with_name(f"voiced{produced.suffix}")
    from .encoder import muxer_options
    mux.with_narration(produced, samples, voiced, options=muxer_options(produced))   # the clip as it is installed
    os.replace(voiced, produced)
    return {"codec": mux.CODECS[produced.suffix.lstrip(".")][0], "rate": mux.RATE}


def save_plan(job: dict, plays: list) -> None:
    """Remember the plays of this render (see split_ranges): a later render of the same variant, at any
    quality, splits by them without a planning pass. A stale plan only balances worse; it is never wrong."""
    plan = job.get("plan_file")
    if plan and plays and job["section"] is None and job["format"] != "png":
        Path(plan).parent.mkdir(parents=True, exist_ok=True)
        write_json(Path(plan), {"quality": job["quality"], "plays": plays})
