"""The bar chart and the table: rows on baselines, a header, one scale for all the bars, kept inside the title-safe
area; vertical bars on a base line (ColumnBars); a whole as one bar of parts (StackedBar). Build a chart of rows
with these instead of a LabelColumn, a BarColumn and a NumberColumn by hand.

    scale = BarScale.fit(left=-2.1, width=4.6, values=shares)        # the longest bar is 4.6 wide
    chart = BarChart(shares, ys, scale, NEURON_ACTIVE, labels=names, label_right=-2.4,
                     numbers=style.percent, number_right=4.2, header="…", header_at=(0, 3.0))
    self.play(FadeIn(chart.header), FadeIn(chart.labels))
    self.play(*chart.grow(), FadeIn(chart.numbers))

A chart's parts, in drawing order: `header`, `labels` (a LabelColumn), `bars` (a BarColumn: `.tracks`, `.bars`),
`numbers` (a NumberColumn); a part the chart does not have is an empty VGroup, so `header, labels, bars, numbers =
chart` always works.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, GrowFromEdge, Rectangle, VGroup

from .. import style
from ..style import LABEL, MUTED, SMALL, TEXT
from .charts import BarColumn, LabelColumn, NumberColumn, one_each
from .layout import bounds, keep_inside_safe_area
from .text import Label, LayoutError


class BarScale:
    """Where a chart's zero line is (`x0`) and how long one unit of value is (`unit`, scene units per unit)."""

    def __init__(self, x0: float, unit: float):
        if not np.isfinite(unit) or unit <= 0:
            raise ValueError(f"a bar scale needs a positive finite unit, got {unit}")
        self.x0, self.unit = x0, unit

    @classmethod
    def fit(cls, left: float, width: float, values, lo: float | None = None, hi: float | None = None) -> "BarScale":
        """[lo, hi] (by default the values' range, always with 0 in it) spread over `width` from `left`: the zero
        line sits inside it, the longest bar on either side reaches its end."""
        lo = min(np.min(values), 0) if lo is None else lo      # the values' own type (a logit may be float32)
        hi = max(np.max(values), 0) if hi is None else hi
        span = max(hi - lo, 1e-9)
        return cls(left + (-lo) * width / span, width / span)

    @classmethod
    def widest(cls, x0: float, width: float, values) -> "BarScale":
        """The zero line at x0, the widest bar (by its size, whatever its sign) `width` long."""
        return cls(x0, width / max(max(abs(v) for v in values), 1e-9))

    def length(self, value: float) -> float:
        """The drawn length of a bar of this value (its sign says the side)."""
        return float(value) * self.unit


