"""Helpers shared by the attention scene tests: one head recomputed independently from the raw weights."""

from __future__ import annotations

import math

import numpy as np


def recompute_head(gpt, prompt: str, layer: int, head: int) -> dict:
    """The head's q, k, scores, scaled, masked and weights, written out again from the raw weights."""
    c = gpt.config
    tr = gpt.trace(prompt)
    x = np.asarray(tr["layers"][layer]["resid_pre"], dtype=np.float64)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    x_hat = (x - mean) / np.sqrt(var + c.layer_norm_epsilon) * gpt.p(f"h.{layer}.ln_1.weight") \
        + gpt.p(f"h.{layer}.ln_1.bias")
    weights = gpt.head(layer, head)
    dh = c.d_head
    W_q, W_k, b_q, b_k = weights.W_Q, weights.W_K, weights.b_Q, weights.b_K
    Q, K = x_hat @ W_q + b_q, x_hat @ W_k + b_k
    scores = Q @ K.T
    scaled = scores / math.sqrt(dh)
    T = len(Q)
    masked = scaled.copy()
    masked[np.triu_indices(T, 1)] = -np.inf
    e = np.exp(masked - masked.max(-1, keepdims=True))
    return {"trace": tr, "x_hat": x_hat, "W_q": W_q, "W_k": W_k, "b_q": b_q, "b_k": b_k, "Q": Q, "K": K,
            "scores": scores, "scaled": scaled, "masked": masked, "weights": e / e.sum(-1, keepdims=True)}


def nan_for_none(rows) -> np.ndarray:
    """A manifest grid with null for −∞, back as numbers."""
    return np.array([[-np.inf if v is None else v for v in row] for row in rows], dtype=np.float64)
