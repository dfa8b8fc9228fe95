"""Add & Norm: the residual add and LayerNorm statistics from the trace, the layer rule, a key frame (the checks every
scene shares: test_scenes.py)."""

from __future__ import annotations

import re


import numpy as np
import pytest

from sum_checks import assert_sums_as_shown
from manim.utils.testing.frames_comparison import frames_comparison

from scene_checks import assert_legible, manifest_of, play_until_section_ends, run_dry, stop_at_beat, texts_of
from scenes import style
from scenes.add_norm import S, AddNorm
from scenes.catalog import ADD_NORM
from scenes.prompts import lookback_prompt

__module_test__ = "add_norm"


# --- rendering, and the manifest as proof ---------------------------------------------------------
@pytest.fixture(scope="module")
def rendered(lecture):
    return lecture.clips("add_norm")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_manifest_numbers_are_the_traces(rendered, gpt, lang):
    m = manifest_of(rendered[lang])
    v = m["values"]
    assert v["prompt"] == lookback_prompt(lang)["prompt"] and v["focus"] == lookback_prompt(lang)["focus_index"]
    trace = gpt.trace(v["prompt"])
    f, L = v["focus"], v["layer"]
    assert m["params"]["layer"] == L and m["params"]["focus"] == f

    # the layer: the one holding the attention chapter's head, chosen by the causal rule (brute force)
    from attention_checks import causal_head_scores
    brute = causal_head_scores(gpt, lang)
    choice = v["layer_choice"]
    assert [L, choice["head"]] == brute["best"] and choice["score"] == pytest.approx(brute["scores"].max(), abs=1e-9)
    other = causal_head_scores(gpt, "zh" if lang == "en" else "en")["best"]
    assert choice["story"]["chosen"] == {lang: brute["best"], ("zh" if lang == "en" else "en"): other}
    differ = v.get("languages_differ", {}).get("layer")     # the other language's layer: noted, never said
    assert (differ is not None) == (brute["best"][0] != other[0]) and "layer_story" not in v.get("caption_rules", {})

    layer, dims = trace["layers"][L], v["dims_shown"]
    assert dims == [0, 1, 2, 3, 4, 5, 63]
    r = v["residual"]
    for name, value in (("resid_pre", layer["resid_pre"][f]), ("attn_out", layer["attn"]["out"][f]),
                        ("resid_mid", layer["resid_mid"][f])):
        np.testing.assert_allclose(r[name]["values"], value[dims], atol=1e-12, err_msg=name)
    assert r["resid_mid"]["labels"] == [style.signed(x, 1) for x in r["resid_mid"]["values"]]   # the sum: rounded
    (added,) = v["sums"]                                   # the terms and the total, as drawn
    assert [t["labels"] for t in added["terms"]] + [added["total"]["labels"]] == \
        [r[name]["labels"] for name in ("resid_pre", "attn_out", "resid_mid")]
    assert_sums_as_shown(v, f"add_norm {lang}", required=True)
    np.testing.assert_allclose(np.add(r["resid_pre"]["values"], r["attn_out"]["values"]), r["resid_mid"]["values"],
                               atol=1e-12)

    ln = v["layer_norm"]
    x = layer["resid_mid"][f]
    assert ln["where"] == f"h.{L}.ln_2" and ln["eps"] == gpt.config.layer_norm_epsilon
    assert ln["mean"] == pytest.approx(layer["ln_2"]["mean"][f], abs=1e-12) == pytest.approx(x.mean(), abs=1e-12)
    assert ln["var"] == pytest.approx(layer["ln_2"]["var"][f], abs=1e-12) == pytest.approx(x.var(), abs=1e-12)
    assert (ln["mean_label"], ln["var_label"]) == (style.signed(ln["mean"], 2), f"{ln['var']:.2f}")
    normalised = (x - x.mean()) / np.sqrt(x.var() + ln["eps"])
    assert ln["normalised_mean"] == pytest.approx(normalised.mean(), abs=1e-12)
    assert ln["normalised_var"] == pytest.approx(normalised.var(), abs=1e-12)
    assert (ln["normalised_mean_label"], ln["normalised_var_label"]) == ("0.00", "1.00")
    np.testing.assert_allclose(ln["bars"]["input"], x, atol=1e-12)
    np.testing.assert_allclose(ln["bars"]["normalised"], normalised, atol=1e-12)
    np.testing.assert_allclose(ln["bars"]["out"], layer["ln_2"]["out"][f], atol=1e-12)
    for stage, values in (("input", x), ("normalised", normalised), ("out", layer["ln_2"]["out"][f])):
        np.testing.assert_allclose(ln["columns"][stage]["values"], values[dims], atol=1e-12)

    places = [f"h.{i}.{n}" for i in range(gpt.config.n_layer) for n in ("ln_1", "ln_2")] + ["ln_f"]
    assert [w["where"] for w in v["variances"]] == places and v["why_of"] == len(places)    # ours: every LayerNorm drawn
    for w in v["variances"]:
        stats = trace["ln_f"] if w["where"] == "ln_f" else trace["layers"][int(w["where"][2])][w["where"][4:]]
        assert w["var"] == pytest.approx(stats["var"][f], abs=1e-12) and w["var_label"] == f"{w['var']:.2f}"
        assert 0.99 < w["normalised_var"] <= 1 and w["normalised_var_label"] == "1.00"
    assert v["why_range_labels"] == {"lo": f"{min(w['var'] for w in v['variances']):.2f}",
                                     "hi": f"{max(w['var'] for w in v['variances']):.2f}",
                                     "start": v["variances"][0]["var_label"], "end": v["variances"][-1]["var_label"]}