class BarChart(VGroup):
    """Rows of `label | signed bar from the zero line | number`, on given baselines, under an optional header.

    `numbers` is a list of texts or a formatter of each value (e.g. style.percent), right-aligned at `number_right`,
    or, given `number_after` instead, each that far past its own bar's end (left-aligned after a positive bar,
    right-aligned before a negative one); `scale` a BarScale, or None for the widest bar to end `gap` short of the
    numbers (which need `number_right`, the bars `bar_left`). `color` is one colour, or one a bar (a list).
    `clamp` moves the header, then the whole chart, sideways and up or down into the title-safe area if they
    run out of it (a chart that cannot fit there is a LayoutError).
    """

    def __init__(self, values, baselines: Sequence[float], scale: BarScale | None, color, *,
                 labels: Sequence[str] | None = None, label_right: float | None = None, label_colours=None,
                 label_size: float = LABEL,
                 numbers: Sequence[str] | Callable[[float], str] | None = None, number_right: float | None = None,
                 number_colour=TEXT, number_size: float = LABEL, number_after: float | None = None,
                 header: str | None = None, header_at: tuple[float, float] = (0.0, 0.0), header_colour=MUTED,
                 header_size: float = SMALL,
                 bar_left: float | None = None, gap: float = 0.2,
                 bar_height: float = 0.3, track: float | None = None, lift: float = 0.12, opacities=None,
                 clamp: bool = True):
        super().__init__()
        values = list(values)
        if len(values) != len(baselines):
            raise LayoutError(f"a bar chart of {len(values)} values on {len(baselines)} rows")
        self.values = values
        self.header = VGroup()
        if header is not None:
            self.header = Label(header, font_size=header_size, color=header_colour)
            self.header.move_to([header_at[0], header_at[1], 0])
        self.labels = VGroup()
        if labels is not None:
            if label_right is None:
                raise LayoutError("a bar chart's labels need label_right")
            self.labels = LabelColumn(list(labels), list(baselines), label_right, colours=label_colours,
                                      font_size=label_size)
        self.numbers, self.number_after = VGroup(), number_after
        if numbers is not None:
            if (number_right is None) == (number_after is None):
                raise LayoutError("a bar chart's numbers need number_right or number_after")
            texts = [numbers(v) for v in values] if callable(numbers) else list(numbers)
            self.numbers = NumberColumn(texts, list(baselines), 0.0 if number_right is None else number_right,
                                        color=number_colour, font_size=number_size)
        if scale is None and number_after is not None:
            raise LayoutError("a bar chart with its numbers after its bars needs a scale")
        if scale is None:
            if bar_left is None or not len(self.numbers):
                raise LayoutError("a bar chart scaled to its numbers needs bar_left and the numbers")
            room = min(n.get_left()[0] for n in self.numbers) - gap - bar_left
            scale = BarScale.widest(bar_left, room, values)
        self.bar_scale = scale      # not .scale: that is every mobject's scale()
        self.bars = BarColumn(values, list(baselines), scale.x0, scale.unit, color, height=bar_height, track=track,
                              lift=lift, opacities=opacities)
        self.place_numbers_after()
        self.add(self.header, self.labels, self.bars, self.numbers)
        if clamp:
            self.clamp()

    def clamp(self) -> "BarChart":
        """Keep the header, then the whole chart, inside the title-safe area (a move only if it is out)."""
        if len(self.header):
            keep_inside_safe_area(self.header)
        keep_inside(self)
        return self

    def grow(self) -> list:
        """Each bar grows out of the zero line: a positive bar from its left end, a negative one from its right."""
        return [GrowFromEdge(bar, RIGHT if v < 0 else LEFT) for bar, v in zip(self.bars.bars, self.values)]

    def set_values(self, values, numbers: Sequence[str] | Callable[[float], str] | None = None) -> "BarChart":
        """New values on the same scale (a target to Transform into), and their numbers."""
        self.values = list(values)
        self.bars.set_values(self.values)
        if numbers is not None:
            self.numbers.set_texts([numbers(v) for v in self.values] if callable(numbers) else list(numbers))
        return self.place_numbers_after()

    def place_numbers_after(self) -> "BarChart":
        """With `number_after`: each number that far past its bar's end, on the bar's side of the zero line."""
        if self.number_after is None or not len(self.numbers):
            return self
        for n, bar, v in zip(self.numbers, self.bars.bars, self.values):
            align = "right" if v < 0 else "left"
            if n.align != align:
                n.align, text, n.text = align, n.text, ""
                n.set_text(text)                     # laid out again from its anchor, now its other end
            x = bar.get_left()[0] - self.number_after if v < 0 else bar.get_right()[0] + self.number_after
            n.place(x, n.baseline())
        return self


