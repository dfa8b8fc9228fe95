"""The why beats (issue 45): a scene's values["why"] is the lab's record as model.lab.why reads it, and its chart's
labels are those values as the manifest says they were drawn. Shared by the six scenes' tests."""

from __future__ import annotations

import pytest

from model import lab

FIGURES = ("with", "without", "curve_with", "curve_without", "range_with", "range_without", "steps", "seeds_with",
           "seeds_without")


def assert_from_the_record(entry: dict) -> None:
    """An entry (and every entry nested in it: a second measure, each language's, another variant) matches the
    record: the same variant and measure, the means over the seeds the record holds, their ranges and curves."""
    ref = lab.why(entry["variant"], entry["metric"])
    for key in FIGURES:
        assert entry[key] == pytest.approx(ref[key], abs=1e-12), (entry["variant"], entry["metric"], key)
    for value in entry.values():
        for nested in (value if isinstance(value, list) else [value]):
            if isinstance(nested, dict) and "variant" in nested:
                assert_from_the_record(nested)


def drawn_rows(scene) -> list[dict]:
    """The why chart's table as drawn: each row's label, numbers and spreads (their texts)."""
    rows = []
    for row in scene.why_chart.table[1:]:
        _, label, numbers, spreads = row
        rows.append({"label": label.text, "numbers": [n.text for n in numbers], "spreads": [s.text for s in spreads]})
    return rows


def assert_why_beat(scene, expected_rows: list[list[str]], labels: list[str]) -> None:
    """values["why"] matches the record; the chart draws `labels` and `expected_rows` (each row's figures, formatted
    from the manifest's values by the test), as the manifest's "shown" says for the scene's language; the figures
    shown in each language's video are in both manifests alike."""
    v = scene.values["why"]
    assert_from_the_record(v)
    drawn = drawn_rows(scene)
    assert set(v["shown"]) == {"en", "zh"}
    shown = v["shown"][scene.lang]["rows"]
    assert [r["label"] for r in drawn] == labels
    assert [r["numbers"] for r in drawn] == expected_rows == [r["numbers"] for r in shown]
    assert [r["spreads"] for r in drawn] == [[t for t in r["spreads"] if t] for r in shown]
    if len(v["seeds_with"]) == 1 and len(v["seeds_without"]) == 1:
        assert all(not r["spreads"] for r in drawn), "one seed: no spread to show"
