"""Benchmark: the lecture at GPT-2 small's scale (a seeded random-init GPT2LMHeadModel, 124M parameters, with GPT-2's
tokenizer built from js-tiktoken's ranks): load time, checkpoint digest (first and remembered), a 32-token NumPy
trace (in the precision the rule gives a checkpoint, float32, and by turns against the same trace in float64), the top-k
over 50,257 tokens, and each scene's preview render time against our model's.

    .venv/bin/python benchmarks/gpt2_scale.py                         # everything; writes docs/lab/gpt2_scale.json
    .venv/bin/python benchmarks/gpt2_scale.py --scenes next_token,parameters --checkpoint /tmp/gpt2-small
    .venv/bin/python benchmarks/gpt2_scale.py --scenes none           # the model figures only

The 32-token trace is also timed in a fresh process per BLAS thread count, 1 (a render process's share when two
render at once) and the machine's cores (one trace alone, as `python -m model trace` runs it): the goal of 150 ms is
for the trace on 2 cores.

The renders are silent (--voice none), one process each (--jobs 1), forced (--force), into a temporary media
folder that is kept (its path is printed last: the checkpoint's clips, to look at); the machine's load average is
recorded beside every figure (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from gpt2_checkpoints import FULL, make_checkpoint  # noqa: E402
from scenes.catalog import CHECKPOINT_SCENES  # noqa: E402

OUT = REPO / "docs" / "lab" / "gpt2_scale.json"
PROMPT_TOKENS = 32


def seconds(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return sorted(out)


def model_figures(checkpoint: Path, runs: int) -> dict:
    import numpy as np

    from model import NumpyGPT, probabilities
    from model.weights import DIGEST_MEMO, checkpoint_digests

    start_load = os.getloadavg()[0]
    (checkpoint / DIGEST_MEMO).unlink(missing_ok=True)
    first = seconds(lambda: checkpoint_digests(checkpoint), 1)[0]
    remembered = seconds(lambda: checkpoint_digests(checkpoint), 5)[0]
    load = seconds(lambda: NumpyGPT.load(checkpoint), 3)
    gpt = NumpyGPT.load(checkpoint)
    trace = trace_ms(gpt, runs)        # BLAS threads as the environment sets them (the docs' run: 1)
    ids = gpt.encode(" ".join(["The quick brown fox jumps over the lazy dog."] * 4))[:PROMPT_TOKENS]
    logits = gpt.trace(ids)["logits"][-1]
    topk = seconds(lambda: np.argsort(-probabilities(logits))[:5], 20)
    # the same trace in float64 (our model's precision), run by turns with the rule's, so both meet the same load
    wide = NumpyGPT(gpt.config, {k: v for k, v in gpt.params.items()}, gpt.tokenizer, dtype=np.float64)
    wide.trace(ids)
    both = [seconds(lambda: g.trace(ids), 1)[0] for _ in range(max(runs // 4, 2)) for g in (gpt, wide)]
    by_turns = {"rule": sorted(both[0::2]), "float64": sorted(both[1::2])}
    del wide
    return {
        "checkpoint": {"parameters": gpt.n_params, "bytes": (checkpoint / "model.safetensors").stat().st_size,
                       **{k: getattr(gpt.config, k) for k in ("n_layer", "n_embd", "n_head", "n_positions",
                                                             "vocab_size")}},
        "digest_first_s": round(first, 3), "digest_remembered_s": round(remembered, 4),
        "load_s": {"best": round(load[0], 2), "median": round(statistics.median(load), 2)},
        "trace_dtype": np.dtype(gpt.dtype).name,
        "trace_32_tokens_ms": trace,
        "trace_32_tokens_by_turns_ms": {k: {"best": round(v[0] * 1e3, 1), "median": round(statistics.median(v) * 1e3, 1),
                                            "runs": len(v)} for k, v in by_turns.items()},
        "top_k_over_vocabulary_ms": round(statistics.median(topk) * 1e3, 2),
        "load_average": os.getloadavg()[0],
        "load_average_at_start": start_load,
    }


def trace_ms(gpt, runs: int) -> dict:
    """The 32-token trace's wall and CPU time, in this process (its BLAS threads as the environment sets them)."""
    ids = gpt.encode(" ".join(["The quick brown fox jumps over the lazy dog."] * 4))[:PROMPT_TOKENS]
    assert len(ids) == PROMPT_TOKENS
    gpt.trace(ids)
    cpu = time.process_time()
    trace = seconds(lambda: gpt.trace(ids), runs)
    return {"best": round(trace[0] * 1e3, 1), "median": round(statistics.median(trace) * 1e3, 1), "runs": runs,
            "cpu_ms_mean": round((time.process_time() - cpu) / runs * 1e3, 1)}


