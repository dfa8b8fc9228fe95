"""What a head does: its job over many prompts of the training language, and whether it does anything on one prompt.

Two measurements, each with its rule stated here and recorded by whoever shows it:

- top_key_census: over a seeded sample of the chapter's prompts ("a <texture> <colour> ... . the <creature> was",
  cut just before the word the sentence repeats: story_sample), where a head's query at the last token puts its
  largest weight, each top key sorted into one kind by KIND_RULE ("the colour word in 119 of 119 prompts ending
  in 'was'"). A head's job is what its top key typically is.
- swap_test: on one prompt, each head's output at the focus patched in from the same prompt with the answer word
  swapped for each other word of its group (answer_swaps), the rest of the model re-run, P(answer) averaged over
  the swaps. A head may be called idle only if this moves P(answer) by less than IDLE_POINTS percentage points
  (IDLE_RULE). Zeroing a head instead hides a backup head: another head fetches the same word, so the answer
  survives; swapping the word it fetches does not.
"""

from __future__ import annotations

import random
from collections import Counter
from functools import lru_cache

import numpy as np

from ..errors import ModelError
from ..memo import per_model
from ..numpy_gpt import NumpyGPT, probabilities
from .heads import head_contribution

IDLE_POINTS = 1.0        # percentage points: below this mean move of P(answer) under the swap test, a head is idle
IDLE_RULE = ("a head is idle only if patching its output at the focus from the prompt with the answer word swapped "
             "(for each other word of its group, model.analysis.head_jobs.answer_swaps) moves P(answer) by less than "
             f"{IDLE_POINTS:g} percentage point, averaged over the swaps (the mean of |P clean - P patched|)")
ANSWER_RULE = ("the answer is the model's most likely next word at the focus; it must occur before the focus, and "
               "belong to one word group of the training language (its colours, textures, creatures, ...); it is "
               "swapped, at its last occurrence before the focus, for each other word of that group. Otherwise "
               "there is no swap test, and no head may be called idle")

SAMPLE = {"n": 200, "seed": 4242}    # the census's documented sample: 200 prompts from streams seeded 4242
STREAM_TOKENS = 64                   # each seeded stream's length (as scenes.prompts reads the language)

# the kinds of top key, in the order they are tested: the first that holds names the key
KINDS = ("answer", "self", "previous", "first", "punctuation", "grammar", "other")
KIND_RULE = ("the top key (largest weight from the last token) is: 'answer' if it is the same word as the answer "
             "(the adjective the sentence repeats next); else 'self' if it is the last token itself; else "
             "'previous' if it is the token just before it; else 'first' if it is the prompt's first token; else "
             "'punctuation' if it is a punctuation mark; else 'grammar' if it is a grammar word of the language "
             "(model.language's function words: a, the, was, 一只, 这只, 了, 的 ...); else 'other'")


@lru_cache(maxsize=None)
def _groups(lang: str) -> dict:
    """The training language's word groups in `lang` (group name -> its words, in the language's order)."""
    from .. import language as lg
    g = lg.Language().grammar(lang)
    groups = {"colour": lg.COLOURS, "texture": lg.TEXTURES, "creature": lg.CREATURES,
              "size": [w for ws in lg.SIZE_ADJECTIVES.values() for w in ws],
              "verb": [w for ws in lg.VERBS.values() for w in ws], "place_adjective": lg.PLACE_ADJECTIVES,
              "place": [w for ws in lg.PLACES.values() for w in ws], "first_name": lg.FIRST_NAMES,
              "last_name": lg.LAST_NAMES, "sport": lg.SPORTS, "city": lg.CITIES, "country": lg.COUNTRIES}
    return {name: [g.t(w) for w in words] for name, words in groups.items()}


@lru_cache(maxsize=None)
def _grammar_words(lang: str) -> frozenset:
    """The language's grammar words in `lang`: model.language's function words (those with a word in `lang`) and,
    in Chinese, its Chinese-only grammar words."""
    from .. import language as lg
    if lang == "en":
        return frozenset(lg.EN_FUNCTION_WORDS)
    return frozenset(lg.ZH[w] for w in lg.EN_FUNCTION_WORDS if w in lg.ZH) | frozenset(lg.ZH_ONLY)


