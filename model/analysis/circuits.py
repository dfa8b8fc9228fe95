"""Where is a person's sport looked up? Causal tracing over the language's own sport templates.

Templates (the language's own sentences, cut before the sport; the filler is the language's most probable one):
  en.filler    F L , famously , plays        words between the name and the relation
  zh.filler    F L ， 众所周知 ， 打
  zh.of        F L 的 运动 是
  en.of        the sport of F L is          the relation is known before the name; "is" follows it
  en.adjacent  F L plays                    the relation word right after the name
  zh.adjacent  F L 打
Corruptions (the subject is swapped for another real person's names, whose sport differs; per person, a
seeded sample of `partners_per_person` such people, or all of them if there are fewer):
  both   both names swapped (any person with another sport)
  first  the first name only (a person who shares the last name and has another sport)
  last   the last name only (a person who shares the first name and has another sport)
For each pair, every (layer, component, position) state is restored from the clean run in turn
(analysis.patching.causal_trace); the tables are means over pairs of the restored share.
"""

from __future__ import annotations

import numpy as np

from ..language import FILLERS, LANGUAGES, SPORTS, Language
from ..errors import ModelError
from ..numpy_gpt import NumpyGPT
from .patching import COMPONENTS, causal_trace, seeded_choice

TEMPLATES = {
    "en.filler": ("en", ["{F}", "{L}", ",", FILLERS[0], ",", "plays"], True),
    "zh.filler": ("zh", ["{F}", "{L}", ",", FILLERS[0], ",", "plays"], True),
    "zh.of": ("zh", ["{F}", "{L}", "的", "sport", "is"], True),
    "en.of": ("en", ["the", "sport", "of", "{F}", "{L}", "is"], False),
    "en.adjacent": ("en", ["{F}", "{L}", "plays"], False),
    "zh.adjacent": ("zh", ["{F}", "{L}", "plays"], False),
}
SWAPS = ("both", "first", "last")
CIRCUIT_SAMPLE = {"partners_per_person": 3, "seed": 11}


def template_words(language: Language, name: str, first: str, last: str) -> list[str]:
    """The template's words in its language for the person (first, last given in English)."""
    lang, words, _ = TEMPLATES[name]
    g = language.grammar(lang)
    out = []
    for w in words:
        if w == "{F}":
            out.append(g.t(first))
        elif w == "{L}":
            out.append(g.t(last))
        else:
            out.append(w if lang == "en" or not w.isascii() else g.t(w))
    return out


def swap_pairs(language: Language, swap: str, partners_per_person: int, seed: int) -> list[tuple]:
    """(person, corrupting person) pairs with different sports, per the swap kind."""
    pairs = []
    for i, p in enumerate(language.people):
        others = [q for q in language.people if q.sport != p.sport]
        if swap == "first":
            others = [q for q in others if q.last == p.last]
        elif swap == "last":
            others = [q for q in others if q.first == p.first]
        pairs += [(p, q) for q in seeded_choice(others, partners_per_person, seed * 1000 + i)]
    return pairs


def trace_template(gpt: NumpyGPT, language: Language, name: str, swap: str, pairs: list[tuple]) -> dict:
    """Mean restored share per (layer, component, position) over the pairs, and the mean probabilities."""
    lang = TEMPLATES[name][0]
    g = language.grammar(lang)
    vocab = gpt.tokenizer.vocab
    shares, p_clean, p_corrupt = [], [], []
    for p, q in pairs:
        clean = template_words(language, name, p.first, p.last)
        corrupt = template_words(language, name, q.first if swap != "last" else p.first,
                                 q.last if swap != "first" else p.last)
        result = causal_trace(gpt, [vocab[w] for w in clean], [vocab[w] for w in corrupt], vocab[g.t(p.sport)])
        shares.append(result["share"])
        p_clean.append(result["p_clean"])
        p_corrupt.append(result["p_corrupt"])
    words = TEMPLATES[name][1]
    share = np.mean(shares, axis=0) if shares else None
    return {"n_pairs": len(pairs), "p_clean": float(np.mean(p_clean)), "p_corrupt": float(np.mean(p_corrupt)),
            "positions": [w.strip("{}") for w in words], "share": share}


