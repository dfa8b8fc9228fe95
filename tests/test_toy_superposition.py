"""The toy-superposition scene and its recorded runs: W at every checkpoint reproduced by the lab, D_i and the
angles recomputed from W (independently of the lab), the geometry rule, the labels as the rounding of the
manifest, and a key frame."""

from __future__ import annotations

import math

import numpy as np
import pytest
from manim.utils.testing.frames_comparison import frames_comparison

from model import superposition as lab
from model import superposition_record as record
from scene_checks import manifest_of, play_until_section_ends, stop_at_beat
from scenes.toy_superposition import ToySuperposition, geometry

__module_test__ = "toy_superposition"


@pytest.fixture(scope="module")
def runs():
    return record.load()["toy"]["runs"]


def dims_and_angles(W) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """D_i = |W_i|^2 / sum_j (W_i/|W_i| . W_j)^2, the angles between columns, the polar angle of each column."""
    W = np.asarray(W, np.float64)
    norms = np.linalg.norm(W, axis=0)
    unit = W / np.maximum(norms, 1e-12)
    D = norms ** 2 / np.maximum(((unit.T @ W) ** 2).sum(1), 1e-12)
    angles = np.degrees(np.arccos(np.clip(unit.T @ unit, -1, 1)))
    return D, angles, np.degrees(np.arctan2(W[1], W[0])) % 360


def test_every_checkpoint_is_recorded_with_its_geometry(runs):
    recipe = record.RECIPE["toy"]
    assert [r["sparsity"] for r in runs] == recipe["sparsities"]
    for r in runs:
        assert [c["step"] for c in r["checkpoints"]] == recipe["checkpoints"]
        assert r["checkpoints"][-1]["W"] == r["W"] and r["checkpoints"][-1]["loss"] == pytest.approx(r["loss"])
        for c in r["checkpoints"]:
            W = np.asarray(c["W"])
            assert W.shape == (2, 5)
            D, angles, polar = dims_and_angles(W)
            np.testing.assert_allclose(c["dims_per_feature"], D, atol=1e-5)
            np.testing.assert_allclose(c["norms"], np.linalg.norm(W, axis=0), atol=1e-6)
        D, angles, polar = dims_and_angles(r["W"])
        off = ~np.eye(5, dtype=bool)        # float32 arccos near +-1 is coarse: the lab's own angles to 0.05 degree
        np.testing.assert_allclose(np.asarray(r["angles_deg"])[off], angles[off], atol=0.05)
        np.testing.assert_allclose(r["polar_deg"], polar, atol=1e-3)


@pytest.mark.slow
def test_the_lab_reproduces_a_recorded_run(runs):
    r = runs[-1]
    again = lab.train_toy_model(r["sparsity"], steps=r["steps"], seed=r["seed"],
                                checkpoints=record.RECIPE["toy"]["checkpoints"])
    for a, b in zip(again["checkpoints"], r["checkpoints"]):
        np.testing.assert_allclose(a["W"], b["W"], atol=1e-6)
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-5)


def test_recording_checkpoints_does_not_change_the_run():
    plain = lab.train_toy_model(0.9, steps=60, seed=2)
    marked = lab.train_toy_model(0.9, steps=60, seed=2, checkpoints=[0, 30, 60])
    assert plain["W"] == marked["W"] and plain["loss"] == marked["loss"]
    assert marked["checkpoints"][-1]["W"] == plain["W"]
    with pytest.raises(lab.ModelError):
        lab.train_toy_model(0.9, steps=10, checkpoints=[11])


