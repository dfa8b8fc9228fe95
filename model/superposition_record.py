"""The superposition chapter's recorded runs: one command makes them, the scenes only read them.

    python -m model superposition record            # (re)write model/snapshots/superposition.json

The heavy runs (10,000 unit vectors in 100 dimensions, with the exact histogram of all 49,995,000 pairwise angles
after every step; the toy model at several sparsities with its W at checkpoints; the packing counts at small d;
a random projection of 10,000 perpendicular directions for the Johnson-Lindenstrauss lemma)
are deterministic (fixed seeds). Their result is stored as JSON (never pickle) under a content key: the SHA-256 of
the recipe below, the source of the lab (model/superposition.py) and of this file, and the torch version. A scene
calls load(), which checks the key and never recomputes: a changed lab or recipe is one clear error that names
the command to run.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

from . import superposition as lab
from .config import GPT3_175B
from .errors import ModelError

PATH = Path(__file__).resolve().parent / "snapshots" / "superposition.json"

RECIPE = {
    "pack": {"n_vectors": 10_000, "dim": 100, "steps": 20, "seed": 0},
    "band": {"eps_deg": 1.0, "measured_dims": [5, 10, 20, 50, 100], "steps": 300, "seed": 0,
             "curve_dims": [round(10 ** (0.05 * k)) for k in range(6, 101)] + [GPT3_175B.n_embd],
             "gpt3_dim": GPT3_175B.n_embd, "target_count": 10_000},
    # the Johnson-Lindenstrauss lemma: N = the packing run's N; eps = 1/2, halved while the lemma's dimension for N
    # points stays within GPT-3's width (model/superposition.py jl_epsilons); one seeded projection per dimension
    "jl": {"n_points": 10_000, "eps_start": 0.5, "max_dim": GPT3_175B.n_embd, "seed": 0},
    "toy": {"sparsities": [0.0, 0.7, 0.9, 0.99], "seed": 0, "steps": 1500,
            "checkpoints": [0, 10, 20, 35, 50, 75, 100, 150, 200, 300, 400, 550, 700, 900, 1150, 1500]},
}


def content_key(recipe: dict | None = None) -> str:
    """SHA-256 over the recipe, the lab's source, this file's source and the torch version."""
    h = hashlib.sha256()
    h.update(json.dumps(recipe or RECIPE, sort_keys=True).encode())
    for path in (Path(lab.__file__), Path(__file__)):
        h.update(path.read_bytes())
    h.update(torch.__version__.encode())
    return h.hexdigest()


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def record_packing(r: dict, progress=_say) -> dict:
    """The packing run, with the exact histogram of every pair at every step (step 0 = the random start)."""
    steps = []

    def observe(step, V):
        steps.append({"step": step, **lab.pair_histogram(V)})
        progress(f"record: packing step {step}/{r['steps']}")

    out = lab.pack_near_orthogonal(r["n_vectors"], r["dim"], steps=r["steps"], seed=r["seed"], observe=observe)
    return {**{k: out[k] for k in ("n_vectors", "dim", "steps", "seed", "lr", "margin_cos", "margin_deg")},
            "bounds": out["bounds"], "snapshots": steps, "seconds": out["seconds_total"]}


def record_band(r: dict, progress=_say) -> dict:
    """How many directions fit within 90 +- eps: measured by the lab's packing at small d, the Welch/Levenshtein
    ceiling and the random-vector estimate along the dimension, and all three at GPT-3's width."""
    eps = r["eps_deg"]
    measured = []
    for d in r["measured_dims"]:
        progress(f"record: packing within 90 +- {eps:g} degrees in {d} dimensions")
        measured.append(lab.measured_count(d, eps, steps=r["steps"], seed=r["seed"]))
    curve = [{"dim": d, "bound_count": lab.bound_count(d, eps), "random_estimate": lab.random_count_estimate(d, eps),
              "random_pair_outside": lab.random_pair_outside(d, eps)} for d in sorted(set(r["curve_dims"]))]
    g = r["gpt3_dim"]
    target = r["target_count"]
    lo, hi = 2, 2
    while lab.random_count_estimate(hi, eps) < target:      # the first width where random vectors give `target`
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if lab.random_count_estimate(mid, eps) < target else (lo, mid)
    return {"eps_deg": eps, "measured": measured, "curve": curve,
            "random_reaches": {"count": target, "dim": hi, "random_estimate": lab.random_count_estimate(hi, eps)},
            "gpt3": {"dim": g, "bound_count": lab.bound_count(g, eps),
                     "random_estimate": lab.random_count_estimate(g, eps),
                     "random_pair_outside": lab.random_pair_outside(g, eps)}}


