"""How one prompt recalls a person's sport, step by step: where the sport feature is written, what carries it to the
prediction, and whether one neuron ANDs the two names.

fact_path        the whole path on one prompt: mean-ablation of every (layer, attn/mlp, position) state, direct logit
                 attribution at the last position (per layer and head, answer against the other sports), the
                 attention layer that pushes the answer most (the carrier), where its top head reads, and the
                 carrier's push with the lookup MLP at the last name mean-ablated (the path through it).
held_out_rise    the lookup MLP's output at the last name on sport directions measured on the *other* people only
                 (class-mean differences of the stream after that layer at their last names): the person is held
                 out, so the rise is a prediction, not built into the measurement; and the same test for every
                 person (leave one out), against seeded shuffles of the sport labels (the null).
and_search       a neuron that fires for the person's two names together and for no other pair of names (each name
                 with another, or two others), by rule; pre_activation_parts splits its input into what each name
                 contributes and its bias.

Research on real GPTs (Geva et al. 2023, "Dissecting Recall of Factual Associations in Auto-Regressive Language
Models") finds two steps: early MLPs at the subject's last token enrich it with its attributes, then attention at
the last position extracts the asked attribute. These measurements ask whether our model does the same.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..memo import per_model
from ..language import FEMALE_FIRST, LAST_NAMES, MALE_FIRST, SPORTS, Language
from ..numpy_gpt import NumpyGPT, probabilities
from .attribution import direct_logit_attribution
from .circuits import sport_alternatives
from .directions import class_mean_directions, last_name_states, projections
from .mlp import ACTIVE

NULL = {"shuffles": 200, "seed": 5}   # the shuffled-label null of held_out_rise


def _person(language: Language, lang: str, words: list[str], first_index: int):
    g = language.grammar(lang)
    key = (words[first_index], words[first_index + 1])
    if key not in g.person:
        raise ModelError(f"no person {' '.join(key)!r} at position {first_index} of the prompt")
    return g, g.person[key]


def fact_path(gpt: NumpyGPT, language: Language, lang: str, words: list[str], first_index: int, means: dict,
              lookup_layer: int) -> dict:
    """The path of the person's sport through the prompt `words` (the person at first_index, first_index + 1).

    - `ablation`: P(answer) with each (layer, component, position) state replaced by its mean over the sample
      (`means`, patching.mean_states); (layers × [attn, mlp] × positions).
    - `dla`: direct logit attribution at the last position of logit(answer) − mean logit(other sports): per layer's
      attention and MLP, per head; the parts add up to the real logit difference.
    - `carrier`: the attention layer with the largest push (the first on a tie), its head with the largest push and
      where that head reads from the last position (its attention weights).
    - `through_lookup`: the carrier's push and P(answer) with the lookup MLP (lookup_layer) at the last name replaced
      by its mean: how much of what attention carries was written there; `carrier_sources`: the same for every
      attention and MLP output at the last name in the layers before the carrier's."""
    g, person = _person(language, lang, words, first_index)
    vocab = gpt.tokenizer.vocab
    ids = [vocab[w] for w in words]
    answer = vocab[g.t(person.sport)]
    alts = sport_alternatives(gpt, language, lang)
    T, L, last = len(ids), gpt.config.n_layer, first_index + 1
    tr = gpt.trace(ids)
    p_clean = float(probabilities(tr["logits"][-1])[answer])
    comps = ("attn", "mlp")
    ablation = np.zeros((L, len(comps), T))
    for l in range(L):
        for ci, c in enumerate(comps):
            for t in range(T):
                run = gpt.trace(ids, patch={(l, c, t): means[l, c]})
                ablation[l, ci, t] = probabilities(run["logits"][-1])[answer]
    dla = direct_logit_attribution(gpt, tr, answer, alts)
    attn = [dla["components"][f"attn.{l}"] for l in range(L)]
    mlp = [dla["components"][f"mlp.{l}"] for l in range(L)]
    carrier = int(np.argmax(attn))
    heads = [dla["heads"][f"attn.{carrier}.{h}"] for h in range(gpt.config.n_head)]
    head = int(np.argmax(heads))
    reads = tr["layers"][carrier]["attn"]["weights"][head, -1]
    ablated = gpt.trace(ids, patch={(lookup_layer, "mlp", last): means[lookup_layer, "mlp"]})
    dla_ablated = direct_logit_attribution(gpt, ablated, answer, alts)
    parts = [dla["components"]["embeddings"], *[x for pair in zip(attn, mlp) for x in pair]]
    sources = []    # what the carrier reads at the last name: its push with each earlier state there mean-ablated
    for l in range(carrier):
        for c in comps:
            run = gpt.trace(ids, patch={(l, c, last): means[l, c]})
            sources.append({"layer": l, "component": c,
                            "push_after": direct_logit_attribution(gpt, run, answer, alts)["components"][f"attn.{carrier}"],
                            "p_after": float(probabilities(run["logits"][-1])[answer])})
    return {
        "words": list(words), "answer": g.t(person.sport), "answer_id": answer, "p_clean": p_clean,
        "first_index": first_index, "last_index": last, "lookup_layer": lookup_layer,
        "components": list(comps), "ablation": ablation,
        "ablation_rule": "P(answer) with one (layer, component, position) state replaced by its mean over the sample",
        "dla": {"attn": attn, "mlp": mlp, "embeddings": dla["components"]["embeddings"], "ln_f_bias": dla["ln_f_bias"],
                "heads": {k: v for k, v in dla["heads"].items()}, "logit_diff": dla["logit_diff"],
                "total": dla["total"], "largest_part": _largest_part(parts, L),
                "against": "the mean logit of the other sports in the prompt's language"},
        "carrier": {"layer": carrier, "push": attn[carrier], "head": head, "head_push": heads[head],
                    "reads": [float(w) for w in reads], "reads_most": int(np.argmax(reads)),
                    "rule": "the attention layer with the largest direct push at the last position (first on a tie); "
                            "its head with the largest push"},
        "through_lookup": {"push_before": attn[carrier], "push_after": dla_ablated["components"][f"attn.{carrier}"],
                           "p_before": p_clean,
                           "p_after": float(probabilities(ablated["logits"][-1])[answer]),
                           "patched": [lookup_layer, "mlp", last]},
        "carrier_sources": sources,
    }