class ColumnBars(VGroup):
    """Vertical bars on one base line, bar i centred at xs[i]: `value × unit` tall (at least `floor`, so a zero still
    shows), standing on the base (or hanging from it: `down`; or, `signed`, up for a positive value and down for a
    negative one, |value| × unit tall). One colour, or one a bar. The bars are the group's submobjects.

    `base` is one y for all, or one a bar (`bases`: bars under a row of chips that wraps onto two lines)."""

    def __init__(self, values, xs: Sequence[float], base: float | Sequence[float], unit: float, colours, *,
                 width: float, opacity: float = 0.9, floor: float = 1e-3, down: bool = False, signed: bool = False):
        super().__init__()
        values = list(values)
        if len(values) != len(xs):
            raise LayoutError(f"{len(values)} bars at {len(xs)} places")
        bases = one_each(base, len(values))
        if len(bases) != len(values):
            raise LayoutError(f"{len(values)} bars on {len(bases)} base lines")
        if not np.isfinite(unit) or unit <= 0:
            raise ValueError(f"column bars need a positive finite unit, got {unit}")
        colours = one_each(colours, len(values))
        self.values, self.base, self.bases, self.unit, self.down, self.signed = values, base, bases, unit, down, signed
        for v, x, y0, colour in zip(values, xs, bases, colours):
            if signed:
                h = max(abs(float(v)) * unit, floor)
                y = y0 + np.sign(v) * h / 2
            else:
                h = max(v * unit, floor)
                y = y0 - h / 2 if down else y0 + h / 2
            self.add(Rectangle(width=width, height=h, stroke_width=0, fill_color=colour, fill_opacity=opacity)
                     .move_to([x, y, 0]))

    def grow(self) -> list:
        """Each bar grows out of the base line."""
        return [GrowFromEdge(bar, UP if (self.down if not self.signed else v < 0) else DOWN)
                for bar, v in zip(self.submobjects, self.values)]

    def numbers_above(self, texts: Sequence[str], colour, font_size: float = SMALL, gap: float = 0.12,
                      align: str = "centre") -> VGroup:
        """Each bar's number over that bar, its baseline `gap` above the bar's top (standing bars): centred on it, or
        `align` "right" (its right end at the bar's right edge, reaching left) or "left" (its left end at the bar's
        left edge): a pair's two numbers then reach away from each other, each still standing on its own bar.
        `colour` is one colour, or one a bar; a text None leaves its bar without a number (the group holds only the
        numbers drawn, in the bars' order)."""
        if align not in ("centre", "left", "right"):
            raise ValueError(f"align: centre, left or right, got {align!r}")
        from .text import NumberText
        if len(texts) != len(self.submobjects):
            raise LayoutError(f"{len(texts)} numbers for {len(self.submobjects)} bars")
        colours = one_each(colour, len(texts))
        out = VGroup()
        for text, bar, c in zip(texts, self.submobjects, colours):
            if text is None:
                continue
            label = NumberText(text, font_size=font_size, color=c, align="left")
            label.place(0, bar.get_top()[1] + gap)
            if align == "centre":
                label.shift(RIGHT * (bar.get_center()[0] - label.get_center()[0]))
            elif align == "right":
                label.shift(RIGHT * (bar.get_right()[0] - label.get_right()[0]))
            else:
                label.shift(RIGHT * (bar.get_left()[0] - label.get_left()[0]))
            out.add(label)
        return out


class StackedBar(VGroup):
    """A whole as one bar `width` long from `left`, centred on y: its parts end to end in order, part i `shares[i] ×
    width` long (at least `floor`, so an empty part still shows). One colour (and opacity) for all or one a part; a
    stroke round each part (in the background colour: neighbours of one colour told apart) if `stroke_width`. The
    parts are the group's submobjects (`bar[i]`); `grow()` each from its left end."""

    def __init__(self, shares, left: float, width: float, y: float, colours, *, height: float, opacities=0.9,
                 stroke_colour=style.BACKGROUND, stroke_width: float = 0.0, floor: float = 1e-3):
        super().__init__()
        shares = list(shares)
        colours = one_each(colours, len(shares))
        opacities = one_each(opacities, len(shares))
        if not len(shares) == len(colours) == len(opacities):
            raise LayoutError(f"a stacked bar of {len(shares)} parts with {len(colours)} colours and {len(opacities)} "
                              f"opacities")
        x = left
        for share, colour, opacity in zip(shares, colours, opacities):
            length = share * width
            self.add(Rectangle(width=max(length, floor), height=height, stroke_color=stroke_colour,
                               stroke_width=stroke_width, fill_color=colour, fill_opacity=opacity)
                     .move_to([x + length / 2, y, 0]))
            x += length

    def grow(self) -> list:
        """Each part grows out of its left end."""
        return [GrowFromEdge(part, LEFT) for part in self.submobjects]


def keep_inside(mobject):
    """Move `mobject`, if it must, sideways and up or down into the title-safe area; a LayoutError if it is larger
    than the area. Returns it."""
    left, bottom, right, top = bounds(mobject)
    x, y = style.safe_half_width(), style.safe_half_height()
    if right - left > 2 * x + 1e-6 or top - bottom > 2 * y + 1e-6:
        raise LayoutError(f"{type(mobject).__name__} is {right - left:.2f} × {top - bottom:.2f}, larger than the "
                          f"title-safe area")
    dx = max(0.0, -x - left) - max(0.0, right - x)
    dy = max(0.0, -y - bottom) - max(0.0, top - y)
    if dx or dy:
        mobject.shift([dx, dy, 0])
    return mobject


