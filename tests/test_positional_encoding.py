"""Positional encoding: the model's sin/cos table, E = token + position, the word-order experiment; a key frame (the
checks every scene shares: test_scenes.py)."""

from __future__ import annotations


import re

import numpy as np
import pytest

from sum_checks import assert_sums_as_shown
from manim.utils.testing.frames_comparison import frames_comparison


from model.numpy_gpt import sinusoidal_positions
from scene_checks import (assert_legible, manifest_of, play_until_section_ends, run_dry, signed_ticks, stop_at_beat,
                          texts_of)
from scenes import style
from scenes.positional_encoding import S, PositionalEncoding
from scenes.prompts import lookback_prompt

__module_test__ = "positional_encoding"


def test_the_position_table_is_sin_cos(gpt):
    c = gpt.config
    P = gpt.p("wpe.weight")
    np.testing.assert_allclose(P, sinusoidal_positions(c.n_positions, c.n_embd), atol=1e-6)   # float32 on disk
    pos, i = 5, 3   # P[pos, 2i] = sin(pos / 10000^(2i/d)), written out once more
    assert P[pos, 2 * i] == pytest.approx(np.sin(pos / 10000 ** (2 * i / c.n_embd)), abs=1e-6)
    assert P[pos, 2 * i + 1] == pytest.approx(np.cos(pos / 10000 ** (2 * i / c.n_embd)), abs=1e-6)


# --- rendering, and the manifest as proof ---------------------------------------------------------
@pytest.fixture(scope="module")
def rendered(lecture):
    return lecture.clips("positional_encoding")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_manifest_numbers_are_the_traces(rendered, gpt, lang):
    m = manifest_of(rendered[lang])
    v = m["values"]
    assert v["prompt"] == lookback_prompt(lang)["prompt"] and v["focus"] == lookback_prompt(lang)["focus_index"]
    trace = gpt.trace(v["prompt"])
    T = len(trace["tokens"])
    assert v["tokens"] == list(trace["tokens"]) and v["token_ids"] == list(trace["token_ids"])
    assert v["positions_used"] == list(range(T)) and v["n_positions"] == 32 and v["d_model"] == 64
    P = gpt.p("wpe.weight")
    assert v["P"]["stored_shape"] == [32, 64] and v["P"]["formula_exponent_denominator"] == 64
    assert v["P"]["colour_limit"] == pytest.approx(float(np.abs(P).max()), abs=1e-12)
    s, f = v["sum"], v["focus"]
    assert s["dims"] == [0, 1, 2, 3, 4, 5, 63]
    for name, key in (("token_embedding", "token_embeddings"), ("position_vector", "position_vectors"),
                      ("embedding", "embeddings")):
        np.testing.assert_allclose(s[name]["values"], trace[key][f][s["dims"]], atol=1e-12, err_msg=name)
    assert s["embedding"]["labels"] == [style.signed(x, 1) for x in s["embedding"]["values"]]   # E: plain rounding
    assert assert_sums_as_shown(v, f"positional_encoding {lang}") == 3   # E = token + position; the question's panels
    np.testing.assert_allclose(s["position_vector"]["values"], P[f][s["dims"]], atol=1e-12)
    np.testing.assert_allclose(np.add(s["token_embedding"]["values"], s["position_vector"]["values"]),
                               s["embedding"]["values"], atol=1e-12)                       # E = token + position
    largest = float(np.abs(trace["embeddings"]).max())       # E is an activation: a size scale, rounded up for its legend
    assert largest <= v["E_strips"]["colour_limit"] == pytest.approx(np.ceil(largest * 10) / 10, abs=1e-12)

    assert "order" not in v, "no attention experiment before the attention chapter defines attention"


