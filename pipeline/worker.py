"""One render, inside its own render process. worker() reads its job spec (job.json in its work folder), draws the
scene with manim (render_scene, with pipeline.cairo_paths and pipeline.encoder installed), records its plays
(record_plays), checks its sources again (cache.sources_after_render) and leaves its result: the clip installed
with its manifest (pipeline.manifest), or for a part of a clip its files (part.json), or a plan (plan.json).

The worker never schedules and never chooses what to render: it renders exactly its job spec, and every failure
becomes one line in error.txt. manim and the scenes are imported only once a render starts, in the render process,
so every render process imports the project's modules afresh (see runners.PRELOAD).
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path

from scenes.catalog import SCENES

from .cache import environment, model_digest, sources_after_render
from .manifest import install, manifest_record, save_plan, write_json
from .narration import set_worker_env
from .recipe import EXIT_FAILED, EXIT_INTERRUPTED, QUALITIES


def worker(job_file: Path) -> int:
    """Render one job into its work folder, then move the result into place atomically."""
    PROCESS_STARTED[0] = time.perf_counter()
    job = json.loads(job_file.read_text())
    work = Path(job["work"])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(EXIT_INTERRUPTED))
    try:
        started = time.monotonic()
        if job.get("deliver"):   # on a Dask worker: the same environment and model as the cache key says
            check_remote(job)
        produced, scene, plays = render_scene(job, work)
        if job.get("plan"):
            write_json(work / "plan.json", {"plays": plays, "reached": scene.reached})
            return 0
        sources, changed = sources_after_render(job, Path(job["repo"]))
        if job.get("part"):
            last = job["part"]["upto"] < 0 and scene.part_limit is None
            files = [str(f) for f in scene.renderer.file_writer.partial_movie_files if f is not None]
            if job.get("deliver"):   # sent back as bytes: named inside the work folder
                files = [os.path.relpath(f, work) for f in files]
            write_json(work / "part.json", {
                "files": files,
                "plays": plays, "sources": sources, "changed": changed,
                "sections": [[sec.name, len(sec.partial_movie_files)] for sec in scene.renderer.file_writer.sections],
                "limit": scene.part_limit, "record": manifest_record(job, scene) if last else None})
            return 0
        if changed:
            (work / "stale.txt").write_text(", ".join(changed) + "\n")
        if job.get("deliver"):   # the parent installs it, from the bytes of these files
            write_json(work / "result.json", {
                "produced": os.path.relpath(produced, work), "record": manifest_record(job, scene),
                "seconds": time.monotonic() - started, "sources": sources, "changed": changed, "plays": plays})
            return 0
        install(job, produced, manifest_record(job, scene), time.monotonic() - started, sources, changed)
        save_plan(job, plays)
        return 0
    except BaseException as e:  # noqa: BLE001 - every failure becomes one line for the parent
        if isinstance(e, SystemExit) and e.code == EXIT_INTERRUPTED:
            raise
        traceback.print_exc()
        message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        (work / "error.txt").write_text(f"{type(e).__name__}: {message}\n")
        return EXIT_FAILED


def check_remote(job: dict) -> None:
    """A render on a Dask worker must draw what this machine would: the versions in the cache key and the
    same model (its project's sources are checked after the render, as everywhere)."""
    here = environment()
    if here != job["environment"]:
        theirs = job["environment"]
        diff = [f"python {here['python']} (render.py: {theirs['python']})"] if here["python"] != theirs["python"] else []
        for group in ("distributions", "debian"):
            for name, version in here.get(group, {}).items():
                if theirs.get(group, {}).get(name) != version:
                    diff.append(f"{name} {version} (render.py: {theirs.get(group, {}).get(name)})")
        raise RuntimeError(f"this worker's environment differs from render.py's: {', '.join(diff) or 'its layout'}")
    if model_digest(Path(job["model_dir"])) != job["model"]:
        raise RuntimeError(f"this worker's model at {job['model_dir']} is not the one render.py keys the cache with")


# Partial movies encoded while the scene draws the next animations (ManimCE's max_inflight_encoders). Its default,
# 1, makes the scene wait at the end of every animation until its movie is encoded (17 % of a medium-quality
# render's wall time in benchmarks/profile_render.py); 4 saved 13 % of the wall time, but twice, on a loaded
# machine, one animation's frames of such a render differed from plain `manim render`'s (CI, and a helper's run;
# never reproduced on demand), so render.py encodes one partial movie at a time, as ManimCE does, until that is
# understood (docs/lab/rendering-measurements.md). tests/test_render.py compares every frame with plain `manim render`.
ENCODERS_IN_FLIGHT = 1
# libx264's preset for the partial movies, per quality (None: ManimCE's, medium). At 1080p60 medium took about
# half of a render's CPU time; superfast is the fastest preset whose frames are at least as close to the drawn
# frames as medium's (PSNR, mean and worst frame) with files at most twice the size, at 1080p60 and at 2160p60:
# benchmarks/encoder_presets.py, docs/lab/encoder_presets.json and encoder_presets_4k.json, docs/lab/rendering-measurements.md. Preview
# and medium keep ManimCE's encoding, byte for byte.
ENCODER_PRESETS = {"preview": None, "medium": None, "high": "superfast", "4k": "superfast"}
PLAN_FROM = 10**9   # a planning pass starts drawing at this play number: never
PROCESS_STARTED = [time.perf_counter()]   # when this render process began (set again by worker())


def render_scene(job: dict, work: Path):
    """Render the job's scene; returns the file manim wrote (None for a plan), the scene, and one entry per
    play (animation or wait) in order: [rendered, seconds of video, seconds of wall time]."""
    from scenes.lecture import ENV_CLEAN, ENV_MODEL, ENV_PARAMS, ENV_SECTION
    os.environ[ENV_CLEAN] = "1" if job.get("clean") else ""
    os.environ[ENV_MODEL] = job["model_dir"]
    os.environ[ENV_PARAMS] = json.dumps(job["params"])
    os.environ[ENV_SECTION] = job["section"] or ""
    set_worker_env(job)   # GPT_LECTURE_VOICE: where the line cache and the recordings are, or silent
    from manim import config, tempconfig

    from . import cairo_paths, encoder
    why = cairo_paths.install()   # the same paths, one cairo call per shape (pipeline/cairo_paths.py)
    if why:
        print(f"render.py: shapes drawn by ManimCE's own path loop: {why}", file=sys.stderr)
    encoder.install(ENCODER_PRESETS[job["quality"]])   # libx264's preset; a held frame converted once
    slot = Path(job["slot_dir"])
    still = job["format"] == "png"
    settings = {
        "quality": QUALITIES[job["quality"]][0], "media_dir": str(work / "media"),
        "video_dir": str(work / "video"), "images_dir": str(work / "images"),
        "partial_movie_dir": str(work / "partial"), "tex_dir": str(slot / "Tex"), "text_dir": str(slot / "texts"),
        "output_file": "render", "disable_caching": True, "progress_bar": "none", "verbosity": "WARNING",
        "write_to_movie": not still, "save_last_frame": still, "format": None if still else job["format"],
        "notify_outdated_version": False, "max_inflight_encoders": ENCODERS_IN_FLIGHT,
        # every partial movie stays until the parent has joined them: a part of a clip leaves its files for the
        # join, and ManimCE's clean_cache would otherwise delete all but the newest 100 as the part finishes
        "max_files_cached": -1,
    }
    part = job.get("part")
    if part:   # one contiguous range of plays (animations and waits); construct() still runs whole
        settings.update({"from_animation_number": part["from"], "upto_animation_number": part["upto"]})
    if job.get("plan"):   # count the plays and their lengths, draw nothing (every play is before the first)
        settings.update({"from_animation_number": PLAN_FROM, "write_to_movie": False, "save_last_frame": False})
    spec = SCENES[job["scene"]]
    module = importlib.import_module(spec.module)
    with tempconfig(settings):
        config.transparent = job["transparent"]
        if not still:
            config.format = job["format"]
        scene = getattr(module, spec.cls)()
        plays = record_plays(scene, work if part and part.get("follow") else None)
        if part and part["upto"] >= 0:
            # This part stops at its last play (manim ends construct() early there), before the scene's
            # later beats: the scene's own check that every beat was played is kept by the last part.
            scene.tear_down = lambda: None
        scene.render()
        writer = scene.renderer.file_writer
        if job.get("plan"):
            return None, scene, plays
        if still:
            produced = Path(writer.image_file_path)
        elif job["format"] == "gif":
            produced = Path(writer.gif_file_path)
        else:
            produced = Path(writer.movie_file_path)
    if not part and not produced.is_file():
        raise RuntimeError(f"manim wrote no {job['format']} file")
    return produced, scene, plays


def lines_of(job, model_dir: Path) -> tuple[str, list[dict]]:
    """A job's scene played in this process without drawing (as a plan is counted), its lines said by its voice
    (synthesised now, or from the line cache): its title and, per line, line_id, text, spoken and seconds."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="narration-") as tmp:
        spec = {"scene": job.spec.name, "params": job.params, "quality": "preview", "format": "mp4",
                "transparent": False, "clean": False, "section": None, "model_dir": str(model_dir),
                "slot_dir": str(Path(tmp) / "slot"), "plan": True, "voice": job.narration["env"]}
        _, scene, _ = render_scene(spec, Path(tmp))
    lines = [{"line_id": c["speech"]["line_id"], "text": c["text"], "spoken": c["speech"]["spoken"],
              "seconds": c["speech"]["seconds"]} for c in scene.captions if c.get("speech")]
    return scene.s("title"), lines


def record_plays(scene, follow: Path | None = None) -> list:
    """Wrap this scene's renderer.play (every animation and wait goes through it) to record, per play,
    whether it was rendered, the seconds of video it added, and the wall time it took; and, in
    scene.reached, the seconds since the render process started when each play ended.

    With follow (the work folder of a part whose end render.py sets while it draws, see run()), before each
    play: how far it is (progress.json: plays done, their seconds of video, the wall time since the first
    began), and the last play render.py asks it to draw (limit.json), if it has asked. The first limit read is
    taken as it is or, when this part has already drawn past it, at the last play drawn; the part stops after
    it (scene.part_limit) and says where in ack.json, before drawing on: the next part starts after it."""
    from manim import config
    renderer, plays, reached = scene.renderer, [], []
    play = renderer.play
    scene.reached, scene.part_limit, first = reached, None, []

    def follow_render_py() -> None:
        done = renderer.num_plays
        now = time.perf_counter()
        first[:] = first or [now]
        write_json(follow / "progress.json", {"plays": done, "video": renderer.time, "drawing": now - first[0]})
        if scene.part_limit is None and (follow / "limit.json").is_file():
            scene.part_limit = max(int(json.loads((follow / "limit.json").read_text())["limit"]), done - 1, 0)
            config.upto_animation_number = scene.part_limit   # manim ends construct() after it
            scene.tear_down = lambda: None   # the later beats are another part's
            write_json(follow / "ack.json", {"limit": scene.part_limit})

    def recorded(*args, **kwargs):
        if follow is not None:
            follow_render_py()
        video, wall = renderer.time, time.perf_counter()
        play(*args, **kwargs)
        end = time.perf_counter()
        plays.append([not renderer.skip_animations, renderer.time - video, end - wall])
        reached.append(end - PROCESS_STARTED[0])
    renderer.play = recorded
    return plays
