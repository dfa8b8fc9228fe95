"""Questions asked of a trace: which head looks back, what a head writes, what it promotes.

Scenes call these instead of doing model maths themselves; every function reads the trace
and the model's own weights.
"""

from __future__ import annotations

import numpy as np

from .errors import ModelError
from .numpy_gpt import NumpyGPT, layer_norm, probabilities


def lookback_scores(trace: dict, query: int, keys: list[int]) -> np.ndarray:
    """(layers, heads): the attention weight the query token puts on the given earlier tokens, summed."""
    T = len(trace["tokens"])
    if not 0 <= query < T or not keys or any(not 0 <= k <= query for k in keys):
        raise ModelError(f"look-back needs a query in 0..{T - 1} and keys at or before it, got {query} and {keys}")
    return np.array([layer["attn"]["weights"][:, query, keys].sum(-1) for layer in trace["layers"]])


def best_lookback_head(trace: dict, query: int, keys: list[int]) -> dict:
    """The (layer, head) whose query row puts the most weight on `keys`, and that weight (the score)."""
    scores = lookback_scores(trace, query, keys)
    layer, head = np.unravel_index(int(scores.argmax()), scores.shape)
    return {"layer": int(layer), "head": int(head), "score": float(scores[layer, head]),
            "rule": "largest total attention weight from the query token to the key tokens, over all layers and heads",
            "all_scores": scores}


def head_contribution(gpt: NumpyGPT, trace: dict, layer: int, head: int) -> np.ndarray:
    """ΔE from one head: its output through its own rows of W_O (T × d_model). The heads' sum + b_O is attn.out."""
    c = gpt.config
    _check_head(gpt, layer, head)
    W_O = gpt.p(f"h.{layer}.attn.c_proj.weight")[head * c.d_head:(head + 1) * c.d_head]
    return trace["layers"][layer]["attn"]["head_out"][head] @ W_O


def promoted_words(gpt: NumpyGPT, residual: np.ndarray, delta: np.ndarray, k: int = 5) -> list[dict]:
    """Which next words a residual update ΔE raises: logits(E + ΔE) − logits(E), read through ln_f and W_Eᵀ."""
    def logits(x):
        return layer_norm(x, gpt.p("ln_f.weight"), gpt.p("ln_f.bias"), gpt.config.layer_norm_epsilon)["out"] \
            @ gpt.p("wte.weight").T
    change = logits(residual + delta) - logits(residual)
    top = np.argsort(change)[::-1][:k]
    return [{"word": gpt.tokenizer.words[i], "token_id": int(i), "logit_change": float(change[i])} for i in top]


def ablation_effect(gpt: NumpyGPT, token_ids: list[int], layer: int, head: int, word: str) -> dict:
    """P(word next) with the head as trained, and with its output zeroed (the rest of the model re-run)."""
    _check_head(gpt, layer, head)
    if word not in gpt.tokenizer.vocab:
        raise ModelError(f"unknown word {word!r}")
    w = gpt.tokenizer.vocab[word]
    with_head = probabilities(gpt.trace(token_ids)["logits"][-1])[w]
    without = probabilities(gpt.trace(token_ids, ablate=((layer, head),))["logits"][-1])[w]
    return {"word": word, "layer": layer, "head": head,
            "p_with_head": float(with_head), "p_without_head": float(without)}


def _check_head(gpt: NumpyGPT, layer: int, head: int) -> None:
    c = gpt.config
    if not 0 <= layer < c.n_layer or not 0 <= head < c.n_head:
        raise ModelError(f"no head {layer}.{head}: the model has {c.n_layer} layers of {c.n_head} heads")