# --- what is on screen: the labels ---------------------------------------------
@pytest.fixture(scope="module")
def dry(lecture):
    return {lang: lecture.dry("positional_encoding", lang) for lang in ("en", "zh")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_shown_labels_are_the_rounded_manifest_values(dry, lang):
    scene = dry[lang]
    v = scene.values
    for column, name in zip(scene.sum_columns, ("token_embedding", "position_vector", "embedding")):
        assert texts_of(column.entries) == v["sum"][name]["labels"]
    (added,) = [s for s in v["sums"] if s["beat"] == "add"]   # E = token + position: the columns as drawn, row by row
    assert [t["labels"] for t in added["terms"]] + [added["total"]["labels"]] == \
        [v["sum"][name]["labels"] for name in ("token_embedding", "position_vector", "embedding")]
    assert assert_sums_as_shown(v, f"positional_encoding {lang}", required=True) == 3   # and the question's two panels
    assert [t.text for t in scene.legend.ticks] in signed_ticks(v["P"]["colour_limit"], 1)
    assert [t.text for t in scene.e_legend.ticks] == ["0", f"{v['E_strips']['colour_limit']:g}"]
    assert scene.e_legend.colour_scale.kind == "magnitude"
    np.testing.assert_array_equal(scene.table.values, scene.gpt.p("wpe.weight").T)   # the table is the model's


# --- key frame against committed control data (tests/control_data/positional_encoding) -------------
@pytest.fixture
def answer_zh(monkeypatch):
    stop_at_beat(monkeypatch, "answer", lang="zh")


@pytest.mark.slow
@frames_comparison(base_scene=PositionalEncoding)
@pytest.mark.usefixtures("answer_zh")
def test_frame_answer_in_chinese(scene):
    play_until_section_ends(scene, PositionalEncoding.construct)


@pytest.mark.slow
def test_another_prompt_and_focus(tmp_path, gpt):
    prompt = "michael jordan plays basketball . serena"
    scene = run_dry(PositionalEncoding, {"prompt": prompt, "focus": 1}, tmp_path)
    v, trace = scene.values, gpt.trace(prompt)
    assert v["focus"] == 1 and v["positions_used"] == list(range(6))
    np.testing.assert_allclose(v["sum"]["embedding"]["values"], trace["embeddings"][1][v["sum"]["dims"]], atol=1e-12)
    assert_legible(scene.snapshots, "en")


def test_no_attention_before_the_attention_chapter(dry):
    """Issue 42: this scene comes before the attention chapter defines attention, its weights and heads: no caption
    says them, or "what attention adds"; and none says attention has no sense of order (false for a causal model:
    the lab beat shows the model learning some order without the table). The E strips' greyscale is said."""
    for lang, scene in dry.items():
        said = {c["key"]: c["text"] + " " + c["say"] for c in scene.captions}
        for key, text in said.items():
            assert not re.search({"en": r"attention|\bheads?\b", "zh": r"注意力|个头"}[lang], text), (key, text)
        assert {"en": "by size", "zh": "按大小"}[lang] in said["all"] and str(scene.values["d_model"]) in said["all"]


def test_the_question_and_its_answer_are_the_models_runs(gpt, dry):
    """The opening question: the model's next word after the prompt and after its earlier tokens reversed (two
    traces, recomputed here), each panel a whole distribution adding up to 100.0% as drawn; the closing answer: the
    same two rows, one word framed at its two positions, and the two probabilities as a line."""
    from model.numpy_gpt import probabilities
    for lang, scene in dry.items():
        v, q = scene.values, scene.values["question"]
        assert scene.section_names[1] == "question" and scene.section_names[-1] == "answer"
        ids = v["token_ids"]
        rev = ids[-2::-1] + ids[-1:]
        p, p_rev = (probabilities(gpt.trace(run)["logits"][-1]) for run in (ids, rev))
        word = int(np.argmax(p))
        assert q["word"] == gpt.tokenizer.words[word] == scene.tokens[2]        # our prompt: its adjective, back
        assert q["reversed_tokens"] == [gpt.tokenizer.words[i] for i in rev]
        for (title, bars), name, probs in zip(scene.q_panels, ("as_written", "reversed"), (p, p_rev)):
            shown = q["shown"][name]
            top = [gpt.tokenizer.words[i] for i in np.argsort(-probs, kind="stable")[:3]]
            assert shown["words"][:3] == top and q["word"] in shown["words"]
            np.testing.assert_allclose(shown["p"], [probs[gpt.tokenizer.words.index(w)] for w in shown["words"]],
                                       atol=1e-9)
            assert shown["other"] == pytest.approx(1 - sum(shown["p"]), abs=1e-9)
            assert texts_of(bars.numbers) == shown["labels"]
            assert title.text == S(name, lang)
        sums = [s for s in v["sums"] if s["beat"] == "question"]
        assert len(sums) == 2 and assert_sums_as_shown(v, f"positional_encoding {lang}", required=True) == 3
        said = {c["key"]: c for c in scene.captions}
        assert [k for k in said if k != "title_note"][:2] == ["question", v["caption_rules"]["question"]["key"]]
        labels = v["caption_rules"]["question"]["inputs"]["labels"]
        assert labels["p"] in said[v["caption_rules"]["question"]["key"]]["text"]
        # the reversed run moves this prompt's answer: a claim the English and Chinese lectures make alike
        assert v["caption_rules"]["question"]["key"] == "question_changes" and p_rev[word] < 0.1 < 0.99 < p[word]
        a = v["answer"]
        assert (a["marked_token"], a["marked_position"], a["marked_position_reversed"]) == \
            (q["word"], 2, len(ids) - 1 - 3)
        lines = [line.text for line in scene.answer_lines]
        assert a["labels"] == labels and len(lines) == 2
        assert q["word"] in lines[1] and labels["p"] in lines[1] and labels["p_rev"] in lines[1]
        assert v["caption_rules"]["answer"]["key"] == "answer"
        assert labels["p"] in said["answer"]["say"] and labels["p_rev"] in said["answer"]["say"]   # said, too


# --- what positions add: the lab's no_position run, and the shipped model with its table zeroed (issue 45) --------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_why_beat_is_the_labs_record(dry, gpt, lang):
    from model import lab
    from model.analysis import no_position_attn_change
    from scenes import style
    from scenes.components.why import loss_text
    from why_checks import assert_why_beat
    sc = dry[lang]
    v = sc.values["why"]
    assert (v["variant"], v["metric"]) == ("no_position", "held_out_loss")
    reversed_p = {w["metric"][-2:]: w for w in v["order_reversed"]}
    assert set(reversed_p) == {"en", "zh"} and [t["metric"] for t in v["order_tv"]] == ["order_tv_en", "order_tv_zh"]
    rec = lab.load()
    assert v["word"][lang] == rec["variants"]["baseline"]["runs"][0]["final"]["order_test"][lang]["word"]
    assert_why_beat(sc, [[loss_text(v["with"]), style.percent(reversed_p[lang]["with"])],
                         [loss_text(v["without"]), style.percent(reversed_p[lang]["without"])]],
                    [sc.s("lab_with"), sc.s("lab_without")])
    said = [c for c in sc.captions if c["beat"] == "lab"]
    assert [c["key"] for c in said] == ["lab_question", sc.values["caption_rules"]["lab"]["key"]]
    assert style.percent(reversed_p[lang]["without"]) in said[1]["text"]
    # the shipped model with its table zeroed: per layer, the last token's attention output moves when the earlier
    # words are reversed (layer 0 cannot: its query sees the same keys); on the default prompt, the record's figures
    n = sc.values["no_position"]
    again = no_position_attn_change(gpt, list(sc.token_ids))["attn_change"]
    assert n["attn_change"] == pytest.approx(again, abs=1e-12) and n["attn_change"][0] < 1e-9
    assert n["attn_change"] == pytest.approx(rec["no_position"][lang]["attn_change"], abs=1e-9)
    assert {lang_: t["p_reversed"] for lang_, t in n["reversal_test"].items()} == \
        {lang_: reversed_p[lang_]["without"] for lang_ in ("en", "zh")}
    assert not any("no sense of order" in c["text"] or "no sense of order" in c["say"] for c in sc.captions)
