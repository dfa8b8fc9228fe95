"""Charts: rows of words, numbers and bars, probability bars, and the colour scales and their legends."""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, RIGHT, GrowFromEdge, ManimColor, Rectangle, VGroup

from .. import style
from ..style import LABEL, MUTED, SHARED, SMALL, TEXT
from .text import Label, LayoutError, NumberText


def one_each(value, n: int) -> list:
    """A chart's setting given once for all its n items or as one an item (a list or tuple): as one an item."""
    return list(value) if isinstance(value, (list, tuple)) else [value] * n


class LabelColumn(VGroup):
    """Words right-aligned at x, one per row baseline."""

    def __init__(self, words: list[str], baselines: list[float], x: float, colours=None,
                 font_size: float = LABEL, max_width: float | None = None):
        super().__init__()
        for i, (w, y) in enumerate(zip(words, baselines)):
            label = Label(w, font_size=font_size, color=(colours[i] if colours else TEXT))
            if max_width and label.width > max_width:
                raise LayoutError(f"label {w!r} is wider than its column")
            label.shift(RIGHT * (x - label.get_right()[0])).on_baseline(y)
            self.add(label)


class NumberColumn(VGroup):
    """Numbers right-aligned at x (or `align` "left" or "centre"), one per row baseline, in one colour or one a row
    (a list); set_texts updates them in place."""

    def __init__(self, texts: list[str], baselines: list[float], x: float, color=TEXT,
                 font_size: float = LABEL, align: str = "right"):
        colours = one_each(color, len(texts))
        if len(colours) != len(texts):
            raise LayoutError(f"{len(colours)} colours for {len(texts)} numbers")
        super().__init__(*[NumberText(t, font_size, c, align).place(x, y)
                           for t, y, c in zip(texts, baselines, colours)])

    def set_texts(self, texts: list[str]) -> "NumberColumn":
        for n, t in zip(self.submobjects, texts):
            n.set_text(t)
        return self


class BarColumn(VGroup):
    """Horizontal bars from a zero line at x0, length = value × unit, one per row; one colour, or one a bar (a list).

    `track` draws a faint full-length background (e.g. 100 % for probabilities).
    """

    def __init__(self, values, baselines: list[float], x0: float, unit: float, color, *, height: float = 0.3,
                 track: float | None = None, lift: float = 0.12, opacities=None):
        super().__init__()
        self.x0, self.unit, self.bar_height, self.color_ = x0, unit, height, color
        self.centres = [y + lift for y in baselines]
        colours = one_each(color, len(self.centres))
        if len(colours) != len(self.centres):
            raise LayoutError(f"{len(colours)} colours for {len(self.centres)} bars")
        self.tracks = VGroup()
        if track:
            for y, colour in zip(self.centres, colours):
                self.tracks.add(Rectangle(width=track * unit, height=height, stroke_width=0, fill_color=colour,
                                          fill_opacity=0.12).move_to([x0 + track * unit / 2, y, 0]))
        self.bars = VGroup(*[Rectangle(width=1, height=height, stroke_width=0, fill_color=colours[i],
                                       fill_opacity=(opacities[i] if opacities else 0.9))
                             for i, y in enumerate(self.centres)])
        self.add(self.tracks, self.bars)
        self.set_values(values)

    def set_values(self, values) -> "BarColumn":
        for bar, v, y in zip(self.bars, values, self.centres):
            length = max(abs(float(v)) * self.unit, 1e-4)
            bar.stretch_to_fit_width(length)
            bar.move_to([self.x0 + np.sign(v) * length / 2, y, 0])
        return self


