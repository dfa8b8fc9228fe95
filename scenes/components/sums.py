"""Sums that add up as shown: the one rule for every column, table or caption that draws terms and their total.

Rounding each number on its own breaks sums: +0.44 + +0.44 = +0.88 reads "+0.4 + +0.4 = +0.9", and a softmax
column of three thirds reads 33.3% + 33.3% + 33.3% = 100.0%. A financial statement or a polling table "foots"
instead: every shown number stays within one unit of its last digit of the true value, and the shown terms add
exactly to the shown total. This module foots the lecture's sums the same way:

1. every number is rounded to the shown decimals as usual (the total keeps its plain rounding: it is the number the
   next step uses, and it may be drawn again elsewhere);
2. where the rounded terms miss the rounded total by D units of the last digit, the |D| terms nearest a rounding
   boundary in the direction of the miss move one unit each (the largest-remainder method of apportionment,
   applied to signed terms). A term that moves was within half a unit and ends within one unit of its true value;
   no term moves twice, and a term whose remainder points away from the miss never moves (it would end more than
   a unit away). Ties go to the later term. A term that the scene quotes elsewhere at its plain rounding (the weight
   a caption names, ΔE drawn in the beat before) is kept and moves only if no other term can.

|D| is at most about (n + 1) / 2 for n terms, and there are always enough terms leaning the right way while the
true terms add to the true total (to float precision). When they do not, the sum is not a sum: FootingError.

The manifest keeps both, under values["sums"] (LectureScene.record_sum): the true values and the labels as drawn.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal

import numpy as np

from .. import style


class FootingError(ValueError):
    """Terms that cannot be shown adding up to their total within one unit each (they do not add up at all)."""


def _units(x: float, decimals: int) -> Decimal:
    """x in units of the last shown digit, exactly (a float's own decimal expansion)."""
    return Decimal(float(x)).scaleb(decimals)


def _rounded(x: float, decimals: int) -> int:
    """x rounded to the shown decimals, in units of the last digit (the plain rounding of a label)."""
    return int(_units(x, decimals).to_integral_value(ROUND_HALF_EVEN))


def foot(terms, total: float, decimals: int, keep=(), most=None) -> list[int]:
    """The shown terms, in units of 10**-decimals, that add up exactly to the rounded total (see the module). Terms
    whose index is in `keep` are quoted elsewhere at their plain rounding (a weight a caption names): they move
    only when the others cannot close the gap. `most`: a largest shown value per term (units), where one is wanted
    (a probability under 1 never reads 100.0%); it is let go where the sum cannot foot within it."""
    exact = [_units(t, decimals) for t in terms]
    target = _rounded(total, decimals)
    # each term reads its floor or its ceiling: within one unit of its value
    options = [sorted({int(u.to_integral_value(ROUND_FLOOR)), int(u.to_integral_value(ROUND_CEILING))})
               for u in exact]
    if most is not None:
        bounded = [[x for x in o if x <= m] or o for o, m in zip(options, most)]
        try:
            return _foot(exact, target, bounded, keep, terms, total, decimals)
        except FootingError:
            pass
    return _foot(exact, target, options, keep, terms, total, decimals)


def _foot(exact, target, options, keep, terms, total, decimals) -> list[int]:
    rounded = [int(u.to_integral_value(ROUND_HALF_EVEN)) for u in exact]
    shown = [r if r in o else min(o, key=lambda x: abs(x - u)) for r, o, u in zip(rounded, options, exact)]
    miss = target - sum(shown)
    if miss:
        step = 1 if miss > 0 else -1
        # how far each term leans toward the miss: its remainder, in the direction the sum must move
        movable = sorted(((i not in keep, float(u - x) * step, i) for i, (u, x, o) in enumerate(zip(exact, shown, options))
                          if x + step in o), reverse=True)
        if len(movable) < abs(miss):
            raise FootingError(f"terms {[float(t) for t in terms]} do not add up to {float(total)} at {decimals} "
                               "decimals")
        for _, _, i in movable[:abs(miss)]:
            shown[i] += step
    return shown


def units_text(units: int, decimals: int, sign: bool = True) -> str:
    """A number given in units of its last digit, as style.signed writes it (+0.4, −1.1, 0.0) or unsigned."""
    text = f"{Decimal(units).scaleb(-decimals):.{decimals}f}"
    if units == 0:
        return text                                     # 0.0: no sign
    return ("+" + text if sign and units > 0 else text).replace("-", style.MINUS)


class FootedSum:
    """Columns drawn as one sum, row by row: terms[0] + terms[1] + ... = total, every row footed.

    `terms` are arrays of the same length (the rows shown), `total` the model's total for each row. labels[j] are the
    j-th term's labels as drawn, total_labels the total's; units the same in units of the last digit."""

    def __init__(self, terms, total, decimals: int, *, sign: bool = True, keep=(), unit: float | None = None):
        """`unit`: where the numbers are shown in a unit of their own (e^z / 10^5), that unit; terms and total are
        given in it, and the manifest's entry says it."""
        self.terms = [np.asarray(t, dtype=np.float64).ravel() for t in terms]
        self.total = np.asarray(total, dtype=np.float64).ravel()
        if any(t.shape != self.total.shape for t in self.terms):
            raise ValueError("every term of a sum has the total's rows")
        self.decimals, self.sign, self.unit = decimals, sign, unit
        rows = [foot([t[r] for t in self.terms], self.total[r], decimals, keep) for r in range(self.total.size)]
        self.units = [[row[j] for row in rows] for j in range(len(self.terms))]
        self.total_units = [_rounded(x, decimals) for x in self.total]
        self.labels = [[units_text(u, decimals, sign) for u in col] for col in self.units]
        self.total_labels = [units_text(u, decimals, sign) for u in self.total_units]

    def record(self, beat: str, what: str) -> dict:
        """The manifest's entry (values["sums"]): the true values and the labels as drawn."""
        return {"beat": beat, "what": what,
                "terms": [{"values": [float(v) for v in t], "labels": labels}
                          for t, labels in zip(self.terms, self.labels)],
                "total": {"values": [float(v) for v in self.total], "labels": self.total_labels},
                **({"unit": self.unit} if self.unit is not None else {})}


PERCENT_DECIMALS = 1   # a probability shown as a percentage: one decimal (style.percent)


class FootedPercents:
    """A column of probabilities drawn as adding up to 100%: each a percentage with one decimal, footed to exactly
    100.0%. Every label is a plain number (a probability under 0.05% reads 0.0%; one under 1 reads 99.9% at most where
    the column still foots, as style.percent's ">99.9%"): inside a sum, "<0.1%" could not be added. A probability of exactly 0 (a masked key) reads "0%". `total` is the model's own sum of the column (a float32 softmax may miss
    1 by 1e-7); it is shown as 100.0%."""

    def __init__(self, probabilities, total: float = 1.0, keep=()):
        self.values = [float(p) for p in np.asarray(probabilities, dtype=np.float64).ravel()]
        self.total = float(total)
        if abs(self.total - 1.0) > style.FLOAT32_SUM:
            raise FootingError(f"a column shown as 100% adds up to {self.total}")
        # the terms foot to the shown total, 100.0%, which is the rounding of the model's sum
        # a probability under 1 (by more than a float32 sum misses it) never reads 100.0%: it reads 99.9%, as
        # style.percent's ">99.9%" says, wherever the column can still foot
        most = [1000 if p >= 1 - style.FLOAT32_SUM else 999 for p in self.values]
        units = foot([100 * p for p in self.values], 100.0, PERCENT_DECIMALS, keep, most)
        # a weight of exactly 0 (a masked key) reads "0%": no rounding made it, and the lecture says it is exactly 0
        self.labels = ["0%" if v == 0 else units_text(u, PERCENT_DECIMALS, sign=False) + "%"
                       for v, u in zip(self.values, units)]
        self.total_label = units_text(1000, PERCENT_DECIMALS, sign=False) + "%"

    def record(self, beat: str, what: str) -> dict:
        return {"beat": beat, "what": what,
                "terms": [{"values": [v], "labels": [label]} for v, label in zip(self.values, self.labels)],
                "total": {"values": [self.total], "labels": [self.total_label]}}


def footed_columns(vectors, shown: int, decimals: int, keep=()) -> FootedSum:
    """Whole vectors drawn as columns of one sum (the last is the total, e.g. E, ΔE, E′), footed on the entries a
    VectorColumn of `shown` rows shows (its real first entries and its real last one). Each column's labels:
    FootedSum.labels[j] for the j-th term, .total_labels for the total; pass them as VectorColumn(texts=...)."""
    from .vectors import shown_indices
    vectors = [np.asarray(v, dtype=np.float64).ravel() for v in vectors]
    rows = [i for i in shown_indices(len(vectors[-1]), shown) if i is not None]
    return FootedSum([v[rows] for v in vectors[:-1]], vectors[-1][rows], decimals, keep=keep)


def column_texts(footed: FootedSum) -> list[list[str]]:
    """Every column's labels in the order drawn: the terms', then the total's."""
    return [*footed.labels, footed.total_labels]


class CountSum:
    """Whole numbers drawn as a sum with every digit (a parameter table: its parts and their total). They add up
    exactly, or the table is wrong: FootingError. `labels` are the parts' texts as drawn, `total_label` the total's."""

    def __init__(self, terms, total: int, labels: list[str], total_label: str):
        self.terms, self.total = [int(t) for t in terms], int(total)
        if sum(self.terms) != self.total:
            raise FootingError(f"parts {self.terms} do not add up to {self.total}")
        self.labels, self.total_label = list(labels), total_label

    def record(self, beat: str, what: str) -> dict:
        return {"beat": beat, "what": what,
                "terms": [{"values": [t], "labels": [label]} for t, label in zip(self.terms, self.labels)],
                "total": {"values": [self.total], "labels": [self.total_label]}}
