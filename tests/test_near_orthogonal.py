"""The near-orthogonal scene and the recorded runs behind it: the snapshots are current and reproduced by the lab,
every histogram recomputed from the vectors (NumPy, all pairs, independently of the lab), the bounds from their
formulas, the random-vector estimate against a simulation, the measured counts re-checked pair by pair, the
labels as the rounding of the manifest, a stale or broken snapshot file as one clear line, and a key frame."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from manim.utils.testing.frames_comparison import frames_comparison

from model import superposition as lab
from model import superposition_record as record
from model.config import GPT3_175B
from model.errors import ModelError
from scenes import style
from scene_checks import manifest_of, play_until_section_ends, stop_at_beat
from scenes.near_orthogonal import NearOrthogonal, fmt_int, rough

__module_test__ = "near_orthogonal"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def data():
    return record.load()


def all_pair_histogram(V: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Every pair's angle, in NumPy float64, block by block: counts in 1-degree bins, closest and most opposed."""
    V = np.asarray(V, np.float64)
    n = len(V)
    counts = np.zeros(180, np.int64)
    lo_cos, hi_cos = 1.0, -1.0
    for a in range(0, n, 2500):
        C = V[a:a + 2500] @ V.T
        rows = np.arange(a, min(a + 2500, n))[:, None]
        C = C[np.arange(n)[None, :] > rows]                       # pairs (i, j) with j > i, each once
        C = np.clip(C, -1, 1)
        hi_cos, lo_cos = max(hi_cos, C.max(initial=-1)), min(lo_cos, C.min(initial=1))
        counts += np.bincount(np.minimum(np.floor(np.degrees(np.arccos(C))).astype(int), 179), minlength=180)
    return counts, math.degrees(math.acos(hi_cos)), math.degrees(math.acos(lo_cos))


def welch_levenshtein_band(n: int, d: int) -> float:
    welch = (n - d) / (d * (n - 1)) if n > d else 0.0
    lev = (3 * n - d * d - 2 * d) / ((d + 2) * (n - d)) if 2 * n > d * (d + 1) else 0.0
    return math.degrees(math.asin(math.sqrt(max(welch, lev, 0.0))))


# --- the recorded runs -------------------------------------------------------------------------------------------
def test_the_snapshots_are_current_and_complete(data):
    assert data["key"] == record.content_key()
    p = data["pack"]
    assert [s["step"] for s in p["snapshots"]] == list(range(p["steps"] + 1))
    for s in p["snapshots"]:
        assert sum(s["counts"]) == s["pairs"] == p["n_vectors"] * (p["n_vectors"] - 1) // 2
        assert s["within_89_91"] == pytest.approx((s["counts"][89] + s["counts"][90]) / s["pairs"], abs=0)


def test_the_start_is_the_labs_random_vectors_every_pair_counted(data):
    p = data["pack"]
    g = torch.Generator().manual_seed(p["seed"])
    V = torch.randn(p["n_vectors"], p["dim"], generator=g)
    V = (V / V.norm(dim=1, keepdim=True)).numpy()          # the lab's float32 unit vectors, as it draws them
    counts, lo, hi = all_pair_histogram(V)
    s = p["snapshots"][0]
    assert np.abs(counts - np.asarray(s["counts"])).sum() <= 2       # float64 sums in another order, at a bin edge
    assert s["min_deg"] == pytest.approx(lo, abs=1e-3) and s["max_deg"] == pytest.approx(hi, abs=1e-3)


@pytest.mark.slow
def test_the_lab_reproduces_the_last_step_every_pair_counted(data):
    p = data["pack"]
    r = lab.pack_near_orthogonal(p["n_vectors"], p["dim"], steps=p["steps"], seed=p["seed"], return_vectors=True)
    counts, lo, hi = all_pair_histogram(r["vectors"].numpy())
    s = p["snapshots"][-1]
    # Every pair counted, up to float32 rounding: torch picks its CPU kernels at run time (AVX2, AVX512), and 20
    # steps in float32 on other kernels move a pair that sits within rounding of a 1-degree bin edge to the next
    # bin (on an AVX512 machine, 170 of the 49,995,000 pairs differed from the recording). At most 1 in 100,000.
    pairs = p["n_vectors"] * (p["n_vectors"] - 1) // 2
    assert counts.sum() == pairs and np.abs(counts - np.asarray(s["counts"])).sum() <= pairs // 100_000
    assert s["min_deg"] == pytest.approx(lo, abs=1e-3) and s["max_deg"] == pytest.approx(hi, abs=1e-3)
    first = p["snapshots"][0]
    assert s["min_deg"] > first["min_deg"] + 5 and s["max_deg"] < first["max_deg"] - 5   # the tails came in