def record_jl(r: dict, progress=_say) -> dict:
    """The Johnson-Lindenstrauss lemma for the chapter's N points: per distortion eps (jl_epsilons), the dimension the
    lemma guarantees, how many more dimensions 10 times the points would need, and the worst distortion a seeded
    random projection of the N perpendicular axes into that dimension makes over all pairs."""
    rows = []
    for eps in lab.jl_epsilons(r["n_points"], r["max_dim"], r["eps_start"]):
        k = lab.jl_dimension(r["n_points"], eps)
        progress(f"record: random projection of {r['n_points']} points into {k} dimensions (eps {eps:g})")
        rows.append({"eps": eps, "dim": k, "tenfold_dims": lab.jl_tenfold_dims(eps),
                     "projection": lab.random_projection_distortion(r["n_points"], k, seed=r["seed"])})
    return {"n_points": r["n_points"], "seed": r["seed"], "max_dim": r["max_dim"], "rows": rows,
            "form": "Dasgupta & Gupta (2003), Theorem 2.1: k >= 4 ln N / (eps^2/2 - eps^3/3)"}


def record_toy(r: dict, progress=_say) -> dict:
    runs = []
    for s in r["sparsities"]:
        progress(f"record: toy model at sparsity {s:g}")
        runs.append(lab.train_toy_model(s, steps=r["steps"], seed=r["seed"], checkpoints=r["checkpoints"]))
    return {"runs": runs}


def build(recipe: dict | None = None, progress=_say) -> dict:
    recipe = recipe or RECIPE
    t0 = time.perf_counter()
    out = {"key": content_key(recipe), "recipe": recipe,
           "pack": record_packing(recipe["pack"], progress),
           "band": record_band(recipe["band"], progress),
           "jl": record_jl(recipe["jl"], progress),
           "toy": record_toy(recipe["toy"], progress)}
    out["seconds"] = time.perf_counter() - t0
    return out


def write(data: dict, path: Path = PATH) -> Path:
    """Write to a temporary name beside `path`, then rename: never a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".superposition-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, separators=(",", ":"))
            f.write("\n")
        os.chmod(tmp, 0o644)                    # mkstemp makes it private; it is a shipped file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load(path: Path = PATH) -> dict:
    """The recorded runs, if they were made by the current lab and recipe; otherwise one clear ModelError."""
    hint = "run `python -m model superposition record`"
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ModelError(f"the superposition snapshots are missing ({path}); {hint}") from None
    except (OSError, ValueError) as e:
        raise ModelError(f"the superposition snapshots cannot be read ({path}: {e}); {hint}") from None
    if not isinstance(data, dict) or data.get("key") != content_key():
        raise ModelError(f"the superposition snapshots are out of date (the lab or its recipe changed); {hint}")
    return data


def summary(data: dict) -> str:
    p, b = data["pack"], data["band"]
    first, last = p["snapshots"][0], p["snapshots"][-1]
    lines = [f"recorded in {data['seconds']:.0f} s, key {data['key'][:12]}",
             f"packing {p['n_vectors']} in {p['dim']}-d: closest pair {first['min_deg']:.2f} -> {last['min_deg']:.2f} "
             f"deg over all {last['pairs']} pairs; bound 90 +- {p['bounds']['band_deg']:.2f}",
             "within 90 +- {:g}: measured ".format(b["eps_deg"])
             + ", ".join(f"d={m['dim']}: {m['count']}" for m in b["measured"])
             + f"; at GPT-3's {b['gpt3']['dim']}: random estimate {b['gpt3']['random_estimate']:.3g}, "
               f"bound {b['gpt3']['bound_count']}"]
    j = data["jl"]
    lines.append(f"Johnson-Lindenstrauss, {j['n_points']} points: "
                 + ", ".join(f"eps {r['eps']:g} -> k {r['dim']}, worst found {r['projection']['worst_distortion']:.3f}"
                             for r in j["rows"]))
    for r in data["toy"]["runs"]:
        lines.append(f"toy S={r['sparsity']:g}: loss {r['loss']:.5f}, D_i "
                     + " ".join(f"{x:.2f}" for x in r["dims_per_feature"]))
    return "\n".join(lines)


def cli(argv: list[str]) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="python -m model superposition record",
                                     description="record the superposition chapter's runs into " + str(PATH))
    parser.add_argument("--check", action="store_true", help="only say whether the recorded file is current")
    args = parser.parse_args(argv)
    if args.check:
        print(summary(load()))
        return 0
    data = build()
    write(data)
    print(summary(data))
    return 0