def trace_ms_on_threads(checkpoint: Path, threads: int, runs: int) -> dict:
    """trace_ms in a fresh process whose BLAS uses `threads` threads (set before NumPy loads, as it must be)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    r = subprocess.run([sys.executable, __file__, "--trace-only", "--checkpoint", str(checkpoint), "--runs", str(runs)],
                       env=env, capture_output=True, text=True, check=True)
    return {**json.loads(r.stdout), "load_average": os.getloadavg()[0]}


def render_seconds(scene: str, model: Path | None, media: Path) -> float | str:
    cmd = [sys.executable, str(REPO / "render.py"), scene, "--voice", "none", "--force", "--jobs", "1",
           "--media", str(media)] + (["--model", str(model)] if model else [])
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:       # recorded, and the other scenes still measured
        return f"failed: {(r.stderr.strip().splitlines() or [''])[-1]}"
    return round(time.perf_counter() - t, 1)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", type=Path, help="a GPT-2-small checkpoint to reuse (made here if absent)")
    p.add_argument("--scenes", default="all", help="comma-separated, `all`, or `none`")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--trace-only", action="store_true", help=argparse.SUPPRESS)   # one process's trace_ms, as JSON
    args = p.parse_args()
    if args.trace_only:
        from model import NumpyGPT

        print(json.dumps(trace_ms(NumpyGPT.load(args.checkpoint), args.runs)))
        return
    tmp = Path(tempfile.mkdtemp(prefix="gpt2-scale-"))
    checkpoint = args.checkpoint or tmp / "gpt2-small"
    if not (checkpoint / "model.safetensors").is_file():
        t = time.perf_counter()
        make_checkpoint(checkpoint, FULL, seed=0)
        print(f"made {checkpoint} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    result = {"machine": {"cores": os.cpu_count(), "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS")},
              "model": model_figures(checkpoint, args.runs), "scenes": {}}
    result["model"]["trace_32_tokens_ms_by_blas_threads"] = {
        str(n): trace_ms_on_threads(checkpoint, n, args.runs) for n in sorted({1, os.cpu_count() or 1})}
    print(json.dumps(result["model"], indent=1), file=sys.stderr)
    scenes = [] if args.scenes == "none" else list(CHECKPOINT_SCENES) if args.scenes == "all" else args.scenes.split(",")
    for scene in scenes:
        ours = render_seconds(scene, None, tmp / "ours")
        theirs = render_seconds(scene, checkpoint, tmp / "gpt2")
        result["scenes"][scene] = {"ours_s": ours, "gpt2_small_s": theirs, "load_average": os.getloadavg()[0]}
        print(scene, result["scenes"][scene], file=sys.stderr)
    old = json.loads(OUT.read_text()) if OUT.is_file() else {}
    # a run of some scenes (or none) keeps the other scenes measured before
    result["scenes"] = {**{k: v for k, v in old.get("scenes", {}).items() if k not in result["scenes"]},
                        **result["scenes"]}
    fd, name = tempfile.mkstemp(dir=OUT.parent, prefix=".gpt2_scale.", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    os.replace(name, OUT)
    print(OUT)
    if not scenes:             # nothing to look at: the folder (and a checkpoint made in it) goes
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"the clips (ours, then the checkpoint's): {tmp / 'ours' / 'preview'}, {tmp / 'gpt2' / 'preview'}")


if __name__ == "__main__":
    main()