def test_the_bound_is_the_formula(data):
    p = data["pack"]
    band = welch_levenshtein_band(p["n_vectors"], p["dim"])
    assert p["bounds"]["band_deg"] == pytest.approx(band, abs=1e-12)
    assert band == pytest.approx(8.05, abs=0.01)
    last = p["snapshots"][-1]
    assert 90 - last["min_deg"] >= band and last["max_deg"] - 90 >= band    # no run beats a proven bound
    assert welch_levenshtein_band(3, 2) == pytest.approx(30) and welch_levenshtein_band(4, 3) == pytest.approx(
        math.degrees(math.asin(1 / 3)))


def test_the_ceiling_within_the_band_is_the_formula(data):
    eps = data["band"]["eps_deg"]
    for c in data["band"]["curve"]:
        d, n = c["dim"], c["bound_count"]
        if n is None:     # no N is forbidden: the band at the limit N -> infinity is still inside eps
            assert welch_levenshtein_band(10 ** 12, d) <= eps
            continue
        assert welch_levenshtein_band(n, d) <= eps + 1e-12 and welch_levenshtein_band(n + 1, d) > eps, d
    assert data["band"]["gpt3"]["dim"] == GPT3_175B.n_embd == 12288


@pytest.mark.slow
def test_the_random_estimate_matches_a_simulation():
    g = torch.Generator().manual_seed(1)
    for d, eps in ((10, 20.0), (100, 5.0)):
        a = torch.nn.functional.normalize(torch.randn(400_000, d, generator=g, dtype=torch.float64), dim=1)
        b = torch.nn.functional.normalize(torch.randn(400_000, d, generator=g, dtype=torch.float64), dim=1)
        outside = ((a * b).sum(1).abs() > math.sin(math.radians(eps))).double().mean().item()
        assert lab.random_pair_outside(d, eps) == pytest.approx(outside, abs=0.004)
    assert lab.random_pair_outside(3, 30.0) == pytest.approx(0.5, abs=1e-9)       # uniform cosine in 3-D
    assert lab.random_pair_outside(2, 1.0) == pytest.approx(178 / 180, abs=1e-12)  # uniform angle in a plane
    a = torch.nn.functional.normalize(torch.randn(400_000, 2, generator=g, dtype=torch.float64), dim=1)
    b = torch.nn.functional.normalize(torch.randn(400_000, 2, generator=g, dtype=torch.float64), dim=1)
    outside = ((a * b).sum(1).abs() > math.sin(math.radians(20.0))).double().mean().item()
    assert lab.random_pair_outside(2, 20.0) == pytest.approx(outside, abs=0.004)
    assert lab.random_count_estimate(12288, 1.0) == pytest.approx(1 / (2 * lab.random_pair_outside(12288, 1.0)))


@pytest.mark.slow
def test_the_measured_counts_hold_every_pair_within_the_band(data):
    band = data["band"]
    eps = band["eps_deg"]
    for m in band["measured"]:
        assert m["dim"] <= m["count"] <= (m["bound_count"] or m["count"])
        r = lab.pack_near_orthogonal(m["count"], m["dim"], steps=m["steps"], seed=m["seed"], margin=m["margin_cos"],
                                     sample_pairs=1, return_vectors=True)
        V = r["vectors"].double().numpy()
        V /= np.linalg.norm(V, axis=1, keepdims=True)
        C = V @ V.T
        off = np.degrees(np.arcsin(np.abs(C[np.triu_indices(len(V), 1)]).max()))
        assert off <= eps + 1e-6, (m["dim"], off)
        assert m["first_failure"] is None or m["first_failure"]["n"] == m["count"] + 1


def test_random_reaches_is_the_first_width(data):
    r, eps = data["band"]["random_reaches"], data["band"]["eps_deg"]
    assert lab.random_count_estimate(r["dim"], eps) >= r["count"] > lab.random_count_estimate(r["dim"] - 1, eps)