def _largest_part(parts: list[float], L: int) -> dict:
    names = ["embeddings"] + [f"{c}.{l}" for l in range(L) for c in ("attn", "mlp")]
    i = int(np.argmax(parts))
    return {"name": names[i], "push": float(parts[i])}


def held_out_directions(gpt: NumpyGPT, language: Language, lang: str, layer: int, exclude=(), states=None) -> dict:
    """Per sport: the class-mean difference of the stream after `layer` at the last name of "first last", over the
    language's people except those in `exclude` (people held out)."""
    states = states if states is not None else last_name_states(gpt, language, lang)
    keep = [i for i, p in enumerate(language.people) if p not in exclude]
    X = states["resid_post"][keep, layer]
    labels = [language.people[i].sport for i in keep]
    return {v: d["direction"] for v, d in class_mean_directions(X, labels).items()}


def _own_rises_most(mlp_out: np.ndarray, directions: dict, own: str) -> bool:
    rise = projections(directions, mlp_out)
    return max(rise, key=rise.get) == own


def held_out_rise(gpt: NumpyGPT, language: Language, lang: str, trace: dict, layer: int, position: int, person,
                  shuffles: int = NULL["shuffles"], seed: int = NULL["seed"]) -> dict:
    """The lookup MLP's output at `position` of `trace` on sport directions measured without `person`
    (held_out_directions): the stream before the MLP (resid_mid), after it (resid_post), and the rise (the MLP's
    output) per sport. Then the same for every person of the language, each held out in turn, on their own
    "first last" (leave one out): in how many does the MLP raise their own sport the most; and the same count with
    the sport labels shuffled among the people (seeded, `shuffles` times): the null's mean, 95th percentile, and
    the fraction of shuffles that reach the real count (a p-value)."""
    states = last_name_states(gpt, language, lang)
    dirs = held_out_directions(gpt, language, lang, layer, exclude=(person,), states=states)
    lay = trace["layers"][layer]
    before = projections(dirs, lay["resid_mid"][position])
    after = projections(dirs, lay["resid_post"][position])
    return {"sports": list(SPORTS), "before": before, "after": after,
            "rise": {s: after[s] - before[s] for s in SPORTS}, "held_out": [person.first, person.last],
            "directions": f"class-mean differences of the stream after layer {layer} at the last name of \"first "
                          f"last\" over the language's other {len(language.people) - 1} people (the prompt's person "
                          "held out)",
            "loo": name_enrichment(gpt, language, lang, layer, shuffles, seed)}


