"""What speaking costs a render once every line is in the line cache: the same clip rendered silent and spoken.

    python benchmarks/bench_narration.py [--scene architecture] [--quality preview] [--runs 3] [--json FILE]

Renders the scene at the quality (preview by default; high is 1080p60) with `--force`, alternating `--voice none` and `--voice auto` (after one spoken
render that fills the line cache), each in its own media folder, and reports the medians of the wall times. A
spoken clip is longer (its beats wait for the speech), so the cost of speaking itself is reported per second of
video as well: the spoken run's seconds per second of video against the silent run's, times the spoken clip's
length.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def render(scene: str, voice: str, media: Path, quality: str) -> tuple[float, float]:
    started = time.perf_counter()
    r = subprocess.run([sys.executable, str(REPO / "render.py"), scene, "--quality", quality, "--force",
                        "--voice", voice, "--media", str(media)], cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if r.returncode != 0:
        sys.exit(f"render failed: {r.stderr.strip().splitlines()[-1:]}")
    manifest = json.loads((media / quality / f"{scene}.mp4.json").read_text())
    return seconds, manifest["timeline"][-1]["end"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scene", default="architecture")
    p.add_argument("--quality", default="preview")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        render(args.scene, "auto", Path(tmp) / "warm", args.quality)   # every line into the line cache
        times = {"none": [], "auto": []}
        video = {}
        for _ in range(args.runs):
            for voice in ("none", "auto"):
                seconds, video[voice] = render(args.scene, voice, Path(tmp) / voice, args.quality)
                times[voice].append(seconds)
    silent, spoken = statistics.median(times["none"]), statistics.median(times["auto"])
    per_second = {v: statistics.median(times[v]) / video[v] for v in times}
    cost = (per_second["auto"] - per_second["none"]) * video["auto"]
    result = {"scene": args.scene, "quality": args.quality, "runs": args.runs, "silent_seconds": round(silent, 2),
              "spoken_seconds": round(spoken, 2), "silent_video": video["none"], "spoken_video": video["auto"],
              "speaking_cost_seconds": round(cost, 2),
              "seconds_per_minute_of_video": {v: round(60 * per_second[v], 1) for v in per_second},
              "times": times}
    print(f"{args.scene} at {args.quality}: silent {silent:.1f} s for {video['none']:.1f} s of video, spoken (lines "
          f"cached) {spoken:.1f} s for {video['auto']:.1f} s; speaking itself costs {cost:+.2f} s "
          f"(medians of {args.runs}); {60 * per_second['none']:.1f} s and {60 * per_second['auto']:.1f} s a minute of "
          f"video")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
