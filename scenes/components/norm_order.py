"""Where the LayerNorm sits in a transformer block: after the residual add (post-LN: the original Transformer, the
source article) or before the sublayer, on a copy of the stream (pre-LN: GPT-2 and our model). Two small block
diagrams, top to bottom, the stream drawn as the line that skips the sublayer into the add."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Arrow, Circle, Line, VGroup

from scenes import style
from scenes.components.boxes import RoundedBox
from scenes.components.text import Label

BOX_W, BOX_H = 3.1, 0.5
ROW = 0.95            # from one item's centre to the next's
SKIP = 1.75           # the stream's skip line, this far left of the column


class NormOrder(VGroup):
    """One block as a diagram: `order` is "post" (sublayer, add, LayerNorm) or "pre" (LayerNorm, sublayer, add),
    with `title` (lines) above it; centred on x = cx, its input at y = top. The LayerNorm's box is `norm`, the skip
    line `stream`, the add `plus`."""

    def __init__(self, order: str, title: list[str], sublayer: str, norm: str, cx: float, top: float):
        super().__init__()
        if order not in ("post", "pre"):
            raise ValueError(f"order is 'post' or 'pre', got {order!r}")
        self.order = order
        heading = VGroup(*[Label(t, font_size=style.SMALL, color=style.TEXT if i == 0 else style.MUTED)
                           for i, t in enumerate(title)]).arrange(DOWN, buff=0.12)
        heading.move_to([cx - 0.35, 0, 0]).shift(UP * (top + 0.25 - heading.get_bottom()[1]))
        kinds = ["sub", "plus", "norm"] if order == "post" else ["norm", "sub", "plus"]
        ys = [top - 0.55 - i * ROW for i in range(len(kinds))]
        items = {}
        for kind, y in zip(kinds, ys):
            if kind == "plus":
                c = Circle(radius=0.2, color=style.TEXT, stroke_width=2).move_to([cx, y, 0])
                c.add(Line(c.get_left() + RIGHT * 0.08, c.get_right() + LEFT * 0.08, stroke_width=2),
                      Line(c.get_top() + DOWN * 0.08, c.get_bottom() + UP * 0.08, stroke_width=2))
                items[kind] = c
            else:
                colour = style.ACCENT if kind == "norm" else style.MUTED
                box = RoundedBox(corner_radius=0.1, width=BOX_W, height=BOX_H, stroke_color=colour, stroke_width=2)
                box.move_to([cx, y, 0])
                box.add(Label(norm if kind == "norm" else sublayer, font_size=style.SMALL).move_to(box))
                items[kind] = box
        bottom = ys[-1] - 0.7
        arrows = VGroup()
        stops = [top] + [items[k] for k in kinds] + [bottom]
        for a, b in zip(stops, stops[1:]):
            start = [cx, a, 0] if isinstance(a, float) else a.get_bottom()
            end = [cx, b, 0] if isinstance(b, float) else b.get_top()
            arrows.add(Arrow(start, end, buff=0.04, stroke_width=3, max_tip_length_to_length_ratio=0.35,
                             color=style.TEXT))
        # the stream's skip: from above the block's first box, round the left, into the add
        branch = top - 0.12
        plus = items["plus"]
        stream = VGroup(Line([cx, branch, 0], [cx - SKIP, branch, 0]),
                        Line([cx - SKIP, branch, 0], [cx - SKIP, plus.get_center()[1], 0]),
                        Arrow([cx - SKIP, plus.get_center()[1], 0], plus.get_left(), buff=0.02, stroke_width=3,
                              max_tip_length_to_length_ratio=0.3))
        stream.set_color(style.EMBEDDING)
        for part in stream:
            part.set_stroke(width=3)
        self.heading, self.arrows, self.stream = heading, arrows, stream
        self.norm, self.sub, self.plus = items["norm"], items["sub"], plus
        self.add(heading, arrows, stream, *items.values())
