"""The lab: why each part is there, shown by retraining our model without it.

Every variant is the shipped recipe (TrainConfig's defaults: same data, same steps, same schedule) with one part
switched off (torch_gpt.Parts) or, for one_head, one head of 64 in place of four of 16 (the same parameters: W_Q,
W_K, W_V and W_O keep their shapes). Each is trained from seeds 0, 1, 2 (seed 0 is the shipped model's) and
measured on the lecture's own measures: held-out loss against the entropy floor, next-word accuracy, fact recall
on the people (evaluate.facts_known, as `model eval`), story recall, the word-order test of positional_encoding
(the look-back prompt with its earlier words reversed), the attention weights' entropy over training, and the loss
when writing one word at a time (each next word predicted from its prefix alone, as generation must).

`python -m model lab record` writes model/snapshots/lab.json (after every run, atomically: seed 0 of every variant
first, then seed 1, then seed 2, so an interrupted recording keeps whole runs); `python -m model lab show` prints it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import deque
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .data import TRAIN_SEED, VAL_SEED, make_split
from .errors import ModelError, read_json
from .evaluate import VAL_STREAMS, evaluate, facts_known
from .language import LANGUAGES, Language, vocabulary
from .tokenizer import WordTokenizer, build_tokenizer
from .torch_gpt import Parts, TorchGPT
from .train import TrainConfig, optimise

RECORD = Path(__file__).parent / "snapshots" / "lab.json"
SEEDS = (0, 1, 2)
EVERY = 100            # a curve point every EVERY steps (and at the last step)
CURVE_WINDOWS = 256    # held-out windows of the mixture for the curves, the entropy and the word-by-word loss
ENTROPY_WINDOWS = 64
GENERATION = ("baseline", "no_mask")   # the variants whose loss when writing word by word is measured
SHORT = {"variant": "no_mask", "seed": 0, "steps": 20}   # the test's short run (tests/test_lab.py)

# name: (the switches, heads, what it tests)
VARIANTS = {
    "baseline": (Parts(), 4, "the shipped recipe: the reference every variant is compared with"),
    "no_position": (Parts(position_table=False), 4, "how much order the causal mask alone gives"),
    "no_mask": (Parts(causal_mask=False), 4, "a model that may read the words after each position: its training "
                "loss, and its loss when it must write one word at a time"),
    "no_scale": (Parts(scale=False), 4, "scores not divided by sqrt(d_k): the weights' entropy and the loss"),
    "one_head": (Parts(), 1, "one head of 64 in place of four of 16, the same parameters"),
    "no_residual": (Parts(residual=False), 4, "each sublayer's output replaces the stream instead of adding to it"),
    "no_layernorm": (Parts(layer_norm=False), 4, "ln_1, ln_2 and ln_f replaced by the identity"),
    "no_mlp": (Parts(mlp=False), 4, "attention only: no MLP in any block"),
    "linear_mlp": (Parts(gelu=False), 4, "the MLP with GELU replaced by the identity (one linear map)"),
}


class Data:
    """The shipped recipe's training windows and held-out windows, built once for every run."""

    def __init__(self, tc: TrainConfig):
        self.language = Language()
        self.train = make_split(tc.train_streams, tc.context, TRAIN_SEED, self.language)
        self.val = {lang: make_split(VAL_STREAMS, tc.context, VAL_SEED, self.language, lang) for lang in LANGUAGES}
        self.curve_ids = curve_ids(tc, self.language)
        self.tokenizer = WordTokenizer(build_tokenizer(vocabulary()))


def curve_ids(tc: TrainConfig, language: Language) -> torch.Tensor:
    """The held-out windows of the curves: CURVE_WINDOWS windows of the training mixture from the validation
    seed."""
    return torch.from_numpy(make_split(CURVE_WINDOWS, tc.context, VAL_SEED, language).ids)


def build(variant: str, seed: int, steps: int | None = None) -> tuple[TrainConfig, TorchGPT]:
    """The variant's recipe and its freshly initialised model (torch seeded first, as train() does)."""
    if variant not in VARIANTS:
        raise ModelError(f"no variant {variant!r}: use one of {', '.join(VARIANTS)}")
    parts, heads, _ = VARIANTS[variant]
    tc = TrainConfig(seed=seed, n_head=heads, record_mechanisms=False)
    if steps is not None:
        tc = replace(tc, steps=steps)
    torch.manual_seed(tc.seed)
    torch.set_num_threads(tc.threads)
    return tc, TorchGPT(tc.model_config(), tc.embedding_std, parts)


