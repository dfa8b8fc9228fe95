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


def causal_head_scores(gpt, lang: str) -> dict:
    """The attention chapter's causal head rule, written out again: on the default look-back prompt of `lang`, for
    every head, the clean run with that head's output (its rows of W_O times its head output, at every position)
    taken from the prompt with the adjective swapped for each other word of its attribute (colour or texture);
    the score is the mean drop in log P(adjective next). Returns the scores (layers × heads), the mean P(adjective)
    so patched, the clean P, and the best (layer, head)."""
    from model import language
    from scenes.prompts import lookback_prompt

    chosen = lookback_prompt(lang)
    g = language.Language().grammar(lang)
    vocab = gpt.tokenizer.vocab
    ids = [int(i) for i in gpt.encode(chosen["prompt"])]
    a, adj = chosen["adjective_index"], chosen["adjective"]
    kind = next(ws for ws in ([g.t(w) for w in language.COLOURS], [g.t(w) for w in language.TEXTURES]) if adj in ws)
    answer = vocab[adj]

    def logp(trace):
        z = np.asarray(trace["logits"][-1], np.float64)
        return float(z[answer] - z.max() - np.log(np.exp(z - z.max()).sum()))

    def head_delta(trace, layer, head):
        dh = gpt.config.d_head
        W_O = gpt.p(f"h.{layer}.attn.c_proj.weight")[head * dh:(head + 1) * dh]
        return np.asarray(trace["layers"][layer]["attn"]["head_out"][head], np.float64) @ W_O

    clean = gpt.trace(ids)
    corrupt = [gpt.trace(ids[:a] + [vocab[w]] + ids[a + 1:]) for w in kind if w != adj]
    c = gpt.config
    scores, p = np.zeros((c.n_layer, c.n_head)), np.zeros((c.n_layer, c.n_head))
    for layer in range(c.n_layer):
        for head in range(c.n_head):
            lps = []
            for run in corrupt:
                out = np.asarray(clean["layers"][layer]["attn"]["out"], np.float64) \
                    - head_delta(clean, layer, head) + head_delta(run, layer, head)
                lps.append(logp(gpt.trace(ids, patch={(layer, "attn", t): out[t] for t in range(len(ids))})))
            scores[layer, head] = logp(clean) - np.mean(lps)
            p[layer, head] = np.mean(np.exp(lps))
    best = np.unravel_index(int(scores.argmax()), scores.shape)

    def patch_set(heads) -> float:
        """Mean P(adjective) with every head of `heads` patched at once (each layer's output from the clean run,
        less those heads' clean ΔE, plus their ΔE on the swapped prompt)."""
        ps = []
        for run in corrupt:
            patch = {}
            for layer in sorted({l for l, _ in heads}):
                out = np.asarray(clean["layers"][layer]["attn"]["out"], np.float64)
                for l, head in heads:
                    if l == layer:
                        out = out - head_delta(clean, layer, head) + head_delta(run, layer, head)
                patch.update({(layer, "attn", t): out[t] for t in range(len(ids))})
            ps.append(math.exp(logp(gpt.trace(ids, patch=patch))))
        return float(np.mean(ps))

    order = [tuple(int(x) for x in np.unravel_index(i, scores.shape)) for i in np.argsort(-scores, axis=None,
                                                                                          kind="stable")]
    return {"scores": scores, "p_patched": p, "p_clean": math.exp(logp(clean)), "best": [int(best[0]), int(best[1])],
            "order": order, "patch_set": patch_set}


def swap_test_by_hand(gpt, token_ids, focus: int, layer: int, lang: str) -> dict | None:
    """The idle-head rule (model.analysis.head_jobs.IDLE_RULE) written out again: the answer is the most likely next
    word at the focus; if it is an earlier word of the prompt and a word of one of the training language's groups,
    each head's output at the focus (its head output through its own rows of W_O) is taken from the prompt with that
    word (its last occurrence before the focus) swapped for each other word of its group, and P(answer) at the focus
    averaged over the swaps; idle: mean |P clean − P patched| under 1 percentage point. None: no swap test."""
    from model import language as lg
    from model import probabilities
    g = lg.Language().grammar(lang)
    ids = [int(i) for i in token_ids][: focus + 1]
    words = gpt.tokenizer.words
    clean = gpt.trace(ids)
    p = probabilities(clean["logits"][focus])
    answer = int(np.argmax(p))
    lists = [lg.COLOURS, lg.TEXTURES, lg.CREATURES, sum(lg.SIZE_ADJECTIVES.values(), []), sum(lg.VERBS.values(), []),
             lg.PLACE_ADJECTIVES, sum(lg.PLACES.values(), []), lg.FIRST_NAMES, lg.LAST_NAMES, lg.SPORTS, lg.CITIES,
             lg.COUNTRIES]
    group = next(([g.t(w) for w in ws] for ws in lists if words[answer] in [g.t(w) for w in ws]), None)
    before = [i for i in range(focus) if ids[i] == answer]
    if group is None or not before:
        return None
    at = before[-1]
    swapped = [ids[:at] + [gpt.tokenizer.vocab[w]] + ids[at + 1:] for w in group if w != words[answer]]
    corrupts = [gpt.trace(s) for s in swapped]
    moves, idle = [], []
    for h in range(gpt.config.n_head):
        W_O = gpt.head(layer, h).W_O
        own = np.asarray(clean["layers"][layer]["attn"]["head_out"][h][focus]) @ W_O
        ps = []
        for t in corrupts:
            vec = np.asarray(clean["layers"][layer]["attn"]["out"][focus]) - own \
                + np.asarray(t["layers"][layer]["attn"]["head_out"][h][focus]) @ W_O
            ps.append(probabilities(gpt.trace(ids, patch={(layer, "attn", focus): vec})["logits"][focus])[answer])
        move = float(np.mean(np.abs(100 * (p[answer] - np.array(ps)))))
        moves.append(move)
        idle.append(move < 1.0)
    return {"answer": words[answer], "position": at, "moves": moves, "idle": idle}