# --- what is on screen: the labels ---------------------------------------------
@pytest.fixture(scope="module")
def dry(lecture):
    return {lang: lecture.dry("add_norm", lang) for lang in ("en", "zh")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_shown_labels_are_the_rounded_manifest_values(dry, lang):
    scene = dry[lang]
    v, ln = scene.values, scene.values["layer_norm"]
    for column, name in zip(scene.stage_columns, ("input", "normalised", "out")):
        assert texts_of(column.entries) == [style.signed(x, 1) for x in ln["columns"][name]["values"]]
    assert [m.text for m in scene.stats[0]] == [S("mean", lang, v=style.signed(ln["mean"], 2)),
                                                S("variance", lang, v=f"{ln['var']:.2f}")]
    assert [m.text for m in scene.stats[1]] == [S("mean", lang, v="0.00"), S("variance", lang, v="1.00")]
    assert texts_of(scene.why_before_numbers) == [f"{w['var']:.2f}" for w in v["variances"]]
    assert texts_of(scene.why_after_numbers) == [f"{w['normalised_var']:.2f}" for w in v["variances"]]
    # bar heights: one scale for every stage (the largest |value| of any stage is CHART_HALF tall)
    from scenes.add_norm import CHART_HALF
    unit = CHART_HALF / max(max(abs(x) for x in ln["bars"][stage]) for stage in ("input", "normalised", "out"))
    for target, stage in zip(scene.bar_targets, ("input", "normalised", "out")):
        np.testing.assert_allclose([bar.height for bar in target],
                                   [max(abs(x) * unit, 0.005) for x in ln["bars"][stage]], rtol=1e-6)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_captions_say_pre_ln_as_our_model_does_it(dry, lang):
    """Our model normalises before each sublayer (pre-LN), the source article after (post-LN): both said, with the
    diagram drawn once; no caption says the stream is reset; the drift caption names the first, the last and the
    largest bar as drawn; ε gets its own meaning with the model's value."""
    scene = dry[lang]
    v, captions = scene.values, scene.captions
    by_key = {c["key"]: c for c in captions}
    assert "pre-LN" in by_key["placement"]["text"] and "GPT-2" in by_key["placement"]["text"]
    assert "post-LN" in by_key["placement_post"]["text"]
    assert [o.order for o in scene.orders] == ["post", "pre"]
    # pre-LN: the LayerNorm above the sublayer, the add below it; post-LN: the LayerNorm below the add
    post, pre = scene.orders
    assert pre.norm.get_center()[1] > pre.sub.get_center()[1] > pre.plus.get_center()[1]
    assert post.sub.get_center()[1] > post.plus.get_center()[1] > post.norm.get_center()[1]
    for c in captions:
        assert not re.search(r"reset|拉回|重置", c["text"] + c["say"], re.I), c["text"]
    rule = v["caption_rules"]["why"]
    why = by_key[rule["key"]]["text"]
    labels = [w["var_label"] for w in v["variances"]]
    for label in (labels[0], labels[-1], max(labels, key=float)):
        assert label in why, (label, why)
    assert rule["inputs"]["start_label"] == labels[0] and rule["inputs"]["end_label"] == labels[-1]
    eps = by_key["eps"]
    assert np.format_float_positional(v["layer_norm"]["eps"], trim="-") in eps["text"]
    assert re.search({"en": r"divi", "zh": r"除"}[lang], eps["text"])
    beats = [c["beat"] for c in captions]
    assert beats.index("placement") < beats.index("why")


def test_a_layer_outside_the_model_is_refused(gpt):
    from scenes.params import ParamError
    n = gpt.config.n_layer
    with pytest.raises(ParamError, match=f"{n} layers"):
        ADD_NORM.resolve({"layer": n}, model=gpt)
    assert ADD_NORM.resolve({"layer": 0}, model=gpt)["layer"] == 0
    assert ADD_NORM.resolve(text={"layer": "auto"}, model=gpt)["layer"] == "auto"


# --- key frame against committed control data (tests/control_data/add_norm) -------------------------
@pytest.fixture
def normalise_en(monkeypatch):
    stop_at_beat(monkeypatch, "normalise", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=AddNorm)
@pytest.mark.usefixtures("normalise_en")
def test_frame_normalise(scene):
    play_until_section_ends(scene, AddNorm.construct)


@pytest.mark.slow
def test_another_prompt_layer_and_focus(tmp_path, gpt):
    prompt = "michael jordan plays"
    scene = run_dry(AddNorm, {"prompt": prompt, "layer": 0, "focus": 1, "lang": "zh"}, tmp_path)
    v, trace = scene.values, gpt.trace(prompt)
    assert (v["layer"], v["focus"], v["layer_choice"]) == (0, 1, {"rule": "given"})
    layer = trace["layers"][0]
    assert v["layer_norm"]["var"] == pytest.approx(layer["ln_2"]["var"][1], abs=1e-12)
    np.testing.assert_allclose(v["residual"]["attn_out"]["values"], layer["attn"]["out"][1][v["dims_shown"]],
                               atol=1e-12)
    assert_legible(scene.snapshots, "zh")


def test_chart_stages_share_a_scale_unless_one_would_be_flat():
    """One scale while every stage's longest bar is at least 1/SHARED_SCALE of the longest (our model: the bars grow
    and shrink with the numbers); a random-init GPT-2's residual of ±0.1 beside its normalised ±3.1 takes scales of
    its own, each stage's longest bar CHART_HALF tall. Statistics read two significant digits below 0.1."""
    from scenes import add_norm, style
    shared = add_norm.chart_units([1.2, 3.0, 2.5])
    assert len(set(shared)) == 1 and shared[0] * 3.0 == pytest.approx(add_norm.CHART_HALF)
    own = add_norm.chart_units([0.104, 3.1, 2.9])
    assert [u * v for u, v in zip(own, [0.104, 3.1, 2.9])] == pytest.approx([add_norm.CHART_HALF] * 3)
    assert add_norm.chart_units([0.0, 0.0, 0.0]) == [1.0, 1.0, 1.0]
    assert [style.statistic(v) for v in (0.99, 1.0, 0.00041, 0.0013, 0.086, 0.0)] == \
        ["0.99", "1.00", "0.00041", "0.0013", "0.086", "0.00"]


# --- why add and normalise: the lab's no_residual and no_layernorm runs (issue 45) -------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_why_beat_is_the_labs_record(dry, lang):
    from scenes.components.why import loss_text
    from why_checks import assert_why_beat
    sc = dry[lang]
    v = sc.values["why"]
    norm = v["others"][0]
    assert (v["variant"], v["metric"], norm["variant"]) == ("no_residual", "held_out_loss", "no_layernorm")
    assert [w["metric"] for w in v["per_language"]] == ["val_loss_en", "val_loss_zh"]
    assert_why_beat(sc, [[loss_text(v["with"])], [loss_text(v["without"])], [loss_text(norm["without"])]],
                    [sc.s("lab_full"), sc.s("lab_no_residual"), sc.s("lab_no_layernorm")])
    said = [c for c in sc.captions if c["beat"] == "lab"]
    assert [c["key"] for c in said] == ["lab_question", sc.values["caption_rules"]["lab"]["key"]]
    assert loss_text(v["without"]) in said[1]["text"] and loss_text(norm["without"]) in said[1]["text"]
