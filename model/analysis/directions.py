"""Directions that carry meaning: attributes of people in the residual stream, attributes of words in the
embedding.

Stream: for each value of a person's attribute (basketball, ...), the class-mean difference of the residual
stream at the person's last name (people with that value minus the others). Held-out test: leave one person
out, build every value's direction from the others, score the held-out person on each (projection minus the
midpoint of the two class means) and predict the best-scoring value.

Embedding: for a binary attribute of a word class (a creature's habitat, its size, a first name's gender),
the class-mean difference of the token embeddings. Held-out test: leave one word out, build the direction and
the midpoint threshold from the others, classify the word by its projection; done within each language (the
reported figure is the mean over the two languages) and, for comparison, over both languages' words pooled. Parallelogram test: for words
a, b that differ only in the attribute and c, d that differ the same way (and share another attribute value
that is not a's), is b − a + c nearest (cosine, among the class's words other than a, b, c) to a word with
d's two attribute values? Nulls: the same tests with the labels shuffled (seeded, many shuffles).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..memo import per_model
from ..language import CREATURES, FIRST_NAMES, GENDER, HABITAT, LANGUAGES, SIZE, ZH, Language
from ..numpy_gpt import NumpyGPT


# --- the residual stream at the last name ---------------------------------------------------------------
@per_model
def last_name_states(gpt: NumpyGPT, language: Language, lang: str, prefix: tuple[str, ...] = ()) -> dict:
    """Per person, the trace of "[prefix] first last" in `lang` and every layer's states at the last name."""
    g = language.grammar(lang)
    out = {"people": language.people, "resid_post": [], "mlp": [], "attn": [], "mlp_act": []}
    for p in language.people:
        trace = gpt.trace(" ".join([*prefix, g.t(p.first), g.t(p.last)]))
        out["resid_post"].append([lay["resid_post"][-1] for lay in trace["layers"]])
        out["mlp"].append([lay["mlp"]["out"][-1] for lay in trace["layers"]])
        out["attn"].append([lay["attn"]["out"][-1] for lay in trace["layers"]])
        out["mlp_act"].append([lay["mlp"]["act"][-1] for lay in trace["layers"]])
    return {k: (np.array(v) if k != "people" else v) for k, v in out.items()}   # (people, layers, d)


def class_mean_directions(X: np.ndarray, labels: list[str]) -> dict[str, dict]:
    """Per label value: direction = mean(X | value) − mean(X | other values), and the midpoint of the two means."""
    labels = np.asarray(labels)
    out = {}
    for v in sorted(set(labels.tolist())):
        inside, outside = X[labels == v], X[labels != v]
        if len(inside) == 0 or len(outside) == 0:
            continue
        a, b = inside.mean(0), outside.mean(0)
        out[v] = {"direction": a - b, "midpoint": (a + b) / 2, "n": int(len(inside))}
    return out


def held_out_value_accuracy(X: np.ndarray, labels: list[str]) -> dict:
    """Leave-one-out: each row scored on every value's direction built without it; the best score predicts."""
    labels = np.asarray(labels)
    predictions = []
    for i in range(len(X)):
        keep = np.arange(len(X)) != i
        dirs = class_mean_directions(X[keep], labels[keep].tolist())
        scores = {v: float((X[i] - d["midpoint"]) @ d["direction"]) for v, d in dirs.items()}
        predictions.append(max(scores, key=scores.get))
    hits = np.array(predictions) == labels
    return {"accuracy": float(hits.mean()), "n": int(len(X)), "predictions": predictions,
            "chance": float(max(np.mean(labels == v) for v in set(labels.tolist())))}