@torch.no_grad()
def held_out_loss(model: TorchGPT, ids: torch.Tensor, causal: bool | None = None) -> float:
    """Mean next-word loss over the windows, the whole window at once (causal None: the model's own mask)."""
    logits = model(ids[:, :-1], causal=causal)
    return float(F.cross_entropy(logits.transpose(1, 2), ids[:, 1:]))


@torch.no_grad()
def generating_loss(model: TorchGPT, ids: torch.Tensor) -> float:
    """Mean next-word loss when each word is predicted from its prefix alone, the way the model writes: for every
    t, the model is run on words 0..t and its last position predicts word t + 1. With a causal mask this equals
    the whole-window loss; without one, the whole-window loss let every position read the words after it."""
    total = 0.0
    T = ids.shape[1] - 1
    for t in range(T):
        logits = model(ids[:, :t + 1])[:, -1]
        total += float(F.cross_entropy(logits, ids[:, t + 1], reduction="sum"))
    return total / (ids.shape[0] * T)


@torch.no_grad()
def attention_entropy(model: TorchGPT, ids: torch.Tensor) -> list[float]:
    """Per layer: the attention weights' mean entropy (nats) over heads, windows and query positions 1..T-1
    (position 0 sees only itself under the mask)."""
    trace = model(ids[:, :-1], trace=True)
    out = []
    for layer in trace["layers"]:
        w = layer["attn"]["weights"][:, :, 1:, :]           # (B, H, T-1, T)
        out.append(float(-(torch.where(w > 0, w * w.log(), torch.zeros_like(w))).sum(-1).mean()))
    return out


def uniform_entropy(T: int, causal: bool) -> float:
    """The entropy of weights spread evenly over every key a query may see (positions 1..T-1): the ceiling."""
    return float(np.mean([math.log(t + 1 if causal else T) for t in range(1, T)]))


@torch.no_grad()
def order_test(model: TorchGPT, token_ids: list[int], words: list[str]) -> dict:
    """positional_encoding's word-order question (analysis.order_prediction) asked of a Torch variant: the
    prompt's most likely next word, its probability after the prompt and after the same tokens with the earlier
    ones reversed (the last kept), the reversed run's top word, and the total variation between the two."""
    from .analysis.heads import reversed_order
    reversed_ids = [token_ids[i] for i in reversed_order(len(token_ids))]
    p = [F.softmax(model(torch.tensor([run]))[0, -1].double(), -1).numpy() for run in (token_ids, reversed_ids)]
    w = int(np.argmax(p[0]))
    return {"word": words[w], "p_as_written": float(p[0][w]), "p_reversed": float(p[1][w]),
            "top_reversed": words[int(np.argmax(p[1]))], "total_variation": float(0.5 * np.abs(p[0] - p[1]).sum())}


def lookback_prompts(tokenizer) -> dict:
    """positional_encoding's default prompt in each language (scenes.prompts.lookback_prompt, the attention
    chapter's rule; scenes.prompts loads neither manim nor a model), as token ids."""
    from scenes.prompts import lookback_prompt
    out = {}
    for lang in LANGUAGES:
        prompt = lookback_prompt(lang)["prompt"]
        out[lang] = {"prompt": prompt, "token_ids": tokenizer.encode(prompt)}
    return out


def measure(model: TorchGPT, data: Data, prompts: dict, with_generation: bool = False) -> dict:
    """The lecture's measures of one trained model."""
    out = {}
    for lang in LANGUAGES:
        m = evaluate(model, data.val[lang])
        out[lang] = {k: m[k] for k in ("val_loss", "entropy_floor", "excess_loss", "accuracy", "fact_accuracy",
                                       "recall_accuracy", "relations")}
    known = facts_known(model, data.tokenizer, data.language)["facts_known"]
    out["facts_known"] = {lang: {"known": k["facts_known"], "total": k["facts_total"]} for lang, k in known.items()}
    out["order_test"] = {lang: order_test(model, p["token_ids"], data.tokenizer.words) for lang, p in prompts.items()}
    out["held_out_loss"] = held_out_loss(model, data.curve_ids)
    if with_generation:    # with a causal mask it equals held_out_loss: measured for the baseline, as a check
        out["generating_loss"] = generating_loss(model, data.curve_ids)
        out["mask_on_loss"] = held_out_loss(model, data.curve_ids, causal=True)
    return out


