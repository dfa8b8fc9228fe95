"""Measure a model against the language it was trained on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .data import VAL_SEED, Split, make_split
from .language import Language
from .torch_gpt import TorchGPT
from .weights import load_dir

VAL_STREAMS = 2_000


@torch.no_grad()
def evaluate(model: TorchGPT, val: Split, batch_size: int = 500) -> dict:
    """val_loss vs the entropy floor, plus top-1 accuracy on the two tasks that need attention + MLP."""
    model.eval()
    losses, correct = [], []
    for start in range(0, len(val.ids), batch_size):
        ids = torch.from_numpy(val.ids[start:start + batch_size])
        logits = model(ids[:, :-1])
        targets = ids[:, 1:]
        losses.append(F.cross_entropy(logits.transpose(1, 2), targets, reduction="none").numpy())
        correct.append((logits.argmax(-1) == targets).numpy())
    loss, hit = np.concatenate(losses), np.concatenate(correct)
    metrics = {
        "val_loss": float(loss.mean()),
        "entropy_floor": val.entropy_floor,
        "generator_nll": float(-val.logp.mean()),
        "fact_accuracy": float(hit[val.kind == "sport"].mean()),
        "recall_accuracy": float(hit[val.kind == "recall"].mean()),
        "n_val_tokens": int(loss.size),
        "n_fact_tokens": int((val.kind == "sport").sum()),
        "n_recall_tokens": int((val.kind == "recall").sum()),
    }
    metrics["excess_loss"] = metrics["val_loss"] - metrics["entropy_floor"]
    model.train()
    return metrics


@torch.no_grad()
def facts_known(model: TorchGPT, tokenizer, language: Language) -> dict:
    """For every person, is "first last plays" -> sport the model's top-1 word?"""
    model.eval()
    prompts = [f"{p.first} {p.last} plays" for p in language.people]
    ids = torch.tensor([tokenizer.encode(p) for p in prompts])
    top = model(ids)[:, -1].argmax(-1).tolist()
    wrong = [p for p, t in zip(prompts, top) if tokenizer.words[t] != language.sport_of(*p.split()[:2])]
    return {"facts_known": len(prompts) - len(wrong), "facts_total": len(prompts), "facts_wrong": wrong}


def evaluate_dir(directory: Path | str | None = None) -> dict:
    config, tensors, tokenizer = load_dir(directory)
    model = TorchGPT.from_tensors(config, tensors)
    language = Language()
    metrics = evaluate(model, make_split(VAL_STREAMS, config.n_positions, VAL_SEED, language))
    metrics.update(facts_known(model, tokenizer, language))
    return metrics
