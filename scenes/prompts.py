"""Default prompts, chosen by a rule from the model's training language, never typed in.

Both rules take the scene's language: the English lecture's defaults come from the seeded stream of the
English half of the language (`stream(..., lang="en")`), the Chinese lecture's from the Chinese half
(`lang="zh"`), by the same rule. A prompt is written as its language writes it: English words with spaces,
Chinese words run together (the tokenizer splits them, longest word first).

Rule (softmax scene): walk the first seeded stream of the scene's language. At
every word the generator knows the entropy of the distribution it drew from. Keep
the open choices that are skewed, not uniform (for a uniform choice every word has
log p = -entropy), take the one with the highest entropy (the earliest on a tie),
and use the words from the start of its sentence up to it as the prompt. Its next
word is then as uncertain as the language gets while still having favourites,
which is what temperature acts on.

Rule (attention chapter): walk the same seeded stream and take its first story
sentence pair ("a <texture> <colour> <size> <creature> ... . the <creature> was <colour> ."; in Chinese the
same story in the Chinese grammar of model/language.py).
Cut it just before its recall word, so the prompt ends on "was" (or "felt"; in Chinese their translations): that
last token can only predict the recall word by looking back to the adjective it
repeats. The focus token is that last token; the adjective is the earlier word
the recall repeats; the noun is the creature in the first sentence.
"""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path

import numpy as np

from model.memo import per_model
from scenes.words import LANGUAGES as LANGS, read_toml

STREAM_WORDS = 64

# --- a lecturer's own checkpoint (a byte-level BPE tokenizer: GPT-2's kind) has no training language to draw
# prompts from. Its "auto" prompts follow one rule that works with any vocabulary: the first prompt of the scene
# kind's list, in the scene's language, that encodes to at most DRAWN_TOKENS tokens and fits the model's context.
# The Chinese prompts show GPT-2's byte pieces as they are (<0xNN>); --prompt replaces any of them.
DRAWN_TOKENS = 13   # the longest default row the token scenes draw at a legible size
_DATA = read_toml(Path(__file__).with_suffix(".toml"))   # prompts.toml
CHECKPOINT_PROMPTS = {kind: {lang: [tuple(p) if isinstance(p, list) else p for p in prompts]
                             for lang, prompts in langs.items()}
                      for kind, langs in _DATA["checkpoint_prompts"].items()}


def own_language(gpt) -> bool:
    """Whether the model speaks our training language (our word-level tokenizer), not a checkpoint of one's own."""
    return getattr(gpt.tokenizer, "kind", "word") != "bpe"


# --- what the numbers come from, said by one rule: our own model in today's words; a checkpoint of one's own as what
# it is, from its config (the loader accepts only GPT-2 configs). Every title note and every caption that names the
# model takes its words from model_words(), never "our model" of someone else's weights.
MODEL_WORDS = _DATA["model_words"]   # form -> ours / checkpoint -> language (prompts.toml)


def model_words(gpt, lang: str, form: str = "full", **values) -> str:
    """How a caption names the model whose numbers it shows, in `lang`: `form` "full", "plain", "compact", "short",
    "subject" or "vocabulary" (MODEL_WORDS); ours (own_language) in the lecture's words, a checkpoint from its config. Filled with
    the config's n_layer (layers) and n_embd (d), and any `values` (the vocabulary's n)."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: use one of {LANGS}")
    whose = "ours" if own_language(gpt) else "checkpoint"
    c = gpt.config
    return MODEL_WORDS[form][whose][lang].format(layers=c.n_layer, d=c.n_embd, **values)


def checkpoint_prompt(gpt, kind: str, lang: str = "en") -> dict:
    """The "auto" prompt of a lecturer's own checkpoint: the first of CHECKPOINT_PROMPTS[kind][lang] that encodes to
    at most DRAWN_TOKENS tokens within the context; shaped like the training-language rules' records (the focus is
    the last token; no adjective or noun is known)."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: use one of {LANGS}")
    room = min(DRAWN_TOKENS, gpt.config.n_positions)
    for prompt in CHECKPOINT_PROMPTS[kind][lang]:
        parts = prompt if isinstance(prompt, tuple) else (prompt,)
        ids = [gpt.tokenizer.encode(p) for p in parts]
        if all(len(i) <= room for i in ids):
            tokens = list(gpt.tokenizer.decode(ids[0]))
            return {"prompt": parts[0] if len(parts) == 1 else list(parts), "token_ids": ids, "tokens": tokens,
                    "focus_index": len(tokens) - 1, "adjective_index": None, "noun_index": None,
                    "focus_word": tokens[-1], "adjective": None, "person": None, "lang": lang,
                    "rule": f"a checkpoint of one's own: the first {kind} prompt of scenes/prompts.py "
                            f"CHECKPOINT_PROMPTS in {lang} that encodes to at most {room} tokens"}
    raise RuntimeError(f"no {kind} prompt in {lang} fits this model's context of {gpt.config.n_positions}")


