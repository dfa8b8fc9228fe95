"""Mobjects every scene shares, so a token, a vector or a probability bar looks the same everywhere.

Numbers shown here are always given at full precision and rounded only by the
label formatters in style.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from manim import (DOWN, LEFT, ORIGIN, RIGHT, UP, DashedVMobject, Line, Rectangle, RoundedRectangle, Text,
                   VectorizedPoint, VGroup, VMobject)

from . import style
from .style import FONT, LABEL, MUTED, SHARED, SMALL, TEXT


class LayoutError(RuntimeError):
    """Something would not fit legibly in the title-safe area."""


def light(mobject):
    """Drop the parsed SVG path each glyph keeps after building its points: copies (every Fade and
    Transform makes some) then cost a fraction of the time. Nothing reads it after construction."""
    for m in mobject.get_family():
        m.__dict__.pop("path_obj", None)
    return mobject


def plain_shape(glyph: VMobject, color=None) -> VMobject:
    """A bare copy of a glyph's outline: no SVG baggage, so copies and transforms stay cheap."""
    shape = VMobject(fill_color=color if color is not None else glyph.get_fill_color(), fill_opacity=1,
                     stroke_width=0)
    shape.points = glyph.points.copy()
    return shape


# --- text that sits on a baseline --------------------------------------------------
class Label(VGroup):
    """A single-line text whose baseline is known, so words of a row line up like type.

    Pango renders "H" + text; the H (which never forms a ligature) marks the baseline
    and is then dropped.
    """

    def __init__(self, text: str, font_size: float = LABEL, color=TEXT, weight: str = "NORMAL"):
        if not text.strip():
            raise ValueError("a Label needs visible text")
        outlines, baseline = _label_outlines(text, font_size, weight)
        shapes = []
        for points in outlines:
            shape = VMobject(fill_color=color, fill_opacity=1, stroke_width=0)
            shape.points = points.copy()
            shapes.append(shape)
        super().__init__(*shapes)
        self.text, self.font_size = text, font_size
        self._descent_ratio = (baseline - self.get_bottom()[1]) / max(self.height, 1e-9)

    def baseline(self) -> float:
        return self.get_bottom()[1] + self._descent_ratio * self.height

    def on_baseline(self, y: float) -> "Label":
        return self.shift((y - self.baseline()) * UP)


@lru_cache(maxsize=None)
def _label_outlines(text: str, font_size: float, weight: str) -> tuple[tuple[np.ndarray, ...], float]:
    """Pango's glyph outlines for "H" + text (the H dropped) and the H's baseline; shaped once per text and size."""
    ref = Text("H" + text, font=FONT, font_size=font_size, weight=weight)
    return tuple(g.points.copy() for g in ref.submobjects[1:]), float(ref[0].get_bottom()[1])


@dataclass(frozen=True)
class _Glyph:
    shape: VMobject | None    # None for a space
    advance: float
    dx: float                 # left edge of the shape, from the pen position
    dy: float                 # bottom of the shape, from the baseline

    @property
    def points(self) -> np.ndarray:
        """The outline with the pen at the origin on the baseline."""
        return self.shape.points - np.array([self.shape.get_left()[0] - self.dx, self.shape.get_bottom()[1] - self.dy, 0])


@lru_cache(maxsize=None)
def _glyph(char: str, font_size: float) -> _Glyph:
    """Measure one character between two zeros, once per size; digits get one common (tabular) advance."""
    zero_advance = _zero_advance(font_size)
    if char == " ":
        spaced = Text("0 0", font=FONT, font_size=font_size)
        return _Glyph(None, spaced[1].get_left()[0] - spaced[0].get_left()[0] - zero_advance, 0.0, 0.0)
    t = Text("0" + char + "0", font=FONT, font_size=font_size)
    if len(t) != 3:
        raise ValueError(f"cannot measure {char!r} as a single glyph")
    start = t[0].get_left()[0] + zero_advance
    shape = plain_shape(t[1])
    advance = t[2].get_left()[0] - start
    dx, dy = shape.get_left()[0] - start, shape.get_bottom()[1] - t[0].get_bottom()[1]
    if char.isdigit():
        cell = max(_glyph_width(d, font_size) for d in "0123456789") * 1.12
        return _Glyph(shape, cell, (cell - shape.width) / 2, dy)
    return _Glyph(shape, advance, dx, dy)


@lru_cache(maxsize=None)
def _zero_advance(font_size: float) -> float:
    zeros = Text("00", font=FONT, font_size=font_size)
    return zeros[1].get_left()[0] - zeros[0].get_left()[0]


@lru_cache(maxsize=None)
def _glyph_width(digit: str, font_size: float) -> float:
    return Text(digit, font=FONT, font_size=font_size)[0].width


class NumberText(VGroup):
    """A number (or any short string of symbols) that can change every frame, cheaply.

    Glyphs are measured once and copied, digits are tabular, and the text stays
    anchored at its right (or left) end on its baseline while it changes.
    """

    def __init__(self, text: str, font_size: float = LABEL, color=TEXT, align: str = "right"):
        super().__init__()
        self.font_size, self.color_, self.align = font_size, color, align
        self.anchor = VectorizedPoint(ORIGIN)  # (x, baseline) of the aligned end
        self._pool: list[VMobject] = []        # glyph shapes, reused from frame to frame
        self.text = ""
        self.set_text(text)

    def anchor_point(self) -> np.ndarray:
        return self.anchor.get_location().copy()

    def set_text(self, text: str) -> "NumberText":
        if text == self.text and self.submobjects:
            return self
        x, y = self.anchor_point()[:2]
        previous = [m for m in self.submobjects if m is not self.anchor]
        opacity = max((m.get_fill_opacity() for m in previous), default=1.0)
        glyphs, pens, pen = [], [], 0.0
        for char in text:
            g = _glyph(char, self.font_size)
            if g.shape is not None:
                glyphs.append(g)
                pens.append(pen)
            pen += g.advance
        offset = x - pen if self.align == "right" else x
        while len(self._pool) < len(glyphs):
            self._pool.append(VMobject(fill_color=self.color_, fill_opacity=1, stroke_width=0))
        shapes = self._pool[:len(glyphs)]
        for s, g, p in zip(shapes, glyphs, pens):
            s.points = g.points + np.array([p + offset, y, 0])
            s.set_fill(self.color_, opacity=opacity)
        self.submobjects = [self.anchor, *shapes]
        self.text = text
        return self

    def place(self, x: float, baseline: float) -> "NumberText":
        self.shift(np.array([x, baseline, 0]) - self.anchor_point())
        return self

    def baseline(self) -> float:
        return self.anchor_point()[1]