def test_the_lemma_rows_are_the_formula_and_the_rule(data):
    """Dasgupta and Gupta's k for N points at each eps, eps = 1/2 halved while that k fits GPT-3's width, and the
    extra dimensions per tenfold N, from their formulas."""
    j = data["jl"]
    n = j["n_points"]
    assert n == data["pack"]["n_vectors"] and j["max_dim"] == GPT3_175B.n_embd
    bound = lambda eps: 4 * math.log(n) / (eps ** 2 / 2 - eps ** 3 / 3)   # noqa: E731
    assert [r["eps"] for r in j["rows"]] == [0.5 / 2 ** i for i in range(len(j["rows"]))]
    for r in j["rows"]:
        assert r["dim"] - 1 < bound(r["eps"]) <= r["dim"]
        assert r["tenfold_dims"] == pytest.approx(bound(r["eps"]) * math.log(10) / math.log(n), rel=1e-12)
    assert math.ceil(bound(j["rows"][-1]["eps"] / 2)) > GPT3_175B.n_embd >= j["rows"][-1]["dim"]
    assert [r["dim"] for r in j["rows"]] == [443, 1415, 5145]


def test_the_random_projection_is_recomputed_every_pair(data):
    """The first row's projection (the cheapest), drawn as the lab documents it and measured here in NumPy over all
    N(N-1)/2 pairs: the smallest and largest ratio of squared distances, after to before (2)."""
    j = data["jl"]
    row = j["rows"][0]
    n, k = j["n_points"], row["dim"]
    g = torch.Generator().manual_seed(j["seed"])
    X = torch.randn(n, k, generator=g, dtype=torch.float64).numpy() / math.sqrt(k)
    sq = np.einsum("ij,ij->i", X, X)
    lo, hi = np.inf, -np.inf
    for a in range(0, n, 2500):
        D = sq[a:a + 2500, None] + sq[None, :] - 2 * X[a:a + 2500] @ X.T
        D = D[np.arange(n)[None, :] > np.arange(a, min(a + 2500, n))[:, None]] / 2   # each pair once
        lo, hi = min(lo, D.min()), max(hi, D.max())
    p = row["projection"]
    assert (p["n_points"], p["dim"], p["seed"], p["pairs"]) == (n, k, j["seed"], n * (n - 1) // 2)
    assert p["min_ratio"] == pytest.approx(lo, abs=1e-9) and p["max_ratio"] == pytest.approx(hi, abs=1e-9)
    assert p["worst_distortion"] == pytest.approx(max(1 - lo, hi - 1), abs=1e-9)


# --- bad input --------------------------------------------------------------------------------------------------
def test_a_stale_or_broken_snapshot_file_is_one_clear_line(tmp_path, data):
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps({**data, "key": "0" * 64}))
    broken = tmp_path / "broken.json"
    broken.write_text('{"key": ')
    for path, words in ((stale, "out of date"), (broken, "cannot be read"), (tmp_path / "none.json", "missing")):
        with pytest.raises(ModelError) as e:
            record.load(path)
        assert words in str(e.value) and "superposition record" in str(e.value) and "\n" not in str(e.value)