def _stream(lang: str):
    """The first seeded stream of one language of the model's training language, and its grammar."""
    from model import language  # the language is the model's; its generator knows every entropy
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: use one of {LANGS}")
    lang_ = language.Language()
    return lang_.stream(STREAM_WORDS, random.Random(language.SEED), lang=lang), lang_.grammar(lang)


def is_punctuation(word: str) -> bool:
    """A token that is a punctuation mark ("," "." and the Chinese full-width comma and full stop): every character of it is one."""
    return bool(word) and all(unicodedata.category(ch).startswith("P") for ch in word)


def spaces_before(words, lang: str) -> list[bool]:
    """Whether a prompt written as text has a space before each word: English words stand a space apart, a
    punctuation mark sits against the word before it ("jordan, indeed, plays"; after another mark it keeps its
    space, so the tokenizer still cuts the two apart); Chinese words run together. The tokens stay the model's:
    its tokenizer cuts a mark off the word it touches."""
    if lang == "zh":
        return [False] * len(words)
    return [i > 0 and not (is_punctuation(w) and not is_punctuation(words[i - 1])) for i, w in enumerate(words)]


def join_words(words, lang: str) -> str:
    """A prompt as its language writes it (spaces_before): "mr michael jordan, indeed, plays"; Chinese
    without spaces."""
    words = list(words)
    return "".join((" " if space else "") + w for w, space in zip(words, spaces_before(words, lang)))


def uncertain_prompt(lang: str = "en", gpt=None) -> dict:
    """The prompt in `lang`, and the evidence for it (for the manifest); a checkpoint of one's own (`gpt` given)
    takes checkpoint_prompt's rule."""
    from model import language

    if gpt is not None and not own_language(gpt):
        return checkpoint_prompt(gpt, "uncertain", lang)

    stream, g = _stream(lang)
    words = [t.word for t in stream]
    candidates = []
    start = 0
    for i, tok in enumerate(stream):
        skewed = tok.entropy > 0 and abs(tok.logp + tok.entropy) > 1e-9
        if skewed and i > start:
            candidates.append({"prompt": join_words(words[start:i], lang), "next_word_entropy_nats": tok.entropy})
        if tok.word == g.t("."):
            start = i + 1
    if not candidates:
        raise RuntimeError("the training language has no skewed open choice to build a prompt on")
    best = max(candidates, key=lambda c: c["next_word_entropy_nats"])  # max() keeps the earliest tie
    return {
        "prompt": best["prompt"],
        "rule": "the sentence prefix before the highest-entropy skewed (non-uniform) choice in the first "
                f"{STREAM_WORDS} words of the training language's seeded {lang} stream (seed {language.SEED})",
        "lang": lang,
        "next_word_entropy_nats": best["next_word_entropy_nats"],
        "candidates_considered": len(candidates),
    }


def lookback_prompt(lang: str = "en", gpt=None) -> dict:
    """The attention chapter's prompt in `lang`, its focus token, the adjective it looks back to, and the rule; a
    checkpoint of one's own (`gpt` given) takes checkpoint_prompt's rule."""
    from model import language

    if gpt is not None and not own_language(gpt):
        return checkpoint_prompt(gpt, "lookback", lang)

    stream, g = _stream(lang)
    words = [t.word for t in stream]
    sentence, story = 0, None
    for i, tok in enumerate(stream):
        if i == sentence and tok.word == g.t("a"):
            story = i                                          # a story's first sentence starts here
        if tok.kind == "recall" and story is not None:
            prompt_words = words[story:i]                      # "a ... . the <creature> was"
            return {
                "prompt": join_words(prompt_words, lang),
                "tokens": prompt_words,
                "focus_index": len(prompt_words) - 1,          # "was" / "felt" (in Chinese, their translations)
                "adjective_index": prompt_words.index(tok.word),  # the earlier word the recall repeats
                "noun_index": prompt_words.index(words[i - 2]),   # the creature in the first sentence
                "focus_word": prompt_words[-1],
                "adjective": tok.word,
                "rule": "the first story sentence pair in the first "
                        f"{STREAM_WORDS} words of the training language's seeded {lang} stream "
                        f"(seed {language.SEED}), cut just before its recall word: the last token "
                        "(\"was\"/\"felt\", \u662f/\u6478\u8d77\u6765) must look back to the adjective it repeats",
                "lang": lang,
            }
        if tok.word == g.t("."):
            sentence = i + 1
    raise RuntimeError("the training language's stream has no complete story to build a look-back prompt on")



