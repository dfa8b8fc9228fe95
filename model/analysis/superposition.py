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
from .attribution import direct_logit_attribution, neuron_top_contexts, neurons_for_share, push_share
from .circuits import sport_alternatives

# Topics of the training language, each word by its own meaning (not by the sentence it stands in: "pond" is a
# habitat and "silver" a colour even in a sentence about a frog): words of different topics name different things.
TOPICS = {
    "people": lang_mod.FIRST_NAMES + lang_mod.LAST_NAMES,
    "sports": lang_mod.SPORTS + list(lang_mod.SPORT_VERBS.values()) + ["sport"],
    "places of people": lang_mod.CITIES + lang_mod.COUNTRIES + ["city", "country"],
    "creatures": list(lang_mod.CREATURES),
    "looks": (lang_mod.COLOURS + lang_mod.TEXTURES
              + [a for adjs in lang_mod.SIZE_ADJECTIVES.values() for a in adjs]),
    "habitats": lang_mod.PLACE_ADJECTIVES + [p for ps in lang_mod.PLACES.values() for p in ps],
    "movements": [v for vs in lang_mod.VERBS.values() for v in vs],
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
            "mean_abs_cos": float(np.abs(np.cos(np.radians(angles))).mean()),
            "rms_cos": float(np.sqrt((np.cos(np.radians(angles)) ** 2).mean()))}


PACK_STEPS = 20        # the lab's packing steps for the embeddings' null (its default; 318 in 64 is done by then)


def packed_angles(n: int, d: int, steps: int = PACK_STEPS, seed: int = 0) -> dict:
    """The null for the embeddings' angles: n directions in d dimensions packed as nearly perpendicular as the lab
    can (model.superposition.pack_near_orthogonal, its default margin, `steps` steps from seed `seed`). Every pair's
    angle in 1-degree bins, the share within 85-95 degrees, the root-mean-square cosine against Welch's floor
    sqrt((n - d) / (d (n - 1))), which no n unit vectors in d dimensions can go below, and the closest pair."""
    from ..superposition import pack_near_orthogonal
    r = pack_near_orthogonal(n, d, steps=steps, seed=seed, sample_pairs=1, return_vectors=True)
    V = r["vectors"].double().numpy()
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    i, j = np.triu_indices(n, 1)
    cos = np.clip((V[i] * V[j]).sum(1), -1, 1)
    angles = np.degrees(np.arccos(cos))
    counts = np.bincount(np.minimum(np.floor(angles).astype(int), 179), minlength=180)
    return {"n": n, "dim": d, "steps": steps, "seed": seed, "counts": counts.tolist(),
            "within_85_95": float(((angles >= 85) & (angles < 95)).mean()),
            "rms_cos": float(np.sqrt((cos ** 2).mean())),
            "welch_rms_cos": math.sqrt((n - d) / (d * (n - 1))) if n > d else 0.0,
            "min_deg": float(angles.min()),
            "rule": f"model.superposition.pack_near_orthogonal({n}, {d}, steps={steps}, seed={seed}), every pair"}


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
    pushes = [v for v, _, _ in rows]
    positive = [r for r in rows if r[0] > 0]
    probs = trace["logits"][-1]
    return {"words": words, "answer": g.t(person.sport), "answer_id": answer,
            "model_top": gpt.tokenizer.words[int(np.argmax(probs))],
            "logit_diff": dla["logit_diff"], "neurons_total": float(sum(pushes)),
            "positive_total": float(sum(v for v, _, _ in positive)), "neurons": len(rows),
            "positive_neurons": len(positive),
            "share_of": "the push towards the answer: the sum over the neurons that push towards it "
                        "(model.analysis.attribution.push_share)",
            "top": [{"layer": l, "neuron": i, "contribution": v, "share": push_share(v, pushes)}
                    for v, l, i in positive[:12]],
            "for_half": neurons_for_share(pushes, 0.5), "for_90": neurons_for_share(pushes, 0.9)}


# --- the Johnson-Lindenstrauss distortion as an angle, and the chapter's two bands (near_orthogonal) ---------------
STRICT_BAND_DEG = 1.0   # 89-91 degrees: the strict reading of "almost perpendicular", which turns out too strict
WIDE_BAND_DEG = 5.0     # 85-95 degrees: a few degrees allowed; the band the chapter uses from then on


def jl_angle_deg(eps: float) -> float:
    """How far from 90 degrees the Johnson-Lindenstrauss lemma, as stated, lets two perpendicular unit vectors end
    up. The lemma keeps every squared distance within 1 +- eps; with the origin among the points the lengths too
    (|u'|^2, |v'|^2 in [1 - eps, 1 + eps]). Then cos(theta') = (|u'|^2 + |v'|^2 - |u' - v'|^2) / (2 |u'| |v'|) is
    at most (2 (1 + eps) - 2 (1 - eps)) / (2 (1 - eps)) = 2 eps / (1 - eps) in size, and that is reached: theta' =
    90 +- asin(2 eps / (1 - eps)) degrees (eps = 0.125: +-16.6 degrees). When 2 eps / (1 - eps) >= 1 the lemma says
    nothing about the angle: 90 degrees."""
    if not 0 < eps < 1:
        raise ValueError(f"eps must lie in (0, 1), got {eps}")
    bound = 2 * eps / (1 - eps)
    return 90.0 if bound >= 1 else math.degrees(math.asin(bound))


