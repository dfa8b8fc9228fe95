"""The MLP chapter's pieces: the GELU curve with a token's neurons as points on it, and a row of neurons
coloured dim grey (inactive) or green (active, brighter with the activation)."""

from __future__ import annotations

import numpy as np
from manim import Axes, Dot, Rectangle, VGroup

from .. import style
from ..style import MUTED, SMALL
from .text import Label, NumberText


class GeluPlot(VGroup):
    """Axes, the model's GELU as a green curve (`curve_y` are the model's values at `curve_x`), and one point per
    neuron at (pre-activation, activation), green if active (activation > threshold) else dim grey. Every
    number comes from the caller (the trace and model.analysis); nothing is computed here."""

    def __init__(self, curve_x, curve_y, pre, act, threshold: float, *, width: float = 7.0, height: float = 4.2,
                 x_name: str = "x"):
        """x_name: what the x axis is, written under its right end (the y axis is named by the caller, beside the
        curve)."""
        super().__init__()
        pre, act = np.asarray(pre, np.float64), np.asarray(act, np.float64)
        cx, cy = np.asarray(curve_x, np.float64), np.asarray(curve_y, np.float64)
        x0, x1 = float(np.floor(cx.min())), float(np.ceil(cx.max()))
        y1 = float(np.ceil(max(cy.max(), act.max())))
        self.axes = Axes(x_range=[x0, x1, 1], y_range=[-1, y1, 1], x_length=width, y_length=height,
                         tips=False, axis_config={"color": MUTED, "stroke_width": 2, "include_ticks": True})
        self.curve = self.axes.plot_line_graph(cx, cy, add_vertex_dots=False, line_color=style.GELU_CURVE,
                                               stroke_width=4)["line_graph"]
        self.active = act > threshold
        self.dots = VGroup(*[Dot(self.axes.c2p(p, a), radius=0.05,
                                   color=style.NEURON_ACTIVE if on else style.NEURON_INACTIVE,
                                   fill_opacity=0.9) for p, a, on in zip(pre, act, self.active)])
        self.ticks = VGroup()
        # the x axis's numbers under it; under the negative half, below the lowest the curve and its points reach
        # (GELU dips to about -0.17 there), so that no point lies under a number
        low = self.axes.c2p(0, 0)[1] - self.axes.c2p(0, min(float(cy.min()), float(act.min()), 0.0))[1]
        step = self.tick_step(x0, x1, width)
        for v in range(int(x0), int(x1) + 1):
            if v != 0 and v % step == 0:
                below = 0.32 if v > 0 else max(0.32, low + 0.2)
                self.ticks.add(NumberText(self.tick_text(v), SMALL, MUTED)
                               .place(0, 0).move_to(self.axes.c2p(v, 0) + np.array([0, -below, 0])))
        for v in range(1, int(y1) + 1):
            self.ticks.add(NumberText(str(v), SMALL, MUTED).place(0, 0)
                           .move_to(self.axes.c2p(0, v) + np.array([-0.3, 0, 0])))
        # the x axis's name, under its numbers at the right end
        self.x_label = Label(x_name, font_size=SMALL, color=MUTED)
        self.x_label.move_to(self.axes.c2p(x1, 0) + np.array([-self.x_label.width / 2, -0.78, 0]))
        self.ticks.add(self.x_label)
        self.add(self.axes, self.ticks, self.curve, self.dots)


    TICK_STEPS = (1, 2, 5, 10, 20, 50, 100)
    TICK_GAP = 0.25     # scene units between two numbers of the x axis, at least

    @staticmethod
    def tick_text(v: int) -> str:
        return style.signed(v, 0) if v < 0 else str(v)

    @classmethod
    def tick_step(cls, x0: float, x1: float, width: float) -> int:
        """The x axis is numbered every 1, or every 2, 5, 10, ... where a wide range of x would bring the numbers
        closer than TICK_GAP: the smallest step whose pitch holds the widest number (an end's) and the gap."""
        unit = width / max(x1 - x0, 1e-9)
        widest = max(NumberText(cls.tick_text(int(v)), SMALL, MUTED).width for v in (x0, x1) if v != 0) \
            if (x0, x1) != (0, 0) else 0.0
        return next((s for s in cls.TICK_STEPS if s * unit >= widest + cls.TICK_GAP), cls.TICK_STEPS[-1])


class NeuronStrip(VGroup):
    """One token's neurons as a row of cells, every neuron (nothing elided), on the neuron colours."""

    def __init__(self, activations, threshold: float, limit: float, *, width: float, height: float = 0.3):
        super().__init__()
        self.values = np.asarray(activations, np.float64).ravel()
        self.threshold, self.limit = threshold, limit
        step = width / self.values.size
        self.cells = VGroup(*[Rectangle(width=step * 0.85, height=height, stroke_width=0,
                                        fill_color=style.neuron_colour(v, threshold, limit), fill_opacity=1)
                              .move_to([(i + 0.5) * step, 0, 0]) for i, v in enumerate(self.values)])
        self.add(self.cells)
