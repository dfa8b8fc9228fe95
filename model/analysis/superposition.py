"""Superposition in the trained model: the angles between its token embeddings against random directions of the
same size, a polysemantic MLP neuron (its top contexts end in words of unrelated topics), and how many neurons
share a fact (direct logit attribution per neuron).

Every choice is a documented rule; nothing is picked by hand.
"""

from __future__ import annotations

import math

import numpy as np

from .. import language as lang_mod
from ..language import Language, make_people
from ..numpy_gpt import NumpyGPT
from .attribution import direct_logit_attribution, neuron_top_contexts
from .circuits import sport_alternatives

# Topics of the training language: words of different topics have nothing to do with each other.
TOPICS = {
    "people": lang_mod.FIRST_NAMES + lang_mod.LAST_NAMES,
    "sports": lang_mod.SPORTS + list(lang_mod.SPORT_VERBS.values()),
    "places of people": lang_mod.CITIES + lang_mod.COUNTRIES,
    "creatures": (lang_mod.CREATURES + lang_mod.TEXTURES + lang_mod.COLOURS
                  + [v for vs in lang_mod.VERBS.values() for v in vs]
                  + [a for adjs in lang_mod.SIZE_ADJECTIVES.values() for a in adjs]
                  + lang_mod.PLACE_ADJECTIVES + [p for ps in lang_mod.PLACES.values() for p in ps]),
}
FUNCTION = "function words"
POLYSEMANTIC_TOPICS = 3    # a neuron is called polysemantic when its top contexts end in words of >= 3 topics
TOP_CONTEXTS = 8           # the distinct top contexts looked at per neuron


def topic_of(word: str) -> str:
    """The topic of a word of either language (English word, or its Chinese translation); else function words."""
    for topic, words in TOPICS.items():
        if word in words or word in {lang_mod.ZH.get(w) for w in words}:
            return topic
    return FUNCTION


def random_angle_bins(dim: int, pairs: int) -> list[float]:
    """Expected counts per 1-degree bin [k, k + 1) of the angle between two independent uniformly random unit
    vectors in `dim` dimensions, for `pairs` pairs (from the lab's exact tail probability)."""
    from ..superposition import random_pair_outside

    def outside(eps: float) -> float:        # P(|angle - 90| > eps)
        if eps <= 0:
            return 1.0
        if eps >= 90:
            return 0.0
        return random_pair_outside(dim, eps, points=20_001)

    upper = [(outside(k - 90) - outside(k + 1 - 90)) / 2 for k in range(90, 180)]   # bins 90..179
    return [pairs * p for p in upper[::-1] + upper]


def embedding_angles(gpt: NumpyGPT) -> dict:
    """Every pair of token embeddings (rows of W_E, the end-of-text token included): the angle histogram in
    1-degree bins, the closest pair, the share within 85-95 degrees, and the same for random directions."""
    E = np.asarray(gpt.W_E, np.float64)
    n, d = E.shape
    U = E / np.linalg.norm(E, axis=1, keepdims=True)
    i, j = np.triu_indices(n, 1)
    angles = np.degrees(np.arccos(np.clip((U[i] * U[j]).sum(1), -1, 1)))
    counts = np.bincount(np.minimum(np.floor(angles).astype(int), 179), minlength=180)
    random = random_angle_bins(d, len(angles))
    closest = int(np.argmin(angles))
    words = gpt.tokenizer.words
    return {"words": n, "dim": d, "pairs": int(len(angles)), "counts": counts.tolist(), "random_expected": random,
            "within_85_95": float(((angles >= 85) & (angles < 95)).mean()),
            "random_within_85_95": float(sum(random[85:95]) / len(angles)),
            "min_deg": float(angles[closest]), "closest_pair": [words[i[closest]], words[j[closest]]],
            "mean_abs_cos": float(np.abs(np.cos(np.radians(angles))).mean())}


def distinct_top_contexts(gpt: NumpyGPT, sample: dict, layer: int, neuron: int, k: int = TOP_CONTEXTS) -> list[dict]:
    seen, out = set(), []
    for c in neuron_top_contexts(gpt, sample, layer, neuron, k=5 * k):
        key = tuple(c["context"])
        if key not in seen:
            seen.add(key)
            out.append({**c, "topic": topic_of(c["token"])})
    return out[:k]


