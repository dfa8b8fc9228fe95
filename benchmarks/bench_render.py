#!/usr/bin/env python3
"""Plain `manim render`, one scene after another, against `render.py --jobs 2`, both from a cold cache.

render.py renders silent clips here (`--voice none`), as plain `manim render` does, so that both draw the same
frames; what speaking costs is benchmarks/bench_narration.py's.

    python benchmarks/bench_render.py                 # 3 runs at preview quality
    python benchmarks/bench_render.py --runs 5 --quality medium
    python benchmarks/bench_render.py --scene queries_keys --quality high    # one clip on every core

The set is the lecture recipe (lecture.toml) rendered in both languages. Each run
starts from empty media folders for both tools (no LaTeX, text or partial-movie
cache), then times a no-op rerun of render.py (everything up to date). Medians are
reported; docs/lab/rendering-measurements.md records the figures.

With --scene, one scene (default parameters) instead: plain `manim render` from a cold
cache; `render.py --jobs 2` from empty media (its first render: split while it renders,
its plays counted alongside); then, with the plan and caches that render left,
`render.py --force` with --jobs 1 and with --jobs 2 (re-rendering one scene, the everyday
case). Wall time and the CPU time of every process are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pipeline.recipe import RENDER_KEYS  # noqa: E402
from scenes.catalog import find  # noqa: E402

MANIM_QUALITY = {"preview": "-ql", "medium": "-qm", "high": "-qh", "4k": "-qk"}


def renders(recipe: Path) -> list[tuple[str, dict]]:
    """(scene, parameters) for every recipe entry, in English and in Chinese."""
    data = tomllib.loads(recipe.read_text())
    shared = {k: v for k, v in data.get("lecture", {}).items() if k not in RENDER_KEYS}   # render settings
    out = []
    for entry in data["scene"]:
        params = {**shared, **{k: v for k, v in entry.items() if k not in ("name", "section")}}
        for lang in ("en", "zh"):
            out.append((entry["name"], {**params, "lang": lang}))
    return out


def timed(cmd: list[str], env: dict | None = None) -> float:
    start = time.monotonic()
    subprocess.run(cmd, cwd=REPO, env={**os.environ, **(env or {})}, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def timed_cpu(cmd: list[str], env: dict | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and every process it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(cmd, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def one_scene(name: str, quality: str, runs: int, tmp: Path) -> list[dict]:
    spec = find(name)
    rows = []
    for run in range(1, runs + 1):
        plain_media, ours = tmp / f"plain-{run}", tmp / f"ours-{run}"
        ours_cmd = [sys.executable, "render.py", name, "--quality", quality, "--voice", "none", "--media", str(ours)]
        row = {"load_before": os.getloadavg()[0]}
        row["plain_manim"] = timed_cpu([sys.executable, "-m", "manim", "render", MANIM_QUALITY[quality],
                                        "--media_dir", str(plain_media), spec.path, spec.cls])
        row["render_py_jobs2_first"] = timed_cpu([*ours_cmd, "--jobs", "2"])
        row["render_py_jobs1_again"] = timed_cpu([*ours_cmd, "--jobs", "1", "--force"])
        row["render_py_jobs2_again"] = timed_cpu([*ours_cmd, "--jobs", "2", "--force"])
        row["load_after"] = os.getloadavg()[0]
        plain = row["plain_manim"][0]
        print(f"run {run}: " + "   ".join(f"{k} {v[0]:.1f} s (cpu {v[1]:.1f} s, {v[0] / plain:.3f}x)"
                                          for k, v in row.items() if isinstance(v, tuple))
              + f"   (1-min load {row['load_before']:.1f} -> {row['load_after']:.1f})", flush=True)
        rows.append(row)
        shutil.rmtree(plain_media, ignore_errors=True)
        shutil.rmtree(ours, ignore_errors=True)
    return rows


def plain_manim(jobs: list[tuple[str, dict]], quality: str, media: Path) -> float:
    total = 0.0
    for name, params in jobs:
        spec = find(name)
        total += timed([sys.executable, "-m", "manim", "render", MANIM_QUALITY[quality], "--media_dir", str(media),
                        "-o", f"{name}-{params['lang']}", spec.path, spec.cls],
                       env={"GPT_LECTURE_PARAMS": json.dumps(params)})
    return total


def render_py(recipe: Path, quality: str, media: Path) -> float:
    return timed([sys.executable, "render.py", "--config", str(recipe), "--quality", quality, "--voice", "none",
                  "--jobs", "2", "--media", str(media)])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--quality", choices=list(MANIM_QUALITY), default="preview")
    p.add_argument("--recipe", type=Path, default=REPO / "lecture.toml")
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument("--scene", help="benchmark one scene on every core instead of the recipe")
    args = p.parse_args()

    if args.scene:
        with tempfile.TemporaryDirectory() as tmp:
            timed([sys.executable, "-c", "import manim, model"])  # warm the disk cache, untimed
            rows = one_scene(find(args.scene).name, args.quality, args.runs, Path(tmp))
        if args.json:
            args.json.write_text(json.dumps({"scene": args.scene, "quality": args.quality, "cores": os.cpu_count(),
                                             "runs": rows}, indent=1) + "\n")
        return 0

    jobs = renders(args.recipe)
    with tempfile.TemporaryDirectory() as tmp:
        both = Path(tmp) / "both.toml"
        both.write_text("\n".join(
            f'[[scene]]\nname = "{name}"\n' + "".join(f"{k} = {json.dumps(v)}\n" for k, v in params.items())
            for name, params in jobs))
        timed([sys.executable, "-c", "import manim, model"])  # warm the disk cache, untimed
        rows = []
        for run in range(1, args.runs + 1):
            plain_media, ours = Path(tmp) / f"plain-{run}", Path(tmp) / f"ours-{run}"
            load_before = os.getloadavg()[0]
            sequential = plain_manim(jobs, args.quality, plain_media)
            parallel = render_py(both, args.quality, ours)
            noop = render_py(both, args.quality, ours)
            rows.append({"sequential_s": sequential, "render_py_jobs2_s": parallel, "ratio": parallel / sequential,
                         "noop_rerun_s": noop, "load_before": load_before, "load_after": os.getloadavg()[0]})
            print(f"run {run}: plain manim {sequential:6.1f} s   render.py --jobs 2 {parallel:6.1f} s   "
                  f"ratio {parallel / sequential:.3f}   no-op rerun {noop:.2f} s   "
                  f"(1-min load {load_before:.1f} -> {rows[-1]['load_after']:.1f}; "
                  f"other work on the machine slows the parallel run most)", flush=True)
            shutil.rmtree(plain_media, ignore_errors=True)
            shutil.rmtree(ours, ignore_errors=True)
    median = {k: statistics.median(r[k] for r in rows) for k in rows[0] if not k.startswith("load")}
    print(f"median of {args.runs}: plain manim {median['sequential_s']:.1f} s, render.py --jobs 2 "
          f"{median['render_py_jobs2_s']:.1f} s, ratio {median['ratio']:.3f} (target <= 0.55), "
          f"no-op rerun {median['noop_rerun_s']:.2f} s (target <= 2)")
    if args.json:
        args.json.write_text(json.dumps({"quality": args.quality, "renders": len(jobs), "cores": os.cpu_count(),
                                         "runs": rows, "median": median}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
