"""Questions asked of a trace: which head looks back, what a head writes, what it promotes.

Scenes call these instead of doing model maths themselves; every function reads the trace
and the model's own weights.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..numpy_gpt import NumpyGPT, layer_norm, probabilities


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
    W_O = gpt.head(layer, head).W_O      # checks the head exists before the trace is indexed
    return trace["layers"][layer]["attn"]["head_out"][head] @ W_O


def head_delta_sizes(gpt: NumpyGPT, trace: dict, layer: int, position: int) -> dict:
    """How much each head of a layer changes the stream at `position`: the length |ΔE_h| of each head's ΔE there (its
    output through its own rows of W_O), and the length of the layer's attention output (every ΔE added entry by
    entry, plus b_O). Lengths do not add up: the ΔEs are vectors, added entry by entry."""
    T = len(trace["tokens"])
    if not 0 <= position < T:
        raise ModelError(f"a position in 0..{T - 1}, got {position}")
    deltas = np.array([head_contribution(gpt, trace, layer, h)[position] for h in range(gpt.config.n_head)])
    return {"layer": layer, "position": position, "delta_lengths": np.linalg.norm(deltas, axis=1).tolist(),
            "out_length": float(np.linalg.norm(trace["layers"][layer]["attn"]["out"][position]))}


def heads_delta(gpt: NumpyGPT, trace: dict, layer: int, position: int, heads) -> np.ndarray:
    """The ΔE of several heads of one layer at `position`, added entry by entry (each head's output through its own
    rows of W_O): the part of the attention output those heads write together."""
    T = len(trace["tokens"])
    if not 0 <= position < T or not len(heads):
        raise ModelError(f"a position in 0..{T - 1} and at least one head, got {position} and {list(heads)}")
    return np.sum([head_contribution(gpt, trace, layer, int(h))[position] for h in heads], axis=0)


def head_write_sizes(gpt: NumpyGPT, trace: dict, layer: int, head: int, position: int) -> np.ndarray:
    """What one head could write at `position`, key by key: |v_j W_O|, the length of the change to the stream the
    head would make if it put all its weight on key j (j = 0 .. position; its value vector through its own rows of
    W_O). A head whose largest weight falls on a key with a small size here changes little by looking there."""
    W_O = gpt.head(layer, head).W_O      # checks the head exists before the trace is indexed
    T = len(trace["tokens"])
    if not 0 <= position < T:
        raise ModelError(f"a position in 0..{T - 1}, got {position}")
    v = np.asarray(trace["layers"][layer]["attn"]["v"][head][: position + 1], dtype=np.float64)
    return np.linalg.norm(v @ W_O, axis=-1)


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
    gpt.check_head(layer, head)
    if word not in gpt.tokenizer.words:      # the word as shown (a BPE token's display form, e.g. "␣was")
        raise ModelError(f"unknown word {word!r}")
    w = gpt.tokenizer.words.index(word)
    with_head = probabilities(gpt.trace(token_ids)["logits"][-1])[w]
    without = probabilities(gpt.trace(token_ids, ablate=((layer, head),))["logits"][-1])[w]
    return {"word": word, "layer": layer, "head": head,
            "p_with_head": float(with_head), "p_without_head": float(without)}


def heads_ablation_effect(gpt: NumpyGPT, token_ids: list[int], heads, word: str) -> dict:
    """P(word next) at the last token with the model as trained, and with every head of `heads` ((layer, head)
    pairs) zeroed at once (the rest of the model re-run): whether a set of heads together carries the answer."""
    heads = [(int(layer), int(head)) for layer, head in heads]
    for layer, head in heads:
        gpt.check_head(layer, head)
    if word not in gpt.tokenizer.words:
        raise ModelError(f"unknown word {word!r}")
    w = gpt.tokenizer.words.index(word)
    with_heads = probabilities(gpt.trace(token_ids)["logits"][-1])[w]
    without = probabilities(gpt.trace(token_ids, ablate=tuple(heads))["logits"][-1])[w]
    return {"word": word, "heads": [list(h) for h in heads], "p_with_heads": float(with_heads),
            "p_without_heads": float(without)}


def query_key_geometry(trace: dict, layer: int, head: int, query: int) -> dict:
    """One query against the keys it may see (0..query), as arrows in a plane: q and any one k span a plane, so in it
    their lengths and the angle between them are true, and q·k = |q| |k| cos θ exactly. Returns |q|, and per key
    |k|, cos θ, θ in degrees (0..180) and q·k (the trace's score); and the spread of the head's scores (every query
    against the keys it may see) before and after ÷ √d_head, with the query's largest softmax weight both ways:
    why the scores are scaled (without it the softmax saturates sooner)."""
    attn = trace["layers"][layer]["attn"]
    T = len(trace["tokens"])
    if not 0 <= query < T:
        raise ModelError(f"no query {query}: the prompt has {T} tokens")
    q = np.asarray(attn["q"][head][query], np.float64)
    K = np.asarray(attn["k"][head][:query + 1], np.float64)
    q_len, k_len = float(np.linalg.norm(q)), np.linalg.norm(K, axis=1)
    dots = K @ q
    cos = np.clip(dots / (q_len * k_len), -1.0, 1.0)
    d_head = q.shape[0]
    seen = ~np.triu(np.ones((T, T), dtype=bool), k=1)
    scores = np.asarray(attn["scores"][head], np.float64)
    line = scores[query, :query + 1]

    def top_weight(z):
        e = np.exp(z - z.max())
        return float((e / e.sum()).max())

    return {"layer": layer, "head": head, "query": query, "d_head": d_head, "q_length": q_len,
            "k_lengths": k_len.tolist(), "cos": cos.tolist(), "angle_deg": np.degrees(np.arccos(cos)).tolist(),
            "dots": dots.tolist(), "scores": line.tolist(),
            "spread": {"scores_std": float(scores[seen].std()), "scaled_std": float((scores[seen] / np.sqrt(d_head)).std()),
                       "top_weight_unscaled": top_weight(line), "top_weight_scaled": top_weight(line / np.sqrt(d_head))}}


def lookback_blocked(gpt: NumpyGPT, token_ids: list[int], word: str | None = None, k: int = 3) -> dict:
    """The model's next word at the last token as trained, and with that token unable to look back: in every head
    of every layer its query sees only its own key (NumpyGPT.trace's self_only), the rest of the model as trained.
    `word`: the word whose probability is compared (None: the model's most likely next word as trained).
    P(word) in both runs, each run's top k next words (word, P; most likely first, the lower id on a tie), its
    "shown" rows (those k, then the word itself if it is not among them) and "other", the true total of the rest."""
    ids = list(token_ids)
    runs = {name: probabilities(gpt.trace(ids, self_only=self_only)["logits"][-1])
            for name, self_only in (("looking_back", ()), ("blocked", (len(ids) - 1,)))}
    if word is None:
        word = gpt.tokenizer.words[int(np.argmax(runs["looking_back"]))]
    if word not in gpt.tokenizer.words:
        raise ModelError(f"unknown word {word!r}")
    w = gpt.tokenizer.words.index(word)
    out = {"word": word, "position": len(ids) - 1,
           "rule": "the last token's query sees only its own key in every head of every layer (self_only)"}
    for name, p in runs.items():
        out[name] = next_word_rows(gpt, p, w, k)
    return out


def next_word_rows(gpt: NumpyGPT, p: np.ndarray, w: int, k: int) -> dict:
    """P(word w), the top k next words (word, P; most likely first, the lower id on a tie), the "shown" rows (those
    k, then w if it is not among them) and "other", the true total of the rest."""
    top = [int(i) for i in np.argsort(-p, kind="stable")[:k]]
    shown = top + ([] if w in top else [w])
    row = lambda i: {"word": gpt.tokenizer.words[i], "p": float(p[i])}  # noqa: E731
    return {"p_word": float(p[w]), "top": [row(i) for i in top], "shown": [row(i) for i in shown],
            "other": float(1.0 - p[shown].sum())}


def reversed_order(T: int) -> list[int]:
    """The word-order experiments' reordering: the earlier tokens reversed, the last one kept in its place
    (reordered[j] = original[order[j]])."""
    return list(range(T - 2, -1, -1)) + [T - 1]


def order_prediction(gpt: NumpyGPT, token_ids: list[int], k: int = 3) -> dict:
    """The model's next word (as trained, positions and all) after the prompt and after the same tokens in another
    order: the earlier ones reversed, the last kept (reversed_order, as order_sensitivity). `word` is the prompt's
    most likely next word (the lower id on a tie); each run ("as_written", "reversed") has P(word), its top k, its
    shown rows (the top k, then the word) and "other" (the true rest). same_words: the reversal changes nothing."""
    ids = list(token_ids)
    if len(ids) < 3:
        raise ModelError("reordering needs at least two earlier tokens before the last one")
    order = reversed_order(len(ids))
    reversed_ids = [ids[i] for i in order]
    runs = {name: probabilities(gpt.trace(run)["logits"][-1]) for name, run in (("as_written", ids),
                                                                                ("reversed", reversed_ids))}
    w = int(np.argmax(runs["as_written"]))
    out = {"word": gpt.tokenizer.words[w], "order": order, "reversed_ids": reversed_ids,
           "same_words": reversed_ids == ids,
           "rule": "the prompt's most likely next word, its probability after the prompt and after the same tokens "
                   "with the earlier ones reversed (the last kept), the model as trained"}
    for name, p in runs.items():
        out[name] = next_word_rows(gpt, p, w, k)
    return out


def head_update(gpt: NumpyGPT, trace: dict, layer: int, head: int) -> dict:
    """One head's update on its own: E (the residual entering the layer), its ΔE, and E′ = E + ΔE (T × d each).

    The layer's real residual adds every head's ΔE and the W_O bias at once (resid_mid); this is one head's share.
    """
    before = trace["layers"][layer]["resid_pre"]
    delta = head_contribution(gpt, trace, layer, head)
    return {"layer": layer, "head": head, "before": before, "delta": delta, "after": before + delta}


def layer_norm_steps(gpt: NumpyGPT, trace: dict, where: str, token: int) -> dict:
    """One token through one LayerNorm, step by step: where is "h.<i>.ln_1", "h.<i>.ln_2" or "ln_f".

    input (the residual vector), its mean and variance (as the trace has them); normalised =
    (input − mean) / √(variance + ε) with its own mean and variance (≈ 0 and ≈ 1, before gain and bias);
    then out = normalised × gain + bias, which is the trace's LayerNorm output.
    """
    c = gpt.config
    T = len(trace["tokens"])
    if not 0 <= token < T:
        raise ModelError(f"no token {token}: the prompt has {T} tokens")
    if where == "ln_f":
        x, stats = trace["layers"][-1]["resid_post"][token], trace["ln_f"]
    else:
        parts = where.split(".")
        if len(parts) != 3 or parts[0] != "h" or not parts[1].isdigit() or parts[2] not in ("ln_1", "ln_2") \
                or not 0 <= int(parts[1]) < c.n_layer:
            raise ModelError(f"no LayerNorm {where!r}: use h.<layer>.ln_1, h.<layer>.ln_2 (layer 0..{c.n_layer - 1}) "
                             "or ln_f")
        layer = trace["layers"][int(parts[1])]
        x, stats = (layer["resid_pre"] if parts[2] == "ln_1" else layer["resid_mid"])[token], layer[parts[2]]
    mean, var = float(stats["mean"][token]), float(stats["var"][token])
    normalised = (x - mean) / np.sqrt(var + c.layer_norm_epsilon)
    gain, bias = gpt.p(f"{where}.weight"), gpt.p(f"{where}.bias")
    return {"where": where, "token": token, "input": x, "mean": mean, "var": var, "eps": c.layer_norm_epsilon,
            "normalised": normalised, "normalised_mean": float(normalised.mean()),
            "normalised_var": float(((normalised - normalised.mean()) ** 2).mean()),
            "gain": gain, "bias": bias, "out": normalised * gain + bias}


def order_sensitivity(gpt: NumpyGPT, token_ids: list[int], head: int | None = None) -> dict:
    """Does layer 0 notice word order? The last token's attention in layer 0, for the prompt and for the
    prompt with its earlier tokens reversed, with the position table as trained and with it left out.

    Without positions the last token's weights just travel with their words and its attention output is the
    same (attention compares vectors, not places); with positions they change. Weights are given per word in
    the ORIGINAL order (the reversed run's weights are mapped back), so the two runs compare word by word.
    head=None picks the layer-0 head whose weights change most with positions (score: Σ|w − w_reversed|).
    """
    ids = list(token_ids)
    T = len(ids)
    if T < 3:
        raise ModelError("reordering needs at least two earlier tokens before the last one")
    if head is not None:
        gpt.check_head(0, head)
    order = reversed_order(T)                              # reversed[j] = ids[order[j]]
    back = np.argsort(order)                               # where original token i sits in the reversed run
    reversed_ids = [ids[i] for i in order]

    def layer0(run_ids, positions: bool):
        x = gpt.p("wte.weight")[run_ids] + (gpt.p("wpe.weight")[:T] if positions else 0.0)
        return gpt.block(0, x)[0]["attn"]

    runs = {}
    for name, positions in (("with_positions", True), ("without_positions", False)):
        a, b = layer0(ids, positions), layer0(reversed_ids, positions)
        w, w_rev = a["weights"][:, -1], b["weights"][:, -1][:, back]    # (heads, T), per original word
        runs[name] = {"weights": w, "weights_reversed": w_rev, "weight_change": np.abs(w - w_rev).sum(-1),
                      "output_change": float(np.abs(a["out"][-1] - b["out"][-1]).max())}
    scores = runs["with_positions"]["weight_change"]
    chosen = int(scores.argmax()) if head is None else head
    out = {"layer": 0, "head": chosen, "score": float(scores[chosen]), "reversed_ids": reversed_ids, "order": order,
           "rule": "the layer-0 head whose last-token attention weights change most (sum of |change| per word) "
                   "when the earlier tokens are reversed, with positions"}
    for name, run in runs.items():
        out[name] = {"weights": run["weights"][chosen], "weights_reversed": run["weights_reversed"][chosen],
                     "weight_change": float(run["weight_change"][chosen]), "output_change": run["output_change"]}
    return out


def no_position_attn_change(gpt: NumpyGPT, token_ids: list[int]) -> dict:
    """Does attention alone notice word order? The whole model run with its position table zeroed (every position
    vector 0), on the prompt and on the prompt with its earlier tokens reversed (reversed_order, the last kept).
    For each layer: the largest absolute change, over the d_model numbers, of the last token's attention output
    (after W_O, its bias included). Layer 0 cannot change (its last query sees the same set of keys, only
    reordered); from layer 1 on, the earlier tokens' states differ, because under the causal mask each of them
    saw a different set of words: the mask leaks order."""
    ids = list(token_ids)
    if len(ids) < 3:
        raise ModelError("reordering needs at least two earlier tokens before the last one")
    params = dict(gpt.params)
    params["transformer.wpe.weight"] = np.zeros_like(params["transformer.wpe.weight"])
    zeroed = NumpyGPT(gpt.config, params, gpt.tokenizer, gpt.dtype)
    order = reversed_order(len(ids))
    reversed_ids = [ids[i] for i in order]
    a, b = zeroed.trace(ids), zeroed.trace(reversed_ids)
    change = [float(np.abs(la["attn"]["out"][-1] - lb["attn"]["out"][-1]).max())
              for la, lb in zip(a["layers"], b["layers"])]
    return {"attn_change": change, "order": order, "reversed_ids": reversed_ids,
            "rule": "per layer, max over the d_model numbers of |change| of the last token's attention output "
                    "(after W_O, bias included) between the prompt and its earlier tokens reversed, with the "
                    "position table zeroed"}


def _answer_logp(trace: dict, answer_id: int, position: int) -> float:
    logits = trace["logits"][position]
    top = logits.max()
    return float(logits[answer_id] - top - np.log(np.exp(logits - top).sum()))


def _heads_patch(gpt: NumpyGPT, clean: dict, corrupt: dict, heads) -> dict:
    """A patch giving `heads` ((layer, head) pairs) their output from the corrupted run at every position, the rest
    of each attention layer as in the clean run: the layer's output minus each head's ΔE plus its corrupted ΔE."""
    patch = {}
    by_layer: dict[int, list[int]] = {}
    for layer, head in heads:
        gpt.check_head(layer, head)
        by_layer.setdefault(layer, []).append(head)
    for layer, hs in by_layer.items():
        out = np.array(clean["layers"][layer]["attn"]["out"], dtype=np.float64)
        for h in hs:
            out = out - head_contribution(gpt, clean, layer, h) + head_contribution(gpt, corrupt, layer, h)
        for t in range(len(out)):
            patch[layer, "attn", t] = out[t]
    return patch


def head_patching(gpt: NumpyGPT, clean_ids: list[int], corrupt_ids: list[list[int]], answer_id: int,
                  position: int = -1, sets: tuple = (), per_head: bool = True) -> dict:
    """Activation patching per head (Wang et al. 2022; Meng et al. 2022's patching at the grain of one head).

    For every head, and every corrupted prompt (the clean one with one word changed, the same length): re-run the
    clean prompt with that head's output at every position replaced by its output on the corrupted prompt (the rest
    of the model re-run on top). The head's score is the drop in log P(answer at `position`), clean minus patched,
    averaged over the corrupted prompts: how much of the answer the head carries from the changed word. `sets`
    (tuples of (layer, head)) are patched together, each set at once, scored alike; per_head=False skips the
    single heads (their scores are then NaN).

    Returns "scores" (layers × heads, nats), "p_patched" (layers × heads: P(answer) averaged over corruptions),
    "p_clean", the mean "p_corrupt" (every head at once: the corrupted prompt itself) and, per set, its score and
    mean P(answer).
    """
    clean = gpt.trace(clean_ids)
    corrupts = [gpt.trace(ids) for ids in corrupt_ids]
    if not corrupts or any(len(ids) != len(clean_ids) for ids in corrupt_ids):
        raise ModelError("head patching needs at least one corrupted prompt of the clean prompt's length")
    c = gpt.config
    lp_clean = _answer_logp(clean, answer_id, position)

    def run(heads) -> tuple[float, float]:
        lps = [_answer_logp(gpt.trace(clean_ids, patch=_heads_patch(gpt, clean, corrupt, heads)), answer_id,
                            position) for corrupt in corrupts]
        return float(np.mean([lp_clean - lp for lp in lps])), float(np.mean(np.exp(lps)))

    scores, p_patched = np.full((c.n_layer, c.n_head), np.nan), np.full((c.n_layer, c.n_head), np.nan)
    for layer in range(c.n_layer if per_head else 0):
        for head in range(c.n_head):
            scores[layer, head], p_patched[layer, head] = run([(layer, head)])
    together = []
    for heads in sets:
        score, p = run(list(heads))
        together.append({"heads": [list(map(int, h)) for h in heads], "score": score, "p_patched": p})
    return {"scores": scores, "p_patched": p_patched, "p_clean": float(np.exp(lp_clean)),
            "p_corrupt": float(np.mean([np.exp(_answer_logp(t, answer_id, position)) for t in corrupts])),
            "sets": together, "corruptions": len(corrupts)}


def later_weights(trace: dict) -> dict:
    """The attention weights every query puts on the keys after it, in every head of every layer of a trace (the
    causal mask sets their scores to −∞, so the softmax makes them exactly 0): how many such weights there are
    (layers × heads × T(T−1)/2), the largest of them, and, per query position, the largest over every layer and head."""
    w = np.stack([layer["attn"]["weights"] for layer in trace["layers"]])        # (L, H, T, T) [query, key]
    T = w.shape[-1]
    later = np.triu(np.ones((T, T), dtype=bool), 1)
    per_query = [float(w[..., q, q + 1:].max()) if q + 1 < T else None for q in range(T)]
    return {"cells": int(later.sum()) * w.shape[0] * w.shape[1], "largest": float(w[..., later].max()) if later.any()
            else 0.0, "per_query": per_query, "layers": int(w.shape[0]), "heads": int(w.shape[1])}
