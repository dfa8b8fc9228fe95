"""Tokens and embedding: the chapter's default prompt, true numbers, a stable frame (the checks every scene shares:
test_scenes.py)."""

from __future__ import annotations


import numpy as np
import pytest
from manim.utils.testing.frames_comparison import frames_comparison

from model.analysis import best_lookback_head
from scene_checks import (assert_legible, manifest_of, play_until_section_ends, run_dry, signed_ticks, stop_at_beat,
                          texts_of)
from scenes import style
from scenes.prompts import chapter_focus, lookback_prompt
from scenes.token_embedding import S, TokenEmbedding

__module_test__ = "token_embedding"


# --- the chapter's default prompt ---------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lookback_prompt_follows_its_rule(gpt, lang):
    import random
    from model import language
    chosen = lookback_prompt(lang)
    assert chosen == lookback_prompt(lang) and chosen["lang"] == lang
    words = chosen["tokens"]
    assert list(gpt.trace(chosen["prompt"])["tokens"]) == words          # written as the language writes it
    assert (" " in chosen["prompt"]) == (lang == "en")
    stream = [t for t in language.Language().stream(64, random.Random(language.SEED), lang=lang)]
    assert {t.lang for t in stream} == {lang}
    first_recall = next(i for i, t in enumerate(stream) if t.kind == "recall")
    assert stream[first_recall].word == chosen["adjective"]
    assert [t.word for t in stream[first_recall - len(words):first_recall]] == words   # the story pair, cut
    g = language.Language().grammar(lang)
    assert words[0] == g.t("a") and words.count(g.t(".")) == 1 and words[-1] in (g.t("was"), g.t("felt"))
    assert chosen["focus_index"] == len(words) - 1 and chosen["focus_word"] == words[-1]
    assert words[chosen["adjective_index"]] == chosen["adjective"]
    assert words[chosen["noun_index"]] == words[-2]                          # "the <creature> was"
    assert chosen["focus_index"] - chosen["adjective_index"] >= 5           # far enough to see the look-back
    trace = gpt.trace(chosen["prompt"])
    best = best_lookback_head(trace, chosen["focus_index"], [chosen["adjective_index"]])
    assert best["score"] > 0.9, "the trained model really looks back from the recall token to the adjective"


def test_chapter_focus_defaults_and_checks(gpt):
    from scenes.params import ParamError
    default = chapter_focus(gpt)
    assert default["focus"] == lookback_prompt()["focus_index"] and default["adjective_index"] is not None
    zh = chapter_focus(gpt, lang="zh")
    assert zh["prompt"] == lookback_prompt("zh")["prompt"] and zh["tokens"] == lookback_prompt("zh")["tokens"]
    assert zh["focus"] == lookback_prompt("zh")["focus_index"] == len(zh["tokens"]) - 1
    other = chapter_focus(gpt, "michael jordan plays")
    assert other["focus"] == 2 and other["adjective_index"] is None and other["prompt_rule"] is None
    assert chapter_focus(gpt, "michael jordan plays", 0)["focus"] == 0
    with pytest.raises(ParamError, match="3 tokens"):
        chapter_focus(gpt, "michael jordan plays", 3)


# --- rendering, and the manifest as proof ---------------------------------------------------------
@pytest.fixture(scope="module")
def rendered(lecture):
    return lecture.clips("token_embedding")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_manifest_numbers_are_the_traces(rendered, gpt, lang):
    m = manifest_of(rendered[lang])
    v = m["values"]
    chosen = lookback_prompt(lang)
    assert m["params"]["prompt"] == v["prompt"] == chosen["prompt"] and v["prompt_rule"] == chosen
    assert m["params"]["focus"] == v["focus"] == chosen["focus_index"]
    trace = gpt.trace(v["prompt"])
    assert v["tokens"] == list(trace["tokens"]) and v["token_ids"] == list(trace["token_ids"])
    assert v["vocab_size"] == gpt.config.vocab_size == 318 and v["d_model"] == gpt.config.n_embd == 64
    W_E = gpt.p("wte.weight")
    assert v["W_E"]["stored_shape"] == list(W_E.shape) and v["W_E"]["shown_shape"] == [64, 318]
    assert v["W_E"]["colour_limit"] == pytest.approx(float(np.abs(W_E).max()), abs=1e-12)
    fv = v["focus_vector"]
    assert fv["token_id"] == trace["token_ids"][v["focus"]] and fv["token"] == trace["tokens"][v["focus"]]
    assert fv["dims"] == [0, 1, 2, 3, 4, 5, 63]                          # honest ellipsis: first six and the last
    np.testing.assert_allclose(fv["values"], trace["token_embeddings"][v["focus"]][fv["dims"]], atol=1e-12)
    np.testing.assert_allclose(fv["values"], W_E[fv["token_id"]][fv["dims"]], atol=1e-12)   # a lookup, no maths
    assert fv["labels"] == [style.signed(x, 1) for x in fv["values"]]
    assert v["strips"]["token_ids"] == list(trace["token_ids"])


