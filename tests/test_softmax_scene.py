"""The softmax and temperature scene: true numbers, a legible layout in both languages, stable frames."""

from __future__ import annotations

import os
from importlib import metadata

import numpy as np
import pytest
from manim.utils.testing.frames_comparison import frames_comparison

from scene_checks import (assert_complete_preview_clip, assert_legible, assert_same_layout, manifest_of,
                          play_until_section_ends, render_in_both_languages, run_dry, stop_at_beat)
from model import weights_sha256
from scenes import style
from scenes.catalog import SOFTMAX_TEMPERATURE, sweep_stops
from scenes.components import NumberText, inside_safe_area
from scenes.prompts import uncertain_prompt
from scenes.softmax_temperature import NextToken, SoftmaxTemperature

__module_test__ = "softmax_temperature"


def softmax(z: np.ndarray, t: float) -> np.ndarray:
    """Written out again here, independently of model.probabilities."""
    if t == 0:
        return (z == z.max()).astype(np.float64) / np.count_nonzero(z == z.max())
    e = np.exp((z - z.max()) / t)
    return e / e.sum()


# --- the numbers ------------------------------------------------------------------------------
def test_default_prompt_is_chosen_by_its_rule(gpt):
    chosen = uncertain_prompt()
    assert chosen == uncertain_prompt()
    gpt.encode(chosen["prompt"])  # grammatical: every word is in the vocabulary
    assert chosen["next_word_entropy_nats"] > 1.0 and chosen["candidates_considered"] > 1
    p = softmax(np.asarray(gpt.trace(chosen["prompt"])["logits"][-1], np.float64), 1.0)
    assert 0.1 < p.max() < 0.9, "the model should be unsure, but have a favourite"


@pytest.mark.parametrize("prompt", [None, "michael jordan plays", "a fluffy blue fox roamed the misty"])
def test_shown_numbers_are_the_models(gpt, prompt):
    prompt = prompt or uncertain_prompt()["prompt"]
    nt = NextToken(gpt, prompt, 5)
    z = np.asarray(gpt.trace(prompt)["logits"][-1], dtype=np.float64)
    assert np.array_equal(nt.logits, z)
    assert list(nt.top) == list(np.argsort(-z, kind="stable")[:5])
    for t in (1, 2, 5, 0.5, 0.1, 0.05, 0):
        shown, other = nt.at(t)
        expected = softmax(z, t)
        np.testing.assert_allclose(shown, expected[nt.top], atol=1e-6)
        assert abs(other - expected[nt.rest].sum()) <= 1e-6
    exps, exp_other, total = nt.exponentials()
    np.testing.assert_allclose(exps / total, softmax(z, 1)[nt.top], atol=1e-12)
    assert abs((exps.sum() + exp_other) / total - 1) < 1e-12


def test_number_formats_round_only_the_label():
    assert style.percent(0.26849) == "26.8%" and style.percent(0) == "0%" and style.percent(3e-5) == "<0.1%"
    assert style.percent(0.99991) == ">99.9%" and style.percent(1 - 1e-16) == "100.0%"
    assert style.signed(10.886) == "+10.89" and style.signed(-0.4) == "\u22120.40" and style.signed(-0.001) == "0.00"
    assert style.scientific(53512.7) == "5.35\u00d710\u2074" and style.scientific(9.996e5) == "1.00\u00d710\u2076"
    assert style.scientific(12.34) == "12.3"


# --- rendering, and the manifest as proof ---------------------------------------------------------
@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    return render_in_both_languages(tmp_path_factory, "softmax_temperature")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_renders_at_preview_quality(rendered, lang):
    assert_complete_preview_clip(rendered[lang], SOFTMAX_TEMPERATURE, lang, min_seconds=40)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_manifest_probabilities_are_softmax_of_the_trace(rendered, gpt, lang):
    m = manifest_of(rendered[lang])
    assert m["scene"] == "softmax_temperature" and m["manim_version"] == metadata.version("manim")
    assert m["model"]["weights_sha256"] == weights_sha256() and m["model"]["dir"] == "model/weights"
    v = m["values"]
    trace = gpt.trace(m["params"]["prompt"])
    z = np.asarray(trace["logits"][-1], dtype=np.float64)
    assert v["prompt"] == m["params"]["prompt"] and v["token_ids"] == list(trace["token_ids"])
    assert v["tokens"] == list(trace["tokens"]) and v["vocab_size"] == gpt.config.vocab_size
    ids = [c["token_id"] for c in v["candidates"]]
    assert [c["word"] for c in v["candidates"]] == [gpt.tokenizer.words[i] for i in ids]
    np.testing.assert_allclose([c["logit"] for c in v["candidates"]], z[ids], atol=1e-6)
    rest = np.setdiff1d(np.arange(len(z)), ids)
    assert v["other"]["words"] == len(rest) and z[rest].max() <= z[ids].min()
    steps = v["softmax_steps"]
    np.testing.assert_allclose(steps["exp"], np.exp(z[ids]), rtol=1e-9)
    np.testing.assert_allclose(steps["exp_sum"], np.exp(z).sum(), rtol=1e-9)
    np.testing.assert_allclose(steps["probabilities"], softmax(z, 1)[ids], atol=1e-6)
    assert [e["T"] for e in v["temperatures"]] == [1.0, *sweep_stops(m["params"]["temperatures"])]
    for entry in v["temperatures"]:
        expected = softmax(z, entry["T"])
        np.testing.assert_allclose(entry["probabilities"], expected[ids], atol=1e-6, err_msg=f"T={entry['T']}")
        assert abs(entry["other"] - expected[rest].sum()) <= 1e-6
        if entry["T"] > 0:
            np.testing.assert_allclose(entry["logits_over_T"], z[ids] / entry["T"], rtol=1e-9)
        else:
            assert entry["argmax"] == [gpt.tokenizer.words[int(np.argmax(z))]]


