"""Sums as shown: one value, one label (docs/teaching.md §7, issue 41 rule 3), for every column, table or caption that
draws terms and their total.

Every number drawn is its value rounded the plain way at the precision shown (as style.signed and an f-string round
it: the float's exact value to the nearest unit of the last digit, a tie to the even digit), so the same value has
the same label in every scene. Rounding each number on its own can break a sum: +0.44 + +0.44 = +0.88 reads
"+0.4 + +0.4 = +0.9", and three thirds read 33.3% + 33.3% + 33.3% = 100.0%. No label is moved away from its value
to make a column add up (the largest-remainder footing this module used to do): where the rounded terms do not add
up to the rounded total, the sum is *approximate*, and the equation is written with ≈ instead of = (`relation`,
`total_text`); its manifest entry says so ("approx": true).

A sum is approximate when any of its rows is (`approx_rows`): columns drawn as one sum (E + ΔE = E′, one sign for
every row) take ≈ if any row misses; a table whose every row shows its own total (a row's input, the neuron's
terms) marks each total that misses (`total_text(row)`).

The true terms must add up to the true total (to well under half a unit of the last shown digit, float32 rounding
aside), or the drawing is not a sum: NotASum. The manifest keeps both, under values["sums"]
(LectureScene.record_sum): the true values and the labels as drawn, and whether the labels add up.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np

from .. import style

APPROX, EQUALS = "\u2248", "="


class NotASum(ValueError):
    """Terms that do not add up to their total (to half a unit of the last shown digit): not a sum to draw."""


def _units(x: float, decimals: int) -> Decimal:
    """x in units of the last shown digit, exactly (a float's own decimal expansion)."""
    return Decimal(float(x)).scaleb(decimals)


def plain(x: float, decimals: int) -> int:
    """x rounded the plain way to the shown decimals, in units of the last digit: what f"{x:.{decimals}f}" shows."""
    return int(_units(x, decimals).to_integral_value(ROUND_HALF_EVEN))


def check_sum(terms, total: float, decimals: int) -> None:
    """NotASum unless the true terms add up to the true total within half a unit of the last shown digit."""
    miss = abs(sum(float(t) for t in terms) - float(total))
    if miss >= 0.5 * 10.0 ** -decimals:
        raise NotASum(f"terms {[float(t) for t in terms]} do not add up to {float(total)} at {decimals} decimals "
                      f"(they miss it by {miss:.3g})")


def units_text(units: int, decimals: int, sign: bool = True) -> str:
    """A number given in units of its last digit, as style.signed writes it (+0.4, −1.1, 0.0) or unsigned."""
    text = f"{Decimal(units).scaleb(-decimals):.{decimals}f}"
    if units == 0:
        return text                                     # 0.0: no sign
    return ("+" + text if sign and units > 0 else text).replace("-", style.MINUS)


def approx_text(text: str, approx: bool) -> str:
    """A total as drawn under a rule (no = before it): "≈ 100.0%" where its terms' labels do not add up to it."""
    return f"{APPROX} {text}" if approx else text


class RoundedSum:
    """Columns drawn as one sum, row by row: terms[0] + terms[1] + ... = total (or ≈ total), every label the plain
    rounding of its value.

    `terms` are arrays of the same length (the rows shown), `total` the model's total for each row. labels[j] are the
    j-th term's labels as drawn, total_labels the total's; units the same in units of the last digit. approx_rows[r]:
    row r's labels do not add up to its total's; approx: any row's do not; relation: the sign to draw, ≈ or =."""

    def __init__(self, terms, total, decimals: int, *, sign: bool = True, unit: float | None = None):
        """`unit`: where the numbers are shown in a unit of their own (e^z / 10^5), that unit; terms and total are
        given in it, and the manifest's entry says it."""
        self.terms = [np.asarray(t, dtype=np.float64).ravel() for t in terms]
        self.total = np.asarray(total, dtype=np.float64).ravel()
        if any(t.shape != self.total.shape for t in self.terms):
            raise ValueError("every term of a sum has the total's rows")
        self.decimals, self.sign, self.unit = decimals, sign, unit
        for r in range(self.total.size):
            check_sum([t[r] for t in self.terms], self.total[r], decimals)
        self.units = [[plain(x, decimals) for x in t] for t in self.terms]
        self.total_units = [plain(x, decimals) for x in self.total]
        self.labels = [[units_text(u, decimals, sign) for u in col] for col in self.units]
        self.total_labels = [units_text(u, decimals, sign) for u in self.total_units]
        self.approx_rows = [sum(col[r] for col in self.units) != self.total_units[r] for r in range(self.total.size)]
        self.approx = any(self.approx_rows)
        self.relation = APPROX if self.approx else EQUALS

    def total_text(self, row: int = 0) -> str:
        """Row `row`'s total as drawn under a rule or in a table's total column: ≈ before it where that row's
        labels do not add up."""
        return approx_text(self.total_labels[row], self.approx_rows[row])

    def record(self, beat: str, what: str) -> dict:
        """The manifest's entry (values["sums"]): the true values, the labels as drawn, whether they add up."""
        return {"beat": beat, "what": what,
                "terms": [{"values": [float(v) for v in t], "labels": labels}
                          for t, labels in zip(self.terms, self.labels)],
                "total": {"values": [float(v) for v in self.total], "labels": self.total_labels},
                "approx": self.approx,
                **({"unit": self.unit} if self.unit is not None else {})}


PERCENT_DECIMALS = 1   # a probability shown as a percentage: one decimal (style.percent)


class RoundedPercents:
    """A column of probabilities drawn as a whole distribution: each a percentage with one decimal, at its plain
    rounding (a probability under 0.05% reads 0.0%, one within 0.05% of 1 reads 100.0%: inside a sum, "<0.1%" could
    not be added), the total the model's own sum of the column (a float32 softmax may miss 1 by 1e-7), shown as
    100.0%. A probability of exactly 0 (a masked key) reads "0%": no rounding made it, and the lecture says it is
    exactly 0. approx: the labels do not add up to 100.0% (three thirds: 33.3% each)."""

    def __init__(self, probabilities, total: float = 1.0):
        self.values = [float(p) for p in np.asarray(probabilities, dtype=np.float64).ravel()]
        self.total = float(total)
        if abs(self.total - 1.0) > style.FLOAT32_SUM:
            raise NotASum(f"a column shown as 100% adds up to {self.total}")
        check_sum(self.values, self.total, PERCENT_DECIMALS + 2)     # a percentage's last digit: 0.001 of 1
        units = [plain(100 * p, PERCENT_DECIMALS) for p in self.values]
        self.labels = ["0%" if v == 0 else units_text(u, PERCENT_DECIMALS, sign=False) + "%"
                       for v, u in zip(self.values, units)]
        total_units = plain(100 * self.total, PERCENT_DECIMALS)
        self.total_label = units_text(total_units, PERCENT_DECIMALS, sign=False) + "%"
        self.approx = sum(units) != total_units
        self.relation = APPROX if self.approx else EQUALS

    def total_text(self) -> str:
        """The total as drawn under a rule or after Σ: ≈ before it where the labels do not add up."""
        return approx_text(self.total_label, self.approx)

    def record(self, beat: str, what: str) -> dict:
        return {"beat": beat, "what": what,
                "terms": [{"values": [v], "labels": [label]} for v, label in zip(self.values, self.labels)],
                "total": {"values": [self.total], "labels": [self.total_label]},
                "approx": self.approx}


def drawn_text(mobject) -> str:
    """The text a drawn relation shows (a Label's or NumberText's text, a MathTex's TeX with \\approx as ≈): what
    LectureScene.record_sum writes into a sum's entry as "drawn"."""
    text = getattr(mobject, "text", None)
    if text is None:
        text = getattr(mobject, "tex_string", None)
    if not isinstance(text, str):
        raise TypeError(f"{type(mobject).__name__} shows no text to record as a sum's relation")
    return text.replace("\\approx", APPROX)


def rounded_columns(vectors, shown: int, decimals: int) -> RoundedSum:
    """Whole vectors drawn as columns of one sum (the last is the total, e.g. E, ΔE, E′), on the entries a
    VectorColumn of `shown` rows shows (its real first entries and its real last one). Each column's labels:
    RoundedSum.labels[j] for the j-th term, .total_labels for the total (column_texts); the sign between the last
    two columns is .relation."""
    from .vectors import shown_indices
    vectors = [np.asarray(v, dtype=np.float64).ravel() for v in vectors]
    rows = [i for i in shown_indices(len(vectors[-1]), shown) if i is not None]
    return RoundedSum([v[rows] for v in vectors[:-1]], vectors[-1][rows], decimals)


def column_texts(rounded: RoundedSum) -> list[list[str]]:
    """Every column's labels in the order drawn: the terms', then the total's."""
    return [*rounded.labels, rounded.total_labels]


class CountSum:
    """Whole numbers drawn as a sum with every digit (a parameter table: its parts and their total). They add up
    exactly, or the table is wrong: NotASum. `labels` are the parts' texts as drawn, `total_label` the total's."""

    def __init__(self, terms, total: int, labels: list[str], total_label: str):
        self.terms, self.total = [int(t) for t in terms], int(total)
        if sum(self.terms) != self.total:
            raise NotASum(f"parts {self.terms} do not add up to {self.total}")
        self.labels, self.total_label = list(labels), total_label
        self.approx, self.relation = False, EQUALS

    def record(self, beat: str, what: str) -> dict:
        return {"beat": beat, "what": what,
                "terms": [{"values": [t], "labels": [label]} for t, label in zip(self.terms, self.labels)],
                "total": {"values": [self.total], "labels": [self.total_label]}, "approx": False}
