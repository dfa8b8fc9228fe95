"""One value, one label (scenes/components/sums.py): every label of a drawn sum is its value's plain rounding, and a sum
whose labels do not add up is approximate (≈, "approx": true); the independent check of tests/sum_checks.py fails on
a label moved away from its value, on a wrong "approx" and on a drawn sign that disagrees with it."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from scenes import style
from scenes.components.sums import (APPROX, CountSum, NotASum, RoundedPercents, RoundedSum, drawn_text, plain,
                                    rounded_columns)
from sum_checks import assert_sums_as_shown, reads_as_quoted


def test_the_examples():
    s = RoundedSum([[0.44], [0.44]], [0.88], 1)
    assert s.labels == [["+0.4"], ["+0.4"]] and s.total_labels == ["+0.9"]       # never +0.5 to make it add up
    assert s.approx and s.relation == APPROX and s.total_text() == "\u2248 +0.9"
    s = RoundedSum([[0.41, 0.21], [0.42, -0.11]], [0.83, 0.10], 1)
    assert s.approx_rows == [False, False] and not s.approx and s.relation == "=" and s.total_text(1) == "+0.1"
    s = RoundedSum([[0.44, 0.21], [0.44, -0.11]], [0.88, 0.10], 1)
    assert s.approx_rows == [True, False] and s.approx and s.total_text(0).startswith(APPROX)
    assert RoundedSum([[-1.94]], [-1.94], 2).labels == [["\u22121.94"]]
    assert RoundedSum([[1.643], [0.0]], [1.643], 1).labels[0] == ["+1.6"]              # E of "was": one label
    thirds = RoundedPercents([1 / 3] * 3)
    assert thirds.labels == ["33.3%"] * 3 and thirds.approx and thirds.total_text() == "\u2248 100.0%"
    assert RoundedPercents([0.9997, 0.0002, 0.0001]).labels == ["100.0%", "0.0%", "0.0%"]
    assert not RoundedPercents([0.9997, 0.0002, 0.0001]).approx
    halves = RoundedPercents([0.5, 0.5, 0.0])
    assert halves.labels == ["50.0%", "50.0%", "0%"] and not halves.approx and halves.total_text() == "100.0%"
    assert reads_as_quoted("100.0%", style.percent(0.9997)) and reads_as_quoted("0.0%", style.percent(0.0002))
    assert reads_as_quoted("44.4%", style.percent(0.4444)) and not reads_as_quoted("44.5%", style.percent(0.4444))


def test_labels_are_the_lecture_formatters_own():
    """The same value, the same label: a sum's label is what style.signed and style.percent write elsewhere."""
    rng = np.random.default_rng(7)
    for x in rng.normal(0, 2, 300):
        for d in (1, 2, 3):
            assert RoundedSum([[x], [0.0]], [x], d).labels[0][0] == style.signed(x, d)
    for p in rng.dirichlet(np.ones(5), 60).ravel():
        if 0.0005 <= p < 0.9995:
            assert RoundedPercents([p, 1 - p]).labels[0] == style.percent(p)
    assert plain(0.125, 2) == 12 and plain(0.375, 2) == 38          # an exact tie goes to the even digit, as f"" does


@pytest.mark.parametrize("seed", range(40))
def test_random_sums_are_plain_and_approx_where_they_miss(seed):
    rng = np.random.default_rng(seed)
    rows, n, decimals = 7, int(rng.integers(2, 5)), int(rng.integers(1, 4))
    terms = [rng.normal(0, 0.6, rows) for _ in range(n)]
    s = RoundedSum(terms, np.sum(terms, axis=0), decimals)
    entry = s.record("b", "random")
    entry["drawn"] = [s.relation]
    assert assert_sums_as_shown({"sums": [entry]}, "random") == 1
    by_row = s.record("b", "table")
    by_row["drawn"] = [s.total_text(r) for r in range(rows)]
    assert assert_sums_as_shown({"sums": [by_row]}, "table") == 1
    for j, col in enumerate(s.labels):
        assert col == [style.signed(v, decimals) for v in terms[j]]
    p = rng.dirichlet(np.full(int(rng.integers(2, 9)), float(rng.choice([0.05, 0.5, 5.0]))))
    percents = RoundedPercents(p, total=float(p.sum()))
    entry = percents.record("b", "percents")
    entry["drawn"] = [percents.total_text()]
    assert assert_sums_as_shown({"sums": [entry]}, "percents") == 1


def test_columns_sum_on_the_rows_shown():
    rng = np.random.default_rng(3)
    x, delta = rng.normal(0, 1, 64), rng.normal(0, 0.1, 64)
    s = rounded_columns((x, delta, x + delta), shown=7, decimals=2)
    assert len(s.total_labels) == 7 and s.relation == (APPROX if s.approx else "=")
    assert assert_sums_as_shown({"sums": [s.record("b", "E + ΔE = E′")]}, "columns", required=True) == 1


def test_a_sum_that_does_not_add_up_is_refused():
    with pytest.raises(NotASum):
        RoundedSum([[0.1], [0.1]], [0.5], 1)
    with pytest.raises(NotASum):
        RoundedPercents([0.5, 0.4])
    with pytest.raises(NotASum):
        CountSum([1, 2], 4, ["1", "2"], "4")
    assert CountSum([1, 2], 3, ["1", "2"], "3").record("b", "x")["approx"] is False


def test_the_check_finds_a_bent_label_a_wrong_approx_and_a_wrong_sign():
    good = RoundedSum([[0.44], [0.44]], [0.88], 1).record("b", "x")
    good["drawn"] = [APPROX]
    assert assert_sums_as_shown({"sums": [good]}) == 1
    bent = copy.deepcopy(good)                      # the largest-remainder footing's +0.4 + +0.5 = +0.9
    bent["terms"][1]["labels"] = ["+0.5"]
    bent["approx"], bent["drawn"] = False, ["="]
    with pytest.raises(AssertionError, match="plain rounding"):
        assert_sums_as_shown({"sums": [bent]})
    unmarked = copy.deepcopy(good)
    unmarked["approx"] = False
    with pytest.raises(AssertionError, match="approx is False"):
        assert_sums_as_shown({"sums": [unmarked]})
    equals = copy.deepcopy(good)
    equals["drawn"] = ["="]
    with pytest.raises(AssertionError, match="drawn '='"):
        assert_sums_as_shown({"sums": [equals]})
    exact = RoundedSum([[0.41], [0.42]], [0.83], 1).record("b", "x")
    exact["drawn"] = ["\u03a3 \u2248 +0.9"]
    with pytest.raises(AssertionError, match="add up"):
        assert_sums_as_shown({"sums": [exact]})
    with pytest.raises(AssertionError, match="no sum recorded"):
        assert_sums_as_shown({}, "scene", required=True)


def test_drawn_text_reads_a_label_and_a_tex_sign():
    class Shown:
        def __init__(self, **kw):
            self.__dict__.update(kw)
    assert drawn_text(Shown(text="\u2248 100.0%")) == "\u2248 100.0%"
    assert drawn_text(Shown(tex_string=r"\approx")) == APPROX and drawn_text(Shown(tex_string="=")) == "="
    with pytest.raises(TypeError):
        drawn_text(Shown())