@per_model
def name_enrichment(gpt: NumpyGPT, language: Language, lang: str, layer: int, shuffles: int = NULL["shuffles"],
                    seed: int = NULL["seed"]) -> dict:
    """Does `layer`'s MLP write people's sports into their last names? Every person held out in turn: sport directions
    from the others (held_out_directions), a hit when the MLP's output at the held-out person's last name rises most
    on their own sport's; the count against the same count with the sport labels shuffled (seeded). Once per model
    (model.memo): it asks nothing of a prompt."""
    states = last_name_states(gpt, language, lang)
    people = language.people
    X = states["resid_post"][:, layer]
    outs = states["mlp"][:, layer]

    def count(labels) -> int:
        hits = 0
        for i in range(len(people)):
            keep = np.arange(len(people)) != i
            d = {v: e["direction"] for v, e in class_mean_directions(X[keep], list(labels[keep])).items()}
            hits += _own_rises_most(outs[i], d, labels[i])
        return hits

    labels = np.array([p.sport for p in people])
    real = count(labels)
    rng = np.random.default_rng(seed)
    null = np.array([count(rng.permutation(labels)) for _ in range(shuffles)])
    return {"layer": layer, "hits": real, "n": len(people), "chance": 1 / len(set(labels.tolist())),
            "null_mean": float(null.mean()), "null_p95": float(np.percentile(null, 95)),
            "p_value": float((null >= real).mean()), "shuffles": shuffles, "seed": seed,
            "rule": "each person held out in turn: directions from the others; a hit when the MLP's output at their "
                    "last name rises most on their own sport's direction"}


def pair_words(words: list[str], first_index: int, first: str, last: str) -> list[str]:
    out = list(words)
    out[first_index:first_index + 2] = [first, last]
    return out


def and_search(gpt: NumpyGPT, language: Language, lang: str, words: list[str], first_index: int, layer: int) -> dict:
    """A neuron of `layer`'s MLP that ANDs the person's two names, at the last name.

    Pairs: every first name of the person's gender (so a title before the name stays true) with every last name, put
    in the prompt's place of the person's names. For each neuron: its activation at the last name for the person,
    and the largest for any other pair. Rule: the neuron with the largest margin (the person's activation minus the
    largest other pair's; the first on a tie) is the one shown. It is an AND when it fires for the person (activation
    above ACTIVE) and neither name with another (same first name, other last; other first, same last) turns it on
    (every such activation at most ACTIVE). The null: the same search for every other pair as the target (how large
    the best margin is for a pair that is not a fact the scene asks)."""
    g, person = _person(language, lang, words, first_index)
    vocab = gpt.tokenizer.vocab
    last = first_index + 1
    firsts = MALE_FIRST if person.gender == "male" else FEMALE_FIRST
    pairs = [(f, l) for f in firsts for l in LAST_NAMES]
    acts = {}
    for f, l in pairs:
        tr = gpt.trace([vocab[w] for w in pair_words(words, first_index, g.t(f), g.t(l))])
        acts[f, l] = tr["layers"][layer]["mlp"]["act"][last]
    target = (person.first, person.last)
    A = np.stack([acts[p] for p in pairs])                       # (pairs, d_mlp)
    t = pairs.index(target)

    def margins(i: int) -> np.ndarray:
        return A[i] - np.delete(A, i, axis=0).max(0)

    m = margins(t)
    n = int(np.argmax(m))
    same_first = [i for i, p in enumerate(pairs) if p[0] == target[0] and p != target]
    same_last = [i for i, p in enumerate(pairs) if p[1] == target[1] and p != target]
    neither = [i for i, p in enumerate(pairs) if p[0] != target[0] and p[1] != target[1]]

    def best(idx):
        i = max(idx, key=lambda i: A[i, n])
        return {"pair": [g.t(pairs[i][0]), g.t(pairs[i][1])], "act": float(A[i, n])}

    groups = {"same_first": best(same_first), "same_last": best(same_last), "neither": best(neither)}
    fires = float(A[t, n]) > ACTIVE
    one_name = max(groups["same_first"]["act"], groups["same_last"]["act"])
    is_and = fires and one_name <= ACTIVE and float(m[n]) > 0
    null = [float(margins(i).max()) for i in range(len(pairs)) if i != t]
    top = np.argsort(-m, kind="stable")[:10]
    return {"layer": layer, "position": last, "neuron": n, "act": float(A[t, n]), "margin": float(m[n]),
            "fires": fires, "is_and": bool(is_and), "one_name_max": one_name, "groups": groups,
            "pairs": [[g.t(f), g.t(l)] for f, l in pairs], "acts": [float(A[i, n]) for i in range(len(pairs))],
            "top": [{"neuron": int(i), "margin": float(m[i]), "act": float(A[t, i])} for i in top],
            "threshold": ACTIVE, "null_margins": null,
            "null_rank": int(sum(x >= float(m[n]) for x in null)),
            "rule": f"in layer {layer}'s MLP at the last name, over every pair of a first name of the person's gender "
                    "and a last name: the neuron whose activation for the person most exceeds its largest for any "
                    f"other pair; an AND when it is above {ACTIVE} for the person and at most {ACTIVE} for every pair "
                    "that keeps one of the two names"}


