"""The footing rule of scenes/components/sums.py, on its own: every sum adds up as shown, every label within one unit
of its value, a kept term at its plain rounding, a probability under 1 never 100.0% where the column can foot; and the
independent check of tests/sum_checks.py fails on a sum that does not add up."""

from __future__ import annotations

import numpy as np
import pytest

from scenes import style
from scenes.components.sums import CountSum, FootedPercents, FootedSum, FootingError, foot
from sum_checks import assert_sums_foot, reads_as_quoted


def test_the_examples_foot():
    assert foot([0.44, 0.44], 0.88, 1) == [4, 5]                      # +0.4 + +0.5 = +0.9
    assert FootedPercents([1 / 3] * 3).labels == ["33.3%", "33.3%", "33.4%"]
    assert FootedPercents([0.9997, 0.0002, 0.0001]).labels == ["99.9%", "0.1%", "0.0%"]   # not 100.0%: not certain
    assert FootedPercents([0.5, 0.5, 0.0]).labels == ["50.0%", "50.0%", "0%"]               # an exact 0
    assert FootedPercents([1 - 1e-9, 1e-9]).labels == ["100.0%", "0.0%"]
    assert foot([0.44, 0.44], 0.88, 1, keep=(1,)) == [5, 4]           # the kept term keeps its plain rounding
    assert FootedPercents([0.4444, 0.4444, 0.1112], keep=(1,)).labels == ["44.5%", "44.4%", "11.1%"]
    assert reads_as_quoted("99.9%", style.percent(0.9997)) and not reads_as_quoted("100.0%", style.percent(0.9997))


@pytest.mark.parametrize("seed", range(40))
def test_random_sums_foot_within_one_unit(seed):
    rng = np.random.default_rng(seed)
    rows, n, decimals = 7, int(rng.integers(2, 5)), int(rng.integers(1, 4))
    terms = [rng.normal(0, 0.6, rows) for _ in range(n)]
    keep = (int(rng.integers(0, n)),)
    footed = FootedSum(terms, np.sum(terms, axis=0), decimals, keep=keep)
    assert assert_sums_foot({"sums": [footed.record("b", "random")]}, "random") == 1
    p = rng.dirichlet(np.full(int(rng.integers(2, 9)), float(rng.choice([0.05, 0.5, 5.0]))))
    percents = FootedPercents(p, total=float(p.sum()), keep=(0,))
    assert assert_sums_foot({"sums": [percents.record("b", "percents")]}, "percents") == 1


def test_a_sum_that_does_not_add_up_is_refused_and_found():
    with pytest.raises(FootingError):
        FootedSum([[0.1], [0.1]], [0.5], 1)
    with pytest.raises(FootingError):
        FootedPercents([0.5, 0.4])
    with pytest.raises(FootingError):
        CountSum([1, 2], 4, ["1", "2"], "4")
    wrong = {"sums": [{"beat": "b", "what": "x", "terms": [{"values": [0.44], "labels": ["+0.4"]},
                                                           {"values": [0.44], "labels": ["+0.4"]}],
                       "total": {"values": [0.88], "labels": ["+0.9"]}}]}
    with pytest.raises(AssertionError, match="reads"):
        assert_sums_foot(wrong)
    far = {"sums": [{"beat": "b", "what": "x", "terms": [{"values": [0.44], "labels": ["+0.3"]},
                                                         {"values": [0.44], "labels": ["+0.6"]}],
                     "total": {"values": [0.88], "labels": ["+0.9"]}}]}
    with pytest.raises(AssertionError, match="unit or more"):
        assert_sums_foot(far)