class Caption(VGroup):
    """Narration, centred line by line. Lines are broken by the author ("\\n"), never squeezed.

    Lines sit on fixed baselines, so a one-line and a two-line caption, in English or
    Chinese, end on the same line at the bottom of the title-safe area.
    """

    LEADING = 1.45   # baseline to baseline, in em

    def __init__(self, text: str, lang: str, font_size: float = style.CAPTION, bottom: float | None = None):
        super().__init__()
        self.text, self.font_size = text, font_size
        lines = [Label(line, font_size=font_size) for line in text.split("\n")]
        em = font_size * style.EM_PX_PER_FONT_SIZE / 60  # scene units per em (60 px per unit at 480p)
        last = (-style.safe_half_height() + 0.3 * em) if bottom is None else bottom
        for i, line in enumerate(lines):
            line.move_to(ORIGIN, coor_mask=np.array([1, 0, 0]))
            line.on_baseline(last + (len(lines) - 1 - i) * self.LEADING * em)
            if line.width > 2 * style.safe_half_width():
                raise LayoutError(f"caption line too wide for the title-safe area ({lang}): {line.text!r}")
        self.add(*lines)


def caption(text: str, lang: str, y: float | None = None, font_size: float = style.CAPTION) -> Caption:
    """A caption at the bottom of the frame, or centred on y."""
    c = Caption(text, lang, font_size)
    if y is not None:
        c.move_to([0, y, 0])
    return c


# --- tokens --------------------------------------------------------------------------
class TokenRow(VGroup):
    """The prompt as a row of words in softly filled rounded boxes, position indices underneath.

    If the row would be wider than max_width, the earliest tokens give way to a "⋯" box;
    the remaining tokens keep their true position indices.
    """

    PAD_X, GAP, CHIP_H = 0.16, 0.14, 0.62

    def __init__(self, tokens: list[str], *, lang: str = "en", next_slot: bool = False, indices: bool = True,
                 max_width: float | None = None, font_size: float = LABEL):
        super().__init__()
        max_width = max_width or 2 * style.safe_half_width()
        self.words = list(tokens)
        chips = [self._chip(w, style.token_colour(i), font_size) for i, w in enumerate(tokens)]
        slot = self._slot(font_size) if next_slot else None
        first = 0
        while True:
            shown = chips[first:] + ([slot] if slot else [])
            lead = [self._chip("\u22ef", style.MUTED, font_size)] if first else []
            width = sum(c.width for c in lead + shown) + self.GAP * (len(lead + shown) - 1)
            if width <= max_width or first == len(chips) - 1:
                break
            first += 1
        if width > max_width:
            raise LayoutError("even one token does not fit in the token row")
        self.first_shown = first
        self.chips = VGroup(*chips[first:])
        self.ellipsis = VGroup(*lead)
        self.slot = slot
        row = VGroup(*lead, *self.chips, *([slot] if slot else [])).arrange(RIGHT, buff=self.GAP)
        self.add(row)
        self.indices = VGroup()
        if indices:
            positions = list(range(first, len(tokens))) + ([len(tokens)] if slot else [])
            for box, pos in zip([*self.chips, *([slot] if slot else [])], positions):
                self.indices.add(NumberText(str(pos), font_size=SMALL, color=style.POSITION, align="left")
                                 .next_to(box, DOWN, buff=0.1))
            self.add(self.indices)

    def slot_filled(self, word: str, colour=None) -> VGroup:
        """A chip for the word that fills the "?" slot, in the slot's place."""
        chip = self._chip(word, colour or style.token_colour(len(self.words)), self.slot.label.font_size)
        return chip.shift(self.slot.box.get_left() - chip.box.get_left())

    def _chip(self, word: str, colour, font_size) -> VGroup:
        label = Label(word, font_size=font_size)
        box = RoundedRectangle(corner_radius=0.1, width=label.width + 2 * self.PAD_X, height=self.CHIP_H,
                               stroke_color=colour, stroke_width=2, fill_color=colour, fill_opacity=0.22)
        label.move_to(box, coor_mask=np.array([1, 0, 0])).on_baseline(box.get_bottom()[1] + 0.2)
        chip = VGroup(box, label)
        chip.box, chip.label = box, label
        return chip

    def _slot(self, font_size) -> VGroup:
        box = DashedVMobject(RoundedRectangle(corner_radius=0.1, width=0.7, height=self.CHIP_H,
                                              stroke_color=TEXT, stroke_width=2), num_dashes=24)
        mark = Label("?", font_size=font_size)
        mark.move_to(box, coor_mask=np.array([1, 0, 0])).on_baseline(box.get_bottom()[1] + 0.2)
        slot = VGroup(box, mark)
        slot.box, slot.label = box, mark
        return slot