def pre_activation_parts(gpt: NumpyGPT, trace: dict, layer: int, position: int, neuron: int, first_index: int) -> dict:
    """Neuron `neuron`'s input (pre-activation) in `layer` at `position` (the last name), split by where it comes from.

    The MLP reads LN_2(x), x = the stream entering the layer (resid_pre, at layer 0 the last name's embedding and
    position) + the attention layer's output (per head, a weighted sum over the positions it reads, through W_O) +
    b_O. With LayerNorm's scale frozen at the run's value (as in direct logit attribution) LN_2 is linear in x, so the
    pre-activation is exactly: first name (what attention brings from the first name's position) + last name (the
    stream entering at the last name and what attention brings from it) + other words (what attention brings from
    every other position) + bias (b_O, LN_2's bias and b_in, through the neuron's weights)."""
    gpt._check_layer(layer)
    lay = trace["layers"][layer]
    m = gpt.mlp(layer)
    if not 0 <= neuron < m.W_in.shape[1]:
        raise ModelError(f"no neuron {neuron} in layer {layer}: it has {m.W_in.shape[1]}")
    if not 0 <= first_index < position:
        raise ModelError(f"the first name ({first_index}) must come before the position {position}")
    eps = gpt.config.layer_norm_epsilon
    sigma = np.sqrt(lay["ln_2"]["var"][position] + eps)
    w = m.W_in[:, neuron] * gpt.p(f"h.{layer}.ln_2.weight")

    def read(v):
        v = np.asarray(v, np.float64)
        return float(((v - v.mean()) / sigma) @ w)

    from_pos = np.zeros(position + 1)
    for h in range(gpt.config.n_head):
        W_O = gpt.head(layer, h).W_O
        wv = lay["attn"]["weighted_values"][h, position, :position + 1]      # (keys, d_head)
        for j in range(position + 1):
            from_pos[j] += read(wv[j] @ W_O)
    first = from_pos[first_index]
    last = read(lay["resid_pre"][position]) + from_pos[position]
    other = float(from_pos.sum() - from_pos[first_index] - from_pos[position])
    bias = read(gpt.attn_out_bias(layer)) + float(gpt.p(f"h.{layer}.ln_2.bias") @ m.W_in[:, neuron]) + \
        float(m.b_in[neuron])
    pre = float(lay["mlp"]["pre"][position, neuron])
    return {"first": float(first), "last": float(last), "other": other, "bias": bias, "pre": pre,
            "act": float(lay["mlp"]["act"][position, neuron]),
            "sum": float(first + last + other + bias)}