# --- the attention chapter's head, chosen by what it does (a causal rule), in both languages at once ------------------
TOP_SET = 3          # the top heads patched together as well (2 and 3 of them): whether the job is shared


def adjective_kind(lang: str, adjective: str) -> str:
    """"colour" or "texture": the attribute of the training language (in `lang`) an adjective belongs to."""
    return next(kind for kind, words in _attributes(lang).items() if adjective in words)


def _attributes(lang: str) -> dict:
    from model import language

    g = language.Language().grammar(lang)
    return {"colour": [g.t(w) for w in language.COLOURS], "texture": [g.t(w) for w in language.TEXTURES]}


def adjective_alternatives(lang: str, adjective: str) -> list[str]:
    """The other words of the adjective's attribute in `lang` (its colours, or its textures), in the language's
    order: what the adjective is swapped for in head_scores' corrupted prompts."""
    for words in _attributes(lang).values():
        if adjective in words:
            return [w for w in words if w != adjective]
    raise ValueError(f"{adjective!r} is neither a colour nor a texture of the {lang} training language")


@per_model
def head_scores(gpt, lang: str) -> dict:
    """Every head's causal score on the default look-back prompt of `lang` (lookback_prompt): the drop in
    log P(the adjective next) at the focus token when the head's output is patched in from the same prompt with the
    adjective swapped for each other word of its attribute (model.analysis.heads.head_patching, averaged over the
    swaps); and the top 1, 2, ..., TOP_SET heads by score patched together (`sets`: each set's score, mean P and
    `share`, the part of P's fall under the whole swap that the set alone brings about): whether one head carries the
    answer or several share it. Once per model and language (model.memo)."""
    from model.analysis.heads import head_patching

    chosen = lookback_prompt(lang, gpt)
    vocab = gpt.tokenizer.vocab
    ids = [int(i) for i in gpt.encode(chosen["prompt"])]
    a = chosen["adjective_index"]
    others = adjective_alternatives(lang, chosen["adjective"])
    corrupt = [ids[:a] + [vocab[w]] + ids[a + 1:] for w in others]
    answer = vocab[chosen["adjective"]]
    single = head_patching(gpt, ids, corrupt, answer)
    scores = single["scores"]
    order = [tuple(int(x) for x in np.unravel_index(i, scores.shape))
             for i in np.argsort(-scores, axis=None, kind="stable")]
    sets = head_patching(gpt, ids, corrupt, answer, sets=[order[:k] for k in range(2, TOP_SET + 1)],
                         per_head=False)["sets"]
    gap = single["p_clean"] - single["p_corrupt"]
    sets = [{"heads": [list(order[0])], "score": float(scores[order[0]]),
             "p_patched": float(single["p_patched"][order[0]])}] + sets
    for entry in sets:   # the share of P(adjective)'s fall under the whole swap that these heads alone bring about
        entry["share"] = (single["p_clean"] - entry["p_patched"]) / gap if gap else float("nan")
    out = {
        "lang": lang, "prompt": chosen["prompt"], "focus": chosen["focus_index"], "adjective": chosen["adjective"],
        "adjective_index": a, "swapped_for": others, "scores": scores, "p_patched": single["p_patched"],
        "p_clean": single["p_clean"], "p_corrupt": single["p_corrupt"],
        "best": list(order[0]), "sets": sets,
    }
    return out


HEAD_RULE = ("the head whose output, patched in from the same prompt with the adjective swapped for each other word of "
             "its attribute (averaged over the swaps), most lowers log P(the adjective) at the focus token")


