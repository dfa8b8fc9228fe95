"""Direct logit attribution (per component, per head, per MLP neuron) and a neuron's top-activating contexts.

Direct logit attribution reads a vector written into the residual stream straight through the final
LayerNorm and the unembedding. The LayerNorm's scale is frozen at the real run's value (the standard
linearisation): ln_f(x) ≈ (x − mean(x)) / √(var_real + ε) · g + b, which is linear in x, so the parts
of the stream add up exactly to the real logit difference. The logit difference is the answer's logit
minus the mean logit of the alternatives.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..numpy_gpt import NumpyGPT


def logit_direction(gpt: NumpyGPT, answer_id: int, alternative_ids: list[int]) -> np.ndarray:
    """W_U[:, answer] − mean over alternatives of W_U[:, alt] (d_model); W_U = W_Eᵀ (tied)."""
    alternatives = [a for a in alternative_ids if a != answer_id]
    if not alternatives:
        raise ModelError("direct logit attribution needs at least one alternative to the answer")
    return gpt.W_E[answer_id] - gpt.W_E[alternatives].mean(0)


def _through_ln_f(gpt: NumpyGPT, trace: dict, position: int, vectors: np.ndarray, direction: np.ndarray):
    """Each row of `vectors` (… × d) through ln_f with the real run's frozen scale, then onto `direction`."""
    scale = np.sqrt(trace["ln_f"]["var"][position] + gpt.config.layer_norm_epsilon)
    centred = vectors - vectors.mean(-1, keepdims=True)
    return (centred / scale * gpt.p("ln_f.weight")) @ direction


def direct_logit_attribution(gpt: NumpyGPT, trace: dict, answer_id: int, alternative_ids: list[int],
                             position: int = -1) -> dict:
    """How much each part of the stream at `position` adds to logit(answer) − mean logit(alternatives).

    components: "embeddings", "attn.<l>", "mlp.<l>" (each layer's whole output); heads: "attn.<l>.<h>"
    (each head's share through its rows of W_O) and "attn.<l>.bias"; neurons: per layer, act_i × (W_out row i
    through ln_f and the unembedding), plus "mlp.<l>.bias". "ln_f.bias" is the final LayerNorm's own bias.
    The components plus ln_f.bias add up to `logit_diff`, the real run's logit difference.
    """
    T = len(trace["tokens"])
    if not -T <= position < T:
        raise ModelError(f"no position {position}: the prompt has {T} tokens")
    position = position % T
    direction = logit_direction(gpt, answer_id, alternative_ids)

    def read(v):
        return float(_through_ln_f(gpt, trace, position, np.asarray(v)[None], direction)[0])

    components = {"embeddings": read(trace["embeddings"][position])}
    heads, neurons = {}, []
    for l, layer in enumerate(trace["layers"]):
        components[f"attn.{l}"] = read(layer["attn"]["out"][position])
        components[f"mlp.{l}"] = read(layer["mlp"]["out"][position])
        for h in range(gpt.config.n_head):
            heads[f"attn.{l}.{h}"] = read(layer["attn"]["head_out"][h, position] @ gpt.head(l, h).W_O)
        heads[f"attn.{l}.bias"] = read(gpt.attn_out_bias(l))
        m = gpt.mlp(l)
        per_neuron = layer["mlp"]["act"][position] * _through_ln_f(gpt, trace, position, m.W_out, direction)
        neurons.append({"layer": l, "per_neuron": per_neuron, "bias": read(m.b_out)})
    bias = float(gpt.p("ln_f.bias") @ direction)
    logits = trace["logits"][position]
    alternatives = [a for a in alternative_ids if a != answer_id]
    return {"position": position, "components": components, "heads": heads, "neurons": neurons,
            "ln_f_bias": bias, "logit_diff": float(logits[answer_id] - logits[alternatives].mean()),
            "total": float(sum(components.values()) + bias)}


def top_neurons(dla: dict, k: int = 10) -> list[dict]:
    """The k neurons (any layer) with the largest direct contribution, and each one's share of all neurons' sum."""
    rows = [(float(v), n["layer"], i) for n in dla["neurons"] for i, v in enumerate(n["per_neuron"])]
    total = sum(v for v, _, _ in rows)
    rows.sort(reverse=True)
    return [{"layer": l, "neuron": i, "contribution": v, "share_of_all_neurons": v / total if total else float("nan")}
            for v, l, i in rows[:k]]