# --- what is on screen: the labels ---------------------------------------------
@pytest.fixture(scope="module")
def dry(lecture):
    return {lang: lecture.dry("token_embedding", lang) for lang in ("en", "zh")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_shown_labels_are_the_rounded_manifest_values(dry, lang):
    scene = dry[lang]
    v = scene.values
    assert texts_of(scene.focus_vector.entries) == [style.signed(x, 1) for x in v["focus_vector"]["values"]]
    assert texts_of(scene.ids) == [str(i) for i in v["token_ids"]]
    assert scene.table_label.text == S("matrix_shape", lang, d=64, vocab=318)
    assert scene.focus_vector.size_label.text == S("column_label", lang, d=64)
    assert [t.text for t in scene.legend.ticks] in signed_ticks(v["W_E"]["colour_limit"], 1)
    table = scene.table.values
    for strip, token_id in zip(scene.strips, v["strips"]["token_ids"]):   # each strip is its W_E column
        np.testing.assert_array_equal(strip.levels[:, 0], scene.table.levels[:, token_id])
        np.testing.assert_array_equal(strip.values[:, 0], table[:, token_id])


def test_the_repeated_word_is_framed_in_both_languages(dry):
    """The vectors beat frames the first word met a second time ("the" in English, 青蛙 in Chinese): its two strips
    are one W_E column, drawn alike, and the caption names it."""
    for lang, word in (("en", "the"), ("zh", "青蛙")):
        scene, v = dry[lang], dry[lang].values
        rule = v["caption_rules"]["vectors"]
        a, b = rule["inputs"]["repeated"]
        assert rule["key"] == "vectors_repeat" and v["tokens"][a] == v["tokens"][b] == word
        strips = [scene.strips[v["positions_shown"].index(p)] for p in (a, b)]
        np.testing.assert_array_equal(strips[0].levels, strips[1].levels)
        said = next(c for c in scene.captions if c["key"] == "vectors_repeat")
        assert word in said["text"]


def test_a_focus_outside_the_prompt_is_a_clear_error(tmp_path):
    from scenes.params import ParamError
    with pytest.raises(ParamError, match="focus"):
        run_dry(TokenEmbedding, {"prompt": "michael jordan plays", "focus": 5}, tmp_path)


# --- key frame against committed control data (tests/control_data/token_embedding) -----------------
@pytest.fixture
def lookup_en(monkeypatch):
    stop_at_beat(monkeypatch, "lookup", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=TokenEmbedding)
@pytest.mark.usefixtures("lookup_en")
def test_frame_lookup(scene):
    play_until_section_ends(scene, TokenEmbedding.construct)


@pytest.mark.slow
def test_another_prompt_and_focus(tmp_path, gpt):
    prompt = "a fluffy blue fox roamed the misty forest . the fox was blue . michael jordan plays basketball ."
    scene = run_dry(TokenEmbedding, {"prompt": prompt, "focus": 12, "lang": "zh"}, tmp_path)   # 19 tokens
    v, trace = scene.values, gpt.trace(prompt)
    assert scene.row.first_shown > 0 and v["positions_shown"][0] == scene.row.first_shown
    assert v["focus"] == 12 and v["focus_rule"] == "given" and "prompt_rule" not in v
    fv = v["focus_vector"]
    np.testing.assert_allclose(fv["values"], trace["token_embeddings"][12][fv["dims"]], atol=1e-12)
    assert texts_of(scene.ids) == [str(i) for i in trace["token_ids"][scene.row.first_shown:]]
    assert_legible(scene.snapshots, "zh")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_prompt_reads_as_text_and_keeps_its_tokens(gpt, lang):
    """A prompt written out (join_words, PromptText) reads as its language writes it: English words a space apart, a
    punctuation mark against the word before it ("jordan, indeed, plays", never "jordan , indeed"), Chinese run
    together; and the model still cuts it into the same tokens. Every default prompt, and random runs of the
    language's words with punctuation in them (two marks in a row included)."""
    import random
    import re

    from model import language
    from scenes.components import PromptText
    from scenes.prompts import example_fact_prompt, is_punctuation, join_words, spaces_before, uncertain_prompt
    words = sorted(language.vocabulary_of(lang))
    marks = [w for w in words if is_punctuation(w)]
    assert marks, "the language has punctuation tokens"
    rng = random.Random(32)
    runs = [f(lang)["tokens"] for f in (lookback_prompt, example_fact_prompt)]
    runs.append(gpt.tokenizer.decode(gpt.encode(uncertain_prompt(lang)["prompt"])))
    runs += [[rng.choice(marks) if rng.random() < 0.3 else rng.choice(words) for _ in range(rng.randint(1, 12))]
             for _ in range(40)]
    for run in runs:
        text = join_words(run, lang)
        assert gpt.tokenizer.decode(gpt.encode(text)) == run, text
        for i, w in enumerate(run[1:], 1):
            glued = is_punctuation(w) and not is_punctuation(run[i - 1])
            assert spaces_before(run, lang)[i] == (lang == "en" and not glued)
        assert not re.search(r"\w [.,]", text) if lang == "en" else " " not in text
    # drawn: a mark sits closer to its word than a word to the next, and the Chinese words abut as one line of text
    run = example_fact_prompt(lang)["tokens"]
    drawn = PromptText(run, lang)
    assert len(drawn) == len(run)
    for a, b, left, right, space in zip(run, run[1:], drawn, drawn[1:], spaces_before(run, lang)[1:]):
        gap = right.get_left()[0] - left.get_right()[0]
        other = PromptText.gap(a[-1], b[0], not space, style.LABEL)   # the pair set the other way
        assert gap == pytest.approx(PromptText.gap(a[-1], b[0], space, style.LABEL)) and (gap > other) == space
