"""The parameters scene: every count against the arithmetic of the configs (recomputed here, and GPT-2 small
against transformers' own count in test_params.py), the labels as the manifest's exact integers, the caption rules,
the bars proportional to the counts, and a key frame (the checks every scene shares: test_scenes.py)."""

from __future__ import annotations

import numpy as np
import pytest

from sum_checks import assert_sums_as_shown
from manim.utils.testing.frames_comparison import frames_comparison

from model import GPT3_175B
from scene_checks import manifest_of, parameter_counts as counted, play_until_section_ends, stop_at_beat
from scenes import style
from scenes.components import inside_safe_area
from scenes.parameters import BAR_WIDTH, FRACTIONS, LABEL_FLOOR, PARTS, Parameters, nearest_fraction

__module_test__ = "parameters"


@pytest.fixture(scope="module")
def played(lecture):
    return {lang: lecture.dry("parameters", lang) for lang in ("en", "zh")}


def test_ours_counts_what_training_trained(gpt):
    """Our position table is sin/cos and frozen: the count is the one training recorded of what it trained."""
    import json

    from model.weights import DEFAULT_DIR
    assert gpt.config.position_encoding == "sinusoidal"
    trained = json.loads((DEFAULT_DIR / "metrics.json").read_text())["n_params"]
    assert sum(counted(gpt.config).values()) == trained == 170_432


def test_gpt3_is_about_two_thirds_mlp():
    want = counted(GPT3_175B)
    assert sum(want.values()) == 174_604_259_328 and want["mlp"] == 115_970_015_232
    assert nearest_fraction(want["mlp"] / sum(want.values())) == "frac_2_3"
    assert nearest_fraction(0.26) == "frac_1_4" and set(FRACTIONS) >= {"frac_1_3", "frac_2_3"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_its_manifest_holds_the_exact_counts(lecture, gpt, lang):
    v = manifest_of(lecture.clips("parameters")[lang])["values"]
    for key, config in (("gpt3", GPT3_175B), ("ours", gpt.config)):
        want = counted(config)
        for part, n in want.items():
            assert v[key][part] == n and isinstance(v[key][part], int), (key, part)
        assert v[key]["total"] == sum(want.values())
    assert [r["count"] for r in v["table_rows"]] == [v["gpt3"][p] for p in (*PARTS, "unembedding", "total")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_labels_and_bars_are_the_counts(played, lang):
    s = played[lang]
    v = s.values
    assert [n.text for n in s.table_numbers] == [f"{r['count']:,}" for r in v["table_rows"]]
    (table,) = v["sums"]                    # the table's parts add up to its total, digit for digit
    assert [t["labels"][0] for t in table["terms"]] + table["total"]["labels"] == [n.text for n in s.table_numbers]
    assert assert_sums_as_shown(v, f"parameters {lang}") == 1
    for bar, key in ((s.bar_g3, "gpt3"), (s.bar_ours, "ours")):
        widths = [seg.width for seg in bar.segments]
        fractions = [v[key]["fractions"][p] for p in PARTS]
        np.testing.assert_allclose([w for w, f in zip(widths, fractions) if f * BAR_WIDTH > 1e-3],
                                   [f * BAR_WIDTH for f in fractions if f * BAR_WIDTH > 1e-3], rtol=1e-6)
        named = [p for p in PARTS if v[key]["fractions"][p] >= LABEL_FLOOR]
        assert [m.text for m in bar.names] == [s.s("segment", name=s.s(p), pct=style.percent(v[key]["fractions"][p]))
                                               for p in named]
        assert f"{v[key]['total']:,}" in bar.title.text
    rules = v["caption_rules"]
    assert rules["split"]["inputs"]["fraction"] == nearest_fraction(v["gpt3"]["fractions"]["mlp"])
    ours_less = v["ours"]["fractions"]["mlp"] < v["gpt3"]["fractions"]["mlp"]
    assert rules["ours"]["key"] == ("ours_less" if ours_less else "ours_more")
    for m in (s.table, s.bar_g3, s.bar_ours, s.key):
        assert inside_safe_area(m)


@pytest.fixture
def ours_beat(monkeypatch):
    stop_at_beat(monkeypatch, "ours", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=Parameters)
@pytest.mark.usefixtures("ours_beat")
def test_frame_ours(scene):
    play_until_section_ends(scene, Parameters.construct)
