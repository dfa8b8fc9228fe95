"""Every drawn sum shows each value at its plain rounding, and says ≈ where its labels do not add up (docs/teaching.md §7,
issue 41 rule 3: one value, one label), checked from the manifest alone.

A scene records each sum it draws in values["sums"] (LectureScene.record_sum, scenes/components/sums.py):
{"beat", "what", "terms": [{"values", "labels"}, ...], "total": {"values", "labels"}, "approx", and, where the
scene draws the sum's relation, "drawn": the texts of what draws it (the sign between the columns, or the total under
a rule; one for the whole sum, or one per row)}. Read as a viewer reads them:

- every label is its value rounded the plain way at the decimals it shows, as the lecture's formatters write a number
  (f"{value:.{d}f}"; a percentage f"{100 * value:.{d}f}%"); an exact 0 may read "0" or "0%" (no rounding made it);
- every term of a row has the total's decimals;
- "approx" is true exactly when some row's labels do not add up to its total's label;
- a drawn relation shows ≈ exactly when its labels do not add up: the whole sum's, or its own row's.

This code parses the labels itself and never calls the scene's rule.
"""

from __future__ import annotations

import re
from decimal import Decimal

LABEL = re.compile(r"^(?P<sign>[+\u2212-]?)(?P<digits>[0-9][0-9,]*(?:\.[0-9]+)?)(?P<percent>%?)$")
APPROX = "\u2248"


def parse(label: str) -> tuple[Decimal, int, bool]:
    """A label as a viewer reads it: (its value, its decimals, whether it is a percentage)."""
    m = LABEL.match(label.strip())
    assert m, f"{label!r} is not a number a viewer can add (a sum's labels are plain numbers)"
    digits = m["digits"].replace(",", "")
    value = Decimal(digits) * (-1 if m["sign"] in "\u2212-" and m["sign"] else 1)
    decimals = len(digits.partition(".")[2])
    return value, decimals, bool(m["percent"])


def plain_rounding(value: float, decimals: int, percent: bool) -> Decimal:
    """The value as the lecture's formatters write it at `decimals` (an f-string's rounding), read back."""
    return Decimal(f"{(100 * float(value) if percent else float(value)):.{decimals}f}")


def assert_plain(label: str, value: float, where: str) -> None:
    shown, decimals, percent = parse(label)
    if float(value) == 0.0 and decimals == 0 and shown == 0:
        return                                                   # an exact 0: "0", "0%"
    expected = plain_rounding(value, decimals, percent)
    assert shown == expected, f"{where}: {label!r} is not the plain rounding of the model's {float(value)!r} " \
                              f"({expected}{'%' if percent else ''} at {decimals} decimals)"


def row_misses(s: dict) -> list[bool]:
    """For each row of a recorded sum: its terms' labels do not add up to its total's label."""
    rows = len(s["total"]["labels"])
    return [sum(parse(t["labels"][r])[0] for t in s["terms"]) != parse(s["total"]["labels"][r])[0]
            for r in range(rows)]


def assert_sums_as_shown(values: dict, where: str = "", required: bool = False) -> int:
    """Every entry of values["sums"] as the module says: plain labels, one precision a row, "approx" where the labels
    miss, ≈ drawn where they miss and only there. Returns how many sums were checked; `required`: the scene must have
    recorded at least one."""
    sums = values.get("sums", [])
    assert not required or sums, f"{where}: no sum recorded in values['sums']"
    for s in sums:
        here = f"{where} {s['beat']}: {s['what']}"
        assert set(s) >= {"beat", "what", "terms", "total", "approx"} and s["terms"], here
        rows = len(s["total"]["labels"])
        assert len(s["total"]["values"]) == rows, here
        for t in s["terms"]:
            assert len(t["labels"]) == len(t["values"]) == rows, here
        for r in range(rows):
            parts = [parse(t["labels"][r]) for t in s["terms"]]
            _, total_decimals, _ = parse(s["total"]["labels"][r])
            # every term at the total's decimals; an exact 0 may read "0" or "0%" (no rounding made it)
            assert all(d == total_decimals or (v == 0 and d == 0 and float(t["values"][r]) == 0.0)
                       for (v, d, _), t in zip(parts, s["terms"])), f"{here}: row {r} mixes decimals"
            for t in s["terms"]:
                assert_plain(t["labels"][r], t["values"][r], here)
            assert_plain(s["total"]["labels"][r], s["total"]["values"][r], here)
        misses = row_misses(s)
        reads = "; ".join(f"{' + '.join(t['labels'][r] for t in s['terms'])} vs {s['total']['labels'][r]}"
                          for r in range(rows) if misses[r])
        assert s["approx"] is any(misses), \
            f"{here}: approx is {s['approx']} but the labels {'miss: ' + reads if any(misses) else 'add up'}"
        drawn = s.get("drawn")
        if drawn is not None:
            assert len(drawn) in (1, rows), f"{here}: {len(drawn)} drawn relations for {rows} rows"
            for text, miss in zip(drawn, [any(misses)] if len(drawn) == 1 else misses):
                assert (APPROX in text) is miss, \
                    f"{here}: drawn {text!r}, but the labels {'miss: ' + reads if miss else 'add up'}"
    return len(sums)


def reads_as_quoted(label: str, quoted: str) -> bool:
    """A column's percentage agrees with the same probability as a caption quotes it (style.percent): the same text,
    or a caption's bound (">99.9%", "<0.1%") where the column shows the plain rounding at that end."""
    if quoted.startswith(">"):
        return label in ("100.0%", quoted[1:])
    if quoted.startswith("<"):
        return label in ("0.0%", "0.1%")
    return label == quoted
