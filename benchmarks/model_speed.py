"""Benchmark: NumPy trace time for a 16-token prompt (median of many runs), and training wall time.

    .venv/bin/python benchmarks/model_speed.py            # trace only
    .venv/bin/python benchmarks/model_speed.py --train    # also time `python -m model train` into a temp dir
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from model import NumpyGPT  # noqa: E402

PROMPT_16 = "a fluffy blue tiny fox scurried the misty forest . the fox was blue . michael"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--train", action="store_true")
    args = parser.parse_args()

    gpt = NumpyGPT.load()
    ids = gpt.encode(PROMPT_16)
    assert len(ids) == 16
    for _ in range(10):
        gpt.trace(ids)
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        gpt.trace(ids)
        times.append(time.perf_counter() - t)
    times.sort()
    print(f"trace, 16 tokens: median {statistics.median(times) * 1e3:.2f} ms, "
          f"p90 {times[int(0.9 * len(times))] * 1e3:.2f} ms over {args.runs} runs")

    if args.train:
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "model", "train", "--out", f"{tmp}/w"], check=True,
                           cwd=Path(__file__).resolve().parent.parent, stderr=subprocess.DEVNULL)
            print(f"python -m model train: {time.perf_counter() - t:.1f} s wall")


if __name__ == "__main__":
    main()
