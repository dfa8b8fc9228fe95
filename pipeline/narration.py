"""The narration of a run: which voice speaks each clip, which recordings replace it, what goes into the cache key,
what the render process is told, what the run reports afterwards, and the script a lecturer records from.

- prepare(): for every spoken job (--voice auto, a movie format), the voice of its language, checked to be
  installed (one line and exit 2 if not), and the lecturer's recordings of that scene in that language, each checked
  to be a usable recording (decodable, not empty, not silent: one line and exit 2 otherwise) and hashed. The voice's
  name and model digest, the spoken-form rules' version, the line cache's format and the recordings' digests go
  into the clip's cache key (job.narration["key"]): a new recording re-renders only its scene.
- The render process is told where the line cache and the recordings are (GPT_LECTURE_VOICE, speech/narrator.py);
  the scene synthesises each line before it is drawn and holds its beat until the line has been said.
- report(): after the renders, for every scene that has recordings, which lines were recorded, which fell back
  to the synthetic voice and which recordings are stale (their words changed since the export).
- export(): `render.py narration export` plays every scene of the recipe without drawing, with its voice, and
  writes the script (speech/script.py).

This module never draws and never schedules renders.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .recipe import UsageError, manifest_path, relative


def voice_of(lang: str):
    from speech.voices import VoiceUnavailable, voice
    try:
        return voice(lang)
    except VoiceUnavailable as e:
        raise UsageError(f"{e} (or render silent clips with --voice none)") from None


def check_recordings(folder: Path) -> dict[str, str]:
    """The recordings of one scene and language, by file name, with their sha256; a file that cannot be a recording
    (empty, corrupt, silent, two for one line) is a UsageError."""
    from speech import audio
    from model.digests import file_sha256
    from speech.narrator import NarrationError, recordings_of
    try:
        found = recordings_of(folder)
    except NarrationError as e:
        raise UsageError(str(e)) from None
    digests = {}
    for path in found.values():
        try:
            samples, rate = audio.read_audio(path)
            if len(audio.trim_silence(samples, rate)) == 0 or not audio.loudness(samples, rate) > -70:
                raise audio.AudioError("it is silent")
        except audio.AudioError as e:
            raise UsageError(f"{relative(path)}: cannot be used as a recording: {e}") from None
        digests[path.name] = file_sha256(path)
    return digests


def prepare(jobs: list, settings: dict) -> None:
    """Set job.narration for every job: its voice, recordings and cache key (see the module's docstring)."""
    if all(job.voice == "none" for job in jobs):
        for job in jobs:
            job.narration = {}
        return
    from speech.spoken import SPOKEN_VERSION
    from speech.synth_cache import FORMAT, default_cache_dir
    root = settings["narration"]
    checked: dict[tuple[str, str], dict] = {}
    for job in jobs:
        if job.voice == "none":
            job.narration = {}
            continue
        lang = job.params.get("lang", "en")
        voice = voice_of(lang)
        where = (job.spec.name, lang)
        if where not in checked:
            checked[where] = check_recordings(root / lang / job.spec.name)
        job.narration = {
            "key": {"voice": voice.name, "digest": voice.digest(), "spoken": SPOKEN_VERSION, "line_format": FORMAT,
                    "recordings": checked[where]},
            "env": {"cache": str(default_cache_dir()), "recordings": str(root), "digest": voice.digest()},
            "voice": voice.name, "licence": voice.licence, "recordings_dir": str(root / lang / job.spec.name),
        }


def report(jobs: list) -> None:
    """One line for every clip that has recordings: how many lines were recorded, and those that were not (the
    synthetic voice said them) or whose recording is stale."""
    for job in jobs:
        if not job.narration or not job.narration["key"]["recordings"]:
            continue
        try:
            record = json.loads(manifest_path(job.output).read_text()).get("narration") or {}
        except (OSError, ValueError):
            continue
        used, fallback, stale = record.get("recorded", []), record.get("synthetic", []), record.get("stale", [])
        line = (f"narration: {job.name}: {len(used)} of {len(used) + len(fallback)} lines from recordings in "
                f"{relative(Path(job.narration['recordings_dir']))}")
        if fallback:
            line += f"; in the synthetic voice: {', '.join(fallback)}"
        if stale:
            line += f"; STALE (the words changed since they were recorded, not used): {', '.join(stale)}"
        print(line, flush=True)


def export(jobs: list, settings: dict, model_dir: Path, dry_run: bool = False) -> int:
    """`render.py narration export`: every line of every scene of the recipe, said by its voice (synthesised
    now, or from the line cache), into <narration>/<lang>/script.csv and script.md."""
    from speech.script import write_script
    from .worker import lines_of
    if any(not job.narration for job in jobs):
        raise UsageError("narration export needs a voice and a movie format: drop --voice none / --format")
    langs = {job.params.get("lang", "en") for job in jobs}
    if len(langs) != 1:
        raise UsageError(f"narration export writes one language's script at a time, got {', '.join(sorted(langs))}")
    if dry_run:
        print(f"narration: would say the lines of {len(jobs)} scene(s) into "
              f"{relative(settings['narration'] / next(iter(langs)) / 'script.csv')}", flush=True)
        return 0
    rows, titles = [], {}
    for i, job in enumerate(jobs, 1):
        print(f"[{i}/{len(jobs)}] {job.name}  saying its lines", flush=True)
        scene_title, lines = lines_of(job, model_dir)
        titles[job.spec.name] = scene_title
        rows += [{"scene": job.spec.name, "line_id": line["line_id"], "caption": line["text"],
                  "spoken": line["spoken"], "seconds": line["seconds"]} for line in lines]
    csv_path, md_path = write_script(settings["narration"], langs.pop(), rows, titles)
    total = sum(r["seconds"] for r in rows)
    print(f"narration: {len(rows)} lines, {total / 60:.1f} min of speech -> {relative(csv_path)}, "
          f"{relative(md_path)}", flush=True)
    return 0


def worker_env(job: dict) -> str:
    """GPT_LECTURE_VOICE for a render process: the job's narration settings, or empty (silent)."""
    return json.dumps(job["voice"]) if job.get("voice") else ""


def set_worker_env(job: dict) -> None:
    from speech.narrator import ENV_VOICE
    os.environ[ENV_VOICE] = worker_env(job)


def say_failure(reason: str) -> bool:
    """A render that failed on its narration input (a recording too long, an unknown line id): printed as a usage
    error (one line); True if it was one."""
    prefix = "NarrationError: "
    if reason.startswith(prefix):
        print(f"render.py: error: {reason[len(prefix):]}", file=sys.stderr)
        return True
    return False
