"""The superposition chapter's pieces: a histogram of angles, a chart with logarithmic axes, and a fan of vectors
in a plane. Every number comes from the caller (the lab's recorded runs); nothing is computed here but where
a number goes on screen."""

from __future__ import annotations

import math

import numpy as np
from manim import Arrow, Circle, DashedLine, Dot, Line, Rectangle, VGroup, VMobject

from .. import style
from ..style import MUTED, SMALL
from .text import NumberText


def power_of_ten(k: int) -> str:
    """10ᵏ as text (1 and 10 written plainly)."""
    if k == 0:
        return "1"
    if k == 1:
        return "10"
    return "10" + str(k).translate(style.SUPERSCRIPT)


class AngleHistogram(VGroup):
    """Counts of pairwise angles in 1-degree bins [k, k + 1), drawn from `lo` to `hi` degrees: one bar per bin on a
    baseline, ticks every `tick` degrees. `bars_for(counts)` builds the bars of another set of counts (to
    Transform into); the height scale (`top`, the count at full height) is fixed once, so steps compare."""

    def __init__(self, lo: int, hi: int, top: float, *, width: float, height: float, color, tick: int = 10):
        super().__init__()
        self.lo, self.hi, self.top, self.width_, self.height_, self.color_ = lo, hi, float(top), width, height, color
        self.axis = Line([0, 0, 0], [width, 0, 0], stroke_color=MUTED, stroke_width=2)
        self.ticks = VGroup()
        self.tick_values = [v for v in range(lo, hi + 1) if v % tick == 0]
        for v in self.tick_values:
            x = self.x_of(v)
            self.ticks.add(Line([x, 0, 0], [x, -0.1, 0], stroke_color=MUTED, stroke_width=2))
            n = NumberText(f"{v}\u00b0", SMALL, MUTED, align="left").place(0, -0.45)
            n.shift([x - n.get_center()[0], 0, 0])
            self.ticks.add(n)
        self.bars = self.bars_for(np.zeros(180))
        self.add(self.bars, self.axis, self.ticks)

    def x_of(self, degrees: float) -> float:
        """Scene x (relative to the histogram's own origin, before it is moved) of an angle."""
        return (degrees - self.lo) / (self.hi - self.lo) * self.width_

    def point(self, degrees: float, y: float = 0.0) -> np.ndarray:
        """Where an angle sits on the axis now (after moves), lifted by y."""
        left = self.axis.get_start()
        return left + np.array([(degrees - self.lo) / (self.hi - self.lo) * self.axis.get_length(), y, 0])

    def bars_for(self, counts) -> VGroup:
        counts = np.asarray(counts, np.float64)
        step = self.width_ / (self.hi - self.lo)
        origin = self.axis.get_start() if hasattr(self, "axis") else np.zeros(3)
        bars = VGroup()
        for k in range(self.lo, self.hi):
            h = max(counts[k] / self.top * self.height_, 1e-3)
            bars.add(Rectangle(width=step * 0.86, height=h, stroke_width=0, fill_color=self.color_, fill_opacity=0.9)
                     .move_to(origin + np.array([(k - self.lo + 0.5) * step, h / 2, 0])))
        return bars

    def bar_heights(self) -> list[float]:
        return [b.height for b in self.bars]


