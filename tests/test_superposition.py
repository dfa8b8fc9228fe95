"""The superposition lab: near-orthogonal packing and the toy model of Elhage et al. (2022)."""

import json
import math

import pytest
import torch

from model.errors import ModelError
from model.superposition_cli import cli
from model.superposition import (jl_dimension, jl_epsilons, jl_tenfold_dims, pack_near_orthogonal,
                                 packing_bounds, random_projection_distortion, train_toy_model, toy_model_sweep)


def without_timing(result):
    return {k: v for k, v in result.items() if not k.startswith("seconds")}


# --------------------------------------------------------------------------- packing

@pytest.fixture(scope="module")
def packed():
    return pack_near_orthogonal(n_vectors=2000, dim=50, seed=0)


def test_packing_tightens_the_angles(packed):
    before, after = packed["before"], packed["after"]
    b, a = before["percentiles_deg"], after["percentiles_deg"]
    # random unit vectors in 50 dims: cos ~ N(0, 1/50), 1st-99th percentile about 71-109 degrees
    assert 70 < b["p1"] < 72 and 108 < b["p99"] < 110
    # the tails come in: the 1st-99th percentile band shrinks by over 10% ...
    assert a["p1"] > b["p1"] + 2 and a["p99"] < b["p99"] - 2
    assert (a["p99"] - a["p1"]) < 0.9 * (b["p99"] - b["p1"])
    assert abs(a["p50"] - 90) < 0.2
    # ... and the worst pairs over ALL 2000*1999/2 pairs improve by more than 20 degrees
    assert before["min_deg"] < 55 and after["min_deg"] > 72
    assert before["max_deg"] > 125 and after["max_deg"] < 108


def test_packing_cannot_beat_the_bounds(packed):
    after, bounds = packed["after"], packed["bounds"]
    # Welch: mean cos^2 over pairs is at least (N - d)/(d(N - 1)); random vectors already sit at
    # 1/d, so packing can only reshape the distribution, not squeeze all of it towards 90 degrees.
    assert after["mean_cos2"] >= bounds["welch_mean_cos2"] * 0.99
    assert packed["before"]["mean_cos2"] == pytest.approx(1 / 50, rel=0.02)
    # Some pair must lie at least band_deg from 90 degrees (Levenshtein, since N > d(d+1)/2).
    assert 90 - after["min_deg"] >= bounds["band_deg"]
    assert after["max_deg"] - 90 >= bounds["band_deg"]
    # Hence the 89-91 degree fraction does not grow; the tails move to the shoulders instead.
    assert abs(after["within_89_91"] - packed["before"]["within_89_91"]) < 0.01


def test_histogram_uses_the_same_sample(packed):
    for stats in (packed["before"], packed["after"]):
        hist = stats["histogram"]
        assert hist["edges_deg"] == list(range(181))
        assert len(hist["counts"]) == 180
        assert sum(hist["counts"]) == packed["sample_pairs"]
    for key in ("n_vectors", "dim", "steps", "seed", "seconds"):
        assert key in packed


def test_packing_bounds_known_cases():
    # 4 lines in the plane: best is 45 degrees apart (Levenshtein bound is tight)
    assert packing_bounds(4, 2)["band_deg"] == pytest.approx(45)
    # 6 lines in 3-D: the icosahedron's diagonals meet Welch's bound, cos = 1/sqrt(5)
    assert packing_bounds(6, 3)["max_cos_at_least"] == pytest.approx(1 / math.sqrt(5))
    # the lecture's setting: no 10,000 unit vectors in 100 dims keep every pair within 90 +- 8 deg
    assert packing_bounds(10_000, 100)["band_deg"] == pytest.approx(8.05, abs=0.01)


def test_packing_is_deterministic():
    one = pack_near_orthogonal(300, 10, steps=5, seed=3, return_vectors=True)
    two = pack_near_orthogonal(300, 10, steps=5, seed=3, return_vectors=True)
    other = pack_near_orthogonal(300, 10, steps=5, seed=4)
    assert one["vectors"].equal(two["vectors"])
    one.pop("vectors"), two.pop("vectors")
    assert without_timing(one) == without_timing(two)
    assert one["after"] != other["after"]