def test_the_geometry_rule(runs):
    kinds = [geometry(r)["kind"] for r in runs]
    # recomputed here: the dense run keeps the two most important features, 90 degrees apart; the sparsest, a pentagon
    dense, sparse = runs[0], runs[-1]
    D, angles, polar = dims_and_angles(dense["W"])
    rep = [i for i, n in enumerate(np.linalg.norm(np.asarray(dense["W"]), axis=0)) if n > 0.5]
    assert rep == [0, 1] and abs(angles[0, 1] - 90) <= 5 and kinds[0] == "orthogonal"
    D, angles, polar = dims_and_angles(sparse["W"])
    gaps = np.diff(np.concatenate([np.sort(polar), np.sort(polar)[:1] + 360]))
    assert np.all(np.abs(gaps - 72) <= 5) and np.all(np.abs(D - 0.4) <= 0.05) and kinds[-1] == "pentagon"
    # a made-up W that is not a pentagon is not called one
    W = np.array([[1.0, 0.0, -1.0, 0.0, 0.7], [0.0, 1.0, 0.0, -1.0, 0.7]])
    fake = {"norms": np.linalg.norm(W, axis=0).tolist(), "angles_deg": dims_and_angles(W)[1].tolist(),
            "polar_deg": dims_and_angles(W)[2].tolist(), "dims_per_feature": dims_and_angles(W)[0].tolist()}
    assert geometry(fake)["kind"] == "other"