def story_heads(gpt) -> dict:
    """The causal head rule (head_scores) on both languages' default prompts: every head's score in each language,
    the head each picks, and whether the two languages pick the same head (then both lectures follow it; else each
    follows its own and names the other's)."""
    per = {lang: head_scores(gpt, lang) for lang in LANGS}
    return {"rule": HEAD_RULE, "same": per["en"]["best"] == per["zh"]["best"],
            "chosen": {lang: per[lang]["best"] for lang in LANGS},
            "scores": {lang: np.asarray(per[lang]["scores"]).tolist() for lang in LANGS},
            "p_patched": {lang: np.asarray(per[lang]["p_patched"]).tolist() for lang in LANGS},
            "p_clean": {lang: per[lang]["p_clean"] for lang in LANGS},
            "p_corrupt": {lang: per[lang]["p_corrupt"] for lang in LANGS},
            "sets": {lang: per[lang]["sets"] for lang in LANGS},
            "prompts": {lang: per[lang]["prompt"] for lang in LANGS},
            "swapped_for": {lang: per[lang]["swapped_for"] for lang in LANGS}}


def lookback_head(gpt, prompt: str = "auto", focus="auto", layer="auto", head="auto", lang: str = "en") -> dict:
    """The chapter's prompt, focus token and head, each given or chosen by rule, with the score it was chosen by.

    The default prompt is lookback_prompt(lang). Rules, over every layer and head (a given layer or head narrows
    the search; the earliest wins a tie):
    - default prompt, focus on its recall token, our own model: the causal rule (HEAD_RULE, story_heads), run on
      both languages' default prompts; `score` is the head's drop in log P(adjective) in nats, `story` both
      languages' scores and choices (the lecture in `lang` follows the head its own prompt picks);
    - the same with a checkpoint of one's own: the most attention from the focus to the adjective it recalls
      (as model.analysis.best_lookback_head);
    - default prompt, focus on its noun: the most attention from the noun to the adjectives before it (summed);
    - otherwise: the largest single weight from the focus to one earlier token after the first.
    `source` is where the chosen head's focus row puts its largest weight (the focus itself included); `weight` the
    chosen head's attention from the focus on the keys (the adjective, by the default rules).
    """
    from model.analysis import lookback_scores
    from .params import AUTO, ParamError

    chosen = lookback_prompt(lang, gpt) if prompt == AUTO else None
    text = chosen["prompt"] if chosen else prompt
    trace = gpt.trace(text)
    T = len(trace["tokens"])
    focus_given = focus != AUTO
    if not focus_given:
        focus = chosen["focus_index"] if chosen else T - 1
    if not 0 <= focus < T:
        raise ParamError(f"focus: the prompt has {T} tokens (positions 0..{T - 1}), got {focus}")
    causal = (chosen is not None and chosen["adjective_index"] is not None and focus == chosen["focus_index"]
              and own_language(gpt))
    if causal:
        groups = [[chosen["adjective_index"]]]
        rule = HEAD_RULE
    elif chosen and chosen["adjective_index"] is not None and focus == chosen["focus_index"]:
        groups = [[chosen["adjective_index"]]]
        rule = "the most attention from the focus token to the adjective it recalls"
    elif chosen and chosen["noun_index"] is not None and focus == chosen["noun_index"] and focus > 1:
        groups = [list(range(1, focus))]
        rule = "the most attention from the noun to the adjectives before it (summed)"
    else:
        groups = [[k] for k in range(1, focus)] or [[0]]
        rule = "the largest single attention weight from the focus token to an earlier token after the first"
    attention = np.array([lookback_scores(trace, focus, g) for g in groups])   # (key groups, layers, heads)
    story = story_heads(gpt) if causal else None
    scores = np.asarray(story["scores"][lang])[None] if causal else attention
    allowed = np.zeros(scores.shape[1:], dtype=bool)
    allowed[slice(None) if layer == AUTO else layer, slice(None) if head == AUTO else head] = True
    g, best_layer, best_head = np.unravel_index(int(np.where(allowed, scores, -np.inf).argmax()), scores.shape)
    weights = trace["layers"][best_layer]["attn"]["weights"][best_head, focus, :focus + 1]
    return {
        "prompt": text, "trace": trace, "focus": int(focus), "layer": int(best_layer), "head": int(best_head),
        "keys": groups[g], "score": float(scores[g, best_layer, best_head]),
        "weight": float(attention[g, best_layer, best_head]),   # the focus's attention on the keys, in that head
        "source": int(np.argmax(weights)), "source_weight": float(weights.max()),
        "rule": rule + ", over every layer and head" + ("" if layer == AUTO and head == AUTO else
                                                         " allowed by the given layer/head"),
        "causal": causal, "story": story,
        "given": {"prompt": prompt != AUTO, "focus": focus_given, "layer": layer != AUTO, "head": head != AUTO},
        "prompt_rule": chosen, "all_scores": scores, "all_weights": attention,
    }