def test_both_languages_show_the_same_numbers(rendered):
    en, zh = (manifest_of(rendered[lang]) for lang in ("en", "zh"))
    assert en["values"] == zh["values"]


def test_plain_manim_renders_the_scene(tmp_path):
    """`manim render scenes/softmax_temperature.py SoftmaxTemperature`, from anywhere, with the defaults."""
    import subprocess
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPT_LECTURE_")}
    r = subprocess.run([sys.executable, "-m", "manim", "render", "-ql", "-s", "--media_dir", str(tmp_path),
                        str(repo / "scenes" / "softmax_temperature.py"), "SoftmaxTemperature"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    [still] = tmp_path.glob("images/softmax_temperature/*.png")
    from PIL import Image
    assert Image.open(still).size == (854, 480)


# --- layout: every beat, both languages ------------------------------------------------------------
@pytest.fixture(scope="module")
def snapshots(tmp_path_factory, gpt):
    return {lang: run_dry(SoftmaxTemperature, {"lang": lang}, tmp_path_factory.mktemp(f"layout-{lang}")).snapshots
            for lang in ("en", "zh")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_beat_is_legible(snapshots, lang):
    shots = snapshots[lang]
    assert list(shots) == SOFTMAX_TEMPERATURE.section_names(SOFTMAX_TEMPERATURE.defaults())
    assert_legible(shots, lang, unfilled_boxes=True)


def test_english_and_chinese_share_one_layout(snapshots):
    assert_same_layout(snapshots["en"], snapshots["zh"])


# --- key frames against committed control data (tests/control_data/softmax_temperature) -----------
@pytest.fixture
def at_beat(monkeypatch):
    return lambda section, lang="en": stop_at_beat(monkeypatch, section, lang=lang)


@pytest.fixture
def divide_en(at_beat):
    at_beat("divide")


@pytest.fixture
def t0_en(at_beat):
    at_beat("t0")


@pytest.fixture
def t5_zh(at_beat):
    at_beat("t5", "zh")


@frames_comparison(base_scene=SoftmaxTemperature)
@pytest.mark.usefixtures("divide_en")
def test_frame_softmax_steps(scene):
    play_until_section_ends(scene, SoftmaxTemperature.construct)


@frames_comparison(base_scene=SoftmaxTemperature)
@pytest.mark.usefixtures("t0_en")
def test_frame_argmax_at_zero(scene):
    play_until_section_ends(scene, SoftmaxTemperature.construct)


@frames_comparison(base_scene=SoftmaxTemperature)
@pytest.mark.usefixtures("t5_zh")
def test_frame_hot_in_chinese(scene):
    play_until_section_ends(scene, SoftmaxTemperature.construct)


# --- the shared components the scene is built from -------------------------------------------------
def test_vector_column_ellipsis_is_honest(gpt):
    from scenes.components import VectorColumn, shown_indices
    v = gpt.trace("michael jordan plays")["embeddings"][1]
    col = VectorColumn(v, lang="en", shown=7)
    assert shown_indices(len(v), 7) == [0, 1, 2, 3, 4, 5, None, len(v) - 1]
    numbers = [e.text for e in col.entries if isinstance(e, NumberText)]
    assert numbers == [style.signed(v[i], 1) for i in (0, 1, 2, 3, 4, 5, len(v) - 1)]
    assert col.size_label.text == f"{gpt.config.n_embd} numbers"
    assert VectorColumn(v, lang="zh").size_label.text == f"{gpt.config.n_embd} 个数"
    assert len(VectorColumn(v[:4], lang="en").entries) == 4  # short vectors need no ellipsis


def test_matrix_grid_shows_real_corners_and_true_shape(gpt):
    from scenes.components import MatrixGrid
    W = gpt.p("h.0.attn.c_attn.weight")[:, : gpt.config.d_head]
    grid = MatrixGrid(W, name="W_q", rows=4, cols=4)
    assert grid.shape_label.text == f"W_q: {gpt.config.n_embd} \u00d7 {gpt.config.d_head}"
    assert grid.rows_shown == [0, 1, 2, None, W.shape[0] - 1] and grid.cols_shown[-1] == W.shape[1] - 1
    corner = grid.cells[-1][1]  # bottom-right cell's number
    assert corner.text == style.signed(W[-1, -1], 1)


def test_token_row_keeps_true_positions_when_it_must_drop_tokens():
    from scenes.components import TokenRow
    words = "a fluffy blue fox roamed the misty forest . the fox was blue".split()
    row = TokenRow(words, next_slot=True)
    assert row.first_shown > 0 and len(row.ellipsis) == 1
    assert [n.text for n in row.indices] == [str(i) for i in range(row.first_shown, len(words) + 1)]
    assert inside_safe_area(row.move_to([0, 0, 0]))