@pytest.fixture(scope="module")
def played(lecture):
    return {lang: lecture.dry("toy_superposition", lang) for lang in ("en", "zh")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_labels_are_the_rounded_numbers(played, lang):
    s = played[lang]
    v = s.values
    assert [n.text for n in s.imp_numbers] == [f"{x:.2f}" for x in v["runs"][0]["importance"]]
    assert [row[1].text for row in s.loss_rows] == [f"{r['loss']:.4f}" for r in v["runs"]]
    assert s.step_number.text == f"{v['runs'][0]['checkpoints'][-1]['step']:,}"
    for fan, r in zip(s.fans, v["runs"]):      # the arrows end where W's columns point, at the last checkpoint
        W = np.asarray(r["checkpoints"][-1]["W"])
        for arrow, (x, y) in zip(fan.arrows, W.T):
            np.testing.assert_allclose(arrow.get_end()[:2], (fan.centre() + fan.radius * np.array([x, y, 0]))[:2],
                                       atol=0.02)
    for bars, r in zip(s.d_bars, v["runs"]):
        for bar, D in zip(bars, r["dims_per_feature"]):
            assert bar.height == pytest.approx(max(D * 0.8, 1e-3), rel=1e-6)
    for row, r in zip(s.geom_labels, v["runs"]):
        g = r["geometry"]
        if len(g["represented"]) > 2:
            assert f"{min(g['gaps_deg']):.0f}" in row[1].text and f"{max(g['gaps_deg']):.0f}" in row[1].text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_collision_is_in_the_runs_own_data_and_drawn_as_measured(played, lang):
    """Why sparsity allows superposition (issue 33, item 2): the example and the counts are the sparsest run's own
    evaluation inputs, recomputed here in numpy; the bars, the table and the two losses are their rounding, and the
    table adds up (the counts to the batch, the shares of the loss to 100%)."""
    from caption_checks_superposition import check_toy_collide, check_toy_rare
    s = played[lang]
    v = s.values
    rules = v["caption_rules"]
    assert check_toy_collide(v, rules["collide"], None) == rules["collide"]["key"]
    assert check_toy_rare(v, rules["rare"], None) == rules["rare"]["key"]
    c, ex = v["collisions"], v["collisions"]["example"]
    assert sum(c["inputs"].values()) == c["batch"] == 65536 and c["sparsity"] == v["runs"][-1]["sparsity"]
    for bar, value in zip(s.collide_bars, [y for pair in zip(ex["x"], ex["out"]) for y in pair]):
        assert bar.height == pytest.approx(max(value * 1.45, 1e-3), rel=1e-6)
    assert [n.text for n in s.collide_numbers] == [f"{y:.2f}" for pair in zip(ex["x"], ex["out"]) for y in pair
                                                   if y > 0]
    assert s.rare_counts.labels == [f"{c['inputs'][k]:,}" for k in ("0", "1", "2+")]
    shares = [float(l.rstrip("%")) for l in s.rare_shares.labels]
    assert sum(shares) == pytest.approx(100.0) and shares[2] == pytest.approx(100 * c["loss_share_2plus"], abs=0.1)
    assert [[n.text for n in col] for col in s.rare_table.columns] == [list(r) for r in zip(s.rare_counts.labels,
                                                                                          s.rare_shares.labels)]
    assert [n.text for n in s.same_chart.numbers] == [f"{c['loss']:.5f}", f"{c['keep_two_loss']:.5f}"]
    said = {x["beat"]: x for x in s.captions}
    assert f"{c['inputs']['2+']:,}" in said["rare"]["text"] and s.rare_shares.labels[2] in said["rare"]["text"]


def test_the_rules_chose_their_captions(played):
    v = played["en"].values
    losses = [r["loss"] for r in v["runs"]]
    assert v["caption_rules"]["dims"]["key"] == (
        "dims_falls" if all(b < a for a, b in zip(losses, losses[1:])) else "dims_mixed")
    kinds = [r["geometry"]["kind"] for r in v["runs"]]
    assert v["caption_rules"]["geometry"]["key"] == (
        ("pentagon_pairs" if "antipodal" in kinds[1:-1] else "pentagon") if kinds[-1] == "pentagon"
        else "no_pentagon")
    # issue 43: the S = 0.7 panel (opposite pairs) is narrated between the dense run and the sparsest
    if v["caption_rules"]["geometry"]["key"] == "pentagon_pairs":
        said = next(c for c in played["en"].captions if c["beat"] == "geometry")
        middle = next(r for r in v["runs"][1:-1] if r["geometry"]["kind"] == "antipodal")
        assert f"S = {middle['sparsity']:g}" in said["text"] and "opposite pairs" in said["text"]
    # and why language's features are sparse: any one concept is rarely present
    model = next(c for c in played["en"].captions if c["beat"] == "model")
    assert "absent from almost every sentence" in model["say"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_its_manifest_holds_w_at_every_checkpoint(lecture, runs, lang):
    v = manifest_of(lecture.clips("toy_superposition")[lang])["values"]
    for a, b in zip(v["runs"], runs):
        assert [c["W"] for c in a["checkpoints"]] == [c["W"] for c in b["checkpoints"]]
        assert a["dims_per_feature"] == b["dims_per_feature"] and math.isclose(a["loss"], b["loss"])


@pytest.fixture
def geometry_beat(monkeypatch):
    stop_at_beat(monkeypatch, "geometry", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=ToySuperposition)
@pytest.mark.usefixtures("geometry_beat")
def test_frame_geometry(scene):
    play_until_section_ends(scene, ToySuperposition.construct)


# --- superposition is defined where the lecture first says it ------------------------------------------------------
WORD = {"en": "superposition", "zh": "叠加"}
DEFINES = {"en": "more features than dimensions", "zh": "特征比维度多"}


def says_the_word(table: dict, lang: str) -> bool:
    """Any caption of a strings table (shown or spoken) uses the word, in `lang`."""
    return any(WORD[lang] in v.get(k, "").lower() for v in table.values() for k in (lang, f"say_{lang}"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_superposition_is_defined_at_its_first_use_in_the_lecture(played, lang):
    """The default lecture's captions in order: no scene before toy_superposition can say the word (every string
    of its table, whichever its rules choose), and toy_superposition's first caption that says it defines it."""
    import importlib
    import tomllib
    from pathlib import Path

    from scenes.catalog import SCENES
    order = [s["name"] for s in tomllib.loads((Path(__file__).resolve().parent.parent / "lecture.toml")
                                              .read_text())["scene"]]
    first = None
    for name in order:
        spec = SCENES[name]
        cls = getattr(importlib.import_module(spec.module), spec.cls)
        if says_the_word(cls.strings.table, lang):
            first = name
            break
    assert first == "toy_superposition"
    said = [c for c in played[lang].captions if WORD[lang] in (c["text"] + c["say"]).lower()]
    assert said, "toy_superposition says the word"
    assert said[0]["key"] in {"define_pentagon", "define_plain"} and said[0]["beat"] == "define"
    assert DEFINES[lang] in said[0]["text"].replace("\n", " " if lang == "en" else "") and DEFINES[lang] in said[0]["say"]