def _is_punctuation(word: str) -> bool:
    import unicodedata
    return bool(word) and all(unicodedata.category(ch).startswith("P") for ch in word)


def story_sample(lang: str, n: int = SAMPLE["n"], seed: int = SAMPLE["seed"]) -> list[dict]:
    """n prompts of the chapter's form in `lang`, in the order the seeded streams give them: each story's two
    sentences ("a silky orange tiny frog dived the verdant lake . the frog was") cut just before the recall word.
    Each: words, focus (the last token: "was"/"felt", 是/摸起来), answer (the recall word), answer_index (its first
    mention) and form ("colour" after "was", "texture" after "felt")."""
    from .. import language as lg
    if lang not in lg.LANGUAGES:
        raise ModelError(f"unknown language {lang!r}: use one of {', '.join(lg.LANGUAGES)}")
    if n < 1:
        raise ModelError(f"a sample needs at least one prompt, got {n}")
    language = lg.Language()
    g = language.grammar(lang)
    colours = set(_groups(lang)["colour"])
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        stream = language.stream(STREAM_TOKENS, rng, lang=lang)
        words = [t.word for t in stream]
        sentence, story = 0, None
        for i, tok in enumerate(stream):
            if i == sentence and tok.word == g.t("a"):
                story = i
            if tok.kind == "recall" and story is not None:
                prompt = words[story:i]
                out.append({"words": prompt, "focus": len(prompt) - 1, "answer": tok.word,
                            "answer_index": prompt.index(tok.word),
                            "form": "colour" if tok.word in colours else "texture"})
                story = None
                if len(out) == n:
                    break
            if tok.word == g.t("."):
                sentence = i + 1
    return out


def key_kind(words: list[str], key: int, focus: int, answer: str | None, lang: str) -> str:
    """The kind of the key at position `key` seen from `focus` (KIND_RULE)."""
    if not 0 <= key <= focus < len(words):
        raise ModelError(f"a key at or before the focus, got key {key} and focus {focus} of {len(words)} tokens")
    w = words[key]
    if answer is not None and w == answer:
        return "answer"
    if key == focus:
        return "self"
    if key == focus - 1:
        return "previous"
    if key == 0:
        return "first"
    if _is_punctuation(w):
        return "punctuation"
    if w in _grammar_words(lang):
        return "grammar"
    return "other"


def top_key_census(gpt: NumpyGPT, lang: str, sample: list[dict] | None = None) -> dict:
    """Every head's top key at the last token of each sample prompt (story_sample's by default), sorted by KIND_RULE:
    per (layer, head), the counts of each kind over the sample and per form (colour / texture prompts), its job (the
    most common kind; the earlier kind in KINDS on a tie) and that kind's count."""
    sample = story_sample(lang) if sample is None else sample
    vocab = gpt.tokenizer.vocab
    c = gpt.config
    kinds = np.empty((len(sample), c.n_layer, c.n_head), dtype=object)
    for i, s in enumerate(sample):
        missing = [w for w in s["words"] if w not in vocab]
        if missing:
            raise ModelError(f"the census needs the training language's words; {missing[0]!r} is not in the vocabulary")
        tr = gpt.trace([vocab[w] for w in s["words"]])
        f = s["focus"]
        for layer in range(c.n_layer):
            tops = tr["layers"][layer]["attn"]["weights"][:, f, : f + 1].argmax(-1)
            for head in range(c.n_head):
                kinds[i, layer, head] = key_kind(s["words"], int(tops[head]), f, s["answer"], lang)
    forms = sorted({s["form"] for s in sample})
    heads = {}
    for layer in range(c.n_layer):
        for head in range(c.n_head):
            counts = Counter(kinds[:, layer, head])
            by_form = {form: dict(Counter(k for k, s in zip(kinds[:, layer, head], sample) if s["form"] == form))
                       for form in forms}
            job = max(KINDS, key=lambda k: (counts.get(k, 0), -KINDS.index(k)))
            heads[layer, head] = {"layer": layer, "head": head, "counts": {k: counts.get(k, 0) for k in KINDS},
                                  "by_form": {f: {k: by_form[f].get(k, 0) for k in KINDS} for f in forms},
                                  "job": job, "job_count": counts.get(job, 0)}
    return {"lang": lang, "n": len(sample), "forms": {f: sum(s["form"] == f for s in sample) for f in forms},
            "heads": heads, "rule": KIND_RULE,
            "sample": f"scenes' chapter form: story_sample({lang!r}, n={len(sample)}), seeded streams of the "
                      "training language, each story cut just before its recall word"}