def test_packing_reports_progress():
    seen = []
    pack_near_orthogonal(100, 5, steps=4, progress=lambda step, steps: seen.append((step, steps)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]


# --------------------------------------------------------------------------- the Johnson-Lindenstrauss lemma

def test_jl_dimension_is_dasgupta_guptas_bound():
    # k >= 4 ln n / (eps^2/2 - eps^3/3): n = 10,000 at eps 1/2 needs 442.1..., so 443
    assert jl_dimension(10_000, 0.5) == 443 and jl_dimension(10_000, 0.25) == 1415
    assert jl_dimension(2, 0.5) == math.ceil(4 * math.log(2) / (1 / 8 - 1 / 24))
    # ten times the points: the bound grows by 4 ln 10 / (eps^2/2 - eps^3/3)
    assert jl_dimension(100_000, 0.5) - jl_dimension(10_000, 0.5) == pytest.approx(jl_tenfold_dims(0.5), abs=1)
    assert jl_epsilons(10_000, 12_288) == [0.5, 0.25, 0.125]    # 1/16 would need 19,683 dimensions
    assert jl_epsilons(10_000, 442) == []


def test_random_projection_distortion_every_pair_by_hand():
    r = random_projection_distortion(60, 25, seed=3)
    g = torch.Generator().manual_seed(3)
    X = torch.randn(60, 25, generator=g, dtype=torch.float64) / math.sqrt(25)
    ratios = [float(((X[i] - X[j]) ** 2).sum()) / 2 for i in range(60) for j in range(i + 1, 60)]
    assert r["pairs"] == len(ratios) == 60 * 59 // 2
    assert r["min_ratio"] == pytest.approx(min(ratios), abs=1e-12) and r["max_ratio"] == pytest.approx(max(ratios),
                                                                                                      abs=1e-12)
    assert r["worst_distortion"] == pytest.approx(max(1 - min(ratios), max(ratios) - 1), abs=1e-12)
    assert random_projection_distortion(60, 25, seed=3) == r != random_projection_distortion(60, 25, seed=4)
    # more dimensions, less distortion (the lemma's point): far less at 2,000 than at 20
    assert random_projection_distortion(200, 2000)["worst_distortion"] < 0.5 * \
        random_projection_distortion(200, 20)["worst_distortion"]


@pytest.mark.parametrize("call", [lambda: jl_dimension(1, 0.5), lambda: jl_dimension(10, 1.0),
                                  lambda: jl_dimension(10, 0), lambda: jl_tenfold_dims(float("nan")),
                                  lambda: random_projection_distortion(1, 5), lambda: random_projection_distortion(5, 0)])
def test_bad_lemma_input(call):
    with pytest.raises(ModelError):
        call()


# --------------------------------------------------------------------------- toy model

@pytest.fixture(scope="module")
def dense_and_sparse():
    return toy_model_sweep((0.0, 0.99))


@pytest.mark.slow
def test_sparse_features_form_a_pentagon(dense_and_sparse):
    r = dense_and_sparse[1]
    assert r["sparsity"] == 0.99
    assert len(r["W"]) == 2 and len(r["W"][0]) == 5
    assert all(norm > 0.5 for norm in r["norms"])              # all five features represented
    assert all(abs(D - 0.4) < 0.1 for D in r["dims_per_feature"])  # 2 dims shared by 5 features
    assert sum(r["dims_per_feature"]) == pytest.approx(2, abs=0.1)
    assert all(abs(gap - 72) < 4 for gap in r["neighbour_gaps_deg"])  # 360 / 5
    assert len(r["neighbour_gaps_deg"]) == 5


@pytest.mark.slow
def test_dense_features_keep_only_the_two_most_important(dense_and_sparse):
    r = dense_and_sparse[0]
    assert r["sparsity"] == 0.0
    top, rest = r["norms"][:2], r["norms"][2:]
    assert all(norm > 0.8 for norm in top) and all(norm < 0.2 for norm in rest)
    assert all(D > 0.9 for D in r["dims_per_feature"][:2])
    assert abs(r["angles_deg"][0][1] - 90) < 5                 # the two get orthogonal directions
    assert r["loss"] > 10 * dense_and_sparse[1]["loss"]


def test_toy_model_is_deterministic():
    one = train_toy_model(0.9, steps=50, seed=1)
    two = train_toy_model(0.9, steps=50, seed=1)
    assert without_timing(one) == without_timing(two)
    assert one["W"] != train_toy_model(0.9, steps=50, seed=2)["W"]


# --------------------------------------------------------------------------- bad input and CLI

@pytest.mark.parametrize("kwargs", [dict(n_vectors=1), dict(dim=0), dict(steps=-1),
                                    dict(n_vectors=2.5), dict(lr=float("nan")), dict(margin=0)])
def test_bad_packing_input(kwargs):
    with pytest.raises(ModelError):
        pack_near_orthogonal(**{"n_vectors": 10, "dim": 3, "steps": 1, **kwargs})


@pytest.mark.parametrize("sparsity", [1.0, -0.1, float("nan"), float("inf"), "x"])
def test_bad_sparsity(sparsity):
    with pytest.raises(ModelError):
        train_toy_model(sparsity, steps=1)


@pytest.mark.parametrize("argv", [["pack", "--n", "1"], ["pack", "--dim", "0"],
                                  ["toy", "--sparsity", "nan"], ["toy", "--sparsity", "0.5,1"],
                                  ["toy", "--sparsity", "abc"], ["toy", "--sparsity", ","]])
def test_cli_bad_input_raises_model_error(argv):
    with pytest.raises(ModelError) as e:
        cli(argv)
    assert "\n" not in str(e.value)


def test_cli_pack_json(capsys):
    assert cli(["pack", "--n", "200", "--dim", "8", "--steps", "10", "--seed", "2", "--json"]) == 0
    out, err = capsys.readouterr()
    r = json.loads(out)
    assert r["command"] == "pack" and (r["n_vectors"], r["dim"], r["steps"], r["seed"]) == (200, 8, 10, 2)
    assert r["after"]["min_deg"] > r["before"]["min_deg"]
    assert "100%" in err and err.count("\n") == 10  # a progress line per 10%


def test_cli_toy_text(capsys):
    assert cli(["toy", "--sparsity", "0.99"]) == 0
    out, _ = capsys.readouterr()
    assert "S = 0.99" in out and "5 features with norm > 0.5" in out and "degrees apart" in out