def stream_attribute_directions(gpt: NumpyGPT, language: Language, relation: str = "sport",
                                lang: str = "en") -> dict:
    """Per layer: held-out accuracy of the class-mean directions of the person's `relation` in the stream at the
    last name (resid_post of the layer), the directions themselves (from every person), and each layer's MLP
    output projected on the unit direction of the person's own value (mean over people, and minus the mean
    projection on the other values' directions)."""
    states = last_name_states(gpt, language, lang)
    labels = [p.attribute(relation) for p in language.people]
    layers = []
    for l in range(gpt.config.n_layer):
        X = states["resid_post"][:, l]
        dirs = class_mean_directions(X, labels)
        unit = {v: d["direction"] / np.linalg.norm(d["direction"]) for v, d in dirs.items()}
        own, other = [], []
        for i, value in enumerate(labels):
            m = states["mlp"][i, l]
            own.append(m @ unit[value])
            other.append(np.mean([m @ u for v, u in unit.items() if v != value]))
        layers.append({"layer": l, "held_out": held_out_value_accuracy(X, labels),
                       "directions": {v: d["direction"] for v, d in dirs.items()},
                       "mlp_projection_own": float(np.mean(own)), "mlp_projection_others": float(np.mean(other))})
    return {"relation": relation, "lang": lang, "layers": layers, "states": states}


def projections(directions: dict[str, np.ndarray], vector: np.ndarray) -> dict[str, float]:
    """The vector's projection on each direction's unit vector (its length along it)."""
    return {v: float(np.asarray(vector) @ d / np.linalg.norm(d)) for v, d in directions.items()}


def contrast_direction(directions: dict[str, np.ndarray], value: str) -> np.ndarray:
    """`value`'s unit direction minus the mean of the other values' unit directions: "this value, not the others"."""
    if value not in directions or len(directions) < 2:
        raise ModelError(f"no direction for {value!r} among {sorted(directions)} to contrast with others")
    unit = {v: d / np.linalg.norm(d) for v, d in directions.items()}
    return unit[value] - np.mean([u for v, u in unit.items() if v != value], axis=0)


def neuron_attribute_profile(gpt: NumpyGPT, language: Language, lang: str, layer: int, neurons: list[int],
                             relation: str = "sport") -> list[dict]:
    """What each neuron responds to among the people: its activation at the last name of "first last" (layer
    `layer`'s MLP), for every person of the language; per value of `relation`, the mean over the people with that
    value. `best` is the value with the highest mean (the first on a tie); `mean_best` and `mean_others` are the
    means over the people with it and over everyone else."""
    gpt._check_layer(layer)
    states = last_name_states(gpt, language, lang)
    acts = states["mlp_act"][:, layer]                       # (people, d_mlp)
    labels = np.array([p.attribute(relation) for p in language.people])
    values = list(dict.fromkeys(labels.tolist()))
    out = []
    for n in neurons:
        if not 0 <= n < acts.shape[1]:
            raise ModelError(f"no neuron {n} in layer {layer}: it has {acts.shape[1]} (0..{acts.shape[1] - 1})")
        a = acts[:, n]
        by_value = {v: float(a[labels == v].mean()) for v in values}
        best = max(values, key=lambda v: by_value[v])
        out.append({"neuron": int(n), "relation": relation, "by_value": by_value, "best": best,
                    "n_best": int((labels == best).sum()), "mean_best": float(a[labels == best].mean()),
                    "mean_others": float(a[labels != best].mean()), "per_person": a.tolist(),
                    "people": [[p.first, p.last] for p in language.people]})
    return out


# --- the embedding ---------------------------------------------------------------------------------------
def word_classes() -> dict[str, dict]:
    """The word classes with two binary attributes each, in both languages: {attribute: {word: labels}}.

    habitat and size: the creatures (cells habitat × size, within each language);
    gender: the first names (cells gender × language)."""
    creatures = {}
    for lang in LANGUAGES:
        for c in CREATURES:
            w = c if lang == "en" else ZH[c]
            creatures[w] = {"habitat": HABITAT[c], "size": SIZE[c], "lang": lang}
    names = {}
    for lang in LANGUAGES:
        for f in FIRST_NAMES:
            names[f if lang == "en" else ZH[f]] = {"gender": GENDER[f], "lang": lang}
    return {"habitat": {"words": creatures, "across": "size", "within_lang": True},
            "size": {"words": creatures, "across": "habitat", "within_lang": True},
            "gender": {"words": names, "across": "lang", "within_lang": False}}


def held_out_binary_accuracy(X: np.ndarray, labels: np.ndarray) -> float:
    """Leave one word out; direction and midpoint threshold from the others; classify it by its projection."""
    values = sorted(set(labels.tolist()))
    if len(values) != 2:
        raise ModelError(f"a binary attribute needs two values, got {values}")
    hits = 0
    for i in range(len(X)):
        keep = np.arange(len(X)) != i
        a, b = X[keep][labels[keep] == values[0]].mean(0), X[keep][labels[keep] == values[1]].mean(0)
        predicted = values[0] if (X[i] - (a + b) / 2) @ (a - b) > 0 else values[1]
        hits += predicted == labels[i]
    return hits / len(X)