class ProbabilityBars(VGroup):
    """Sorted top-k probabilities plus "other" (the true total of the rest), as yellow bars.

    Token labels on the left (optional: a table may share one label column), the
    percentage on the right of a 100 % track.
    """

    def __init__(self, words: list[str], probs, other: float, baselines: list[float], *, lang: str,
                 bar_left: float, bar_width: float, number_right: float, label_right: float | None = None,
                 color=style.PROB):
        super().__init__()
        self.labels = VGroup()
        if label_right is not None:
            self.labels = LabelColumn(words + [SHARED("other", lang)], baselines, label_right,
                                      colours=[TEXT] * len(words) + [MUTED])
        values = list(probs) + [other]
        self.bars = BarColumn(values, baselines, bar_left, bar_width, color, track=1.0,
                              opacities=[0.9] * len(words) + [0.45])
        self.rounded = self.percents(values)
        self.numbers = NumberColumn(self.rounded.labels, baselines, number_right, color=color)
        self.add(self.labels, self.bars, self.numbers)

    @classmethod
    def next_words(cls, run: dict, word: str, baselines: list[float], *, lang: str, **layout) -> "ProbabilityBars":
        """A next-word panel from an analysis record (model.analysis.heads.next_word_rows: its "shown" rows, the top
        words then the followed word if it is not among them, and "other", their true rest), the followed word's row
        framed and quoted by captions. `word_row` is that row, `rows` and `other_p` the record's."""
        rows = run["shown"]
        row = next(i for i, r in enumerate(rows) if r["word"] == word)
        bars = cls([style.token_label(r["word"]) for r in rows], [r["p"] for r in rows], run["other"], baselines,
                   lang=lang, **layout)
        bars.word_row, bars.rows, bars.other_p = row, rows, run["other"]
        return bars

    def percents(self, values):
        """The column is a whole distribution (the top words and "other"): each percentage at its plain rounding, the
        total 100.0% (components.sums.RoundedPercents: approx where the labels do not add up to it)."""
        from .sums import RoundedPercents
        return RoundedPercents(values, total=float(sum(values)))

    def grow(self) -> list:
        """Each bar grows out of 0% (its left end)."""
        return [GrowFromEdge(bar, LEFT) for bar in self.bars.bars]

    def set_probabilities(self, probs, other: float) -> "ProbabilityBars":
        values = list(probs) + [other]
        self.bars.set_values(values)
        self.rounded = self.percents(values)
        self.numbers.set_texts(self.rounded.labels)
        return self


class ColourScale:
    """One fixed mapping from numbers to cell colours, shared by a matrix or grid and its legend.

    kind "signed":    blue (+) / red (−), brighter with |v| up to `limit` (the visual language's weight scale,
                      also used for raw and scaled attention scores);
    kind "attention": an attention weight, 0 black -> 1 white, no hue; its legend reads 0% to 100%;
    kind "magnitude": an activation (an entry of a vector: E, q, k, v, a head's output) by its size |v|,
                      grey -> white up to `limit`, no hue: never black, so it does not read as a weight;
    kind "share":     a restored share of the answer (causal tracing), 0 black -> 1 gold, clipped; legend 0 to 1.
    −∞ (a masked cell) is always dark red, whatever the scale.
    """

    KINDS = ("signed", "attention", "magnitude", "share")

    def __init__(self, kind: str, limit: float = 1.0):
        if kind not in self.KINDS:
            raise ValueError(f"a colour scale is one of {', '.join(self.KINDS)}, got {kind!r}")
        if not np.isfinite(limit) or limit <= 0:
            raise ValueError(f"a colour scale needs a positive finite limit, got {limit}")
        self.kind, self.limit = kind, float(limit)

    @classmethod
    def signed_for(cls, values) -> "ColourScale":
        """The scale of one matrix or grid: ± its largest finite magnitude."""
        v = np.asarray(values, dtype=np.float64)
        finite = v[np.isfinite(v)]
        return cls("signed", float(np.abs(finite).max()) if finite.size and np.abs(finite).max() > 0 else 1.0)

    @classmethod
    def magnitude_for(cls, *arrays) -> "ColourScale":
        """One activation scale for vectors compared side by side: their largest |entry|, rounded up to one
        decimal (a display choice, so the legend reads cleanly; the cells still use the exact values)."""
        largest = max(float(np.abs(np.asarray(a, dtype=np.float64)).max()) for a in arrays)
        return cls("magnitude", max(np.ceil(largest * 10) / 10, 0.1))

    def colour(self, value: float):
        if np.isneginf(value):
            return ManimColor(style.MASKED)
        if self.kind == "signed":
            return style.weight_colour(float(value), self.limit)
        if self.kind == "magnitude":
            return style.magnitude_colour(abs(float(value)), self.limit)
        if self.kind == "share":
            return style.share_colour(float(value) / self.limit)
        return style.attention_colour(float(value) / self.limit)

    def ends(self, decimals: int | None = None) -> list[str]:
        """The legend's tick labels, left to right (by default one decimal below 10, none above)."""
        if decimals is None:
            decimals = 1 if self.limit < 10 else 0
        if self.kind == "signed":
            return [style.signed(-self.limit, decimals), "0", style.signed(self.limit, decimals)]
        if self.kind == "attention":
            return ["0%", style.percent(self.limit).replace(".0%", "%")]
        if self.kind == "share":
            return ["0", f"{self.limit:g}"]
        return ["0", f"{self.limit:g}"]


