"""The softmax-and-causal-mask scene: masked cells, weights and their sums against the model, the labels as
the rounding of those numbers, the growth figures from the configs, and a stable key frame (the checks every scene
shares: test_scenes.py)."""

from __future__ import annotations


import numpy as np
import pytest

from sum_checks import assert_sums_as_shown
from manim.utils.testing.frames_comparison import frames_comparison

from attention_checks import nan_for_none, recompute_head
from scene_checks import manifest_of, play_until_section_ends, signed_ticks, stop_at_beat
from model import GPT3_175B
from scenes import style
from scenes.catalog import CAUSAL_MASK
from scenes.causal_mask import CausalMask, example_query
from scenes.components import NumberText
from scenes.attention_chapter import ChosenHead

__module_test__ = "causal_mask"


def texts(group) -> list[str]:
    return [m.text for m in group if isinstance(m, NumberText)]


# --- rendering, and the manifest as proof ------------------------------------------------------------------
@pytest.fixture(scope="module")
def rendered(lecture):
    return lecture.clips("causal_mask")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_manifest_numbers_are_the_models(rendered, gpt, lang):
    v = manifest_of(rendered[lang])["values"]
    ref = recompute_head(gpt, v["prompt"], v["layer"], v["head"])
    T, f = len(v["tokens"]), v["focus"]
    np.testing.assert_allclose(v["scaled"]["grid"], ref["scaled"], atol=1e-9)
    np.testing.assert_allclose(v["scaled"]["focus_line"], ref["scaled"][f], atol=1e-9)
    assert v["scaled"]["scale"] == pytest.approx(np.abs(ref["scaled"]).max())
    # the mask: exactly the keys after each query, −∞ (null in JSON); the rest unchanged
    masked = nan_for_none(v["masked"]["grid"])
    future = np.triu(np.ones((T, T), dtype=bool), 1)
    assert np.array_equal(np.isneginf(masked), future)
    np.testing.assert_allclose(masked[~future], ref["scaled"][~future], atol=1e-9)
    assert v["masked"]["masked_cells"] == [[q, k] for q in range(T) for k in range(T) if k > q]
    # softmax: each query's line sums to 1; masked cells are exactly 0
    weights = np.array(v["weights"]["grid"])
    np.testing.assert_allclose(weights, ref["weights"], atol=1e-9)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(weights[future] == 0.0) and v["weights"]["masked_weights"] == [0.0] * int(future.sum())
    assert v["softmax"]["query"] == f and v["softmax"]["sum"] == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(v["softmax"]["weights"], ref["weights"][f], atol=1e-9)
    z = v["zeros"]
    q = z["query"]
    assert q < T - 1 and z["future_keys"] == list(range(q + 1, T)) and z["sum"] == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(z["weights"], ref["weights"][q], atol=1e-9)
    assert all(z["weights"][k] == 0.0 for k in z["future_keys"])
    # growth: our context from our config, GPT-3's from its published config
    g = v["growth"]
    assert (g["prompt_tokens"], g["prompt_cells"]) == (T, T * T)
    assert (g["context"], g["context_cells"]) == (gpt.config.n_positions, gpt.config.n_positions ** 2) == (32, 1024)
    c, g3 = gpt.config, GPT3_175B
    assert (g["n_layer"], g["n_head"]) == (c.n_layer, c.n_head)
    assert g["all_cells"] == c.n_positions ** 2 * c.n_head * c.n_layer == 12_288
    assert g["gpt3"] == {"source": "model.config.GPT3_175B (published shape)",
                         "n_positions": g3.n_positions, "cells": g3.n_positions ** 2,
                         "n_head": g3.n_head, "n_layer": g3.n_layer,
                         "all_cells": g3.n_positions ** 2 * g3.n_head * g3.n_layer,
                         "double_context": 2 * g3.n_positions,
                         "double_context_all_cells": (2 * g3.n_positions) ** 2 * g3.n_head * g3.n_layer}
    assert g["gpt3"]["cells"] == 4_194_304 and g["gpt3"]["all_cells"] == 38_654_705_664
    # the growth beat ends on why long contexts cost: twice GPT-3's context, four times the scores (from its config)
    assert g["gpt3"]["double_context"] == 2 * g3.n_positions == 4096
    assert g["gpt3"]["double_context_all_cells"] == (2 * g3.n_positions) ** 2 * g3.n_head * g3.n_layer \
        == 4 * g["gpt3"]["all_cells"] == 154_618_822_656