def parallelogram_accuracy(X: np.ndarray, attr: np.ndarray, other: np.ndarray, groups: np.ndarray) -> dict:
    """Over every (a, b, c, d) within one group (language) where a, b share `other` value v and differ in `attr`,
    and c has a's `attr` value and another `other` value v′: is b − a + c's nearest word (cosine, among the
    group's words other than a, b, c) one with b's `attr` and c's `other` value (d's cell)?"""
    norms = X / np.linalg.norm(X, axis=1, keepdims=True)
    hits = total = 0
    for g in sorted(set(groups.tolist())):
        idx = np.flatnonzero(groups == g)
        for a in idx:
            for b in idx:
                if other[b] != other[a] or attr[b] == attr[a]:
                    continue
                for c in idx:
                    if attr[c] != attr[a] or other[c] == other[a]:
                        continue
                    target = b, c
                    query = X[b] - X[a] + X[c]
                    candidates = np.array([i for i in idx if i not in (a, b, c)])
                    sims = norms[candidates] @ (query / np.linalg.norm(query))
                    nearest = candidates[int(np.argmax(sims))]
                    hits += attr[nearest] == attr[target[0]] and other[nearest] == other[target[1]]
                    total += 1
    return {"accuracy": hits / total if total else float("nan"), "n": total}


def held_out_by_language(X: np.ndarray, attr: np.ndarray, langs: np.ndarray) -> dict[str, float]:
    """The held-out test within each language's words (the two languages' words never share a context, so
    nothing ties their embeddings to one common direction), and its mean over the languages."""
    by = {lang: float(held_out_binary_accuracy(X[langs == lang], attr[langs == lang]))
          for lang in sorted(set(langs.tolist()))}
    return {"mean": float(np.mean(list(by.values()))), **by}


def held_out_misses(X: np.ndarray, labels: np.ndarray) -> list[int]:
    """The rows held_out_binary_accuracy classifies wrongly (each left out, the direction from the others)."""
    values = sorted(set(labels.tolist()))
    missed = []
    for i in range(len(X)):
        keep = np.arange(len(X)) != i
        a, b = X[keep][labels[keep] == values[0]].mean(0), X[keep][labels[keep] == values[1]].mean(0)
        predicted = values[0] if (X[i] - (a + b) / 2) @ (a - b) > 0 else values[1]
        if predicted != labels[i]:
            missed.append(i)
    return missed


def language_directions(gpt: NumpyGPT, lang: str, name: str = "habitat", n_shuffles: int = 200,
                        seed: int = 0) -> dict:
    """One attribute in one language's words alone: the held-out accuracy (and the words it misses), the
    parallelogram accuracy over that language's quadruples, and both against n_shuffles seeded shuffles of that
    language's labels (mean, 95th percentile, p-value): each language judged against its own null."""
    cls = word_classes()[name]
    vocab = gpt.tokenizer.vocab
    words = [w for w, v in cls["words"].items() if v["lang"] == lang]
    if not words:
        raise ModelError(f"no {name} words in language {lang!r}")
    X = gpt.W_E[[vocab[w] for w in words]]
    attr = np.array([cls["words"][w][name] for w in words])
    other = np.array([cls["words"][w][cls["across"]] for w in words])
    groups = np.array([lang] * len(words))
    held = float(held_out_binary_accuracy(X, attr))
    par = parallelogram_accuracy(X, attr, other, groups)
    rng = np.random.default_rng(seed)
    null_held, null_par = [], []
    for _ in range(n_shuffles):
        perm = rng.permutation(len(words))
        null_held.append(held_out_binary_accuracy(X, attr[perm]))
        null_par.append(parallelogram_accuracy(X, attr[perm], other[perm], groups)["accuracy"])
    null_held, null_par = np.array(null_held, dtype=np.float64), np.array(null_par, dtype=np.float64)
    return {"lang": lang, "attribute": name, "words": len(words),
            "held_out": held, "held_out_missed": [words[i] for i in held_out_misses(X, attr)],
            "parallelogram": par["accuracy"], "parallelogram_quadruples": par["n"],
            "null": {"shuffles": n_shuffles, "seed": seed,
                     "held_out_mean": float(null_held.mean()), "held_out_p95": float(np.percentile(null_held, 95)),
                     "held_out_p_value": float((null_held >= held).mean()),
                     "parallelogram_mean": float(null_par.mean()),
                     "parallelogram_p95": float(np.percentile(null_par, 95)),
                     "parallelogram_p_value": float((null_par >= par["accuracy"]).mean())}}


