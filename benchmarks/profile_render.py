#!/usr/bin/env python3
"""Where the time of one render goes: cairo drawing, LaTeX, text, encoding and the rest (Python).

    python benchmarks/profile_render.py --scene token_embedding --quality medium
    python benchmarks/profile_render.py --scene token_embedding --quality high --top 25

Renders one scene in this process, as a render process of render.py does (same settings: manim's cache off,
a fresh LaTeX and text cache unless --cache DIR), under cProfile, and prints:

- wall time and CPU time: the main thread's, the other threads' (manim encodes each partial movie in a
  thread of its own, libx264 in threads of its own: cProfile sees none of them), and the child processes'
  (latex, dvisvgm);
- the main thread's wall time split by what it was doing (cumulative time of entry points that do not call
  one another, CATEGORIES): drawing frames with cairo, LaTeX (latex and dvisvgm), text (Pango), turning SVG into
  shapes, handing frames to the encoder (waiting when its queue is full), closing and joining the partial
  movies, and the rest (construct(), animations, updaters: Python);
- optionally the top functions by cumulative time (--top N).

The profiler itself slows Python-heavy code, so the shares are of a profiled run; the wall time of an
unprofiled render is printed too when --plain is given (a second render).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pipeline import cache, recipe, run, worker  # noqa: E402

# (label, file suffix, function name): the cumulative time of these is counted; none of them calls another.
CATEGORIES = [
    ("drawing frames (cairo)", "manim/renderer/cairo_renderer.py", "update_frame"),
    ("LaTeX: latex + dvisvgm (cached per slot)", "manim/utils/tex_file_writing.py", "tex_to_svg_file"),
    ("text: Pango lays out the glyphs", "manim/mobject/text/text_mobject.py", "_text2svg"),
    ("SVG to shapes (LaTeX and text)", "manim/mobject/svg/svg_mobject.py", "generate_mobject"),
    ("handing frames to the encoder", "manim/scene/scene_file_writer.py", "write_frame"),
    ("closing partial movies (waiting for the encoder)", "manim/scene/scene_file_writer.py", "end_animation"),
    ("joining the partial movies", "manim/scene/scene_file_writer.py", "combine_to_movie"),
]


def cpu() -> dict:
    self_ = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"process": self_.ru_utime + self_.ru_stime, "main": time.thread_time(),
            "children": children.ru_utime + children.ru_stime}


def job_for(scene: str, quality: str, work: Path, cache_dir: Path) -> dict:
    args = recipe.build_parser().parse_args([scene, "--quality", quality])
    jobs, settings = recipe.plan(args)
    model_dir = recipe.model_directory(settings)
    recipe.resolve(jobs, model_dir, work / "media")
    job = jobs[0]
    env = cache.environment()
    model = cache.model_digest(model_dir)
    job.key = cache.cache_key(job, model, env)
    spec = run.job_spec(job, work / "w", 0, work / "media", model_dir, model, env,
                           {"sources": {}, "hashed_at_ns": 0})
    spec["slot_dir"] = str(cache_dir)
    return spec


def profiled(spec: dict) -> tuple[float, dict, pstats.Stats]:
    profile = cProfile.Profile()
    before, t0 = cpu(), time.perf_counter()
    profile.enable()
    worker.render_scene(spec, Path(spec["work"]))
    profile.disable()
    wall, after = time.perf_counter() - t0, cpu()
    return wall, {k: after[k] - before[k] for k in after}, pstats.Stats(profile)


def shares(stats: pstats.Stats) -> dict[str, float]:
    found = {label: 0.0 for label, _, _ in CATEGORIES}
    for (file, _, name), (_, _, _, cumulative, _) in stats.stats.items():
        for label, suffix, function in CATEGORIES:
            if file.endswith(suffix) and name == function:
                found[label] += cumulative
    return found


def compare_encoders(args) -> int:
    import statistics
    runs: dict[int, list[float]] = {1: [], args.encoders: []}
    with tempfile.TemporaryDirectory(prefix="profile-render-") as tmp:
        tmp = Path(tmp)
        spec = job_for(args.scene, args.quality, tmp, args.cache or tmp / "cache")
        for i in range(1 + 2 * args.compare_encoders):
            encoders = 1 if i % 2 else args.encoders   # run 0 warms the caches and is not counted
            worker.ENCODERS_IN_FLIGHT = encoders
            shutil.rmtree(spec["work"], ignore_errors=True)
            Path(spec["work"]).mkdir(parents=True)
            load, before, t0 = os.getloadavg()[0], cpu(), time.perf_counter()
            worker.render_scene(spec, Path(spec["work"]))
            wall, after = time.perf_counter() - t0, cpu()
            used = after["process"] - before["process"]
            print(f"{'warm-up' if i == 0 else 'run ' + str(i)}: {encoders} encoder(s) in flight: {wall:.1f} s wall, "
                  f"{used:.1f} s CPU, 1-minute load {load:.2f}", flush=True)
            if i:
                runs[encoders].append(wall)
    one, many = statistics.median(runs[1]), statistics.median(runs[args.encoders])
    print(f"median wall: 1 encoder {one:.1f} s, {args.encoders} encoders {many:.1f} s, ratio {many / one:.3f}")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scene", default="token_embedding")
    p.add_argument("--quality", default="medium", choices=list(recipe.QUALITIES))
    p.add_argument("--cache", type=Path, help="LaTeX and text cache to use (default: a fresh one: cold)")
    p.add_argument("--top", type=int, default=0, help="also print the top N functions by cumulative time")
    p.add_argument("--only", default="", help="with --top: only functions whose file or name matches this regular expression")
    p.add_argument("--plain", action="store_true", help="also time the same render without the profiler")
    p.add_argument("--json", type=Path, help="write the figures here as well")
    p.add_argument("--encoders", type=int, default=worker.ENCODERS_IN_FLIGHT,
                   help=f"partial movies encoded while drawing (render.py: {worker.ENCODERS_IN_FLIGHT}; "
                        f"ManimCE's default: 1)")
    p.add_argument("--compare-encoders", type=int, default=0, metavar="N",
                   help="instead: N unprofiled renders each with 1 encoder in flight (ManimCE's default) and with "
                        "--encoders, alternating, after one untimed render that warms the caches; prints each "
                        "run (wall, CPU, load) and the medians")
    args = p.parse_args()
    if args.compare_encoders:
        return compare_encoders(args)
    worker.ENCODERS_IN_FLIGHT = args.encoders
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="profile-render-") as tmp:
        tmp = Path(tmp)
        cache = args.cache or tmp / "cache"
        spec = job_for(args.scene, args.quality, tmp, cache)
        wall, used, stats = profiled(spec)
        found = shares(stats)
        plain = None
        if args.plain:
            shutil.rmtree(spec["work"], ignore_errors=True)
            Path(spec["work"]).mkdir(parents=True)
            t0 = time.perf_counter()
            worker.render_scene(spec, Path(spec["work"]))
            plain = time.perf_counter() - t0
    rest = wall - sum(found.values())
    print(f"{args.scene} at {args.quality}, {args.encoders} encoder(s) in flight: {wall:.1f} s wall under cProfile"
          + (f", {plain:.1f} s without it" if plain is not None else "")
          + f"; 1-minute load {load[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")
    print(f"CPU: main thread {used['main']:.1f} s, other threads (encoding) {used['process'] - used['main']:.1f} s, "
          f"child processes (latex, dvisvgm) {used['children']:.1f} s")
    print("main thread's wall time:")
    for label, seconds in [*found.items(), ("the rest: construct(), animations, updaters (Python)", rest)]:
        print(f"  {label:<52} {seconds:7.1f} s  {100 * seconds / wall:5.1f} %")
    if args.top:
        stats.sort_stats("cumulative").print_stats(*([args.only] if args.only else []), args.top)
    if args.json:
        args.json.write_text(json.dumps({"scene": args.scene, "quality": args.quality, "wall": wall, "plain": plain,
                                         "encoders": args.encoders, "cpu": used, "main_thread": {**found, "rest": rest},
                                         "load": [load[0], os.getloadavg()[0]]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