def test_bad_record_arguments_are_one_line_and_exit_2():
    r = subprocess.run([sys.executable, "-m", "model", "superposition", "record", "--bogus"], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    r = subprocess.run([sys.executable, str(REPO / "render.py"), "near_orthogonal", "--set", "lang=fr"], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "lang" in lines[0], r.stderr


# --- the scene as played: labels are the rounding of the manifest's numbers -------------------------------------
@pytest.fixture(scope="module")
def played(lecture):
    return {lang: lecture.dry("near_orthogonal", lang) for lang in ("en", "zh")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_pair_beat_is_one_pairs_chance_and_says_so(played, lang):
    """Issue 33, item 3: the per-pair likelihood apart from the all-pairs count. The curve is the chance one random
    pair is within 89-91 degrees (independently: cos^2 of a random pair is Beta(1/2, (d - 1)/2)), up to GPT-3's
    width; its labels are the rounding of the manifest, and the caption says both figures and that it is per pair."""
    from caption_checks_superposition import check_pair
    s = played[lang]
    v = s.values
    rule = v["caption_rules"]["pair"]
    assert check_pair(v, rule, None) == rule["key"]
    p = v["pair"]
    assert s.pair_gpt3_value.text == style.percent(p["gpt3_within"])
    assert s.pair_d0_value.text == style.percent(p["within_at_dim"])
    said = [c for c in s.captions if c["beat"] == "pair"]
    assert len(said) == 1 and style.percent(p["gpt3_within"]) in said[0]["text"]
    assert style.percent(p["run_within_at_start"]) in said[0]["text"]
    assert ("per pair" if lang == "en" else "每一对") in said[0]["text"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_labels_are_the_rounded_numbers(played, lang):
    s = played[lang]
    v = s.values
    last = v["snapshots"][-1]
    assert s.step_number.text == str(last["step"])
    assert s.closest_number.text == f"{last['min_deg']:.1f}°"
    assert s.within_number.text == f"{100 * last['within_89_91']:.1f}%"
    assert v["reached_deg"] == max(90 - last["min_deg"], last["max_deg"] - 90)
    assert fmt_int(v["pairs"]) in s.hist_header.text
    assert s.gpt3_value.text == f"\u2248 {rough(v['band']['gpt3']['random_estimate'])}"
    assert s.wide_value.text.count(style.scientific(v["wide"]["gpt3_random_estimate"], 2)) == 1
    assert f"{v['exact']['2d']['band_deg']:.1f}" in s.one_more[0].text
    assert f"{v['exact']['3d']['band_deg']:.1f}" in s.one_more[1].text
    # every bar stands for its bin's count, on one fixed scale; the chart's points sit at their values
    h = s.hist
    lo, top = v["histogram_view"]["lo_deg"], v["histogram_view"]["full_height_count"]
    for bar, count in zip(s.step_bars[-1], last["counts"][lo:]):
        assert bar.height == pytest.approx(max(count / top * h.height_, 1e-3), rel=1e-6)
    for dot, m in zip(s.measured_dots, v["band"]["measured"]):
        np.testing.assert_allclose(s.chart.p2c(dot.get_center()), [m["dim"], m["count"]], rtol=1e-6)
    # the lemma's rows: eps, the lemma's k, the worst distortion found; each bar on the rows' one scale
    rows = v["jl"]["rows"]
    assert [t.text for t in s.jl_eps] == [f"{r['eps']:g}" for r in rows]
    assert [t.text for t in s.jl_k] == [fmt_int(r["dim"]) for r in rows]
    assert [t.text for t in s.jl_worst] == [f"{r['projection']['worst_distortion']:.3f}" for r in rows]
    assert [t.text for t in s.jl_angles] == [
        f"\u00b1{math.degrees(math.asin(min(1.0, 2 * r['eps'] / (1 - r['eps'])))):.1f}\u00b0" for r in rows]
    for allow, found, r in zip(s.jl_allow.bars.bars, s.jl_found.bars.bars, rows):
        assert found.width / allow.width == pytest.approx(r["projection"]["worst_distortion"] / r["eps"], rel=1e-6)
    assert fmt_int(v["jl"]["n_points"]) in s.jl_points.text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_more_is_drawn_at_the_bound(played, lang):
    """Issue 43: "one more" is drawn in the exact beat. d + 1 unit directions in d dimensions whose worst pair is the
    Welch/Levenshtein band off 90 degrees (the bound is met), and the 2-D panel's arrows point along them."""
    s = played[lang]
    v = s.values
    for key, d in (("2d", 2), ("3d", 3)):
        V = np.asarray(v["one_more"][key])
        assert V.shape == (d + 1, d) and np.allclose(np.linalg.norm(V, axis=1), 1)
        C = np.abs(V @ V.T)[np.triu_indices(d + 1, 1)]
        assert math.degrees(math.asin(C.max())) == pytest.approx(v["exact"][key]["band_deg"], abs=1e-9)
    for arrow, u in zip(s.more2, np.asarray(v["one_more"]["2d"])):
        direction = (arrow.get_end() - arrow.get_start())[:2]
        np.testing.assert_allclose(direction / np.linalg.norm(direction), u, atol=1e-6)
    assert len(s.more3) == 4 and s.more3[3].get_color() == s.more2[2].get_color()   # the extra one stands out


def test_the_rules_chose_their_captions(played):
    v = played["en"].values
    rules = v["caption_rules"]
    first, last = v["snapshots"][0], v["snapshots"][-1]
    expected = "no_gain" if last["min_deg"] <= first["min_deg"] else (
        "narrows" if last["within_89_91"] - first["within_89_91"] >= 0.01 else "tails")
    assert rules["histogram"]["key"] == expected
    assert "bound" not in rules, "the bound beat is cut (issue 41)"
    g = v["band"]["gpt3"]
    assert rules["where"]["key"] == ("where_slow" if g["random_estimate"] < g["dim"] else "where_fast")
    w = v["wide"]
    assert rules["room"]["key"] == ("room_explodes" if w["gpt3_random_estimate"] > w["gpt3_dim"] else "room_small")
    rows = v["jl"]["rows"]
    assert rules["lemma"]["key"] == ("lemma_near" if all(r["projection"]["worst_distortion"] <= 1.05 * r["eps"]
                                                         for r in rows) else "lemma_far")
    # the last caption turns the smallest eps into the angle the lemma promises (lengths distorted too: a
    # perpendicular pair ends within 90 +- asin(2 eps / (1 - eps)) degrees), and the wide band into the lemma's k
    said = [c for c in played["en"].captions if c["key"] in ("angle_beyond", "angle_within")]
    e = rows[-1]["eps"]
    assert len(said) == 1 and said[0]["values"]["e"] == f"{e:g}"
    assert said[0]["values"]["a"] == f"{math.degrees(math.asin(2 * e / (1 - e))):.1f}" == "16.6"
    band = v["jl_shown"]["band"]
    s5 = math.sin(math.radians(5))
    assert band["deg"] == 5 and band["eps"] == pytest.approx(s5 / (2 + s5), rel=1e-12)
    assert said[0]["key"] == rules["angle"]["key"] == (
        "angle_beyond" if band["dim"] > band["gpt3_dim"] else "angle_within")
    # the chapter keeps one band after this scene: the wide one, and says so
    room = [c for c in played["en"].captions if c["key"] == rules["room"]["key"]]
    assert len(room) == 1 and "85–95°" in room[0]["text"] and "From here on" in room[0]["text"]


def test_eps_as_an_angle():
    """The lemma as stated keeps squared distances within 1 +- eps, and (the origin among the points) the squared
    lengths too. The worst a perpendicular pair of unit vectors can end up: both lengths shrunk to 1 - eps, their
    squared distance 2 (1 -+ eps): cos = +-2 eps / (1 - eps). Checked on that pair, and that no pair the lemma allows
    ends further (a grid over the three allowances)."""
    from model.analysis.superposition import jl_angle_deg, jl_eps_for_angle
    for eps in (0.25, 0.125, 0.0175):
        worst = 0.0
        for a2 in np.linspace(1 - eps, 1 + eps, 21):            # |u'|^2
            for b2 in np.linspace(1 - eps, 1 + eps, 21):        # |v'|^2
                for d2 in np.linspace(2 * (1 - eps), 2 * (1 + eps), 21):    # |u' - v'|^2
                    cos = (a2 + b2 - d2) / (2 * math.sqrt(a2 * b2))
                    worst = max(worst, abs(math.degrees(math.acos(max(-1.0, min(1.0, cos)))) - 90))
        assert worst == pytest.approx(jl_angle_deg(eps), abs=1e-9)
        assert jl_eps_for_angle(jl_angle_deg(eps)) == pytest.approx(eps)
    assert jl_angle_deg(0.125) == pytest.approx(16.6, abs=0.005)       # not the +-7.2 of lengths kept exactly
    assert jl_angle_deg(0.5) == 90.0                                   # 2 eps / (1 - eps) >= 1: no promise at all
    assert jl_eps_for_angle(1) == pytest.approx(0.00865, abs=1e-5)
    with pytest.raises(ValueError):
        jl_angle_deg(1.0)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_its_manifest_holds_the_recorded_numbers(lecture, data, lang):
    v = manifest_of(lecture.clips("near_orthogonal")[lang])["values"]
    assert v["source"]["key"] == data["key"]
    assert [s["counts"] for s in v["snapshots"]] == [s["counts"] for s in data["pack"]["snapshots"]]
    assert v["bounds"] == data["pack"]["bounds"]
    assert v["jl"] == data["jl"]


# --- a key frame against committed control data (tests/control_data/near_orthogonal) ----------------------------
@pytest.fixture
def where_beat(monkeypatch):
    stop_at_beat(monkeypatch, "where", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=NearOrthogonal)
@pytest.mark.usefixtures("where_beat")
def test_frame_where(scene):
    play_until_section_ends(scene, NearOrthogonal.construct)