# --- rows of bars --------------------------------------------------------------------
def row_positions(n: int, top: float, pitch: float) -> list[float]:
    """Baselines of n table rows, top to bottom."""
    return [top - i * pitch for i in range(n)]


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
    """Numbers right-aligned at x, one per row baseline; set_texts updates them in place."""

    def __init__(self, texts: list[str], baselines: list[float], x: float, color=TEXT,
                 font_size: float = LABEL, align: str = "right"):
        super().__init__(*[NumberText(t, font_size, color, align).place(x, y) for t, y in zip(texts, baselines)])

    def set_texts(self, texts: list[str]) -> "NumberColumn":
        for n, t in zip(self.submobjects, texts):
            n.set_text(t)
        return self


class BarColumn(VGroup):
    """Horizontal bars from a zero line at x0, length = value × unit, one per row.

    `track` draws a faint full-length background (e.g. 100 % for probabilities).
    """

    def __init__(self, values, baselines: list[float], x0: float, unit: float, color, *, height: float = 0.3,
                 track: float | None = None, lift: float = 0.12, opacities=None):
        super().__init__()
        self.x0, self.unit, self.bar_height, self.color_ = x0, unit, height, color
        self.centres = [y + lift for y in baselines]
        self.tracks = VGroup()
        if track:
            for y in self.centres:
                self.tracks.add(Rectangle(width=track * unit, height=height, stroke_width=0, fill_color=color,
                                          fill_opacity=0.12).move_to([x0 + track * unit / 2, y, 0]))
        self.bars = VGroup(*[Rectangle(width=1, height=height, stroke_width=0, fill_color=color,
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
        self.numbers = NumberColumn([style.percent(v) for v in values], baselines, number_right, color=color)
        self.add(self.labels, self.bars, self.numbers)

    def set_probabilities(self, probs, other: float) -> "ProbabilityBars":
        values = list(probs) + [other]
        self.bars.set_values(values)
        self.numbers.set_texts([style.percent(v) for v in values])
        return self


# --- vectors and matrices --------------------------------------------------------------
def _bracket(height: float, side: int) -> VMobject:
    w = 0.12
    pts = [[side * w, height / 2, 0], [0, height / 2, 0], [0, -height / 2, 0], [side * w, -height / 2, 0]]
    return VMobject(stroke_color=TEXT, stroke_width=2).set_points_as_corners(pts)


def shown_indices(n: int, shown: int) -> list[int | None]:
    """The honest ellipsis: the first shown-1 entries, a gap (None), then the real last entry."""
    if n <= shown:
        return list(range(n))
    return list(range(shown - 1)) + [None, n - 1]


class VectorColumn(VGroup):
    """A vector as a bracketed column: its real first entries, ⋮, its real last entry, and its true size."""

    def __init__(self, values, *, lang: str, shown: int = 7, pitch: float = 0.5, decimals: int = 1,
                 label: str | None = None, font_size: float = LABEL):
        super().__init__()
        values = np.asarray(values, dtype=np.float64).ravel()
        self.values, self.indices_shown = values, shown_indices(len(values), shown)
        scale = float(np.abs(values).max()) if values.size else 0.0
        self.entries = VGroup()
        for row, i in enumerate(self.indices_shown):
            y = -row * pitch
            if i is None:
                self.entries.add(Label("\u22ee", font_size=font_size, color=MUTED).move_to([-0.4, y + 0.14, 0]))
            else:
                n = NumberText(style.signed(values[i], decimals), font_size,
                               style.activation_colour(values[i], scale)).place(0, y)
                self.entries.add(n)
        height = self.entries.height + 0.3
        self.brackets = VGroup(_bracket(height, 1).next_to(self.entries, LEFT, buff=0.12),
                               _bracket(height, -1).next_to(self.entries, RIGHT, buff=0.12))
        self.add(self.entries, self.brackets)
        text = label if label is not None else SHARED("n_numbers", lang, n=len(values))
        self.size_label = Label(text, font_size=SMALL, color=MUTED).next_to(self, DOWN, buff=0.18)
        self.add(self.size_label)


class MatrixGrid(VGroup):
    """A matrix as a grid of weight-coloured cells: real corner rows and columns, ⋯ and ⋮, and its true shape."""

    def __init__(self, matrix, *, name: str, rows: int = 5, cols: int = 5, cell: float = 0.95,
                 decimals: int = 1, numbers: bool = True, font_size: float = LABEL):
        super().__init__()
        M = np.asarray(matrix, dtype=np.float64)
        if M.ndim != 2:
            raise ValueError("MatrixGrid needs a 2-D array")
        self.matrix = M
        self.rows_shown, self.cols_shown = shown_indices(M.shape[0], rows), shown_indices(M.shape[1], cols)
        scale = float(np.abs(M).max()) if M.size else 0.0
        self.colour_scale = ColourScale("signed", scale) if scale > 0 else None  # the one fixed scale of this matrix
        self.cells = VGroup()
        h = cell * 0.62
        for r, i in enumerate(self.rows_shown):
            for c, j in enumerate(self.cols_shown):
                centre = np.array([c * cell, -r * h, 0])
                if i is None or j is None:
                    mark = "\u22f1" if i is None and j is None else ("\u22ee" if i is None else "\u22ef")
                    self.cells.add(Label(mark, font_size=font_size, color=MUTED).move_to(centre))
                    continue
                square = Rectangle(width=cell * 0.94, height=h * 0.9, stroke_width=0,
                                   fill_color=style.weight_colour(M[i, j], scale), fill_opacity=1).move_to(centre)
                group = VGroup(square)
                if numbers:
                    group.add(NumberText(style.signed(M[i, j], decimals), font_size, TEXT, align="left")
                              .place(0, 0).move_to(centre))
                self.cells.add(group)
        self.add(self.cells)
        shape = f"{name}: {M.shape[0]} \u00d7 {M.shape[1]}"
        self.shape_label = Label(shape, font_size=SMALL, color=MUTED).next_to(self.cells, DOWN, buff=0.2)
        self.add(self.shape_label)


def inside_safe_area(mobject) -> bool:
    """True if the mobject's bounding box lies within the title-safe area."""
    x, y = style.safe_half_width() + 1e-6, style.safe_half_height() + 1e-6
    return (mobject.get_left()[0] >= -x and mobject.get_right()[0] <= x
            and mobject.get_bottom()[1] >= -y and mobject.get_top()[1] <= y)


def rule(x_from: float, x_to: float, y: float, color=MUTED) -> Line:
    """A thin horizontal line, e.g. above a column's sum."""
    return Line([x_from, y, 0], [x_to, y, 0], stroke_color=color, stroke_width=2)


# --- colour scale and legend (attention chapter) ------------------------------------------
from manim import (Animation, Create, FadeOut, ManimColor, SurroundingRectangle, Transform,  # noqa: E402
                   UpdateFromAlphaFunc)

from .style import ATTENTION as ATTENTION_STRINGS  # noqa: E402

class ColourScale:
    """One fixed mapping from numbers to cell colours, shared by a matrix or grid and its legend.

    kind "signed": blue (+) / red (−), brighter with |v| up to `limit` (the visual language's weight scale,
                   also used for raw and scaled attention scores);
    kind "weight": an attention weight, 0 dark -> `limit` (normally 1) white, no hue.
    −∞ (a masked cell) is always dark red, whatever the scale.
    """

    def __init__(self, kind: str, limit: float = 1.0):
        if kind not in ("signed", "weight"):
            raise ValueError(f"a colour scale is 'signed' or 'weight', got {kind!r}")
        if not np.isfinite(limit) or limit <= 0:
            raise ValueError(f"a colour scale needs a positive finite limit, got {limit}")
        self.kind, self.limit = kind, float(limit)

    @classmethod
    def signed_for(cls, values) -> "ColourScale":
        """The scale of one matrix or grid: ± its largest finite magnitude."""
        v = np.asarray(values, dtype=np.float64)
        finite = v[np.isfinite(v)]
        return cls("signed", float(np.abs(finite).max()) if finite.size and np.abs(finite).max() > 0 else 1.0)

    def colour(self, value: float):
        if np.isneginf(value):
            return ManimColor(style.MASKED)
        if self.kind == "signed":
            return style.weight_colour(float(value), self.limit)
        return style.attention_colour(float(value) / self.limit)

    def ends(self, decimals: int | None = None) -> list[str]:
        """The legend's tick labels, left to right (by default one decimal below 10, none above)."""
        if decimals is None:
            decimals = 1 if self.limit < 10 else 0
        if self.kind == "signed":
            return [style.signed(-self.limit, decimals), "0", style.signed(self.limit, decimals)]
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
    """A small horizontal colour bar: its title above, its end values (and 0) below; optionally the −∞ swatch.

    The ticks are the scale's real limits (rounded only in the label): record scale.limit in the manifest.
    """

    STEPS = 32

    def __init__(self, scale: ColourScale, title: str, *, width: float = 2.4, height: float = 0.22,
                 decimals: int | None = None, masked: bool = False, inline: bool = False,
                 font_size: float = SMALL):
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
            text = Label(style.MASK_TEXT, font_size=font_size).next_to(swatch, RIGHT, buff=0.15)
            self.mask_entry = VGroup(swatch, text)
            self.add(self.mask_entry)


# --- attention grid (attention chapter) --------------------------------------------------------
class AttentionGrid(VGroup):
    """An attention pattern as heatmap squares: KEYS DOWN THE LEFT (rows), QUERIES ACROSS THE TOP (columns).

    The same orientation in every scene of the lecture: column q is query q's line (softmax normalises
    it, so a weights column sums to 1), row k is key k; the causal mask darkens the lower-left triangle
    (key after query). `values` come in the trace's orientation [query, key]; −∞ cells are dark red.
    The axis titles say which axis is which; key rows are labelled with their word and position, query
    columns with their position (teal). Numbers go inside cells only through cell_numbers(), which
    refuses texts that would not fit at the legibility floor.
    """

    MAX_CELL = 0.46        # scene units
    LABEL_PITCH = 0.42     # the closest row/column label pitch that stays legible at 480p; closer rows share labels

    def __init__(self, values, scale: ColourScale, *, tokens: list[str], lang: str, height: float = 5.52,
                 font_size: float = SMALL):
        super().__init__()
        V = np.asarray(values, dtype=np.float64)
        T = len(tokens)
        if V.shape != (T, T):
            raise ValueError(f"an attention grid needs a {T} x {T} array, got {V.shape}")
        self.tokens, self.lang, self.values, self.colour_scale, self.font_size = list(tokens), lang, V, scale, font_size
        self.cell = cell = min(self.MAX_CELL, height / T)
        self._squares = [[None] * T for _ in range(T)]
        self.squares = VGroup()
        for q in range(T):
            for k in range(T):
                sq = Rectangle(width=cell * 0.92, height=cell * 0.92, stroke_color=style.CELL_OUTLINE, stroke_width=1,
                               fill_color=scale.colour(V[q, k]), fill_opacity=1).move_to([q * cell, -k * cell, 0])
                self._squares[q][k] = sq
                self.squares.add(sq)
        self.add(self.squares)
        stride = max(1, int(np.ceil(self.LABEL_PITCH / cell - 1e-9)))
        self.labelled = list(range(0, T, stride))
        self.key_words, self.key_indices, self.query_indices = VGroup(), VGroup(), VGroup()
        left = -cell / 2 - 0.1
        for k in self.labelled:
            idx = NumberText(str(k), font_size, style.POSITION).place(left, self._digit_baseline(self.row_y(k)))
            word = Label(style.token_label(tokens[k]), font_size=font_size)
            word.shift(RIGHT * (idx.get_left()[0] - 0.15 - word.get_right()[0])).on_baseline(idx.baseline())
            self.key_indices.add(idx)
            self.key_words.add(word)
        top = cell / 2 + 0.12
        kept = []                    # right to left: a two-digit index too close to the one after it is left out
        for q in reversed(self.labelled):
            n = NumberText(str(q), font_size, style.POSITION, align="left").place(0, top)
            n.shift(RIGHT * (self.column_x(q) - n.get_center()[0]))
            if not kept or n.get_right()[0] + 0.15 <= kept[-1].get_left()[0]:
                kept.append(n)
        self.query_indices.add(*reversed(kept))
        self.query_title = Label(ATTENTION_STRINGS("queries_axis", lang), font_size=font_size, color=style.QUERY)
        self.query_title.shift(RIGHT * (left - self.query_title.get_right()[0])).on_baseline(top)
        self.key_title = Label(ATTENTION_STRINGS("keys_axis", lang), font_size=font_size, color=style.KEY)
        self.key_title.shift(RIGHT * (self.query_title.get_left()[0] - 0.3 - self.key_title.get_right()[0]))
        self.key_title.on_baseline(top)
        self.axes = VGroup(self.key_words, self.key_indices, self.query_indices, self.query_title, self.key_title)
        self.add(self.axes)

    # geometry (follows the grid when it moves)
    def cell_square(self, q: int, k: int) -> Rectangle:
        return self._squares[q][k]

    def line(self, q: int) -> VGroup:
        """Query q's line: its column, one cell per key."""
        return VGroup(*self._squares[q])

    def key_row(self, k: int) -> VGroup:
        return VGroup(*[self._squares[q][k] for q in range(len(self.tokens))])

    def column_x(self, q: int) -> float:
        return float(self._squares[q][0].get_center()[0])

    def row_y(self, k: int) -> float:
        return float(self._squares[0][k].get_center()[1])

    def _digit_baseline(self, y: float) -> float:
        return y - 0.5 * _glyph("0", self.font_size).shape.height

    def row_baseline(self, k: int) -> float:
        """Where a number beside row k sits, so it reads level with the row's label."""
        return self._digit_baseline(self.row_y(k))

    def line_frame(self, q: int, color=style.QUERY) -> Rectangle:
        """A frame around query q's line."""
        col = self.line(q)
        return Rectangle(width=self.cell + 0.04, height=col.height + 0.1, stroke_color=color, stroke_width=3) \
            .move_to(col)

    # colours
    def set_values(self, values, scale: ColourScale | None = None) -> "AttentionGrid":
        """Recolour in place (e.g. after the mask or the softmax); values in the trace's [query, key] order."""
        self.values = np.asarray(values, dtype=np.float64)
        self.colour_scale = scale or self.colour_scale
        for q, column in enumerate(self._squares):
            for k, sq in enumerate(column):
                sq.set_fill(self.colour_scale.colour(self.values[q, k]), opacity=1)
        return self

    def recolour(self, values, scale: ColourScale | None = None, queries=None) -> list:
        """Animations that recolour the grid (only the given queries' lines, if given) to new values."""
        values = np.asarray(values, dtype=np.float64)
        scale = scale or self.colour_scale
        chosen = range(len(self.tokens)) if queries is None else queries
        anims = []
        for q in chosen:
            for k, sq in enumerate(self._squares[q]):
                anims.append(sq.animate.set_fill(scale.colour(values[q, k]), opacity=1))
        self.values = self.values.copy()
        for q in chosen:
            self.values[q] = values[q]
        self.colour_scale = scale
        return anims

    # marks and numbers
    def mask_marks(self) -> VGroup:
        """"−∞" on the masked cells' first appearance: in every masked cell if it fits, else one mark in the
        middle of the masked triangle."""
        masked = [(q, k) for q in range(len(self.tokens)) for k in range(len(self.tokens))
                  if np.isneginf(self.values[q, k])]
        if not masked:
            return VGroup()
        probe = Label(style.MASK_TEXT, font_size=self.font_size)
        if probe.width <= self.cell * 0.85:
            return VGroup(*[Label(style.MASK_TEXT, font_size=self.font_size).move_to(self._squares[q][k])
                            for q, k in masked])
        centre = np.mean([self._squares[q][k].get_center() for q, k in masked], axis=0)
        q, k = min(masked, key=lambda c: np.linalg.norm(self._squares[c[0]][c[1]].get_center() - centre))
        return VGroup(probe.move_to(self._squares[q][k]))

    def numbers_fit(self, texts) -> bool:
        """True if these texts (a T × T list in [query, key] order) can sit inside the cells legibly."""
        widest = max(NumberText(t, self.font_size).width for row in texts for t in row if t)
        return widest <= self.cell * 0.88

    def cell_numbers(self, texts) -> VGroup:
        """Numbers inside the cells ([query][key] texts; empty text = none); LayoutError if they cannot be read."""
        if not self.numbers_fit(texts):
            raise LayoutError("numbers do not fit inside the attention grid's cells at the legibility floor")
        group = VGroup()
        for q, row in enumerate(texts):
            for k, t in enumerate(row):
                if t:
                    n = NumberText(t, self.font_size, align="left").place(0, 0)
                    group.add(n.move_to(self._squares[q][k]))
        return group


# --- matrix × vector (attention chapter) -------------------------------------------------------
class MatrixVectorProduct(VGroup):
    """out = M · x (+ b), drawn the one way every matrix product of the lecture is drawn.

    The matrix shows its real corner entries with ⋯ and ⋮ and its true shape; the input vector shows exactly
    the entries of the matrix's shown columns (same honest ellipsis), and output entry r sits level with
    matrix row r. `output` must be the model's own result (a trace value); nothing is multiplied here.
    Run it with play(scene): a row of M, the vector (and the bias entry) light up and the output entry
    counts up to its real value, row after row: the first rows slowly, the rest quickly.
    """

    def __init__(self, matrix, vector, output, *, lang: str, name: str, bias=None, rows: int = 6, cols: int = 6,
                 colour=TEXT, vector_label: str | None = None, output_label: str | None = None,
                 bias_label: str | None = None, cell: float = 0.9, decimals: int = 1, legend_title: str | None = None):
        super().__init__()
        M = np.asarray(matrix, dtype=np.float64)
        x, out = np.asarray(vector, np.float64).ravel(), np.asarray(output, np.float64).ravel()
        if M.shape != (out.size, x.size):
            raise ValueError(f"a {M.shape} matrix cannot map {x.size} numbers to {out.size}")
        self.colour, self.decimals = colour, decimals
        self.matrix = MatrixGrid(M, name=name, rows=rows, cols=cols, cell=cell, font_size=SMALL)
        pitch = cell * 0.62
        self.vector = VectorColumn(x, lang=lang, shown=cols, pitch=0.5, label=vector_label)
        self.output = VectorColumn(out, lang=lang, shown=rows, pitch=pitch, label=output_label)
        self.output.brackets.set_color(colour)
        self.output.size_label.set_color(colour)
        self.bias = None
        if bias is not None:
            self.bias = VectorColumn(np.asarray(bias, np.float64).ravel(), lang=lang, shown=rows, pitch=pitch,
                                     label=bias_label)
        self.plus = Label("+", font_size=style.HEADER) if self.bias is not None else None
        self.equals = Label("=", font_size=style.HEADER)
        parts = [self.matrix, self.vector] + ([self.plus, self.bias] if self.bias is not None else []) \
            + [self.equals, self.output]
        def body(m):  # size labels may hang wider than their column: space the columns by their bodies
            return VGroup(m.entries, m.brackets) if isinstance(m, VectorColumn) else \
                m.cells if isinstance(m, MatrixGrid) else m

        for prev, nxt in zip(parts, parts[1:]):
            nxt.shift(RIGHT * (body(prev).get_right()[0] + 0.22 - body(nxt).get_left()[0]))
        top_row = self._row_cells(0)
        for column in [c for c in (self.output, self.bias) if c is not None]:
            first = column.entries[0]
            column.shift(UP * (top_row.get_center()[1] - first.get_center()[1]))
        matrix_mid = self.matrix.cells.get_center()[1]
        self.vector.shift(UP * (matrix_mid - self.vector.entries.get_center()[1]))
        for sym in [s for s in (self.plus, self.equals) if s is not None]:
            sym.shift(UP * (matrix_mid - sym.get_center()[1]))
        self.add(*parts)
        self._stagger_labels()
        for entry in self.output.entries:
            entry.set_opacity(0)
        self.legend = ColourLegend(self.matrix.colour_scale, legend_title, width=2.4, inline=True) \
            if legend_title else None

    def bodies(self) -> VGroup:
        """The product without its hanging size labels: centre on this, so every language lays out alike."""
        parts = [self.matrix.cells, VGroup(self.vector.entries, self.vector.brackets), self.equals,
                 VGroup(self.output.entries, self.output.brackets)]
        if self.bias is not None:
            parts += [self.plus, VGroup(self.bias.entries, self.bias.brackets)]
        return VGroup(*parts)

    def _stagger_labels(self, gap: float = 0.25, drop: float = 0.42) -> None:
        """Size labels hang wider than their columns: a label that would touch its left neighbour drops a line."""
        labels = [self.matrix.shape_label, self.vector.size_label] + \
            ([self.bias.size_label] if self.bias is not None else []) + [self.output.size_label]
        for prev, label in zip(labels, labels[1:]):
            same_line = abs(prev.get_center()[1] - label.get_center()[1]) < 0.2
            if same_line and label.get_left()[0] < prev.get_right()[0] + gap:
                label.shift(DOWN * drop)

    def _row_cells(self, slot: int) -> VGroup:
        per_row = len(self.matrix.cols_shown)
        return VGroup(*self.matrix.cells[slot * per_row:(slot + 1) * per_row])

    def highlight(self, slot: int) -> VGroup:
        """Frames around matrix row `slot`, the input vector, the bias entry and the output entry."""
        frames = [SurroundingRectangle(self._row_cells(slot), color=self.colour, buff=0.05),
                  SurroundingRectangle(self.vector.entries, color=self.colour, buff=0.08)]
        if self.bias is not None:
            frames.append(SurroundingRectangle(self.bias.entries[slot], color=self.colour, buff=0.06))
        frames.append(SurroundingRectangle(self.output.entries[slot], color=self.colour, buff=0.06))
        return VGroup(*frames)

    def count_up(self, slot: int, run_time: float = 1.0) -> Animation:
        """Output entry `slot` counts from 0 to its real value (rounded only in the label)."""
        entry, value = self.output.entries[slot], float(self.output.values[self.output.indices_shown[slot]])
        decimals = self.decimals

        def update(m, alpha):
            m.set_text(style.signed(alpha * value, decimals))
            m.set_fill(opacity=1)

        return UpdateFromAlphaFunc(entry, update, run_time=run_time)

    def play(self, scene, *, slow_rows: int = 2, slow: float = 1.2, fast: float = 0.45) -> None:
        """The whole product on `scene`: row by row, the first `slow_rows` slowly; then the ⋮ appears."""
        slots = [s for s, i in enumerate(self.output.indices_shown) if i is not None]
        frame = None
        for n, slot in enumerate(slots):
            run = slow if n < slow_rows else fast
            target = self.highlight(slot)
            if frame is None:
                frame = target
                scene.play(Create(frame), run_time=0.6 * run)
            else:
                scene.play(Transform(frame, target), run_time=0.4 * run)
            scene.play(self.count_up(slot, run), run_time=run)
        gaps = [self.output.entries[s] for s, i in enumerate(self.output.indices_shown) if i is None]
        scene.play(FadeOut(frame), *[g.animate.set_opacity(1) for g in gaps], run_time=0.6)

    def finish(self) -> "MatrixVectorProduct":
        """Show every output entry at its final value at once (e.g. when a beat is skipped to)."""
        for slot, i in enumerate(self.output.indices_shown):
            entry = self.output.entries[slot]
            if i is not None:
                entry.set_text(style.signed(float(self.output.values[i]), self.decimals))
            entry.set_opacity(1)
        return self


# --- heatmap (attention chapter) ----------------------------------------------------------------
class Heatmap(VGroup):
    """A whole matrix as cells: EVERY entry is one cell coloured by one fixed ColourScale, nothing elided.

    For tables too large for numbers (W_E: 64 × 123, the position table: 64 × 32). Colours are the
    scale's colours at LEVELS steps per sign (the value is rounded only for its colour, like a label);
    cells of one colour are drawn as one shape, so thousands of cells stay cheap to render and animate.
    Rows go down, columns across, in the order given; use column_frame / row_frame / cell_centre to
    point at entries, and pair it with a ColourLegend of the same scale.
    """

    LEVELS = 48

    def __init__(self, values, scale: "ColourScale", *, width: float, height: float):
        super().__init__()
        V = np.asarray(values, dtype=np.float64)
        if V.ndim != 2 or not V.size:
            raise ValueError("a Heatmap needs a non-empty 2-D array")
        self.values, self.colour_scale = V, scale
        self.n_rows, self.n_cols = V.shape
        self._width, self._height = width, height
        with np.errstate(invalid="ignore"):
            levels = np.clip(np.round(V / scale.limit * self.LEVELS), -self.LEVELS, self.LEVELS)
        self.levels = np.where(np.isneginf(V), -np.inf, levels)        # what each cell's colour shows
        cw, ch = width / self.n_cols, height / self.n_rows
        grow = 0.01 * min(cw, ch)                                      # no seams between neighbouring cells
        self.box = Rectangle(width=width, height=height, stroke_width=0, fill_opacity=0)
        self.add(self.box)
        for level in np.unique(self.levels):
            rows, cols = np.nonzero(self.levels == level)
            x0, x1 = -width / 2 + cols * cw - grow, -width / 2 + (cols + 1) * cw + grow
            y1, y0 = height / 2 - rows * ch + grow, height / 2 - (rows + 1) * ch - grow
            corners = np.stack([np.stack([x0, y1]), np.stack([x1, y1]), np.stack([x1, y0]), np.stack([x0, y0]),
                                np.stack([x0, y1])], axis=0).transpose(2, 0, 1)      # (cells, 5, 2)
            a, b = corners[:, :-1], corners[:, 1:]                                     # 4 straight edges each
            curves = np.stack([a, a + (b - a) / 3, a + 2 * (b - a) / 3, b], axis=2)   # (cells, 4, 4, 2)
            points = np.zeros((curves.shape[0] * 16, 3))
            points[:, :2] = curves.reshape(-1, 2)
            value = -np.inf if np.isneginf(level) else level / self.LEVELS * scale.limit
            shape = VMobject(fill_color=scale.colour(value), fill_opacity=1, stroke_width=0)
            shape.points = points
            self.add(shape)

    def shown_colour(self, i: int, j: int):
        """The colour cell (i, j) is drawn in."""
        level = self.levels[i, j]
        return self.colour_scale.colour(-np.inf if np.isneginf(level) else level / self.LEVELS * self.colour_scale.limit)

    @property
    def cell_width(self) -> float:
        return self.box.width / self.n_cols

    @property
    def cell_height(self) -> float:
        return self.box.height / self.n_rows

    def column_x(self, j: int) -> float:
        return self.box.get_left()[0] + (j + 0.5) * self.cell_width

    def row_y(self, i: int) -> float:
        return self.box.get_top()[1] - (i + 0.5) * self.cell_height

    def cell_centre(self, i: int, j: int) -> np.ndarray:
        return np.array([self.column_x(j), self.row_y(i), 0.0])

    def column_frame(self, j: int, color=TEXT, stroke_width: float = 2) -> Rectangle:
        """An outline around column j (all rows)."""
        return self.columns_frame(j, j, color, stroke_width)

    def columns_frame(self, first: int, last: int, color=TEXT, stroke_width: float = 2) -> Rectangle:
        """An outline around columns first..last (inclusive)."""
        width = (last - first + 1) * self.cell_width
        x = (self.column_x(first) + self.column_x(last)) / 2
        return Rectangle(width=width, height=self.box.height, stroke_color=color,
                         stroke_width=stroke_width).move_to([x, self.box.get_center()[1], 0])

    def row_frame(self, i: int, color=TEXT, stroke_width: float = 2) -> Rectangle:
        return Rectangle(width=self.box.width, height=self.cell_height, stroke_color=color,
                         stroke_width=stroke_width).move_to([self.box.get_center()[0], self.row_y(i), 0])


class CompactTokenRow(TokenRow):
    """A TokenRow with tight chips at the legibility floor, so a whole story prompt fits on one line
    (a longer prompt still gives way to "⋯" like TokenRow). Chip centres are where a token's vector goes."""

    PAD_X, GAP = 0.07, 0.07

    def __init__(self, tokens: list[str], **kwargs):
        kwargs.setdefault("font_size", SMALL)
        super().__init__(tokens, **kwargs)

    def centre_x(self, position: int) -> float:
        """The x of the chip for a token position (it must be shown)."""
        return self.chips[position - self.first_shown].get_center()[0]


# --- token column and magnitude strip (attention chapter) ---------------------------------------
class TokenColumn(VGroup):
    """Tokens stacked down the left like an attention grid's key rows: chips of one width, positions (teal)
    beside them, one row per baseline-free centre y. Keys run down, as in AttentionGrid."""

    CHIP_H, PAD_X = 0.36, 0.1

    def __init__(self, tokens: list[str], positions: list[int], centres: list[float], *, right: float,
                 font_size: float = SMALL):
        super().__init__()
        if not (len(tokens) == len(positions) == len(centres)):
            raise ValueError("a token column needs one position and one centre per token")
        labels = [Label(style.token_label(w), font_size=font_size) for w in tokens]
        width = max(label.width for label in labels) + 2 * self.PAD_X
        self.positions = list(positions)
        self.chips, self.indices = VGroup(), VGroup()
        for label, pos, y in zip(labels, positions, centres):
            colour = style.token_colour(pos)
            box = RoundedRectangle(corner_radius=0.08, width=width, height=self.CHIP_H, stroke_color=colour,
                                   stroke_width=2, fill_color=colour, fill_opacity=0.22).move_to([right - width / 2, y, 0])
            label.move_to(box, coor_mask=np.array([1, 0, 0]))
            label.on_baseline(y - 0.5 * _glyph("0", font_size).shape.height)
            chip = VGroup(box, label)
            chip.box, chip.label = box, label
            self.chips.add(chip)
            self.indices.add(NumberText(str(pos), font_size, style.POSITION).place(box.get_left()[0] - 0.1,
                                                                                    label.baseline()))
        self.add(self.indices, self.chips)

    def chip(self, position: int) -> VGroup:
        return self.chips[self.positions.index(position)]


class MagnitudeStrip(VGroup):
    """A vector as one row of cells, every entry shown (nothing elided): dark -> white by |entry| on one fixed
    ColourScale("weight", limit) shared by every strip it is compared with (and its ColourLegend)."""

    def __init__(self, values, scale: ColourScale, *, width: float, height: float = 0.3):
        super().__init__()
        self.values, self.colour_scale = np.asarray(values, dtype=np.float64).ravel(), scale
        step = width / self.values.size
        self.cells = VGroup(*[Rectangle(width=step * 0.9, height=height, stroke_color=style.CELL_OUTLINE,
                                        stroke_width=1, fill_color=scale.colour(abs(v)), fill_opacity=1)
                              .move_to([(i + 0.5) * step, 0, 0]) for i, v in enumerate(self.values)])
        self.add(self.cells)

    def recolour(self, values) -> list:
        """Animations to new values on the same scale."""
        self.values = np.asarray(values, dtype=np.float64).ravel()
        return [c.animate.set_fill(self.colour_scale.colour(abs(v)), opacity=1) for c, v in zip(self.cells, self.values)]


def magnitude_scale(*arrays) -> ColourScale:
    """One magnitude scale for vectors compared side by side: their largest |entry|, rounded up to one decimal
    (a display choice, so the legend reads cleanly; the cells still use the exact values)."""
    largest = max(float(np.abs(np.asarray(a, dtype=np.float64)).max()) for a in arrays)
    return ColourScale("weight", max(np.ceil(largest * 10) / 10, 0.1))


# --- heat matrix (attention chapter) -----------------------------------------------------------
class HeatMatrix(VGroup):
    """A whole matrix as coloured cells without numbers (e.g. Q: one row per token, one column per entry),
    on one ColourScale, with its true shape below. rows[r] is row r's cells; cells can be wider than tall
    so that rows line up with word labels at a legible pitch."""

    def __init__(self, matrix, scale: ColourScale, *, name: str, cell_w: float = 0.28, cell_h: float = 0.44,
                 font_size: float = SMALL):
        super().__init__()
        M = np.asarray(matrix, dtype=np.float64)
        if M.ndim != 2:
            raise ValueError("HeatMatrix needs a 2-D array")
        self.matrix, self.colour_scale = M, scale
        self.rows = VGroup()
        for r in range(M.shape[0]):
            self.rows.add(VGroup(*[Rectangle(width=cell_w * 0.9, height=cell_h * 0.9, stroke_width=0,
                                             fill_color=scale.colour(M[r, c]), fill_opacity=1)
                                   .move_to([c * cell_w, -r * cell_h, 0]) for c in range(M.shape[1])]))
        self.add(self.rows)
        self.shape_label = Label(f"{name}: {M.shape[0]} \u00d7 {M.shape[1]}", font_size=font_size, color=MUTED) \
            .next_to(self.rows, DOWN, buff=0.2)
        self.add(self.shape_label)

    def row_y(self, r: int) -> float:
        return float(self.rows[r].get_center()[1])


def place_by_body(column: "VectorColumn", x: float, y: float) -> "VectorColumn":
    """Centre a VectorColumn's numbers and brackets on (x, y), whatever its size label says (so English and
    Chinese versions sit in exactly the same place)."""
    body = VGroup(column.entries, column.brackets)
    return column.shift([x - body.get_center()[0], y - body.get_center()[1], 0])