class Table(VGroup):
    """Rows of `label | number | number …` with a header over each column: columns right-aligned at given x (or,
    `align="centre"`, centred on them), the label column right-aligned at `label_right`. A label is a text, or a
    mobject (e.g. a row's token chips, in their own colours), right-aligned there and centred `label_lift` above its
    row's baseline.

    `columns` is a list of columns, each a list of texts (one a row), each a NumberText (or, `text_cells`, a Label:
    text shaped whole, e.g. "10²¹" in the font's superscripts); `headers` one text a column (None: no header
    row), each aligned with its column like its cells, on `header_baseline` or centred on `header_centre` (a header
    row of one or two sizes of text). The labels are `label_size` (by default `font_size`, the cells' size).
    `column_colours` is one colour a column, an entry of it one colour for the whole column or a list of one a row.
    Parts: `header` (one Label a column, label column first if `label_header` is given), `labels` (a LabelColumn, or
    a VGroup of the mobjects given), `columns` (a VGroup of NumberColumns, or of LabelColumns with `text_cells`)."""

    def __init__(self, labels: Sequence, columns: Sequence[Sequence[str]], baselines: Sequence[float], *,
                 label_right: float, column_rights: Sequence[float], label_colours=None,
                 column_colours=None, font_size: float = LABEL, headers: Sequence[str] | None = None,
                 header_baseline: float | None = None, header_centre: float | None = None,
                 label_header: str | None = None, header_colours=None,
                 header_size: float = SMALL, label_size: float | None = None, align: str = "right",
                 text_cells: bool = False, label_lift: float = 0.1, clamp: bool = True):
        super().__init__()
        if align not in ("right", "centre"):
            raise ValueError(f"a table's columns are aligned right or centre, got {align!r}")
        if text_cells and align != "right":
            raise LayoutError("a table's text cells are right-aligned")
        if len(columns) != len(column_rights):
            raise LayoutError(f"a table of {len(columns)} columns at {len(column_rights)} places")
        for c in columns:
            if len(c) != len(labels):
                raise LayoutError(f"a table column of {len(c)} entries beside {len(labels)} labels")
        self.header = VGroup()
        if headers is not None:
            if (header_baseline is None) == (header_centre is None) or len(headers) != len(columns):
                raise LayoutError("a table's headers need one text a column and header_baseline or header_centre")
            texts = ([label_header] if label_header is not None else []) + list(headers)
            rights = ([label_right] if label_header is not None else []) + list(column_rights)
            colours = header_colours or [MUTED] * len(texts)
            for i, (text, x, colour) in enumerate(zip(texts, rights, colours)):
                head = Label(text, font_size=header_size, color=colour)
                centred = align == "centre" and (label_header is None or i > 0)     # the label header: right
                x = x if centred else x - head.width / 2
                if header_centre is not None:
                    self.header.add(head.move_to([x, header_centre, 0]))
                else:
                    self.header.add(head.shift(RIGHT * (x - head.get_center()[0])).on_baseline(header_baseline))
        if all(isinstance(label, str) for label in labels):
            self.labels = LabelColumn(list(labels), list(baselines), label_right, colours=label_colours,
                                      font_size=font_size if label_size is None else label_size)
        elif any(isinstance(label, str) for label in labels):
            raise LayoutError("a table's labels are all texts or all mobjects")
        else:
            self.labels = VGroup(*[m.shift([label_right - m.get_right()[0], y + label_lift - m.get_center()[1], 0])
                                   for m, y in zip(labels, baselines)])
        colours = [column_colours[i] if column_colours else TEXT for i in range(len(columns))]
        if any(isinstance(c, (list, tuple)) and len(c) != len(labels) for c in colours):
            raise LayoutError(f"a table column's colours are one for it or one a row ({len(labels)} rows)")
        if text_cells:
            self.columns = VGroup(*[LabelColumn(list(c), list(baselines), x, colours=one_each(colour, len(c)),
                                                font_size=font_size)
                                    for c, x, colour in zip(columns, column_rights, colours)])
        else:
            self.columns = VGroup(*[NumberColumn(list(c), list(baselines), x, color=colour, font_size=font_size,
                                                 align=align)
                                    for c, x, colour in zip(columns, column_rights, colours)])
        self.add(self.header, self.labels, self.columns)
        if clamp:
            keep_inside(self)

    def row(self, i: int) -> VGroup:
        """Row i's label and numbers (e.g. to frame it)."""
        return VGroup(self.labels[i], *[c[i] for c in self.columns])
