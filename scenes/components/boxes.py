"""RoundedBox: manim's RoundedRectangle, its corners rounded once per shape.

RoundedRectangle rounds its four corners in Python every time one is made (arcs built and joined: about 16 ms a
box), and a scene makes the same boxes again and again: a prompt's chips in every row that shows the prompt, the
pipeline's stage boxes. RoundedBox keeps the rounded outline of every rectangle it has rounded, keyed by that
rectangle's exact points and the radius, and gives a new box of the same shape a copy: the same points, bit for
bit, as rounding again would make (so a clip is the same whichever process drew it, and whatever it drew before).
It is a RoundedRectangle in every other way (its type for isinstance, its style, its corner_radius).
"""

from __future__ import annotations

from manim import Rectangle, RoundedRectangle

_ROUNDED: dict[tuple[bytes, float], object] = {}   # (the rectangle's points, radius) -> the rounded outline's points


class RoundedBox(RoundedRectangle):
    def __init__(self, corner_radius: float = 0.5, **kwargs):
        Rectangle.__init__(self, **kwargs)      # RoundedRectangle.__init__ would round the corners again
        self.corner_radius = corner_radius
        key = (self.points.tobytes(), float(corner_radius))
        rounded = _ROUNDED.get(key)
        if rounded is None:
            self.round_corners(corner_radius)
            _ROUNDED[key] = self.points.copy()
        else:
            self.points = rounded.copy()
