"""Why context matters: the same last word after different earlier words, and how far the next-word
distributions move apart.

One trace per sentence gives the next-word distribution after every prefix of it (the model is causal): as in
training, one pass predicts the next word at every position (next_word_predictions). Prefixes
that end on the same token are compared pairwise by total variation distance, ½ Σ |p − q| (0: the same
distribution, 1: no word in common), the largest change a choice of earlier words can make to the prediction.
"""

from __future__ import annotations

import numpy as np

from ..numpy_gpt import probabilities


def total_variation(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """½ Σ |p − q| along the last axis."""
    return 0.5 * np.abs(np.asarray(p, dtype=np.float64) - np.asarray(q, dtype=np.float64)).sum(axis=-1)


def prefix_distributions(gpt, sentences: list[list[int]], min_tokens: int = 2,
                         max_tokens: int = 8) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Every distinct sentence prefix of min_tokens..max_tokens tokens, in stream order, and the model's next-word
    distribution (T = 1) after each."""
    prefixes, rows, seen = [], [], set()
    for ids in sentences:
        ids = [int(i) for i in ids][:max_tokens]
        if len(ids) < min_tokens:
            continue
        p = probabilities(gpt.trace(ids)["logits"])
        for n in range(min_tokens, len(ids) + 1):
            prefix = tuple(ids[:n])
            if prefix not in seen:
                seen.add(prefix)
                prefixes.append(prefix)
                rows.append(p[n - 1])
    return prefixes, np.array(rows).reshape(len(rows), gpt.config.vocab_size)


def largest_context_effect(gpt, sentences: list[list[int]], min_tokens: int = 2, max_tokens: int = 8) -> dict:
    """The two prefixes that end on the same token and whose next-word distributions differ most (total
    variation); on a tie the pair first in stream order. With the distance of every pair compared."""
    prefixes, dist = prefix_distributions(gpt, sentences, min_tokens, max_tokens)
    by_last: dict[int, list[int]] = {}
    for k, prefix in enumerate(prefixes):
        by_last.setdefault(prefix[-1], []).append(k)
    best, pairs = None, 0
    for members in by_last.values():
        if len(members) < 2:
            continue
        idx = np.array(members)
        tv = total_variation(dist[idx][:, None, :], dist[idx][None, :, :])
        upper = np.triu(np.ones_like(tv, dtype=bool), k=1)
        pairs += int(upper.sum())
        tv = np.where(upper, tv, -1.0)
        a, b = np.unravel_index(int(np.argmax(tv)), tv.shape)   # argmax: the first maximum, row-major
        candidate = (float(tv[a, b]), -int(idx[a]), -int(idx[b]))   # larger distance, then earlier in the stream
        if best is None or candidate > best:
            best = candidate
    if best is None:
        raise ValueError("no two prefixes end on the same token")
    distance, a, b = best[0], -best[1], -best[2]
    return {"prefixes": [list(prefixes[a]), list(prefixes[b])], "distance": distance,
            "prefixes_compared": len(prefixes), "pairs_compared": pairs,
            "distributions": [dist[a], dist[b]]}


def next_word_predictions(gpt, trace: dict) -> list[dict]:
    """What one pass predicts at every position of a traced prompt, as in training: for each position i, the model's
    top guess for the next word (the lower id on a tie) and its probability (T = 1), and, where the prompt has a word
    after i, that word and its probability and whether it is the top guess (None at the last position)."""
    p = probabilities(trace["logits"])
    ids = [int(i) for i in trace["token_ids"]]
    words = gpt.tokenizer.words
    out = []
    for i, row in enumerate(p):
        top = int(np.argmax(row))                      # argmax: the first (lowest id) maximum
        nxt = ids[i + 1] if i + 1 < len(ids) else None
        out.append({"position": i, "top_word": words[top], "top_id": top, "p_top": float(row[top]),
                    "next_word": None if nxt is None else words[nxt], "next_id": nxt,
                    "p_next": None if nxt is None else float(row[nxt]),
                    "next_is_top": None if nxt is None else nxt == top})
    return out