def answer_swaps(gpt: NumpyGPT, token_ids: list[int], focus: int, lang: str) -> dict | None:
    """The swap test's inputs for one prompt (ANSWER_RULE): the answer (the most likely next word at the focus), its
    position, its group, and the swapped prompts (the answer replaced, at its last occurrence before the focus, by
    each other word of its group, each in the vocabulary); None where the rule does not apply."""
    ids = [int(i) for i in token_ids]
    if not 0 <= focus < len(ids):
        raise ModelError(f"a focus in 0..{len(ids) - 1}, got {focus}")
    words = gpt.tokenizer.words
    answer = int(np.argmax(gpt.trace(ids[: focus + 1])["logits"][focus]))
    before = [i for i in range(focus) if ids[i] == answer]
    group = next((name for name, ws in _groups(lang).items() if words[answer] in ws), None)
    if not before or group is None:
        return None
    vocab = gpt.tokenizer.vocab
    others = [w for w in _groups(lang)[group] if w != words[answer] and w in vocab]
    if not others:
        return None
    at = before[-1]
    swapped = [ids[:at] + [vocab[w]] + ids[at + 1: focus + 1] for w in others]
    return {"answer": words[answer], "answer_id": answer, "position": at, "group": group, "swapped_for": others,
            "swapped": swapped, "rule": ANSWER_RULE}


def swap_test(gpt: NumpyGPT, token_ids: list[int], focus: int, answer_id: int, swapped: list[list[int]],
              layers=None) -> dict:
    """Each head's swap test (IDLE_RULE): its output at the focus replaced by its output there on each swapped prompt
    (the rest of its layer's output kept, every later layer re-run), P(answer) at the focus averaged over the swaps.

    Returns per head ((layer, head) for every head of `layers`, default all): p_patched (mean), move (P clean minus
    the mean patched P, in percentage points, signed), mean_abs_move (points; the idle rule's measure) and idle; and
    p_clean, the number of swaps, the rule."""
    ids = [int(i) for i in token_ids][: focus + 1]
    if not 0 <= focus < len(token_ids):
        raise ModelError(f"a focus in 0..{len(token_ids) - 1}, got {focus}")
    if not swapped or any(len(s) != len(ids) for s in swapped):
        raise ModelError("the swap test needs at least one swapped prompt of the same length up to the focus")
    c = gpt.config
    layers = range(c.n_layer) if layers is None else [int(l) for l in layers]
    clean = gpt.trace(ids)
    corrupts = [gpt.trace(s) for s in swapped]
    p_clean = float(probabilities(clean["logits"][focus])[answer_id])
    out = {"p_clean": p_clean, "swaps": len(swapped), "rule": IDLE_RULE, "idle_points": IDLE_POINTS, "heads": {}}
    for layer in layers:
        base = np.asarray(clean["layers"][layer]["attn"]["out"][focus], dtype=np.float64)
        for head in range(c.n_head):
            own = head_contribution(gpt, clean, layer, head)[focus]
            ps = []
            for corrupt in corrupts:
                vec = base - own + head_contribution(gpt, corrupt, layer, head)[focus]
                run = gpt.trace(ids, patch={(layer, "attn", focus): vec})
                ps.append(float(probabilities(run["logits"][focus])[answer_id]))
            moves = 100.0 * (p_clean - np.array(ps))
            mean_abs = float(np.abs(moves).mean())
            out["heads"][layer, head] = {"layer": layer, "head": head, "p_patched": float(np.mean(ps)),
                                         "move": float(moves.mean()), "mean_abs_move": mean_abs,
                                         "idle": mean_abs < IDLE_POINTS}
    return out


@per_model
def cached_census(gpt: NumpyGPT, lang: str) -> dict:
    """top_key_census on the documented sample (SAMPLE), once per model and language (model.memo)."""
    return top_key_census(gpt, lang)


