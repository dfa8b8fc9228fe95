"""Layout: the title-safe area, rules, and placing a column by its body (the same in every language)."""

from __future__ import annotations

from manim import Line, VGroup

from .. import style
from ..style import MUTED


# --- rows of bars --------------------------------------------------------------------
def row_positions(n: int, top: float, pitch: float) -> list[float]:
    """Baselines of n table rows, top to bottom."""
    return [top - i * pitch for i in range(n)]


def inside_safe_area(mobject) -> bool:
    """True if the mobject's bounding box lies within the title-safe area."""
    x, y = style.safe_half_width() + 1e-6, style.safe_half_height() + 1e-6
    return (mobject.get_left()[0] >= -x and mobject.get_right()[0] <= x
            and mobject.get_bottom()[1] >= -y and mobject.get_top()[1] <= y)


def rule(x_from: float, x_to: float, y: float, color=MUTED) -> Line:
    """A thin horizontal line, e.g. above a column's sum."""
    return Line([x_from, y, 0], [x_to, y, 0], stroke_color=color, stroke_width=2)


def place_by_body(column: "VectorColumn", x: float, y: float) -> "VectorColumn":
    """Centre a VectorColumn's numbers and brackets on (x, y), whatever its size label says (so English and
    Chinese versions sit in exactly the same place)."""
    body = VGroup(column.entries, column.brackets)
    return column.shift([x - body.get_center()[0], y - body.get_center()[1], 0])
