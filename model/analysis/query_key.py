"""Why queries and keys, and why ÷ √d_k: two measurements the queries_keys scene shows.

- direct_comparison: one query's keys ranked two ways: by comparing the vectors the head reads directly (x̂ of the
  focus · x̂ of each token, LayerNorm's output at the head's layer) and by the head's own score (q·k, through the
  learned W_q and W_k). A word is most like itself, so comparing directly ranks the focus first; the head ranks the
  word its query asks for first.
- random_dots: dot products of pairs of random vectors (every entry drawn from a standard normal, seeded) for a
  few lengths d: their spread grows like √d, which is why attention divides its scores by √d_k.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError

RANDOM_DOTS = {"n": 200, "seed": 0}      # pairs per length, and the seed of the generator that draws them
DIRECT_RULE = ("keys 0..focus ranked by x̂_focus · x̂_key (the head's inputs, LayerNorm's output at its layer, "
               "compared directly) and by the head's score q·k; ties keep the earlier key; rank 1 is the largest")
RANDOM_RULE = ("for each length d, n pairs of vectors of d entries each drawn from a standard normal "
               "(numpy default_rng(seed), one generator for all lengths in order); each pair's dot product; "
               "the spread is their standard deviation (population), to compare with √d")


def _ranks(values: np.ndarray) -> tuple[list[int], list[int]]:
    order = [int(j) for j in np.argsort(-values, kind="stable")]
    rank = [0] * len(order)
    for r, j in enumerate(order):
        rank[j] = r + 1
    return order, rank


def direct_comparison(trace: dict, layer: int, head: int, query: int) -> dict:
    """The keys up to `query` ranked by x̂·x̂ (compared directly) and by the head's q·k (DIRECT_RULE): per key both
    dot products and both ranks, and each ranking's order."""
    T = len(trace["tokens"])
    if not 0 <= query < T:
        raise ModelError(f"no query {query}: the prompt has {T} tokens")
    layers = trace["layers"]
    if not 0 <= layer < len(layers):
        raise ModelError(f"no layer {layer}: the model has {len(layers)}")
    x = np.asarray(layers[layer]["ln_1"]["out"], np.float64)[:query + 1]
    direct = x @ x[query]
    scores = np.asarray(layers[layer]["attn"]["scores"][head], np.float64)[query, :query + 1]
    direct_order, direct_rank = _ranks(direct)
    head_order, head_rank = _ranks(scores)
    return {"layer": layer, "head": head, "query": query, "direct": direct.tolist(), "head_scores": scores.tolist(),
            "direct_order": direct_order, "direct_rank": direct_rank, "head_order": head_order,
            "head_rank": head_rank, "rule": DIRECT_RULE}


def random_dots(dims, n: int = RANDOM_DOTS["n"], seed: int = RANDOM_DOTS["seed"]) -> dict:
    """Dot products of n random pairs for each length in `dims` (RANDOM_RULE): the products, their spread and √d."""
    dims = [int(d) for d in dims]
    if not dims or any(d < 1 for d in dims):
        raise ModelError(f"random_dots needs lengths of at least 1, got {dims}")
    if n < 2:
        raise ModelError(f"random_dots needs at least 2 pairs per length, got {n}")
    rng = np.random.default_rng(seed)
    dots, spread = [], []
    for d in dims:
        a, b = rng.standard_normal((n, d)), rng.standard_normal((n, d))
        v = (a * b).sum(axis=1)
        dots.append(v.tolist())
        spread.append(float(v.std()))
    return {"dims": dims, "n": n, "seed": seed, "dots": dots, "spread": spread,
            "sqrt_d": [float(np.sqrt(d)) for d in dims], "rule": RANDOM_RULE}
