"""Measure a model against the language it was trained on, per language."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .data import VAL_SEED, Split, make_split
from .language import LANGUAGES, SPORT_VERBS, SPORTS, Language, vocabulary, words_of
from .torch_gpt import TorchGPT
from .weights import load_dir

VAL_STREAMS = 2_000          # per language
EVAL_SAMPLE = {"partners_per_person": 1, "shuffles": 100}    # `eval`: small and quick
TRAIN_SAMPLE = {"partners_per_person": 10, "shuffles": 1000}  # recorded in metrics.json at training time
RELATION_KINDS = ("sport", "city", "country", "sport_verb", "pronoun")
# sport, city, country: the fact's answer (top-1 over the vocabulary); pronoun: he/she after "and" (top-1);
# sport_verb: the verb right after a name, top-1 among the language's eight sport verbs


def sport_verb_ids(lang: str) -> list[int]:
    index = {w: i for i, w in enumerate(vocabulary())}
    return [index[w] for w in words_of(lang, [SPORT_VERBS[s] for s in SPORTS])]


@torch.no_grad()
def _losses(model: TorchGPT, val: Split, batch_size: int = 500) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per target: the loss, whether it is the top-1 word, and whether it is the top-1 among its language's
    sport verbs (the verb after a name is one choice among several sentence continuations, so its accuracy
    is asked among the verbs)."""
    model.eval()
    losses, correct, verb_correct = [], [], []
    verbs = {lang: torch.tensor(sport_verb_ids(lang)) for lang in LANGUAGES}
    for start in range(0, len(val.ids), batch_size):
        ids = torch.from_numpy(val.ids[start:start + batch_size])
        logits = model(ids[:, :-1])
        targets = ids[:, 1:]
        losses.append(F.cross_entropy(logits.transpose(1, 2), targets, reduction="none").numpy())
        correct.append((logits.argmax(-1) == targets).numpy())
        best_verb = torch.stack([verbs[lang][logits[i][:, verbs[lang]].argmax(-1)]
                                 for i, lang in enumerate(val.lang[start:start + batch_size])])
        verb_correct.append((best_verb == targets).numpy())
    model.train()
    return np.concatenate(losses), np.concatenate(correct), np.concatenate(verb_correct)


def evaluate(model: TorchGPT, val: Split) -> dict:
    """val_loss vs the entropy floor; top-1 accuracy on every deterministic fact word and on the recall words."""
    loss, hit, verb_hit = _losses(model, val)
    hit_any = hit
    hit = np.where(val.kind == "sport_verb", verb_hit, hit)
    metrics = {
        "val_loss": float(loss.mean()),
        "accuracy": float(hit_any.mean()),     # top-1 over every target word
        "entropy_floor": val.entropy_floor,
        "generator_nll": float(-val.logp.mean()),
        "relations": {k: float(hit[val.kind == k].mean()) for k in RELATION_KINDS if (val.kind == k).any()},
        "sport_by_template": {t: float(hit[(val.kind == "sport") & (val.template == t)].mean())
                              for t in sorted(set(val.template[val.kind == "sport"].tolist()))},
        "fact_accuracy": float(hit[np.isin(val.kind, ("sport", "city", "country"))].mean()),
        "recall_accuracy": float(hit[val.kind == "recall"].mean()),
        "n_val_tokens": int(loss.size),
        "n_relation_tokens": {k: int((val.kind == k).sum()) for k in RELATION_KINDS},
        "n_recall_tokens": int((val.kind == "recall").sum()),
    }
    metrics["excess_loss"] = metrics["val_loss"] - metrics["entropy_floor"]
    return metrics


def validation_splits(context: int, language: Language) -> dict[str, Split]:
    """The mixture and each language on its own (seed VAL_SEED, VAL_STREAMS windows each)."""
    return {"mixture": make_split(VAL_STREAMS, context, VAL_SEED, language),
            **{lang: make_split(VAL_STREAMS, context, VAL_SEED, language, lang) for lang in LANGUAGES}}


def evaluate_all(model: TorchGPT, splits: dict[str, Split]) -> dict:
    """Top level: the training mixture; keys "en" and "zh": each language on its own."""
    metrics = evaluate(model, splits["mixture"])
    for lang in LANGUAGES:
        metrics[lang] = evaluate(model, splits[lang])
    return metrics


@torch.no_grad()
def facts_known(model: TorchGPT, tokenizer, language: Language) -> dict:
    """For every person and language, is "first last plays" (迈克尔 乔丹 打) -> sport the model's top-1 word?"""
    model.eval()
    out = {}
    for lang in LANGUAGES:
        g = language.grammar(lang)
        prompts = [[g.t(p.first), g.t(p.last), g.t("plays")] for p in language.people]
        answers = [g.t(p.sport) for p in language.people]
        ids = torch.tensor([tokenizer.encode(" ".join(p)) for p in prompts])
        top = model(ids)[:, -1].argmax(-1).tolist()
        wrong = [" ".join(p) for p, a, t in zip(prompts, answers, top) if tokenizer.words[t] != a]
        out[lang] = {"facts_known": len(prompts) - len(wrong), "facts_total": len(prompts), "facts_wrong": wrong}
    model.train()
    return {"facts_known": out}


def mechanisms(gpt, language: Language, partners: int = EVAL_SAMPLE["partners_per_person"],
               shuffles: int = EVAL_SAMPLE["shuffles"]) -> dict:
    """The circuits (causal tracing of the sport relation) and the directions, measured in NumPy."""
    from .analysis.circuits import sport_circuits
    from .analysis.directions import directions_report
    return {"circuits": sport_circuits(gpt, language, partners_per_person=partners),
            "directions": directions_report(gpt, language, n_shuffles=shuffles)}


def evaluate_dir(directory: Path | str | None = None, partners: int = EVAL_SAMPLE["partners_per_person"],
                 shuffles: int = EVAL_SAMPLE["shuffles"], with_mechanisms: bool = True) -> dict:
    from .numpy_gpt import NumpyGPT
    config, tensors, tokenizer = load_dir(directory)
    model = TorchGPT.from_tensors(config, tensors)
    language = Language()
    metrics = evaluate_all(model, validation_splits(config.n_positions, language))
    metrics.update(facts_known(model, tokenizer, language))
    if with_mechanisms:
        metrics.update(mechanisms(NumpyGPT(config, tensors, tokenizer), language, partners, shuffles))
    return metrics