def chapter_focus(gpt, prompt: str = "auto", focus="auto", lang: str = "en") -> dict:
    """Resolve the chapter's prompt and focus token from scene parameters ("auto" = the documented default).

    Default prompt: lookback_prompt(lang); default focus: its recall token ("was"/"felt") for that prompt, else the
    prompt's last token (the one whose next word is predicted). The adjective is known for the default prompt
    only (None otherwise). Raises ParamError if the focus lies beyond the prompt.
    """
    from scenes.params import ParamError

    chosen = lookback_prompt(lang, gpt) if prompt == "auto" else None
    text = chosen["prompt"] if chosen else prompt
    tokens = list(gpt.tokenizer.decode(gpt.encode(text)))
    if focus == "auto":
        index = chosen["focus_index"] if chosen else len(tokens) - 1
        focus_rule = ("the default prompt's recall token (it looks back to the adjective)"
                      if chosen and chosen["adjective_index"] is not None
                      else "the prompt's last token (the one whose next word the model predicts)")
    else:
        index, focus_rule = int(focus), "given"
        if not 0 <= index < len(tokens):
            raise ParamError(f"focus: the prompt has {len(tokens)} tokens (0..{len(tokens) - 1}), got {index}")
    return {"prompt": text, "tokens": tokens, "focus": index, "focus_rule": focus_rule,
            "adjective_index": chosen["adjective_index"] if chosen and index == chosen["focus_index"] else None,
            "prompt_rule": chosen}


def fact_prompt(lang: str = "en", gpt=None) -> dict:
    """The MLP chapter's prompt in `lang`: the first person sentence of the seeded stream, cut after the last name.

    Rule: walk the first seeded stream of the language; the first sentence holding a person (a first name
    directly followed by a last name that the world's people pair with it) gives the prompt: the words from the
    sentence's start up to and including the last name. The last name is where the model looks the person up.
    A checkpoint of one's own (`gpt` given) takes checkpoint_prompt's rule.
    """
    from model import language

    if gpt is not None and not own_language(gpt):
        return checkpoint_prompt(gpt, "fact", lang)

    stream, g = _stream(lang)
    words = [t.word for t in stream]
    start = 0
    for i in range(len(words) - 1):
        if (words[i], words[i + 1]) in g.person:
            prompt_words = words[start:i + 2]
            return {"prompt": join_words(prompt_words, lang), "tokens": prompt_words,
                    "focus_index": len(prompt_words) - 1, "person": [words[i], words[i + 1]],
                    "rule": "the first person sentence in the first "
                            f"{STREAM_WORDS} words of the training language's seeded {lang} stream "
                            f"(seed {language.SEED}), cut after the last name", "lang": lang}
        if words[i] == g.t("."):
            start = i + 1
    raise RuntimeError("the training language's stream has no person sentence to build a fact prompt on")


FACT_STREAM_WORDS = 600   # the sport-fact rule reads further: person sentences asking the sport are rarer

# The example the lecture's source article gives for a fact an MLP stores: Michael Jordan plays basketball.
EXAMPLE_PERSON = ("michael", "jordan")
# model/evaluate.py facts_known asks every person's sport with this template: "first last plays"
EXAMPLE_TEMPLATE = "plays"


def _first_sport_sentence(lang: str, person: tuple[str, str] | None = None) -> dict | None:
    """The first sentence in the first FACT_STREAM_WORDS words of the language's seeded stream that names a person
    (`person`, in English words, if given) and then asks their sport, not through a pronoun, cut just before the
    sport; None if there is none."""
    from model import language

    lang_ = language.Language()
    stream = lang_.stream(FACT_STREAM_WORDS, random.Random(language.SEED), lang=lang)
    g = lang_.grammar(lang)
    wanted = None if person is None else (g.t(person[0]), g.t(person[1]))
    words = [t.word for t in stream]
    start = 0
    for i, tok in enumerate(stream):
        if tok.kind == "sport" and tok.template != "pronoun":
            prompt_words = words[start:i]
            pairs = [j for j in range(len(prompt_words) - 1) if (prompt_words[j], prompt_words[j + 1]) in g.person
                     and wanted in (None, (prompt_words[j], prompt_words[j + 1]))]
            if pairs:
                j = pairs[0]
                return {"prompt": join_words(prompt_words, lang), "tokens": prompt_words,
                        "person": [prompt_words[j], prompt_words[j + 1]], "first_index": j, "last_index": j + 1,
                        "answer": tok.word, "lang": lang}
        if tok.word == g.t("."):
            start = i + 1
    return None