def test_example_query_rule(gpt):
    """With the default prompt the focus is the last token (nothing after it to mask), so the zeros are shown
    on the line of the token it looks at most; a focus with later tokens shows its own."""
    h = ChosenHead(gpt, CAUSAL_MASK.defaults())
    assert h.focus == h.T - 1 and example_query(h)[0] == h.source < h.T - 1
    h = ChosenHead(gpt, {**CAUSAL_MASK.defaults(), "focus": 3})
    assert example_query(h)[0] == 3


# --- what is on screen: labels and colours -----------------------------------------
@pytest.fixture(scope="module")
def scenes(lecture):
    return {lang: lecture.dry("causal_mask", lang) for lang in ("en", "zh")}


def test_labels_are_the_rounded_manifest_values(scenes):
    sc = scenes["en"]
    v = sc.values
    z = v["zeros"]
    # the numbers left on screen: the example query's weights, exact zeros written "0%", and their sum
    softmax_sum, zeros_sum = v["sums"]              # both lines drawn with Σ = (or ≈) 100%
    assert assert_sums_as_shown(v, "causal_mask") == 2
    assert [t["values"][0] for t in zeros_sum["terms"]] == z["weights"]
    assert [t["values"][0] for t in softmax_sum["terms"]] == v["softmax"]["weights"]
    assert texts(sc.numbers) == [t["labels"][0] for t in zeros_sum["terms"]]
    assert all(sc.numbers[k].text == "0%" for k in z["future_keys"])
    assert sc.sum_mark[1].text == "\u03a3 = " + zeros_sum["total"]["labels"][0] == "\u03a3 = 100.0%"
    assert texts(sc.weight_legend.ticks) == ["0%", "100%"]
    limit = v["scaled"]["scale"]
    assert texts(sc.scaled_legend.ticks) in signed_ticks(limit, 0 if limit >= 10 else 1)
    # every cell of the grid (before it shrank) is its weight's colour; a masked one keeps the masked colour (its
    # weight exactly 0), never the dark grey of a small weight, and the legend says "exactly 0" beside its swatch
    grid, weights = sc.grid, np.array(v["weights"]["grid"])
    scale = grid.colour_scale
    for q in range(len(weights)):
        for k in range(len(weights)):
            expected = (style.MASKED if k > q else scale.colour(weights[q, k]).to_hex()).lower()
            assert grid.cell_square(q, k).get_fill_color().to_hex().lower() == expected
    assert scale.colour(0.0).to_hex().lower() != style.MASKED.lower()
    swatch, words = sc.weight_legend.mask_entry
    assert words.text == "exactly 0" and swatch.square.get_fill_color().to_hex().lower() == style.MASKED.lower()
    assert scale.kind == "attention" and scale.limit == 1.0
    # the mask beat frames a line the mask changes (example_query's rule), its labels that line's, −∞ where masked
    f = v["masked"]["framed"]
    assert (f["query"], f["rule"]) == example_query(sc.h) and f["query"] < len(v["tokens"]) - 1
    assert f["labels"] == [style.MASK_TEXT if x is None else style.signed(x, 1) for x in f["line"]]
    assert any(x is None for x in f["line"]), "the framed line has masked keys"


# --- a key frame against committed control data (tests/control_data/causal_mask) ----------------------------
@pytest.fixture
def softmax_beat(monkeypatch):
    stop_at_beat(monkeypatch, "softmax", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=CausalMask)
