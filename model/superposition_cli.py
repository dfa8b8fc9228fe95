"""The superposition lab's command line: `python -m model superposition pack|toy|record` (model/superposition.py
does the work, model/superposition_record.py writes the chapter's snapshots)."""

from __future__ import annotations

import argparse
import json
import sys

from .errors import ModelError
from .superposition import PERCENTILES, _check_sparsity, pack_near_orthogonal, train_toy_model


def _sparsity_list(values: list[str] | None) -> list[float]:
    if not values:
        return [0.0, 0.7, 0.9, 0.97, 0.99]
    out = []
    for v in values:
        out += [_check_sparsity(part.strip()) for part in v.split(",") if part.strip()]
    if not out:
        raise ModelError("--sparsity needs at least one number in [0, 1)")
    return out


def _ordinal(p: int) -> str:
    return "st" if p % 10 == 1 and p % 100 != 11 else "th"


def _print_pack(r: dict) -> None:
    b, a, bound = r["before"], r["after"], r["bounds"]
    print(f"{r['n_vectors']} unit vectors in {r['dim']} dimensions, {r['steps']} steps, "
          f"{r['seconds']:.1f} s (margin 90 +- {r['margin_deg']:.1f} deg)")
    print(f"{'angle':<22}{'random':>10}{'optimised':>11}")
    rows = [(f"{p}{_ordinal(p)} percentile", b["percentiles_deg"][f"p{p}"], a["percentiles_deg"][f"p{p}"], "°")
            for p in PERCENTILES]
    rows += [("closest pair (all)", b["min_deg"], a["min_deg"], "°"),
             ("most opposed (all)", b["max_deg"], a["max_deg"], "°"),
             ("within 89-91°", 100 * b["within_89_91"], 100 * a["within_89_91"], "%")]
    for label, before, after, unit in rows:
        print(f"{label:<22}{before:>9.2f}{unit}{after:>10.2f}{unit}")
    print(f"percentiles and 89-91° on {r['sample_pairs']} sampled pairs; "
          "closest and most opposed over all pairs")
    print(f"no arrangement keeps every pair within 90 +- {bound['band_deg']:.2f}° (Welch/Levenshtein bound)")


def _print_toy(runs: list[dict]) -> None:
    for r in runs:
        norms = " ".join(f"{v:.2f}" for v in r["norms"])
        dims = " ".join(f"{v:.2f}" for v in r["dims_per_feature"])
        print(f"S = {r['sparsity']:<5g} loss {r['loss']:.5f}  ||W_i|| {norms}  D_i {dims}")
        if "polar_deg" in r:  # in the plane: angles between neighbouring represented features
            polar = sorted(a for a, norm in zip(r["polar_deg"], r["norms"]) if norm > 0.5)
            gaps = [b - a for a, b in zip(polar, polar[1:] + [polar[0] + 360])] if len(polar) > 1 else []
            gaps = [min(gaps[0], 360 - gaps[0])] if len(gaps) == 2 else gaps
            print(f"{'':12}{len(polar)} features with norm > 0.5, "
                  f"{' '.join(f'{v:.0f}' for v in gaps) or 'no'} degrees apart")


def cli(argv: list[str]) -> int:
    if argv[:1] == ["record"]:   # the chapter's recorded runs (model/superposition_record.py)
        from .superposition_record import cli as record_cli
        return record_cli(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m model superposition",
                                     description="the superposition lab; `record` writes the lecture's snapshots")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="pack near-orthogonal unit vectors and compare angles with random")
    p.add_argument("--n", type=int, default=10_000, help="number of vectors (default 10000)")
    p.add_argument("--dim", type=int, default=100, help="dimensions (default 100)")
    p.add_argument("--steps", type=int, default=20, help="optimisation steps (default 20)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p = sub.add_parser("toy", help="train the toy model of superposition (5 features, 2 dims)")
    p.add_argument("--sparsity", action="append", metavar="S[,S...]",
                   help="feature sparsity in [0, 1); repeatable or comma-separated "
                        "(default 0,0.7,0.9,0.97,0.99)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)

    if args.command == "pack":
        shown = [0]

        def progress(step, steps):  # a line on stderr about every 10%
            tenth = 10 * step // steps
            if tenth > shown[0]:
                shown[0] = tenth
                print(f"packing: {100 * step // steps}% ({step}/{steps} steps)", file=sys.stderr, flush=True)

        r = pack_near_orthogonal(args.n, args.dim, steps=args.steps, seed=args.seed, progress=progress)
        if args.json:
            print(json.dumps({"command": "pack", **r}))
        else:
            _print_pack(r)
        return 0

    sparsities = _sparsity_list(args.sparsity)
    runs = []
    for s in sparsities:
        print(f"toy model: training at sparsity {s:g}", file=sys.stderr, flush=True)
        runs.append(train_toy_model(s, seed=args.seed))
    if args.json:
        print(json.dumps({"command": "toy", "runs": runs}))
    else:
        _print_toy(runs)
    return 0