def neuron_top_contexts(gpt: NumpyGPT, sample: dict, layer: int, neuron: int, k: int = 10,
                        window: int = 6) -> list[dict]:
    """The k (stream, position) pairs where the neuron's activation is highest over a seeded sample of the
    language (analysis.patching.sample_states), each with the words up to and including that token
    (at most `window` of them), in the manner of Geva et al. 2021."""
    gpt._check_layer(layer)
    acts = sample["mlp_act"][layer]
    if not 0 <= neuron < acts.shape[-1]:
        raise ModelError(f"no neuron {neuron} in layer {layer}: it has {acts.shape[-1]} (0..{acts.shape[-1] - 1})")
    a = acts[..., neuron]
    order = np.argsort(-a, axis=None, kind="stable")[:k]
    out = []
    for flat in order:
        s, t = np.unravel_index(flat, a.shape)
        words = sample["streams"][s]
        out.append({"activation": float(a[s, t]), "stream": int(s), "position": int(t), "token": words[t],
                    "context": words[max(0, t - window + 1):t + 1]})
    return out


def distinct_contexts(ranked: list[dict], k: int) -> list[dict]:
    """The first k contexts of a ranking (neuron_top_contexts) whose words differ: identical windows from different
    streams count once (the seeded streams often share a prefix)."""
    seen, out = set(), []
    for c in ranked:
        key = tuple(c["context"])
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out[:k]


def neuron_direction_attribution(gpt: NumpyGPT, trace: dict, layer: int, position: int,
                                 direction: np.ndarray) -> dict:
    """Each neuron of one MLP at one position, along a direction of the stream (e.g. a measured sport direction
    contrasted with the other sports): activation_i × (W_out row i · direction). The neurons plus the bias
    (b_out · direction) add up to the MLP's output · direction (`total`)."""
    gpt._check_layer(layer)
    T = len(trace["tokens"])
    if not 0 <= position < T:
        raise ModelError(f"no position {position}: the prompt has {T} tokens (0..{T - 1})")
    m = gpt.mlp(layer)
    direction = np.asarray(direction, np.float64)
    per_neuron = trace["layers"][layer]["mlp"]["act"][position] * (m.W_out @ direction)
    return {"per_neuron": per_neuron, "bias": float(m.b_out @ direction),
            "total": float(trace["layers"][layer]["mlp"]["out"][position] @ direction)}


def top_k_shares(per_neuron, ks=(1, 5, 20)) -> dict:
    """How spread out the push towards an answer is, in the lecture's one "share of the push" (push_share): the
    neurons ranked by push (largest first); for each k, the summed push of the top k among the neurons that push
    towards it (`sums`: fewer than k when fewer push towards it) and its push_share (`shares`: 0..1, NaN when none
    pushes towards it); the whole, 100%: the push towards it (`towards`, from `n_towards` neurons); the neurons that
    push the other way, counted apart (`n_against`, their summed push `against`, 0 or less); `total` the net sum."""
    v = np.asarray(per_neuron, np.float64)
    order = np.argsort(-v, kind="stable")
    towards = np.clip(v[order], 0.0, None)          # the ranked pushes towards the answer (0 past the last one)
    sums = {int(k): float(towards[:k].sum()) for k in ks}
    return {"order": order.tolist(), "sums": sums, "shares": {k: push_share(s, v) for k, s in sums.items()},
            "towards": float(v[v > 0].sum()), "n_towards": int((v > 0).sum()),
            "against": float(v[v < 0].sum()), "n_against": int((v < 0).sum()), "total": float(v.sum())}


def push_share(contribution: float, per_neuron) -> float:
    """The lecture's one "share of the push" towards an answer: a neuron's (or a few neurons') contribution divided by
    the summed contribution of every neuron that pushes towards it (the positive ones). So the shares of the neurons
    that push towards the answer add up to exactly 100%, whatever the others do; the neurons that push the other way
    are counted apart (their number, their sum), not netted in. NaN when no neuron pushes towards it."""
    v = np.asarray(per_neuron, np.float64)
    towards = float(v[v > 0].sum())
    return float(contribution) / towards if towards > 0 else float("nan")


def neurons_for_share(per_neuron, fraction: float) -> int | None:
    """The fewest neurons, largest push first, whose summed push reaches `fraction` of the push towards the answer
    (push_share of their sum >= fraction); None when no neuron pushes towards it."""
    v = np.asarray(per_neuron, np.float64)
    towards = np.sort(v[v > 0])[::-1]
    if not len(towards):
        return None
    reached = np.cumsum(towards) >= min(fraction, 1.0) * towards.sum() * (1 - 1e-12)
    return int(np.argmax(reached)) + 1