FORMS = {"colour": "was", "texture": "felt"}     # each form's recall word (its English form; g.t gives the language's)
JOBS_RULE = ("for each form of the chapter's prompt (ending in 'was': the colour; the same prompt ending in 'felt': "
             "the texture), the head of the layer whose swap test moves P(answer) most (the earliest on a tie); "
             "it does that form's job if it is not idle (IDLE_RULE). Each such head's job is measured by the census "
             "(top_key_census): in how many of the sample's prompts of that form its top key is the answer")


def form_jobs(gpt: NumpyGPT, lang: str, layer: int, token_ids: list[int], focus: int) -> dict:
    """Which head of `layer` fetches the colour and which the texture (JOBS_RULE), on the chapter's prompt (token_ids,
    its recall word at `focus`) and on its twin with the other recall word, each head's swap test on both, and the
    census's counts for that layer (per head and form: prompts whose top key is the answer, of how many)."""
    from .. import language as lg
    gpt.check_head(layer, 0)
    g = lg.Language().grammar(lang)
    vocab = gpt.tokenizer.vocab
    ids = [int(i) for i in token_ids][: focus + 1]
    census = cached_census(gpt, lang)
    out = {"layer": layer, "rule": JOBS_RULE, "forms": {}, "sample": census["sample"], "n": census["n"],
           "form_n": census["forms"], "kind_rule": census["rule"]}
    for form, word in FORMS.items():
        twin = ids[:focus] + [vocab[g.t(word)]]
        swaps = answer_swaps(gpt, twin, focus, lang)
        if swaps is None or swaps["group"] != form:
            raise ModelError(f"the chapter's prompt ending in {g.t(word)!r} does not ask for its {form}")
        test = swap_test(gpt, twin, focus, swaps["answer_id"], swaps["swapped"], layers=[layer])
        moves = [test["heads"][layer, h]["mean_abs_move"] for h in range(gpt.config.n_head)]
        best = int(np.argmax(moves))
        out["forms"][form] = {"recall": g.t(word), "answer": swaps["answer"], "swapped_for": swaps["swapped_for"],
                              "p_clean": test["p_clean"], "moves": moves,
                              "p_patched": [test["heads"][layer, h]["p_patched"] for h in range(gpt.config.n_head)],
                              "head": best, "useful": not test["heads"][layer, best]["idle"],
                              "answer_top": [census["heads"][layer, h]["by_form"].get(form, {}).get("answer", 0)
                                             for h in range(gpt.config.n_head)],
                              "of": census["forms"].get(form, 0)}
    return out


KEY_VALUE_RULE = ("the prompt with the word at `position` swapped for each word of its group in turn (itself "
                  "included): per word, the head's score and attention weight from the focus to that position (what "
                  "the key answers), and the head's value there written through its own rows of W_O and read "
                  "through ln_f (frozen at the focus) and the unembedding among the group's words: the word it "
                  "raises most (what the value carries)")