def example_fact_prompt(lang: str = "en") -> dict:
    """The source article's example, Michael Jordan (in both languages) and his sport, as a prompt in `lang`, cut just
    before the sport: the first sentence of the seeded stream (FACT_STREAM_WORDS words, as sport_fact_prompt reads)
    that names him and asks his sport, not through a pronoun; if the stream has none, the template model/evaluate.py
    facts_known asks every person's sport with, "first last plays"."""
    from model import language

    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: use one of {LANGS}")
    g = language.Language().grammar(lang)
    found = _first_sport_sentence(lang, EXAMPLE_PERSON)
    if found is not None:
        return {**found, "source": "stream",
                "rule": f"the first sentence naming {' '.join(EXAMPLE_PERSON)} and asking his sport in the first "
                        f"{FACT_STREAM_WORDS} words of the training language's seeded {lang} stream (seed "
                        f"{language.SEED}), cut just before the sport"}
    tokens = [g.t(EXAMPLE_PERSON[0]), g.t(EXAMPLE_PERSON[1]), g.t(EXAMPLE_TEMPLATE)]
    person = g.person[tokens[0], tokens[1]]
    return {"prompt": join_words(tokens, lang), "tokens": tokens, "person": tokens[:2], "first_index": 0,
            "last_index": 1, "answer": g.t(person.sport), "lang": lang, "source": "template",
            "rule": f"no sentence naming {' '.join(EXAMPLE_PERSON)} and asking his sport in the first "
                    f"{FACT_STREAM_WORDS} words of the seeded {lang} stream: model/evaluate.py facts_known's "
                    "template \"first last plays\""}


def knows_fact(gpt, chosen: dict) -> dict:
    """Whether the model knows a prompt's fact: its top-1 next word over the whole vocabulary is the answer (as
    model/evaluate.py facts_known asks), measured on the prompt's trace."""
    from model import probabilities

    p = probabilities(gpt.trace(chosen["prompt"])["logits"][-1])
    top = int(np.argmax(p))
    answer = gpt.tokenizer.vocab[chosen["answer"]]
    return {"top_word": gpt.tokenizer.words[top], "p_top": float(p[top]), "p_answer": float(p[answer]),
            "known": top == answer}


def person_prompt(lang: str = "en", gpt=None) -> dict:
    """The MLP chapter's running example as a prompt of its own: its person's first and last name (sport_fact_prompt),
    the default of superposition_in_gpt; {"prompt", "person", "rule", "lang"}."""
    example = sport_fact_prompt(lang, gpt)
    return {"prompt": join_words(example["person"], lang), "person": example["person"],
            "rule": "the MLP chapter's running example (scenes/prompts.py sport_fact_prompt): its person's first and "
                    "last name", "lang": lang}


