"""python -m model {train,eval,trace,params,demo,superposition,lab}

Every user mistake is one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .errors import ModelError
from .numpy_gpt import to_jsonable

EXIT_USAGE = 2


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["superposition"]:  # its own parser, so `superposition --help` reaches it
        return _guarded(lambda: cmd_superposition(argv[1:]))
    if argv[:1] == ["lab"]:            # the lab (model/lab.py): its own parser too
        from .lab import cli as lab_cli
        return _guarded(lambda: lab_cli(argv[1:]))
    parser = argparse.ArgumentParser(prog="python -m model", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="train the small GPT from scratch (fixed seed) and write its weights directory")
    p.add_argument("--out", type=Path, default=None, help="weights directory to write (default: model/weights)")
    p.add_argument("--steps", type=int, default=None, help="optimiser steps (default: the shipped recipe)")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON")

    p = sub.add_parser("eval", help="per language: validation loss vs the entropy floor, relation and recall "
                                    "accuracy; the sport circuit (causal tracing) and the directions")
    p.add_argument("--weights", type=Path, default=None, help="weights directory (default: model/weights)")
    p.add_argument("--partners", type=int, default=None,
                   help="causal tracing: corrupting partners per person and swap (default 1; training records 5)")
    p.add_argument("--shuffles", type=int, default=None,
                   help="directions: shuffled-label null runs (default 100; training records 1000)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("trace", help="run a prompt through the NumPy model and show every intermediate")
    p.add_argument("prompt")
    p.add_argument("--weights", type=Path, default=None)
    p.add_argument("--temperature", type=float, default=1.0, help="for the next-token probabilities (default 1)")
    p.add_argument("--json", action="store_true", help="the full trace as JSON (masked scores are null, meaning -inf)")

    p = sub.add_parser("params", help="parameter counts by role: shipped, gpt2-small, gpt3-175b, or a weights dir")
    p.add_argument("name", nargs="?", default="shipped")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("demo", help="load the shipped model (train it if missing) and trace a prompt")
    p.add_argument("prompt", nargs="?", default="michael jordan plays")

    sub.add_parser("superposition", help="the superposition lab: `pack` or `toy` (see superposition --help)")
    sub.add_parser("lab", help="retrain the model without each part: `record` or `show` (see lab --help)")

    args = parser.parse_args(argv)
    return _guarded(lambda: COMMANDS[args.command](args))


def _guarded(run) -> int:
    try:
        return run()
    except ModelError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `... --json | head`
        sys.stderr.close()
        return 141


def cmd_train(args) -> int:
    from .train import TrainConfig, train
    from .weights import DEFAULT_DIR
    tc = TrainConfig() if args.steps is None else TrainConfig(steps=args.steps)
    if tc.steps < 1:
        raise ModelError(f"--steps must be at least 1, got {tc.steps}")
    out = args.out or DEFAULT_DIR
    _, metrics = train(tc, out)
    print(f"wrote {out}", file=sys.stderr)
    _print_metrics(metrics, args.json)
    return 0


def cmd_eval(args) -> int:
    from .evaluate import EVAL_SAMPLE, evaluate_dir
    partners = EVAL_SAMPLE["partners_per_person"] if args.partners is None else args.partners
    shuffles = EVAL_SAMPLE["shuffles"] if args.shuffles is None else args.shuffles
    if partners < 1:
        raise ModelError(f"--partners must be at least 1, got {partners}")
    if shuffles < 1:
        raise ModelError(f"--shuffles must be at least 1, got {shuffles}")
    _print_metrics(evaluate_dir(args.weights, partners, shuffles), args.json)
    return 0


def _print_metrics(metrics: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(to_jsonable(metrics), indent=1))
        return
    for key in ("val_loss", "entropy_floor", "excess_loss", "recall_accuracy", "train_seconds"):
        if key in metrics:
            print(f"{key:>16}: {metrics[key]}")
    for lang in ("en", "zh"):
        if lang in metrics:
            m = metrics[lang]
            relations = ", ".join(f"{k} {v:.3f}" for k, v in m["relations"].items())
            print(f"{lang:>16}: val_loss {m['val_loss']:.4f} (floor {m['entropy_floor']:.4f}, "
                  f"excess {m['excess_loss']:.4f}); recall {m['recall_accuracy']:.3f}; {relations}")
    if "circuits" in metrics:
        for swap, look in metrics["circuits"]["lookup"].items():
            print(f"{'swap ' + swap:>16}: last-name MLP {look['last_name_mlp']['share']:.2f} "
                  f"(layer {look['last_name_mlp']['layer']}), relation-word MLP {look['relation_mlp']['share']:.2f}, "
                  f"relation-word attention {look['relation_attn']['share']:.2f}")
    if "directions" in metrics:
        for name, d in metrics["directions"]["embedding"].items():
            print(f"{name:>16}: held-out {d['held_out_accuracy']:.2f} (null {d['null']['held_out_mean']:.2f}), "
                  f"parallelogram {d['parallelogram_accuracy']:.2f} (null {d['null']['parallelogram_mean']:.2f})")


def cmd_trace(args) -> int:
    from .numpy_gpt import NumpyGPT, check_temperature, probabilities, to_jsonable
    check_temperature(args.temperature)
    gpt = NumpyGPT.load(args.weights)
    started = time.perf_counter()
    trace = gpt.trace(args.prompt)
    seconds = time.perf_counter() - started
    probs = probabilities(trace["logits"][-1], args.temperature)
    if args.json:
        out = to_jsonable(trace)
        out["attention"] = [layer["attn"]["weights"] for layer in out["layers"]]
        out["next_token"] = {"temperature": args.temperature,
                             "probabilities": to_jsonable(probs)}
        json.dump(out, sys.stdout)
        print()
        return 0
    c = gpt.config
    print(f"tokens   {' | '.join(trace['tokens'])}")
    print(f"model    {c.n_layer} layers x {c.n_head} heads, d_model {c.n_embd}, d_head {c.d_head}, "
          f"context {c.n_positions}, vocabulary {c.vocab_size}  (trace: {seconds * 1000:.2f} ms)")
    print(f"next word at T = {args.temperature:g}:")
    for i in probs.argsort()[::-1][:5]:
        print(f"  {gpt.tokenizer.words[i]:>12}  {probs[i]:7.2%}   logit {trace['logits'][-1][i]:+.2f}")
    print("attention from the last token (strongest key per head):")
    for li, layer in enumerate(trace["layers"]):
        row = layer["attn"]["weights"][:, -1, :]
        heads = [f"h{h}->{trace['tokens'][row[h].argmax()]!r} {row[h].max():.2f}" for h in range(c.n_head)]
        print(f"  layer {li}: " + ", ".join(heads))
    return 0


def cmd_params(args) -> int:
    from .params import parameter_split, resolve
    split = parameter_split(resolve(args.name))
    if args.json:
        print(json.dumps(split, indent=1))
        return 0
    print(f"{args.name}: {split['total']:,} parameters")
    for key in ("embedding", "attention", "mlp", "unembedding", "layernorm"):
        note = "  (tied to the embedding)" if key == "unembedding" else ""
        print(f"  {key:>12}: {split[key]:>17,}  {split['fractions'][key]:6.1%}{note}")
    return 0


def cmd_demo(args) -> int:
    from .weights import DEFAULT_DIR
    if not (DEFAULT_DIR / "model.safetensors").is_file():
        from .train import TrainConfig, train
        print(f"no weights in {DEFAULT_DIR}: training them (about two minutes)", file=sys.stderr)
        train(TrainConfig(), DEFAULT_DIR)
    return cmd_trace(argparse.Namespace(prompt=args.prompt, weights=None, temperature=1.0, json=False))


def cmd_superposition(argv: list[str]) -> int:
    from .superposition_cli import cli
    return cli(argv)


COMMANDS = {"train": cmd_train, "eval": cmd_eval, "trace": cmd_trace, "params": cmd_params, "demo": cmd_demo}

if __name__ == "__main__":
    sys.exit(main())