def sport_circuits(gpt: NumpyGPT, language: Language, partners_per_person: int = CIRCUIT_SAMPLE["partners_per_person"],
                   seed: int = CIRCUIT_SAMPLE["seed"]) -> dict:
    """Causal tracing of the sport relation over every template and swap, and where the lookup happens.

    `lookup` summarises the templates with words between the name and the relation: per swap, the mean share of
    the MLP output at the last name (best layer), at the relation word (best layer), and the (layer, component,
    position) with the largest mean share among attention and MLP outputs ("where the lookup happens")."""
    L = gpt.config.n_layer
    templates = {}
    for name, (lang, words, between) in TEMPLATES.items():
        templates[name] = {"lang": lang, "between": between, "swaps": {}}
        for swap in SWAPS:
            pairs = swap_pairs(language, swap, partners_per_person, seed)
            templates[name]["swaps"][swap] = trace_template(gpt, language, name, swap, pairs)
    lookup = {}
    for swap in SWAPS:
        rows = [t["swaps"][swap] for t in templates.values() if t["between"]]
        # per template, positions of the last name and the relation word (the last position)
        last = np.mean([r["share"][:, :, r["positions"].index("L")] for r in rows], axis=0)   # (layers, comps)
        rel = np.mean([r["share"][:, :, -1] for r in rows], axis=0)
        first = np.mean([r["share"][:, :, r["positions"].index("F")] for r in rows], axis=0)
        mlp, attn = COMPONENTS.index("mlp"), COMPONENTS.index("attn")
        by_place = {"first_name": first, "last_name": last, "relation": rel}
        best = max(((float(v[l, c]), place, l, COMPONENTS[c]) for place, v in by_place.items()
                    for l in range(L) for c in (attn, mlp)))
        lookup[swap] = {
            "last_name_mlp": {"layer": int(last[:, mlp].argmax()), "share": float(last[:, mlp].max()),
                              "per_layer": last[:, mlp].tolist()},
            "relation_mlp": {"layer": int(rel[:, mlp].argmax()), "share": float(rel[:, mlp].max()),
                             "per_layer": rel[:, mlp].tolist()},
            "relation_attn": {"layer": int(rel[:, attn].argmax()), "share": float(rel[:, attn].max()),
                              "per_layer": rel[:, attn].tolist()},
            "first_name_mlp": {"layer": int(first[:, mlp].argmax()), "share": float(first[:, mlp].max()),
                               "per_layer": first[:, mlp].tolist()},
            "largest": {"share": best[0], "place": best[1], "layer": best[2], "component": best[3]},
            "n_pairs": int(sum(r["n_pairs"] for r in rows)),
        }
    return {"answer": "sport", "components": list(COMPONENTS), "languages": list(LANGUAGES),
            "sample": {"partners_per_person": partners_per_person, "seed": seed},
            "templates": {name: {**t, "swaps": {s: {**r, "share": r["share"].tolist()} for s, r in t["swaps"].items()}}
                          for name, t in templates.items()},
            "lookup": lookup,
            "between_templates": [n for n, t in templates.items() if t["between"]]}


def sport_alternatives(gpt: NumpyGPT, language: Language, lang: str) -> list[int]:
    """Token ids of every sport word in `lang` (the alternatives for direct logit attribution)."""
    g = language.grammar(lang)
    return [gpt.tokenizer.vocab[g.t(s)] for s in SPORTS]


def person_causal_trace(gpt: NumpyGPT, language: Language, lang: str, words: list[str], first_index: int,
                        components: tuple[str, ...] = ("attn", "mlp")) -> dict:
    """Causal tracing of one prompt that names a person (words[first_index], words[first_index + 1]) and asks their
    sport: both names swapped for every other person of the language with another sport and the same gender (so
    a title before the name stays true), each (layer, component, position) restored in turn
    (patching.causal_trace). `share` is the mean restored share over those partners (layers × components ×
    positions); the answer is the person's sport in the prompt's language."""
    g = language.grammar(lang)
    key = tuple(words[first_index:first_index + 2])
    if key not in g.person:
        raise ModelError(f"no person {' '.join(key)!r} at position {first_index} of the prompt")
    person = g.person[key]
    vocab = gpt.tokenizer.vocab
    answer = g.t(person.sport)
    partners = [q for q in language.people if q.sport != person.sport and q.gender == person.gender]
    clean_ids = [vocab[w] for w in words]
    runs = []
    for q in partners:
        corrupt = list(words)
        corrupt[first_index:first_index + 2] = [g.t(q.first), g.t(q.last)]
        r = causal_trace(gpt, clean_ids, [vocab[w] for w in corrupt], vocab[answer], components=components)
        runs.append({"partner": [g.t(q.first), g.t(q.last)], "p_clean": r["p_clean"], "p_corrupt": r["p_corrupt"],
                     "share": r["share"]})
    if not runs:
        raise ModelError(f"no other person with another sport to swap {' '.join(key)!r} for")
    return {"answer": answer, "answer_id": vocab[answer], "person": list(key), "components": list(components),
            "positions": list(range(len(words))), "partners": [r["partner"] for r in runs],
            "partner_rule": "every other person of the language with another sport and the same gender",
            "p_clean": runs[0]["p_clean"], "p_corrupt": [r["p_corrupt"] for r in runs],
            "share": np.mean([r["share"] for r in runs], axis=0), "share_per_partner": [r["share"] for r in runs]}