def sport_fact_prompt(lang: str = "en", gpt=None) -> dict:
    """The fact scene's prompt in `lang`: the source article's example if the model knows it, else the first
    sentence of the seeded stream that names a person and then asks their sport, cut just before the sport.

    Rule: take example_fact_prompt(lang) (Michael Jordan, from the seeded stream or else facts_known's
    template) and measure it on the model (`gpt`, default the shipped model): if its top-1 next word is his sport
    (knows_fact), that is the prompt (branch "example"). Otherwise (branch "fallback"): walk the first seeded stream
    of the language (FACT_STREAM_WORDS words, the same seed as the other rules); take the first answer word that is
    a sport (a token of kind "sport") in a sentence whose person is named before it and is not referred to by a
    pronoun (template other than "pronoun"); the prompt is the words from the sentence's start up to the word before
    the sport. Either way the model must then say the sport: the fact it looked up. The record holds the branch and,
    under "example", the example's prompt and what the model said after it.
    """
    from model import NumpyGPT, language

    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: use one of {LANGS}")
    example = example_fact_prompt(lang)
    measured = knows_fact(gpt if gpt is not None else NumpyGPT.load(), example)
    record = {"prompt": example["prompt"], "tokens": example["tokens"], "answer": example["answer"],
              "source": example["source"], "rule": example["rule"], **measured}
    if measured["known"]:
        return {**{k: example[k] for k in ("prompt", "tokens", "person", "first_index", "last_index", "answer",
                                           "lang")},
                "branch": "example", "example": record,
                "rule": "the source article's example (michael jordan, asking his sport), as the model knows it "
                        "(its top-1 next word is the sport): " + example["rule"]}
    found = _first_sport_sentence(lang)
    if found is None:
        raise RuntimeError("the training language's stream has no sentence asking a person's sport to build a "
                           "prompt on")
    return {**found, "branch": "fallback", "example": record,
            "rule": "the model does not know the source article's example (its top-1 next word after "
                    f"\"{example['prompt']}\" is \"{measured['top_word']}\", not \"{example['answer']}\"): the first "
                    "sentence naming a person and then asking their sport (not through a pronoun) in the first "
                    f"{FACT_STREAM_WORDS} words of the training language's seeded {lang} stream (seed "
                    f"{language.SEED}), cut just before the sport"}


def person_in(tokens: list[str]) -> dict | None:
    """The first person of the training language named in a prompt's tokens (a first name directly followed by a
    last name that the world pairs with it), in either language: {"lang", "first_index", "person"}; None if none."""
    from model import language

    lang_ = language.Language()
    for lang in LANGS:
        g = lang_.grammar(lang)
        for j in range(len(tokens) - 1):
            if (tokens[j], tokens[j + 1]) in g.person:
                return {"lang": lang, "first_index": j, "person": [tokens[j], tokens[j + 1]]}
    return None


CONTEXT_WORDS, CONTEXT_MAX_TOKENS = 2000, 8


def language_of(words) -> str:
    """The language a prompt is written in: Chinese if any of its words is written in CJK characters."""
    return "zh" if any("\u2e80" <= ch <= "\u9fff" or "\u3000" <= ch <= "\u303f" for w in words for ch in w) \
        else "en"


def context_pair(gpt, lang: str = "en") -> dict:
    """Two prompts with the same last word and different earlier words, whose next-word predictions differ most.

    Rule: the sentences of the first CONTEXT_WORDS words of the language's seeded stream; every distinct sentence
    prefix of 2 to CONTEXT_MAX_TOKENS words (short enough to show on one row); among the prefixes that end on the
    same word, the pair whose next-word distributions are furthest apart in total variation (the first such pair
    in the stream on a tie). Computed by model.analysis.context.
    """
    import random

    from model import language
    from model.analysis.context import largest_context_effect

    if not own_language(gpt):   # no training language: the documented pair (checkpoint_prompt), compared as a pair
        from model.analysis.context import total_variation
        chosen = checkpoint_prompt(gpt, "context", lang)
        p = [gpt.next_token_probabilities(ids) for ids in chosen["token_ids"]]
        return {"prompts": chosen["prompt"], "token_ids": chosen["token_ids"],
                "total_variation": float(total_variation(p[0], p[1])), "prefixes_compared": 2, "pairs_compared": 1,
                "rule": chosen["rule"], "lang": lang}
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}: use one of {LANGS}")
    g = language.Language().grammar(lang)
    stream = language.Language().stream(CONTEXT_WORDS, random.Random(language.SEED), lang=lang)
    sentences, current = [], []
    for tok in stream:
        current.append(tok.word)
        if tok.word == g.t("."):
            sentences.append(current)
            current = []
    ids = [gpt.encode(join_words(s, lang)) for s in sentences]
    found = largest_context_effect(gpt, ids, max_tokens=CONTEXT_MAX_TOKENS)
    words = gpt.tokenizer.words
    return {
        "prompts": [join_words([words[i] for i in p], lang) for p in found["prefixes"]],
        "token_ids": found["prefixes"],
        "total_variation": found["distance"],
        "prefixes_compared": found["prefixes_compared"], "pairs_compared": found["pairs_compared"],
        "rule": f"among the distinct 2-to-{CONTEXT_MAX_TOKENS}-word sentence prefixes of the first {CONTEXT_WORDS} "
                f"words of the training language's seeded {lang} stream (seed {language.SEED}), the two that end "
                "on the same word and whose next-word distributions differ most in total variation",
        "lang": lang,
    }
