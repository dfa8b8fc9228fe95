"""A why beat: our model retrained without one part (the lab, model/lab.py), against the standard model. The
curves of one measure over training (with: solid; each variant: dashed, in its own colour; the seeds' spread as
a band where the record holds more than one seed) and a table of the final figures beside them, one row per
model, each number with the seeds' spread under it (±: every seed within it of the mean) where there is more than one seed.

Every number comes from the caller, read from the lab's record through model.lab.why (the scene computes
nothing); `verdict` is the one rule by which a why beat's conclusion is chosen, over both languages' numbers.

    why = lab.why("no_scale", "attention_entropy")
    chart = WhyChart(why["steps"], [WhyRow("with ÷ √d_k", why["curve_with"], why["band_with"], ["1.18"]), ...],
                     y_max=3, y_step=1, y_label="attention entropy (nats)", x_label="training step",
                     columns=["entropy"], lang="en")
    chart.play_in(scene)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Create, DashedLine, FadeIn, Line, Polygon, VGroup, VMobject)

from .. import style
from ..style import LABEL, MUTED, SMALL, TEXT
from .layout import keep_inside_safe_area
from .text import Label, LayoutError, NumberText

WITH, WITHOUT = "#58C4DD", "#F0AC5F"     # the standard model, the first variant (blue, orange: told apart by
WITHOUT_2 = "#E07A7A"                    # colour-blind viewers too, and by the dash); a second variant: red
ROW_COLOURS = (WITH, WITHOUT, WITHOUT_2)

# the chart's place: the axes on the left, the table on the right, the header above both
AXES_LEFT, AXES_BOTTOM, AXES_WIDTH, AXES_HEIGHT = -5.6, -1.35, 4.6, 3.7
TABLE_LEFT, TABLE_RIGHT, TABLE_TOP, COLUMN_GAP = -0.3, 6.3, 2.85, 0.45
ROW_PITCH, NUMBER_DROP, SPREAD_LINE = 1.1, 0.5, 0.4   # a model's two lines (label, figures), its ranges' line
HEADER_Y = 3.3


@dataclass
class WhyRow:
    """One model: its label, its curve (and the seeds' band at each point), its figures as shown (one per column)
    and each figure's spread text (None: one seed)."""
    label: str
    curve: list
    band: list
    numbers: list
    spreads: list = field(default_factory=list)


def read(variant: str, metric: str) -> dict:
    """One chapter's why from the lab's record (model.lab.why: means over the recorded seeds, their ranges)."""
    from model import lab
    return lab.why(variant, metric)


def per_language(variant: str, stem: str = "val_loss") -> list[dict]:
    """The same measure in each language (e.g. val_loss_en, val_loss_zh), for a rule decided over both."""
    return [read(variant, f"{stem}_{lang}") for lang in style.LANGUAGES]


def recipe() -> dict:
    """The lab's training recipe (the record's: n_layer, n_head, n_embd, steps, ...), to name the model compared."""
    from model import lab
    return dict(lab.load()["recipe"])


def order_word(lang: str) -> str:
    """The word positional_encoding's order test asks about in `lang` (the record's baseline: its prompt's most likely
    next word, as written)."""
    from model import lab
    return lab.load()["variants"]["baseline"]["runs"][0]["final"]["order_test"][lang]["word"]


def facts_total(lang: str) -> int:
    """How many facts the lab asks about in `lang` (the record's baseline: evaluate.facts_known's total)."""
    from model import lab
    return int(lab.load()["variants"]["baseline"]["runs"][0]["final"]["facts_known"][lang]["total"])


def verdict(pairs: list[dict], threshold: float) -> str:
    """"higher", "lower" or "same": the variant's figure against the standard model's, over every pair given (one
    per language, or one for a measure of both languages together). A difference is clear when, in every pair, it
    is at least `threshold` and the seeds' ranges do not overlap, all in the same direction; else "same" (no clear
    difference). A pair: {"with", "without", "range_with", "range_without"} (model.lab.why)."""
    sides = set()
    for p in pairs:
        gap = p["without"] - p["with"]
        apart = p["range_without"][0] > p["range_with"][1] or p["range_without"][1] < p["range_with"][0]
        if abs(gap) < threshold or not apart:
            return "same"
        sides.add("higher" if gap > 0 else "lower")
    return sides.pop() if len(sides) == 1 else "same"


def spread_text(mean: float, lo: float, hi: float, fmt) -> str | None:
    """The seeds' spread as shown under a mean ("±0.004": every seed's figure lies within it of the mean), or None
    where the seeds' figures read alike (one seed) or the spread reads 0 at the figure's precision."""
    spread = fmt(max(hi - mean, mean - lo))
    return None if fmt(lo) == fmt(hi) or spread == fmt(0.0) else "\u00b1" + spread


# below these a difference is no clear difference, whatever the seeds' spread (the caption rules state them)
LOSS_GAP = 0.02       # nats of held-out loss: several times the few thousandths that another seed moves it
ENTROPY_GAP = 0.1     # nats of the attention weights' mean entropy


def entropy_text(v: float) -> str:
    """The attention weights' entropy in nats, as shown: two decimals."""
    return f"{v:.2f}"


def loss_text(v: float) -> str:
    """A loss in nats as the why beats show it: three decimals (the record's figures in docs/model.md)."""
    return f"{v:.3f}"


def count_text(v: float) -> str:
    """A count (facts known), a mean over seeds: whole where it is whole, else one decimal."""
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"


def rows_for(curves: list[dict], labels: list[str], columns: list[tuple[str, list[dict], object]]) -> list[WhyRow]:
    """The chart's rows from model.lab.why's answers: row 0 the standard model ("with" of curves[0]), row i the
    variant of curves[i - 1] ("without"). A column: (its head, one lab.why answer per variant, its formatter); row 0
    reads the column's first answer's "with" (every variant is compared with the same baseline)."""
    if len(labels) != len(curves) + 1:
        raise LayoutError(f"why chart: {len(labels)} labels for {len(curves) + 1} models")
    rows = []
    for i, label in enumerate(labels):
        side, k = ("with", 0) if i == 0 else ("without", i - 1)
        figures = [(c[k][side], c[k][f"range_{side}"], fmt) for _, c, fmt in columns]
        rows.append(WhyRow(label, curves[k][f"curve_{side}"], curves[k][f"band_{side}"],
                           [fmt(v) for v, _, fmt in figures], [spread_text(v, *r, fmt) for v, r, fmt in figures]))
    return rows


def record(why: dict, **more) -> dict:
    """A why beat's manifest entry: the record's figures as model.lab.why gave them, and what the beat drew."""
    keys = ("variant", "metric", "with", "without", "curve_with", "curve_without", "range_with", "range_without",
            "seeds_with", "seeds_without", "steps")
    return {**{k: why[k] for k in keys}, **more}


class WhyChart(VGroup):
    """The curves of one measure over training steps and the table of final figures. Parts: `header`, `axes`
    (lines, ticks, axis titles), `curves` (one per row; the first solid), `bands`, `table` (column heads, then a
    VGroup per row: swatch, label, numbers, spreads)."""

    def __init__(self, steps, rows: list[WhyRow], *, y_max: float, y_step: float, y_label: str, x_label: str,
                 columns: list[str], header: str | None = None, y_decimals: int = 0, y_min: float = 0.0):
        super().__init__()
        if not 2 <= len(rows) <= len(ROW_COLOURS):
            raise LayoutError(f"a why chart compares 2 to {len(ROW_COLOURS)} models, got {len(rows)}")
        self.steps, self.rows, self.y_max = [float(s) for s in steps], rows, float(y_max)
        self.y_min = float(y_min)        # the axis's foot (0 unless a scene zooms in on the data; its label says so)
        if not self.y_min < self.y_max:
            raise LayoutError(f"why chart: the axis runs from {self.y_min:g} to {self.y_max:g}")
        last = max(self.steps)                       # the axis runs to the next round step (2,999 -> 3,000)
        self.x_step = 10 ** math.floor(math.log10(last)) if last >= 1 else 1
        self.x_max = math.ceil(last / self.x_step) * self.x_step
        self.header = VGroup()
        if header:
            self.header = Label(header, font_size=style.HEADER).move_to([0, HEADER_Y, 0])
        self.axes = self.draw_axes(y_step, y_label, x_label, y_decimals)
        self.bands = VGroup(*[self.band(r.band, ROW_COLOURS[i]) for i, r in enumerate(rows)])
        self.curves = VGroup(*[self.curve(r.curve, ROW_COLOURS[i], dashed=i > 0) for i, r in enumerate(rows)])
        self.table = self.draw_table(columns)
        self.add(self.header, self.axes, self.bands, self.curves, self.table)
        keep_inside_safe_area(self.header) if len(self.header) else None

    # --- the axes and the curves ----------------------------------------------------------------------------
    def c2p(self, step: float, value: float) -> np.ndarray:
        return np.array([AXES_LEFT + step / self.x_max * AXES_WIDTH, AXES_BOTTOM + (value - self.y_min) / (self.y_max - self.y_min) * AXES_HEIGHT,
                         0.0])

    def draw_axes(self, y_step: float, y_label: str, x_label: str, y_decimals: int) -> VGroup:
        o = self.c2p(0, self.y_min)
        lines = VGroup(Line(o, self.c2p(self.x_max, self.y_min), stroke_color=MUTED, stroke_width=2),
                       Line(o, self.c2p(0, self.y_max), stroke_color=MUTED, stroke_width=2))
        ticks = VGroup()
        for k in range(int(math.floor((self.y_max - self.y_min) / y_step + 1e-9)) + 1):
            y = self.c2p(0, self.y_min + k * y_step)[1]
            ticks.add(Line([AXES_LEFT, y, 0], [AXES_LEFT - 0.1, y, 0], stroke_color=MUTED, stroke_width=2))
            n = NumberText(f"{self.y_min + k * y_step:.{y_decimals}f}", SMALL, MUTED, align="right").place(AXES_LEFT - 0.18, 0)
            ticks.add(n.shift([0, y - n.get_center()[1], 0]))
        x_step = self.x_step
        for k in range(int(round(self.x_max / x_step)) + 1):
            x = self.c2p(k * x_step, 0)[0]
            ticks.add(Line([x, AXES_BOTTOM, 0], [x, AXES_BOTTOM - 0.1, 0], stroke_color=MUTED, stroke_width=2))
            n = NumberText(f"{k * x_step:,.0f}", SMALL, MUTED, align="left").place(0, AXES_BOTTOM - 0.45)
            ticks.add(n.shift([x - n.get_center()[0], 0, 0]))
        y_title = Label(y_label, font_size=SMALL, color=MUTED)
        y_title.shift(RIGHT * (AXES_LEFT - 0.5 - y_title.get_left()[0])).on_baseline(AXES_BOTTOM + AXES_HEIGHT + 0.3)
        x_title = Label(x_label, font_size=SMALL, color=MUTED)
        x_title.shift(RIGHT * (AXES_LEFT + AXES_WIDTH - x_title.get_right()[0])).on_baseline(AXES_BOTTOM - 0.85)
        return VGroup(lines, ticks, y_title, x_title)

    def clipped(self, values) -> list[np.ndarray]:
        """The curve's points, cut where it leaves the top of the chart (an early loss far above y_max): each
        stretch outside is replaced by the point where the line crosses the top."""
        pts, top = [], self.y_max
        pairs = list(zip(self.steps, [float(v) for v in values]))
        for (s0, v0), (s1, v1) in zip([(None, None)] + pairs[:-1], pairs):
            if s0 is not None and (v0 > top) != (v1 > top):
                pts.append(self.c2p(s0 + (top - v0) / (v1 - v0) * (s1 - s0), top))
            if v1 <= top:
                pts.append(self.c2p(s1, max(v1, self.y_min)))
        return pts

    def curve(self, values, colour, dashed: bool) -> VGroup:
        points = self.clipped(values)
        if dashed:
            return VGroup(*[DashedLine(a, b, stroke_color=colour, stroke_width=4, dash_length=0.09)
                            for a, b in zip(points, points[1:])])
        line = VMobject(stroke_color=colour, stroke_width=4)
        line.set_points_as_corners(points)
        return VGroup(line)

    def band(self, band, colour) -> VGroup:
        """The seeds' spread: a faint area between the lowest and highest curve (none for one seed)."""
        lo, hi = [b[0] for b in band], [b[1] for b in band]
        if np.allclose(lo, hi):
            return VGroup()
        low, high = self.clipped(lo), self.clipped(hi)
        if len(low) < 2 or len(high) < 2:
            return VGroup()
        return VGroup(Polygon(*low, *reversed(high), stroke_width=0, fill_color=colour, fill_opacity=0.25))

    # --- the table --------------------------------------------------------------------------------------------
    def draw_table(self, columns: list[str]) -> VGroup:
        """The column heads, then per model two lines: its swatch and label, and under them its figures (each column
        right-aligned, as wide as its head or its widest figure, COLUMN_GAP apart, the last ending at TABLE_RIGHT),
        each figure's seeds' spread (±) under it where the record holds more than one seed."""
        n = len(columns)
        heads = VGroup(*[Label(c, font_size=SMALL, color=MUTED) for c in columns])
        widths = [max([heads[j].width] + [NumberText(r.numbers[j], LABEL, TEXT).width for r in self.rows]
                      + [NumberText(r.spreads[j], SMALL, MUTED).width for r in self.rows if r.spreads and r.spreads[j]])
                  for j in range(n)]
        rights = [TABLE_RIGHT - sum(widths[j + 1:]) - COLUMN_GAP * (n - 1 - j) for j in range(n)]
        if rights[0] - widths[0] < TABLE_LEFT:
            raise LayoutError(f"why chart: {n} columns need {TABLE_RIGHT - rights[0] + widths[0]:.2f} across, "
                              f"the table has {TABLE_RIGHT - TABLE_LEFT:.2f}")
        for h, x in zip(heads, rights):
            h.shift(RIGHT * (x - h.get_right()[0])).on_baseline(TABLE_TOP)
        table = VGroup(heads)
        spread = any(t for r in self.rows for t in (r.spreads or []))
        pitch = ROW_PITCH + (SPREAD_LINE if spread else 0.0)
        for i, r in enumerate(self.rows):
            y = TABLE_TOP - 0.7 - i * pitch                  # the label's baseline; the figures' NUMBER_DROP below
            colour = ROW_COLOURS[i]
            swatch = (Line if i == 0 else DashedLine)([TABLE_LEFT, y + 0.12, 0], [TABLE_LEFT + 0.5, y + 0.12, 0],
                                                     stroke_color=colour, stroke_width=4,
                                                     **({} if i == 0 else {"dash_length": 0.09}))
            label = Label(r.label, font_size=LABEL, color=colour)
            label.shift(RIGHT * (TABLE_LEFT + 0.65 - label.get_left()[0])).on_baseline(y)
            if label.get_right()[0] > TABLE_RIGHT:
                raise LayoutError(f"why chart: row label {r.label!r} is wider than the table")
            numbers = VGroup(*[NumberText(t, LABEL, TEXT, align="right").place(x, y - NUMBER_DROP)
                               for t, x in zip(r.numbers, rights)])
            spreads = VGroup(*[NumberText(t, SMALL, MUTED, align="right").place(x, y - NUMBER_DROP - SPREAD_LINE)
                               for t, x in zip(r.spreads or [None] * n, rights) if t])
            table.add(VGroup(swatch, label, numbers, spreads))
        return table

    def play_in(self, scene, step: float = style.STEP) -> None:
        """The axes and the table's heads, then each model in turn: its curve (and band) and its row."""
        scene.play(FadeIn(self.header), FadeIn(self.axes), FadeIn(self.table[0]), run_time=step)
        for band, curve, row in zip(self.bands, self.curves, self.table[1:]):
            scene.play(FadeIn(band), Create(curve), FadeIn(row), run_time=step + 0.4)
        scene.wait(style.PAUSE)