def semantic_directions(gpt: NumpyGPT, n_shuffles: int = 200, seed: int = 0) -> dict:
    """Per attribute: held-out accuracy (within each language, and pooled over both) and parallelogram accuracy on
    the token embeddings, and the same with shuffled labels (n_shuffles seeded shuffles of the word → (attribute,
    other attribute) labels within each language): the null's mean and 95th percentile, and the fraction of
    shuffles at least as good as the real labels (a p-value)."""
    vocab = gpt.tokenizer.vocab
    rng = np.random.default_rng(seed)
    out = {}
    for name, cls in word_classes().items():
        words = list(cls["words"])
        X = gpt.W_E[[vocab[w] for w in words]]
        attr = np.array([cls["words"][w][name] for w in words])
        other = np.array([cls["words"][w][cls["across"]] for w in words])
        langs = np.array([cls["words"][w]["lang"] for w in words])
        groups = langs if cls["within_lang"] else np.array(["all"] * len(words))
        real_held = held_out_by_language(X, attr, langs)
        real_pooled = float(held_out_binary_accuracy(X, attr))
        real_par = parallelogram_accuracy(X, attr, other, groups)
        null_held, null_par = [], []
        for _ in range(n_shuffles):
            perm = np.arange(len(words))
            for lang in sorted(set(langs.tolist())):   # shuffle the words' labels within each language
                idx = np.flatnonzero(langs == lang)
                perm[idx] = rng.permutation(idx)
            null_held.append(held_out_by_language(X, attr[perm], langs)["mean"])
            null_par.append(parallelogram_accuracy(X, attr[perm], other[perm], groups)["accuracy"])
        null_held, null_par = np.array(null_held), np.array(null_par)
        out[name] = {
            "words": len(words), "values": sorted(set(attr.tolist())), "across": cls["across"],
            "held_out_accuracy": real_held["mean"], "held_out_by_language": real_held,
            "held_out_accuracy_pooled": real_pooled,
            "parallelogram_accuracy": real_par["accuracy"], "parallelogram_quadruples": real_par["n"],
            "null": {"shuffles": n_shuffles, "seed": seed,
                     "held_out_mean": float(null_held.mean()), "held_out_p95": float(np.percentile(null_held, 95)),
                     "parallelogram_mean": float(null_par.mean()),
                     "parallelogram_p95": float(np.percentile(null_par, 95)),
                     "held_out_p_value": float((null_held >= real_held["mean"]).mean()),
                     "parallelogram_p_value": float((null_par >= real_par["accuracy"]).mean())},
        }
    return out


def directions_report(gpt: NumpyGPT, language: Language, n_shuffles: int = 200, seed: int = 0) -> dict:
    """The JSON summary: semantic directions in the embedding (per attribute, with the null), and per language
    and relation the held-out accuracy of the stream directions at the last name after each layer."""
    stream = {}
    for lang in LANGUAGES:
        stream[lang] = {}
        for relation in ("sport", "city", "country"):
            r = stream_attribute_directions(gpt, language, relation, lang)
            stream[lang][relation] = [{"layer": x["layer"], "held_out_accuracy": x["held_out"]["accuracy"],
                                       "chance": x["held_out"]["chance"],
                                       "mlp_projection_own": x["mlp_projection_own"],
                                       "mlp_projection_others": x["mlp_projection_others"]} for x in r["layers"]]
    return {"embedding": semantic_directions(gpt, n_shuffles, seed), "stream": stream,
            "rule": "class-mean differences; held-out = leave one word (embedding) or one person (stream) out; "
                    f"null = {n_shuffles} seeded label shuffles (seed {seed})"}