class MaskCell(VGroup):
    """A masked (future) cell: a dark red square, with "−∞" written in it on its first appearance."""

    def __init__(self, size: float, label: bool = True, font_size: float = SMALL):
        super().__init__()
        self.square = Rectangle(width=size, height=size, stroke_color=style.CELL_OUTLINE, stroke_width=1,
                                fill_color=style.MASKED, fill_opacity=1)
        self.add(self.square)
        self.label = None
        if label:
            self.label = Label(style.MASK_TEXT, font_size=font_size).move_to(self.square)
            self.add(self.label)


class ColourLegend(VGroup):
    """A small horizontal colour bar: its title above, its end values (and 0) below; optionally the masked swatch,
    beside "−∞" (before the softmax) or `mask_text` (after it: "masked: exactly 0").

    The ticks are the scale's real limits (rounded only in the label): record scale.limit in the manifest.
    """

    STEPS = 32

    def __init__(self, scale: ColourScale, title: str, *, width: float = 2.4, height: float = 0.22,
                 decimals: int | None = None, masked: bool = False, inline: bool = False,
                 font_size: float = SMALL, mask_text: str = style.MASK_TEXT):
        super().__init__()
        self.colour_scale = scale
        lo = -scale.limit if scale.kind == "signed" else 0.0
        texts = scale.ends(decimals)
        widths = [NumberText(s, font_size).width for s in texts]
        gap = 0.2              # between tick labels: a crowded centre 0 is left out (the colour shows it), and
        if len(texts) == 3 and widths[1] + 2 * max(widths[0], widths[2]) + 2 * gap > width:
            texts, widths = [texts[0], texts[2]], [widths[0], widths[2]]
        width = max(width, sum(widths) + gap)     # the bar grows if even its two ends would run together
        step = width / self.STEPS
        self.bar = VGroup(*[Rectangle(width=step * 1.02, height=height, stroke_width=0, fill_opacity=1,
                                      fill_color=scale.colour(lo + (i + 0.5) / self.STEPS * (scale.limit - lo)))
                            .move_to([(i + 0.5) * step, 0, 0]) for i in range(self.STEPS)])
        self.frame = Rectangle(width=width, height=height, stroke_color=style.CELL_OUTLINE, stroke_width=1) \
            .move_to(self.bar)
        self.title = Label(title, font_size=font_size, color=MUTED)
        if inline:   # one line lower: the title left of the bar
            self.title.shift(RIGHT * (-0.2 - self.title.get_right()[0])).on_baseline(-height / 2)
        else:
            self.title.shift(RIGHT * (0 - self.title.get_left()[0])).on_baseline(height / 2 + 0.14)
        baseline = -height / 2 - 0.36
        xs = [0.0, width / 2, width][: len(texts)] if len(texts) == 3 else [0.0, width]
        aligns = ["left", "centre", "right"] if len(texts) == 3 else ["left", "right"]
        self.ticks = VGroup()
        for text, x, align in zip(texts, xs, aligns):
            n = NumberText(text, font_size, MUTED, align="right" if align == "right" else "left").place(x, baseline)
            if align == "centre":
                n.shift(RIGHT * (x - n.get_center()[0]))
            self.ticks.add(n)
        self.add(self.title, self.bar, self.frame, self.ticks)
        self.mask_entry = VGroup()
        if masked:
            swatch = MaskCell(height * 1.6, label=False)
            swatch.next_to(self.ticks, DOWN, buff=0.22).align_to(self.bar, LEFT)
            text = Label(mask_text, font_size=font_size).next_to(swatch, RIGHT, buff=0.15)
            self.mask_entry = VGroup(swatch, text)
            self.add(self.mask_entry)
