"""Autoregressive generation: predict the next word, sample it, append it, predict again.

    from model import NumpyGPT
    from model.generate import generate
    steps = generate(NumpyGPT.load(), "a silky orange", steps=4, temperature=1.0, seed=0)

Sampling is by the inverse of the cumulative distribution: at each step one number u is drawn uniformly from
[0, 1) by NumPy's seeded generator (`numpy.random.default_rng(seed)`); the words are laid end to end on [0, 1),
most probable first (the lower id first on a tie), each as long as its probability, and the sampled word is the
one whose stretch holds u. The same seed gives the same u's and so the same words;
every step records its u, so anyone can check the draw against the probabilities. T = 0 is the argmax (the
lowest id on a tie) and draws no u.
"""

from __future__ import annotations

import numpy as np

from .errors import ModelError
from .numpy_gpt import check_temperature, probabilities


def order(p: np.ndarray) -> np.ndarray:
    """Token ids, most probable first; the lower id first on a tie."""
    return np.argsort(-np.asarray(p, dtype=np.float64), kind="stable")


def sample(p: np.ndarray, u: float) -> int:
    """The token whose stretch of [0, 1) holds u (0 <= u < 1), the words laid end to end in order(p)."""
    ranked = order(p)
    cdf = np.cumsum(np.asarray(p, dtype=np.float64)[ranked])
    return int(ranked[min(np.searchsorted(cdf, u * cdf[-1], side="right"), len(cdf) - 1)])


def candidates(gpt, p: np.ndarray, top_k: int) -> tuple[list[dict], float]:
    """The top_k words of a distribution, most probable first, and the total probability of all the others."""
    words, ranked = gpt.tokenizer.words, order(p)
    top = [{"token_id": int(i), "word": words[int(i)], "probability": float(p[i])} for i in ranked[:top_k]]
    return top, float(p[ranked[top_k:]].sum())


def step_record(gpt, ids: list[int], p: np.ndarray, temperature: float, u: float | None, top_k: int) -> dict:
    """One generation step as the manifest holds it: the context, the shown candidates, the draw."""
    ranked = order(p)
    token = int(ranked[0]) if u is None else sample(p, u)
    rank = int(np.flatnonzero(ranked == token)[0])
    shown, other = candidates(gpt, p, top_k)
    return {
        "token_ids": list(ids),
        "temperature": temperature,
        "candidates": shown,
        "other": other,
        "u": u,
        "sampled": {"token_id": token, "word": gpt.tokenizer.words[token], "probability": float(p[token]),
                    "cumulative_before": float(p[ranked[:rank]].sum()), "rank": rank},
    }


def generate(gpt, prompt: str | list[int], steps: int, temperature: float = 1.0, seed: int = 0,
             top_k: int = 5) -> list[dict]:
    """`steps` rounds of predict → sample → append, from `prompt`; one record per step (see step_record)."""
    T = check_temperature(temperature)
    if not isinstance(steps, int) or steps < 1:
        raise ModelError(f"steps must be a whole number >= 1, got {steps!r}")
    if not isinstance(seed, int) or seed < 0:
        raise ModelError(f"seed must be a whole number >= 0, got {seed!r}")
    ids = list(gpt.encode(prompt)) if isinstance(prompt, str) else [int(i) for i in prompt]
    if not ids:
        raise ModelError("the prompt is empty")
    room = gpt.config.n_positions
    if len(ids) + steps - 1 > room:
        raise ModelError(f"{len(ids)} prompt tokens and {steps} steps do not fit the model's context of {room}")
    rng = np.random.default_rng(seed)
    records = []
    for _ in range(steps):
        p = probabilities(gpt.trace(ids)["logits"][-1], T)
        u = None if T == 0 else float(rng.random())
        record = step_record(gpt, ids, p, T, u, top_k)
        records.append(record)
        ids = ids + [record["sampled"]["token_id"]]
    return records
