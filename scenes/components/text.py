"""Text: labels on a baseline, numbers that change every frame, captions, and formulas."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from manim import ORIGIN, UP, MathTex, Text, VectorizedPoint, VGroup, VMobject

from .. import style
from ..style import FONT, LABEL, TEXT


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


def math_tex(*parts: str, colours: dict | None = None) -> MathTex:
    """A formula in the lecture's maths size, split into `parts`; a part listed in `colours` takes its colour."""
    m = light(MathTex(*parts, font_size=style.MATH_FONT_SIZE))
    for part, s in zip(m, parts):
        if colours and s in colours:
            part.set_color(colours[s])
    return m