def run(variant: str, seed: int, data: Data, prompts: dict, steps: int | None = None, every: int = EVERY,
        progress=None, full: bool = True) -> dict:
    """Train one variant from one seed; its curves every `every` steps and (full) its final measures."""
    started = time.perf_counter()
    tc, model = build(variant, seed, steps)
    curve = {"step": [], "batch_loss": [], "train_loss": [], "held_out_loss": [], "attention_entropy": []}
    window, last = [], deque(maxlen=every)
    for step, loss in optimise(model, tc, data.train.ids):
        window.append(loss.item())
        last.append(window[-1])
        if step % every == 0 or step == tc.steps - 1:
            curve["step"].append(step)
            curve["batch_loss"].append(window[-1])                 # that step's batch (as train()'s log)
            curve["train_loss"].append(float(np.mean(window)))   # the mean batch loss since the last point
            curve["held_out_loss"].append(held_out_loss(model, data.curve_ids))
            curve["attention_entropy"].append(attention_entropy(model, data.curve_ids[:ENTROPY_WINDOWS]))
            window = []
            if progress:
                progress(variant, seed, step + 1, tc.steps, curve["train_loss"][-1])
    used = sum(p.numel() for p in model.parameters() if p.grad is not None)
    out = {"seed": seed, "steps": tc.steps, "curve": curve, "n_params_trained": used}
    if full:
        out["final"] = measure(model, data, prompts, with_generation=variant in GENERATION)
        out["final"]["train_loss"] = float(np.mean(last))   # the mean batch loss over the last `every` steps
    out["seconds"] = round(time.perf_counter() - started, 2)
    return out


def short_run(train_ids: np.ndarray, held_out: torch.Tensor) -> dict:
    """The test's run: SHORT's variant and seed for SHORT's steps, its batch loss at every step and its held-out
    loss at the end (tests/test_lab.py retrains it and must match)."""
    tc, model = build(SHORT["variant"], SHORT["seed"], SHORT["steps"])
    losses = [loss.item() for _, loss in optimise(model, tc, train_ids)]
    return {**SHORT, "train_loss": losses, "held_out_loss": held_out_loss(model, held_out)}


def summary(runs: list[dict]) -> dict:
    """Mean, min and max over seeds of each headline figure."""
    def stats(values):
        return {"mean": float(np.mean(values)), "min": float(np.min(values)), "max": float(np.max(values))}
    f = [r["final"] for r in runs]
    out = {"seeds": [r["seed"] for r in runs]}
    for key in ("train_loss", "held_out_loss", "generating_loss", "mask_on_loss"):
        if key in f[0]:
            out[key] = stats([x[key] for x in f])
    for lang in LANGUAGES:
        for key in ("val_loss", "excess_loss", "accuracy", "fact_accuracy", "recall_accuracy"):
            out[f"{key}_{lang}"] = stats([x[lang][key] for x in f])
        out[f"facts_known_{lang}"] = stats([x["facts_known"][lang]["known"] for x in f])
        out[f"order_p_as_written_{lang}"] = stats([x["order_test"][lang]["p_as_written"] for x in f])
        out[f"order_p_reversed_{lang}"] = stats([x["order_test"][lang]["p_reversed"] for x in f])
        out[f"order_tv_{lang}"] = stats([x["order_test"][lang]["total_variation"] for x in f])
    out["final_attention_entropy"] = stats([float(np.mean(r["curve"]["attention_entropy"][-1])) for r in runs])
    return out