def polysemantic_neuron(gpt: NumpyGPT, sample: dict, k: int = TOP_CONTEXTS) -> dict:
    """Over every MLP neuron of every layer: its k distinct top-activating contexts (neuron_top_contexts over the
    sample) and the topics of the words they end in. The neuron with the most topics (ties: the higher top
    activation) is returned; it is polysemantic when it has at least POLYSEMANTIC_TOPICS topics."""
    best = None
    for layer in range(gpt.config.n_layer):
        acts = sample["mlp_act"][layer]
        for neuron in range(acts.shape[-1]):
            top = distinct_top_contexts(gpt, sample, layer, neuron, k)
            topics = sorted({c["topic"] for c in top})
            score = (len(topics), top[0]["activation"] if top else -math.inf)
            if best is None or score > best[0]:
                best = (score, {"layer": layer, "neuron": neuron, "contexts": top, "topics": topics})
    found = best[1]
    return {**found, "polysemantic": len(found["topics"]) >= POLYSEMANTIC_TOPICS,
            "rule": f"the neuron whose {k} distinct top contexts end in words of the most topics (ties: the higher "
                    f"top activation); polysemantic at >= {POLYSEMANTIC_TOPICS} topics",
            "neurons_searched": int(sum(a.shape[-1] for a in sample["mlp_act"]))}


def fact_neuron_shares(gpt: NumpyGPT, first: str, last: str, lang: str) -> dict:
    """The fact "<first> <last> plays <sport>": direct logit attribution of the person's sport against the other
    sports, at the last token of the language's adjacent template (F L plays / F L 打), per MLP neuron of every
    layer. The neurons that push towards the answer, sorted, with each one's share of their sum, and how many
    it takes to reach half and 90% of it."""
    g = Language().grammar(lang)
    person = next(p for p in make_people() if (g.t(p.first), g.t(p.last)) == (first, last))
    words = [first, last, g.t("plays")]
    ids = gpt.encode(" ".join(words) if lang == "en" else "".join(words))
    trace = gpt.trace(ids)
    answer = gpt.tokenizer.vocab[g.t(person.sport)]
    dla = direct_logit_attribution(gpt, trace, answer, sport_alternatives(gpt, Language(), lang))
    rows = sorted(((float(v), n["layer"], i) for n in dla["neurons"] for i, v in enumerate(n["per_neuron"])),
                  reverse=True)
    positive = [r for r in rows if r[0] > 0]
    total = sum(v for v, _, _ in positive)
    cum = np.cumsum([v for v, _, _ in positive]) / total if total > 0 else np.array([])
    probs = trace["logits"][-1]
    return {"words": words, "answer": g.t(person.sport), "answer_id": answer,
            "model_top": gpt.tokenizer.words[int(np.argmax(probs))],
            "logit_diff": dla["logit_diff"], "neurons_total": float(sum(v for v, _, _ in rows)),
            "positive_total": total, "neurons": len(rows), "positive_neurons": len(positive),
            "top": [{"layer": l, "neuron": i, "contribution": v, "share": v / total} for v, l, i in positive[:12]],
            "for_half": int(np.searchsorted(cum, 0.5) + 1) if total > 0 else None,
            "for_90": int(np.searchsorted(cum, 0.9) + 1) if total > 0 else None}


# --- the Johnson-Lindenstrauss distortion as an angle (near_orthogonal) ------------------------------------------
def jl_angle_deg(eps: float) -> float:
    """How far from 90 degrees two perpendicular unit vectors can end up when a map keeps their lengths and keeps
    their squared distance (2) within 1 +- eps: |u' - v'|^2 = 2 - 2 cos(theta') = 2 (1 +- eps) gives
    cos(theta') = -+eps, so theta' = 90 +- asin(eps) degrees (eps = 0.125: +-7.18 degrees)."""
    if not 0 < eps < 1:
        raise ValueError(f"eps must lie in (0, 1), got {eps}")
    return math.degrees(math.asin(eps))


def jl_eps_for_angle(deg: float) -> float:
    """The distortion eps whose angle (jl_angle_deg) is `deg` off 90 degrees: sin(deg) (1 degree: 0.01745)."""
    if not 0 < deg < 90:
        raise ValueError(f"deg must lie in (0, 90), got {deg}")
    return math.sin(math.radians(deg))
