"""The embedding space seen through its measured directions: a plane spanned by two attribute directions of a word
class, the parallelograms in it, and a word's nearest neighbours.

The plane is not a PCA: its first axis is the class-mean difference of one attribute (e.g. habitat: water − land),
its second the class-mean difference of another (size: big − small) made perpendicular to the first
(Gram–Schmidt). The share of the words' variance (about their mean) that the plane keeps is reported.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..numpy_gpt import NumpyGPT
from .directions import word_classes


def class_words(attribute: str, lang: str) -> dict[str, dict]:
    """The words of the class that `attribute` describes, in one language: word → its attribute values."""
    classes = word_classes()
    if attribute not in classes:
        raise ModelError(f"unknown attribute {attribute!r}: use one of {', '.join(classes)}")
    return {w: v for w, v in classes[attribute]["words"].items() if v["lang"] == lang}


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def mean_difference(X: np.ndarray, labels: list[str], positive: str) -> np.ndarray:
    """Mean of the rows labelled `positive` minus the mean of the others."""
    mask = np.array([l == positive for l in labels])
    return X[mask].mean(0) - X[~mask].mean(0)


def attribute_plane(gpt: NumpyGPT, lang: str, first: str = "habitat", second: str = "size",
                    first_positive: str = "water", second_positive: str = "big") -> dict:
    """The class's words in `lang` projected on the plane of two attribute directions (see the module)."""
    words = class_words(first, lang)
    if second not in next(iter(words.values())):
        raise ModelError(f"{second!r} is not an attribute of the same words as {first!r}")
    names = list(words)
    X = gpt.W_E[[gpt.tokenizer.vocab[w] for w in names]].astype(np.float64)
    d1 = mean_difference(X, [words[w][first] for w in names], first_positive)
    d2 = mean_difference(X, [words[w][second] for w in names], second_positive)
    u1 = _unit(d1)
    u2 = _unit(d2 - (d2 @ u1) * u1)
    centred = X - X.mean(0)
    coords = centred @ np.stack([u1, u2]).T
    return {
        "words": names, "token_ids": [gpt.tokenizer.vocab[w] for w in names],
        "labels": {first: [words[w][first] for w in names], second: [words[w][second] for w in names]},
        "axes": [first, second], "positive": [first_positive, second_positive],
        "coords": coords, "unit_axes": np.stack([u1, u2]),
        "variance_kept": float((coords ** 2).sum() / (centred ** 2).sum()),
        "directions_cosine": float(_unit(d1) @ _unit(d2)),
    }


def parallelograms(gpt: NumpyGPT, lang: str, attribute: str, other: str, start: str | None = None) -> dict:
    """Every quadruple the parallelogram test asks about (directions.parallelogram_accuracy) in one language:
    a, b share `other` and differ in `attribute`; c shares a's `attribute` and not its `other`. b − a + c's nearest
    word (cosine, among the class's words other than a, b, c) should have b's `attribute` and c's `other` (d's group:
    a hit counts the group, not one word). Returns the hit rate and the example shown, by a rule that does not look
    at the results: a = `start` (the first listed word if None), b = the first listed word with a's `other` and the
    other `attribute`, c = the first listed word with a's `attribute` and another `other`."""
    words = class_words(attribute, lang)
    names = list(words)
    if start is None:
        start = names[0]
    if start not in words:
        raise ModelError(f"{start!r} is not one of the {attribute} words of {lang}")
    X = gpt.W_E[[gpt.tokenizer.vocab[w] for w in names]].astype(np.float64)
    unit = X / np.linalg.norm(X, axis=1, keepdims=True)
    attr = [words[w][attribute] for w in names]
    oth = [words[w][other] for w in names]
    n = len(names)
    cases = []
    for a in range(n):
        for b in range(n):
            if oth[b] != oth[a] or attr[b] == attr[a]:
                continue
            for c in range(n):
                if attr[c] != attr[a] or oth[c] == oth[a]:
                    continue
                query = _unit(X[b] - X[a] + X[c])
                candidates = [i for i in range(n) if i not in (a, b, c)]
                sims = unit[candidates] @ query
                best = int(np.argmax(sims))
                nearest = candidates[best]
                hit = attr[nearest] == attr[b] and oth[nearest] == oth[c]
                cases.append({"a": names[a], "b": names[b], "c": names[c], "nearest": names[nearest],
                              "cosine": float(sims[best]), "hit": bool(hit)})
    if not cases:
        raise ModelError(f"no parallelogram quadruples for {attribute} across {other} in {lang}")
    hits = [c for c in cases if c["hit"]]
    a = names.index(start)
    b = next(i for i in range(n) if oth[i] == oth[a] and attr[i] != attr[a])
    c = next(i for i in range(n) if attr[i] == attr[a] and oth[i] != oth[a])
    example = next(e for e in cases if (e["a"], e["b"], e["c"]) == (names[a], names[b], names[c]))
    return {"accuracy": len(hits) / len(cases), "hits": len(hits), "quadruples": len(cases), "example": example,
            "example_rule": f"a = {start!r}; b = the first listed word with a's {other} and the other {attribute}; "
                            f"c = the first listed word with a's {attribute} and another {other}"}


def nearest_words(gpt: NumpyGPT, token_id: int, k: int = 5) -> list[dict]:
    """The k words whose embeddings are closest in cosine to the word's (itself excluded), closest first."""
    E = gpt.W_E.astype(np.float64)
    if not 0 <= token_id < len(E):
        raise ModelError(f"no token id {token_id}: the vocabulary has {len(E)} words")
    unit = E / np.linalg.norm(E, axis=1, keepdims=True)
    sims = unit @ unit[token_id]
    sims[token_id] = -np.inf
    order = np.argsort(-sims, kind="stable")[:k]
    return [{"token_id": int(i), "word": gpt.tokenizer.words[int(i)], "cosine": float(sims[i])} for i in order]