def record(path: Path = RECORD, seeds=SEEDS, variants=tuple(VARIANTS), progress=sys.stderr,
           steps: int | None = None, resume: bool = False) -> dict:
    """Record every variant and seed, seed-major, writing the record after every run (atomically). steps None is
    the shipped recipe's; another count is for a quick look (the record's recipe says which). resume: keep every
    run of the record already at `path` (the same recipe), whatever seeds and variants this call names, and train
    only the named ones it lacks: `--resume --variants no_mlp` adds a variant, `--resume --seeds 3` adds seeds."""
    from .analysis.heads import no_position_attn_change
    from .numpy_gpt import NumpyGPT
    started = time.perf_counter()
    tc = TrainConfig() if steps is None else TrainConfig(steps=steps)
    old = load(path) if resume and Path(path).is_file() else None
    if old is not None and old.get("recipe") != asdict(tc):
        raise ModelError(f"{path}: recorded with another recipe; record afresh (without --resume)")
    data = Data(tc)
    prompts = lookback_prompts(data.tokenizer)
    shipped = NumpyGPT.load()
    rec = {
        "what": "the lab: the shipped recipe retrained with one part switched off, per variant and seed",
        "command": "python -m model lab record",
        "recipe": asdict(tc), "seeds": list(seeds), "every": EVERY, "curve_windows": CURVE_WINDOWS,
        "entropy_windows": ENTROPY_WINDOWS, "threads": tc.threads, "torch_version": torch.__version__,
        "prompts": prompts,
        "uniform_attention_entropy": {"causal": uniform_entropy(tc.context, True),
                                      "no_mask": uniform_entropy(tc.context, False)},
        "no_position": {lang: {"prompt": p["prompt"], "token_ids": p["token_ids"],
                               "attn_change": no_position_attn_change(shipped, p["token_ids"])["attn_change"]}
                        for lang, p in prompts.items()},
        "variants": {v: {"parts": asdict(VARIANTS[v][0]), "n_head": VARIANTS[v][1], "tests": VARIANTS[v][2],
                         "runs": []} for v in variants},
        "complete": False, "seconds": 0.0,
    }
    if old is not None:         # nothing recorded is dropped: the record's seeds and variants are the union
        named = set(variants) | set(old["variants"])
        rec["variants"] = {v: {"parts": asdict(VARIANTS[v][0]), "n_head": VARIANTS[v][1], "tests": VARIANTS[v][2],
                               "runs": []} for v in VARIANTS if v in named}
        for v, entry in old["variants"].items():
            if v in rec["variants"] and entry["runs"]:
                rec["variants"][v]["runs"] = list(entry["runs"])
                rec["variants"][v]["summary"] = summary(entry["runs"])
        rec["seeds"] = sorted(set(seeds) | set(old.get("seeds", [])))
        rec["seconds"] = old.get("seconds", 0.0)
        rec["short_run"] = old["short_run"]
    else:
        rec["short_run"] = short_run(data.train.ids, data.curve_ids)
    todo = [(seed, v) for seed in seeds for v in variants
            if seed not in [r["seed"] for r in rec["variants"][v]["runs"]]]
    total = len(todo) * tc.steps
    done = [0]
    spent = rec["seconds"]
    training = time.perf_counter()

    def report(variant, seed, step, steps, loss):
        if (step - 1) % 500 == 0 or step == steps:         # called at the curve's points: steps 1, 101, ...
            so_far = done[0] + step
            elapsed = time.perf_counter() - training
            eta = elapsed / so_far * (total - so_far)
            print(f"lab: {variant} seed {seed} step {step}/{steps} loss {loss:.4f}  {elapsed:6.0f}s training, "
                  f"ETA {eta / 60:.0f} min for {len(todo)} runs", file=progress, flush=True)

    for seed, v in todo:
        result = run(v, seed, data, prompts, steps=tc.steps, progress=report if progress else None)
        done[0] += tc.steps
        entry = rec["variants"][v]
        entry["runs"] = sorted(entry["runs"] + [result], key=lambda r: r["seed"])
        entry["summary"] = summary(entry["runs"])
        rec["seconds"] = round(spent + time.perf_counter() - started, 1)
        rec["complete"] = complete(rec)
        write(rec, path)
    rec["complete"] = complete(rec)
    write(rec, path)
    return rec


def complete(rec: dict) -> bool:
    """Every variant of the lab recorded at every seed of the record."""
    return set(rec["variants"]) == set(VARIANTS) and all(
        sorted(r["seed"] for r in e["runs"]) == rec["seeds"] for e in rec["variants"].values())


