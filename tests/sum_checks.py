"""Every drawn sum adds up as shown (docs/teaching.md §7), checked from the manifest alone.

A scene records each sum it draws in values["sums"] (LectureScene.record_sum, scenes/components/sums.py):
{"beat", "what", "terms": [{"values", "labels"}, ...], "total": {"values", "labels"}}. Read as a viewer reads them,
the labels of every row must add up exactly to the total's label, and every label must stand within one unit of
its last digit of the model's value. A label is read as printed: "+0.4", "−1.1", "0.0", "12.3%" (a percentage is
checked against its value × 100). This code parses the labels itself and never calls the scene's rule.
"""

from __future__ import annotations

import re
from decimal import Decimal

LABEL = re.compile(r"^(?P<sign>[+\u2212-]?)(?P<digits>[0-9][0-9,]*(?:\.[0-9]+)?)(?P<percent>%?)$")


def parse(label: str) -> tuple[Decimal, int, bool]:
    """A label as a viewer reads it: (its value, its decimals, whether it is a percentage)."""
    m = LABEL.match(label.strip())
    assert m, f"{label!r} is not a number a viewer can add (a sum's labels are plain numbers)"
    digits = m["digits"].replace(",", "")
    value = Decimal(digits) * (-1 if m["sign"] in "\u2212-" and m["sign"] else 1)
    decimals = len(digits.partition(".")[2])
    return value, decimals, bool(m["percent"])


def assert_within_one_unit(label: str, value: float, where: str) -> None:
    shown, decimals, percent = parse(label)
    true = Decimal(float(value)) * (100 if percent else 1)
    unit = Decimal(1).scaleb(-decimals)
    assert abs(shown - true) < unit, f"{where}: {label!r} is a unit or more from the model's {float(value)!r}"


def assert_sums_foot(values: dict, where: str = "", required: bool = False) -> int:
    """Every entry of values["sums"] adds up as shown, row by row, each label within one unit of its value. Returns
    how many sums were checked; `required`: the scene must have recorded at least one."""
    sums = values.get("sums", [])
    assert not required or sums, f"{where}: no sum recorded in values['sums']"
    for s in sums:
        here = f"{where} {s['beat']}: {s['what']}"
        assert set(s) >= {"beat", "what", "terms", "total"} and s["terms"], here
        rows = len(s["total"]["labels"])
        assert len(s["total"]["values"]) == rows, here
        for t in s["terms"]:
            assert len(t["labels"]) == len(t["values"]) == rows, here
        for r in range(rows):
            parts = [parse(t["labels"][r]) for t in s["terms"]]
            total, total_decimals, _ = parse(s["total"]["labels"][r])
            # every term at the total's decimals; an exact 0 may read "0" or "0%" (no rounding made it)
            assert all(d == total_decimals or (v == 0 and d == 0 and float(t["values"][r]) == 0.0)
                       for (v, d, _), t in zip(parts, s["terms"])), f"{here}: row {r} mixes decimals"
            assert sum(v for v, _, _ in parts) == total, \
                f"{here}: row {r} reads {' + '.join(t['labels'][r] for t in s['terms'])} = {s['total']['labels'][r]}"
            for t in s["terms"]:
                assert_within_one_unit(t["labels"][r], t["values"][r], here)
            assert_within_one_unit(s["total"]["labels"][r], s["total"]["values"][r], here)
    return len(sums)


def reads_as_quoted(label: str, quoted: str) -> bool:
    """A footed percentage agrees with the same probability as a caption quotes it (style.percent): the same text,
    or ">99.9%" drawn as 99.9%, or "<0.1%" drawn as 0.0% or 0.1%."""
    if quoted.startswith(">"):
        return label == quoted[1:]
    if quoted.startswith("<"):
        return label in ("0.0%", "0.1%")
    return label == quoted
