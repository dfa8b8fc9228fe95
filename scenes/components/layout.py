"""Layout: the title-safe area, rules, and placing a column by its body (the same in every language)."""

from __future__ import annotations

import numpy as np
from manim import Line, VGroup, VMobject

from .. import style
from ..style import MUTED


# --- rows of bars --------------------------------------------------------------------
def row_positions(n: int, top: float, pitch: float) -> list[float]:
    """Baselines of n table rows, top to bottom."""
    return [top - i * pitch for i in range(n)]


def bounds(mobject) -> tuple[float, float, float, float]:
    """(left, bottom, right, top) of the mobject's bounding box: get_left()[0], get_bottom()[1], get_right()[0] and
    get_top()[1], the same numbers, from one pass over its points instead of four (each of manim's walks the family's
    anchors in Python: the layout checks ask for thousands of boxes a beat). (0, 0, 0, 0) for no points, as manim."""
    family = mobject.get_family()
    parts = []
    for sm in family:
        p = sm.points
        if not isinstance(sm, VMobject):
            parts = None
            break
        n, k = len(p), sm.n_points_per_cubic_curve
        if n == 1:
            parts.append(p)
        elif n % k:          # manim's get_anchors refuses it: let manim say so
            parts = None
            break
        elif n:
            parts += [p[::k], p[k - 1::k]]    # its anchors: the curves' starts and ends
    if parts is None:
        return (mobject.get_left()[0], mobject.get_bottom()[1], mobject.get_right()[0], mobject.get_top()[1])
    if not parts:
        return (0.0, 0.0, 0.0, 0.0)
    points = np.concatenate(parts)
    lo, hi = points.min(axis=0), points.max(axis=0)
    return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))


def inside_safe_area(mobject) -> bool:
    """True if the mobject's bounding box lies within the title-safe area."""
    x, y = style.safe_half_width() + 1e-6, style.safe_half_height() + 1e-6
    left, bottom, right, top = bounds(mobject)
    return left >= -x and right <= x and bottom >= -y and top <= y


def keep_right_of(mobject, neighbour, gap: float = 0.4):
    """Move `mobject` right, if it must, until it starts `gap` past `neighbour`'s right edge (a legend's bar grows
    with wider tick labels, e.g. a random-init GPT-2's −0.021: the formula line beside it keeps clear). Returns it."""
    clear = bounds(neighbour)[2] + gap - bounds(mobject)[0]
    if clear > 0:
        mobject.shift([clear, 0, 0])
    return mobject


def keep_inside_safe_area(mobject):
    """Move `mobject` sideways, if it must and can, until it lies inside the title-safe area (a product at a
    checkpoint's scale is wider than ours: it keeps its place unless that runs off the screen). Returns it."""
    left, _, right, _ = bounds(mobject)
    edge = style.safe_half_width()
    if right - left <= 2 * edge:
        mobject.shift([max(0.0, -edge - left) - max(0.0, right - edge), 0, 0])
    return mobject


def rule(x_from: float, x_to: float, y: float, color=MUTED) -> Line:
    """A thin horizontal line, e.g. above a column's sum."""
    return Line([x_from, y, 0], [x_to, y, 0], stroke_color=color, stroke_width=2)


def place_by_body(column: "VectorColumn", x: float, y: float) -> "VectorColumn":
    """Centre a VectorColumn's numbers and brackets on (x, y), whatever its size label says (so English and
    Chinese versions sit in exactly the same place)."""
    body = VGroup(column.entries, column.brackets)
    return column.shift([x - body.get_center()[0], y - body.get_center()[1], 0])