class LogChart(VGroup):
    """Axes with logarithmic scales in x and y: decades from 10^x0 to 10^x1 and 10^y0 to 10^y1, labelled as powers
    of ten. `c2p(x, y)` places a value; `curve(xs, ys, colour)` draws a polyline through values (points above the
    chart are cut off); `dot(x, y, colour)` marks a value."""

    def __init__(self, x_decades: tuple[int, int], y_decades: tuple[int, int], *, width: float, height: float,
                 y_step: int = 2):
        super().__init__()
        self.x0, self.x1 = x_decades
        self.y0, self.y1 = y_decades
        self.width_, self.height_ = width, height
        self.axes = VGroup(Line([0, 0, 0], [width, 0, 0], stroke_color=MUTED, stroke_width=2),
                           Line([0, 0, 0], [0, height, 0], stroke_color=MUTED, stroke_width=2))
        self.ticks = VGroup()
        for k in range(self.x0, self.x1 + 1):
            x = self._x(10.0 ** k)
            self.ticks.add(Line([x, 0, 0], [x, -0.1, 0], stroke_color=MUTED, stroke_width=2))
            n = NumberText(power_of_ten(k), SMALL, MUTED, align="left").place(0, -0.5)
            n.shift([x - n.get_center()[0], 0, 0])
            self.ticks.add(n)
        for value, text in self.y_ticks(y_step):
            y = self._y(value)
            self.ticks.add(Line([0, y, 0], [-0.1, y, 0], stroke_color=MUTED, stroke_width=2))
            n = NumberText(text, SMALL, MUTED, align="right").place(-0.18, 0)
            n.shift([0, y - n.get_center()[1], 0])
            self.ticks.add(n)
        self.add(self.axes, self.ticks)

    def y_ticks(self, y_step: int) -> list[tuple[float, str]]:
        """The y axis' ticks: (value, label), every y_step decades."""
        return [(10.0 ** k, power_of_ten(k)) for k in range(self.y0, self.y1 + 1, y_step)]

    def _x(self, value: float) -> float:
        return (math.log10(value) - self.x0) / (self.x1 - self.x0) * self.width_

    def _y(self, value: float) -> float:
        return (math.log10(value) - self.y0) / (self.y1 - self.y0) * self.height_

    def c2p(self, x: float, y: float) -> np.ndarray:
        origin = self.axes[0].get_start()
        return origin + np.array([self._x(x), self._y(y), 0])

    def p2c(self, point) -> tuple[float, float]:
        origin = self.axes[0].get_start()
        dx, dy = (np.asarray(point) - origin)[:2]
        return (10 ** (self.x0 + dx / self.width_ * (self.x1 - self.x0)),
                10 ** (self.y0 + dy / self.height_ * (self.y1 - self.y0)))

    def inside(self, x: float, y: float) -> bool:
        return 10.0 ** self.x0 <= x <= 10.0 ** self.x1 * (1 + 1e-9) and 10.0 ** self.y0 <= y <= 10.0 ** self.y1 * (1 + 1e-9)

    def curve(self, xs, ys, colour, *, stroke_width: float = 4, dashed: bool = False) -> VMobject:
        points = [self.c2p(x, y) for x, y in zip(xs, ys) if y is not None and self.inside(x, y)]
        if dashed:
            return VGroup(*[DashedLine(a, b, stroke_color=colour, stroke_width=stroke_width, dash_length=0.08)
                            for a, b in zip(points, points[1:])])
        line = VMobject(stroke_color=colour, stroke_width=stroke_width)
        line.set_points_as_corners(points)
        return line

    def dot(self, x: float, y: float, colour, radius: float = 0.07) -> Dot:
        return Dot(self.c2p(x, y), radius=radius, color=colour)

    def vertical(self, x: float, colour, stroke_width: float = 2) -> DashedLine:
        return DashedLine(self.c2p(x, 10.0 ** self.y0), self.c2p(x, 10.0 ** self.y1), stroke_color=colour,
                          stroke_width=stroke_width, dash_length=0.1)


class ChanceChart(LogChart):
    """A LogChart whose y axis is a chance, linear from 0% to 100% (ticks every 25%), against a logarithmic x: a
    per-pair likelihood along the dimension, drawn on the same x axis as the counts of LogChart beside it."""

    def __init__(self, x_decades: tuple[int, int], *, width: float, height: float):
        super().__init__(x_decades, (0, 1), width=width, height=height)
        self.y0, self.y1 = 0.0, 1.0

    def y_ticks(self, y_step: int) -> list[tuple[float, str]]:
        """Every 25%, whatever the step."""
        return [(q / 100, f"{q}%") for q in (0, 25, 50, 75, 100)]

    def _y(self, value: float) -> float:
        return value * self.height_

    def p2c(self, point) -> tuple[float, float]:
        origin = self.axes[0].get_start()
        dx, dy = (np.asarray(point) - origin)[:2]
        return 10 ** (self.x0 + dx / self.width_ * (self.x1 - self.x0)), dy / self.height_

    def inside(self, x: float, y: float) -> bool:
        return 10.0 ** self.x0 <= x <= 10.0 ** self.x1 * (1 + 1e-9) and 0.0 <= y <= 1.0

    def vertical(self, x: float, colour, stroke_width: float = 2) -> DashedLine:
        return DashedLine(self.c2p(x, 0.0), self.c2p(x, 1.0), stroke_color=colour, stroke_width=stroke_width,
                          dash_length=0.1)


class VectorFan(VGroup):
    """Vectors from one origin in a plane, as arrows (the columns of a 2 × n matrix, or unit directions), on a
    faint unit circle. `radius` is the length of a vector of length 1; `set_vectors(W)` moves the arrows in place
    (for an animation through checkpoints)."""

    def __init__(self, W, colours, *, radius: float, circle: bool = True, stroke_width: float = 5):
        super().__init__()
        self.radius, self.colours, self.stroke_width_ = radius, list(colours), stroke_width
        self.circle = Circle(radius=radius, stroke_color=MUTED, stroke_width=1.5, stroke_opacity=0.6) \
            if circle else VGroup()
        self.origin_dot = Dot(radius=0.04, color=MUTED)
        self.arrows = self.arrows_for(W, np.zeros(3))
        self.add(self.circle, self.origin_dot, self.arrows)

    def centre(self) -> np.ndarray:
        return self.origin_dot.get_center()

    def tip(self, x: float, y: float) -> np.ndarray:
        return self.centre() + self.radius * np.array([x, y, 0])

    def arrows_for(self, W, centre=None) -> VGroup:
        W = np.asarray(W, np.float64)
        c = self.centre() if centre is None else centre
        arrows = VGroup()
        for i in range(W.shape[1]):
            end = c + self.radius * np.array([W[0, i], W[1, i], 0])
            if np.linalg.norm(end - c) < 1e-3:
                end = c + np.array([1e-3, 0, 0])
            arrows.add(Arrow(c, end, buff=0, color=self.colours[i % len(self.colours)],
                             stroke_width=self.stroke_width_, max_tip_length_to_length_ratio=0.18,
                             max_stroke_width_to_length_ratio=20, tip_length=0.18))
        return arrows