def jl_eps_for_angle(deg: float) -> float:
    """The distortion eps whose guaranteed angle (jl_angle_deg) is `deg` off 90 degrees: 2 eps / (1 - eps) = sin(deg),
    so eps = sin(deg) / (2 + sin(deg)) (1 degree: 0.00865; 5 degrees: 0.0418)."""
    if not 0 < deg < 90:
        raise ValueError(f"deg must lie in (0, 90), got {deg}")
    s = math.sin(math.radians(deg))
    return s / (2 + s)


def random_room(dims, eps_deg: float, points: int = 20_001) -> list[float]:
    """The random-vector estimate of how many directions fit with every pair within 90 +- eps_deg, at each width of
    `dims` (model.superposition.random_count_estimate's rule, 1 / (2 P(a random pair is outside)), its integral on
    a 20,001-point grid, as random_angle_bins takes it)."""
    from ..superposition import random_pair_outside
    return [max(1.0, 1 / (2 * random_pair_outside(int(d), eps_deg, points=points))) for d in dims]


# --- why sparsity allows superposition: collisions in the toy model's own data (toy_superposition) ---------------
TOY_EVAL_BATCH = 65536        # the lab's evaluation batch (train_toy_model's eval_batch), drawn with seed + 1


def toy_collisions(run: dict, batch: int = TOY_EVAL_BATCH) -> dict:
    """A recorded toy run (model/superposition_record.py) on its own evaluation inputs: the lab's sample_features
    with the run's sparsity and torch.Generator().manual_seed(seed + 1), the batch its loss was measured on.

    Per input, how many features are on (0, 1, 2 or more), the share of inputs of each kind and their mean loss
    (the lab's importance-weighted squared error, recomputed with toy_forward on the recorded W, b), and the share of
    the whole loss the inputs with two or more features on carry. The example collision, by rule: the first input
    of the batch with exactly two features on whose directions are less than 90 degrees apart (each then reads part
    of the other: from_other, W_i . W_j times the other's value, is what each output gains from it), else the first
    with exactly two on, else none. And, on the same inputs, what storing only the two
    most important features exactly (no superposition: nothing interferes, the other three are lost) would cost:
    the mean importance-weighted square of the dropped features."""
    import torch

    from .. import superposition as lab
    n, s = run["n_features"], run["sparsity"]
    x = lab.sample_features(batch, n, s, torch.Generator().manual_seed(run["seed"] + 1))
    importance = lab.feature_importance(n)
    W = torch.tensor(run["W"], dtype=torch.float32)[None]
    b = torch.tensor(run["b"], dtype=torch.float32)[None]
    out = lab.toy_forward(W, b, x)[0]
    per = (importance * (x - out) ** 2).sum(-1).double()
    on = (x > 0).sum(1)
    kinds = {"0": on == 0, "1": on == 1, "2+": on >= 2}
    angles = np.asarray(run["angles_deg"])
    pairs = [i for i in torch.nonzero(on == 2).flatten().tolist()]
    near = [i for i in pairs if angles[tuple(torch.nonzero(x[i]).flatten().tolist())] < 90]
    pick = (near or pairs or [None])[0]
    example = None
    if pick is not None:
        f = torch.nonzero(x[pick]).flatten().tolist()
        overlap = float(W[0, :, f[0]] @ W[0, :, f[1]])          # W_i . W_j: what one feature reads of the other
        example = {"index": pick, "features": f, "angle_deg": float(angles[f[0], f[1]]), "neighbours": bool(near),
                   "x": x[pick].tolist(), "out": out[pick].tolist(), "loss": float(per[pick]), "overlap": overlap,
                   "from_other": [overlap * float(x[pick, f[1]]), overlap * float(x[pick, f[0]])]}
    total = float(per.sum())
    dropped = (importance[2:] * x[:, 2:] ** 2).sum(-1).double().mean().item() if n > 2 else 0.0
    return {"sparsity": s, "batch": batch, "seed": run["seed"] + 1, "loss": total / batch,
            "inputs": {k: int(m.sum()) for k, m in kinds.items()},
            "share": {k: float(m.double().mean()) for k, m in kinds.items()},
            "mean_loss": {k: (float(per[m].mean()) if m.any() else None) for k, m in kinds.items()},
            "loss_share_2plus": float(per[kinds["2+"]].sum()) / total if total > 0 else None,
            "example": example, "keep_two_loss": dropped,
            "rule": "the first input with exactly two features on, less than 90 degrees apart; else the first "
                    "with exactly two on"}