def write(rec: dict, path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def load(path: Path = RECORD) -> dict:
    path = Path(path)
    rec = read_json(path, f"no lab record at {path}: run `python -m model lab record`")
    if not isinstance(rec, dict) or not isinstance(rec.get("variants"), dict):
        raise ModelError(f"{path}: not a lab record (no variants)")
    return rec


CURVES = ("held_out_loss", "train_loss", "attention_entropy")


def _per_run(runs: list[dict], metric: str) -> list[list[float]]:
    """Each run's curve (attention entropy: the mean over layers at each point)."""
    return [[float(np.mean(x)) for x in r["curve"][metric]] for r in runs]


def _curve(runs: list[dict], metric: str) -> list[float]:
    """A curve averaged over the runs' seeds, point by point."""
    return [float(np.mean(col)) for col in zip(*_per_run(runs, metric))]


def _band(runs: list[dict], metric: str) -> list[list[float]]:
    """The seeds' spread of a curve, point by point: [lowest, highest] at each point."""
    return [[float(np.min(col)), float(np.max(col))] for col in zip(*_per_run(runs, metric))]


def why(variant: str, metric: str = "held_out_loss", rec: dict | None = None) -> dict:
    """One chapter's why, read from the record (scenes read this; they compute nothing): the standard model
    ("with") against the variant ("without"), each a mean over its recorded seeds. A curve metric (CURVES) gives
    its curves over training and their last points; another is a final measure (a key of a run's "final", e.g.
    "generating_loss", or "accuracy_en"-style keys of the summary), with the held-out loss curves beside it.
    "range_with" and "range_without" are the seeds' [lowest, highest] of the two figures, "band_with" and
    "band_without" of the curves at each point (one seed: lowest = highest)."""
    rec = rec or load()
    if variant not in rec["variants"] or variant == "baseline":
        raise ModelError(f"no variant {variant!r} in the lab record: use one of "
                         f"{', '.join(v for v in rec['variants'] if v != 'baseline')}")
    base, var = rec["variants"]["baseline"], rec["variants"][variant]
    if not base["runs"] or not var["runs"]:
        raise ModelError(f"the lab record has no run of {'baseline' if not base['runs'] else variant} yet")
    out = {"variant": variant, "metric": metric, "seeds_with": [r["seed"] for r in base["runs"]],
           "seeds_without": [r["seed"] for r in var["runs"]], "steps": base["runs"][0]["curve"]["step"]}
    if metric in CURVES:
        out["curve_with"], out["curve_without"] = _curve(base["runs"], metric), _curve(var["runs"], metric)
        out["with"], out["without"] = out["curve_with"][-1], out["curve_without"][-1]
        out["band_with"], out["band_without"] = _band(base["runs"], metric), _band(var["runs"], metric)
        out["range_with"], out["range_without"] = out["band_with"][-1], out["band_without"][-1]
        return out
    if metric not in base["summary"] or metric not in var["summary"]:
        raise ModelError(f"no measure {metric!r} for {variant}: use one of {', '.join(CURVES)} or "
                         f"{', '.join(k for k in var['summary'] if k != 'seeds')}")
    out["with"], out["without"] = base["summary"][metric]["mean"], var["summary"][metric]["mean"]
    out["range_with"], out["range_without"] = ([e["summary"][metric][k] for k in ("min", "max")] for e in (base, var))
    out["curve_with"], out["curve_without"] = _curve(base["runs"], "held_out_loss"), _curve(var["runs"],
                                                                                                "held_out_loss")
    out["band_with"], out["band_without"] = _band(base["runs"], "held_out_loss"), _band(var["runs"], "held_out_loss")
    out["curves_are"] = "held_out_loss"
    return out


# --- the command line ------------------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    def error(self, message):          # one line, exit 2 (no usage block)
        print(f"error: {self.prog}: {message}", file=sys.stderr)
        raise SystemExit(2)


def cli(argv: list[str]) -> int:
    parser = _Parser(prog="python -m model lab", description="retrain the model without each part, record, show")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("record", help=f"train every variant from each seed and write the record ({RECORD.name})")
    p.add_argument("--out", type=Path, default=RECORD, help="the record to write (default model/snapshots/lab.json)")
    p.add_argument("--seeds", type=int, default=len(SEEDS), help=f"seeds 0..N-1 (default {len(SEEDS)})")
    p.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated (default: all, baseline first)")
    p.add_argument("--resume", action="store_true", help="keep the runs already in the record; train the rest")
    p.add_argument("--steps", type=int, default=None, help="optimiser steps (default: the shipped recipe's; "
                                                            "fewer only for a quick look)")
    p = sub.add_parser("show", help="print the record as a table")
    p.add_argument("--record", type=Path, default=RECORD)
    p.add_argument("--markdown", action="store_true", help="the summary as a Markdown table (docs/model.md)")
    args = parser.parse_args(argv)
    if args.command == "record":
        if args.seeds < 1:
            raise ModelError(f"--seeds must be at least 1, got {args.seeds}")
        variants = tuple(v.strip() for v in args.variants.split(","))
        unknown = [v for v in variants if v not in VARIANTS]
        if unknown or not variants:
            raise ModelError(f"no variant {unknown[0] if unknown else ''!r}: use {', '.join(VARIANTS)}")
        if args.steps is not None and args.steps < 1:
            raise ModelError(f"--steps must be at least 1, got {args.steps}")
        rec = record(args.out, tuple(range(args.seeds)), variants, steps=args.steps, resume=args.resume)
        print(f"wrote {args.out} in {rec['seconds']:.0f} s", file=sys.stderr)
        return 0
    from .lab_show import markdown, table
    rec = load(args.record)
    print(markdown(rec) if args.markdown else table(rec))
    return 0