def key_value_roles(gpt: NumpyGPT, token_ids: list[int], focus: int, layer: int, head: int, position: int,
                    lang: str) -> dict:
    """Why a value is separate from a key (KEY_VALUE_RULE): swap the word at `position` (the adjective) for every word
    of its group. The key answers the query alike whichever word it is (the weights stay high: "I am a colour");
    the value differs (written through W_O it raises its own word first: which colour)."""
    from .mlp import vector_readout
    gpt.check_head(layer, head)
    ids = [int(i) for i in token_ids][: focus + 1]
    if not 0 <= position < focus < len(token_ids):
        raise ModelError(f"a position before the focus, got {position} and focus {focus}")
    words, vocab = gpt.tokenizer.words, gpt.tokenizer.vocab
    group = next((name for name, ws in _groups(lang).items() if words[ids[position]] in ws), None)
    if group is None:
        raise ModelError(f"{words[ids[position]]!r} is in no word group of the {lang} training language")
    members = [w for w in _groups(lang)[group] if w in vocab]
    member_ids = [vocab[w] for w in members]
    W_O = gpt.head(layer, head).W_O
    rows = []
    for w in members:
        run = ids[:position] + [vocab[w]] + ids[position + 1:]
        tr = gpt.trace(run)
        attn = tr["layers"][layer]["attn"]
        v = np.asarray(attn["v"][head][position], np.float64)
        read = vector_readout(gpt, tr, focus, v @ W_O, k=1, word_ids=member_ids, rank_of=[vocab[w]])
        rows.append({"word": w, "weight": float(attn["weights"][head, focus, position]),
                     "score": float(attn["scaled"][head, focus, position]),
                     "k": np.asarray(attn["k"][head][position], np.float64), "v": v,
                     "raises": read["top"][0]["word"], "own_rank": read["ranks"][vocab[w]]})

    def mean_cos(vectors):
        X = np.array(vectors)
        X = X / np.linalg.norm(X, axis=1, keepdims=True)
        C = X @ X.T
        return float(C[~np.eye(len(X), dtype=bool)].mean())

    return {"layer": layer, "head": head, "position": position, "group": group, "words": members,
            "weights": [r["weight"] for r in rows], "scores": [r["score"] for r in rows],
            "raises": [r["raises"] for r in rows], "own_first": sum(r["raises"] == r["word"] for r in rows),
            "min_weight": min(r["weight"] for r in rows),
            "key_cos": mean_cos([r["k"] for r in rows]), "value_cos": mean_cos([r["v"] for r in rows]),
            "rule": KEY_VALUE_RULE}


KEY_VALUE_SWAP_RULE = ("the swap test split in two: at the answer word's position, this head's key alone (or its value "
                       "alone) is taken from the prompt with that word swapped for each other word of its group; the "
                       "head's output at the focus is recomputed from its query, keys and values (the others as they "
                       "were), written through its rows of W_O in place of its own, every later layer re-run; P(answer) "
                       "at the focus averaged over the swaps")


def key_value_swap(gpt: NumpyGPT, token_ids: list[int], focus: int, layer: int, head: int, lang: str) -> dict | None:
    """Why a value is separate from a key (KEY_VALUE_SWAP_RULE): P(answer) with the answer word swapped in this head's
    key only, and in its value only, with its attention weight on that position in each case; None where the prompt
    has no swap test (answer_swaps)."""
    gpt.check_head(layer, head)
    ids = [int(i) for i in token_ids][: focus + 1]
    swaps = answer_swaps(gpt, ids, focus, lang)
    if swaps is None:
        return None
    a, answer = swaps["position"], swaps["answer_id"]
    clean = gpt.trace(ids)
    attn = clean["layers"][layer]["attn"]
    q = np.asarray(attn["q"][head][focus], np.float64)
    K = np.asarray(attn["k"][head][: focus + 1], np.float64)
    V = np.asarray(attn["v"][head][: focus + 1], np.float64)
    W_O = gpt.head(layer, head).W_O
    base = np.asarray(attn["out"][focus], np.float64) - np.asarray(attn["head_out"][head][focus], np.float64) @ W_O

    def run(K_, V_):
        s = K_ @ q / np.sqrt(q.shape[0])
        w = np.exp(s - s.max())
        w /= w.sum()
        patched = gpt.trace(ids, patch={(layer, "attn", focus): base + (w @ V_) @ W_O})
        return float(probabilities(patched["logits"][focus])[answer]), float(w[a])

    out = {"key": [], "value": []}
    for swapped in swaps["swapped"]:
        other = gpt.trace(swapped)["layers"][layer]["attn"]
        K2, V2 = K.copy(), V.copy()
        K2[a], V2[a] = other["k"][head][a], other["v"][head][a]
        out["key"].append(run(K2, V))
        out["value"].append(run(K, V2))
    p_clean = float(probabilities(clean["logits"][focus])[answer])
    return {"layer": layer, "head": head, "answer": swaps["answer"], "position": a, "group": swaps["group"],
            "swapped_for": swaps["swapped_for"],
            "p_clean": p_clean, "weight": float(attn["weights"][head, focus, a]),
            "key_only": {"p": float(np.mean([p for p, _ in out["key"]])),
                         "weight": float(np.mean([w for _, w in out["key"]]))},
            "value_only": {"p": float(np.mean([p for p, _ in out["value"]])),
                           "weight": float(np.mean([w for _, w in out["value"]]))},
            "rule": KEY_VALUE_SWAP_RULE}