@pytest.mark.usefixtures("softmax_beat")
def test_frame_softmax_of_one_line(scene):
    play_until_section_ends(scene, CausalMask.construct)


def test_growth_is_one_line_and_at_most_20_seconds(scenes):
    """Issue 41: the growth beat says one line, its figures the manifest's (ours and GPT-3's n × n); timed with the
    voices' estimated speech (benchmarks/lecture_pace.py) it lasts 19.9 s in English and 18.6 s in Chinese."""
    for lang, sc in scenes.items():
        g = sc.values["growth"]
        growth = [c for c in sc.captions if c["beat"] == "growth"]
        assert [c["key"] for c in growth] == ["growth"]
        for figure in (g["context"], g["context_cells"], g["gpt3"]["n_positions"], g["gpt3"]["cells"]):
            assert f"{figure:,}" in growth[0]["text"]


def test_the_question_is_one_pass_and_the_closing_answers_it(scenes, gpt):
    """The opening: one bar per prediction of the one pass (P of the word that comes next, read from a fresh trace;
    yellow where it was the top guess), the peek at the zeros beat's query; the closing: the same predictions, and
    every weight on a later word in every layer and head exactly 0, counted as drawn."""
    from model import probabilities
    for lang, sc in scenes.items():
        v, h = sc.values, sc.h
        ids = [int(i) for i in v["token_ids"]]
        p = probabilities(gpt.trace(ids)["logits"])
        q = v["question"]
        assert [b["position"] for b in q["bars"]] == list(range(q["first_shown"] - 1 if q["first_shown"] else 0, len(ids)))
        for b in q["bars"]:
            i = b["position"]
            want = p[i, ids[i + 1]] if i + 1 < len(ids) else p[i].max()
            assert b["p"] == pytest.approx(float(want), abs=1e-9) and b["label"] == style.percent(b["p"])
        assert q["slot_word"] == gpt.tokenizer.words[int(np.argmax(p[-1]))]
        assert q["peek"] == example_query(h)[0] and v["caption_rules"]["peek"]["key"] == "peek"
        keys = [c["key"] for c in sc.captions]
        assert keys.index("question") < keys.index("scaled") and keys[-1] == "summary"
        a = v["answer"]
        T = len(ids)
        assert a["largest"] == 0.0 and a["shown"] and a["label"] == "exactly 0"
        assert a["cells"] == gpt.config.n_layer * gpt.config.n_head * T * (T - 1) // 2
        summary = [c for c in sc.captions if c["key"] == "summary"][0]["text"]
        assert f"{a['cells']:,}" in summary and str(T) in summary


# --- why the mask: the lab's no_mask run (issue 45) ---------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_why_beat_is_the_labs_record(scenes, lang):
    from scenes.components.why import loss_text
    from why_checks import assert_why_beat
    sc = scenes[lang]
    v = sc.values["why"]
    assert (v["variant"], v["metric"], v["writing"]["metric"]) == ("no_mask", "train_loss", "generating_loss")
    assert [f["metric"] for f in v["facts"]] == ["facts_known_en", "facts_known_zh"]
    assert_why_beat(sc, [[loss_text(v["with"]), loss_text(v["writing"]["with"])],
                         [loss_text(v["without"]), loss_text(v["writing"]["without"])]],
                    [sc.s("why_with"), sc.s("why_without")])
    said = [c for c in sc.captions if c["beat"] == "lab"]
    assert [c["key"] for c in said] == ["why_question", sc.values["caption_rules"]["lab"]["key"]]
    # the record's finding: training loss far below the masked model's, and far above it when writing word by word
    assert v["without"] < v["with"] and v["writing"]["without"] > v["writing"]["with"]
    assert said[1]["key"] == "lab_mask_reads" and loss_text(v["writing"]["without"]) in said[1]["text"]
