"""values_update's layout: the scene's measures (scene units; the frame is 14.2 × 8, title-safe is ±6.4 × ±3.6), and
the pieces several beats draw alike (ValuesLayout, a mixin of ValuesUpdate in beats.py: the prompt's row with the
head's arrow, the logit lens's bars, the chain of steps, a column's header, a formula's line) and the placing of a
product and a column.
"""

from __future__ import annotations

from manim import RIGHT, UP, Arrow, CurvedArrow, RoundedRectangle, VGroup

from scenes import style
from scenes.components import (CompactTokenRow, Label, MatrixVectorProduct, ProbabilityBars, TokenColumn, VectorColumn,
                               keep_inside_safe_area)
from scenes.params import ParamError
from scenes.style import MUTED, QUERY, VALUE

DIMMED = 0.65   # the tokens after the focus (the mask hides them) keep this share of their opacity (fill and text)

# --- layout (scene units; the frame is 14.2 × 8, title-safe is ±6.4 × ±3.6) --------------------
ROW_TOP, PITCH = 2.75, 0.40   # key rows; the attention grid is drawn at the same pitch, level with them
ROW_FLOOR, TOTAL_FLOOR = -2.25, -1.85   # lowest key row; lowest row with the weights' total below it (above
#                                         the caption); a longer table starts higher and puts the total beside it
TOP_MAX = 2.95                # the highest first row (its header still inside the title-safe area)
HEADER_BASELINE, HEADER_MAX = 3.15, 3.25   # column headers: above the first row, inside the title-safe area
CHIP_RIGHT = -3.85
CHIP_SLACK = 0.15             # how far the key column may move right, into the gap before the values, to stay on screen
STRIP_W = 2.1
V_LEFT, WEIGHT_RIGHT, WV_LEFT = -3.65, -0.1, 0.25
OUT_X, OUT_TOP = 4.9, 2.75
LEGEND_Y = -1.85
FORMULA_Y = 3.2
MATRIX_LEGEND_X, MATRIX_LEGEND_TOP = -4.85, 3.35  # a product's matrix legend: top left, beside the formula line
MATRIX_LEGEND_W = 1.8
PROMPT_Y, ARC_ANGLE = 1.5, -0.55
# the question: the prompt row with the head's arrow, then two panels of the logit lens (before / after the attention)
QUESTION_ROW_Y, LENS_HEADER_Y, PANEL_TITLE_Y = 2.2, 1.1, 0.6
PANEL_FIRST, PANEL_PITCH = -0.05, 0.45
PULL_ARC = -0.25              # the head's arrow over the question's and the answer's row (flatter: the label stays low)
PANELS = ({"label_right": -4.15, "bar_left": -4.0, "bar_width": 1.8, "number_right": -0.7},
          {"label_right": 2.15, "bar_left": 2.3, "bar_width": 1.8, "number_right": 6.25})
# the answer: the row again, the chain under it, three bars of P(word)
ANSWER_ROW_Y, CHAIN_Y, CHAIN_GAP, CHAIN_BOX_H = 2.2, 0.8, 0.45, 0.5
ANSWER_BARS_TOP, ANSWER_PITCH = -0.65, 0.55


def place_product(product: MatrixVectorProduct, x: float = -0.2, top: float = 2.45) -> MatrixVectorProduct:
    """Place a product by its matrix and output (not by its labels, whose widths differ between languages);
    a little left of centre, as the output's label hangs out to the right."""
    body = VGroup(product.matrix.cells, product.output.brackets)
    product.shift([x - body.get_center()[0], top - product.matrix.cells.get_top()[1], 0])
    return keep_inside_safe_area(product)     # a bias read in thousandths (a small b_v) widens it


def place_column(column: VectorColumn, x: float, y: float) -> VectorColumn:
    """Centre a vector column by its brackets (its size label's width differs between languages)."""
    return column.shift([x, y, 0] - column.brackets.get_center())


class ValuesLayout:
    """The pieces several beats draw, for ValuesUpdate (self.h: HeadAtFocus; self.lang; self.s and self.strings: the
    scene's words)."""

    def pull_row(self, y: float):
        """The prompt up to the focus and a "?" slot (the earliest tokens give way to "⋯" on a long prompt), the
        focus framed, the token the head looks at most framed and its weight drawn as an arrow to the focus."""
        h, lang = self.h, self.lang
        row = CompactTokenRow(h.tokens[:h.focus + 1], lang=lang, next_slot=True)
        if row.first_shown > h.source:
            raise ParamError(f"prompt: the token the head looks at most (position {h.source}) does not fit on the "
                             f"prompt's row with the focus; a shorter prompt or an earlier focus shows it")
        row.move_to([0, y, 0])
        chip = lambda i: row.chips[i - row.first_shown]  # noqa: E731
        focus = chip(h.focus).box.copy().set_fill(opacity=0).set_stroke(QUERY, width=5)
        source = chip(h.source).box.copy().set_fill(opacity=0).set_stroke(VALUE, width=5)
        text = self.s("head_name", layer=style.shown(h.layer), head=style.shown(h.head)) + ": " + \
            style.percent(h.weights[h.source])
        label = Label(text, font_size=style.SMALL, color=VALUE)
        if h.source == h.focus:
            arrow, marks = VGroup(), VGroup(focus)
            label.next_to(focus, UP, buff=0.2)
        else:
            marks = VGroup(focus, source)
            arrow = CurvedArrow(source.get_top() + UP * 0.05, focus.get_top() + UP * 0.05, angle=PULL_ARC,
                                color=VALUE, stroke_width=3, tip_length=0.18)
            label.next_to(arrow, UP, buff=0.1)
        edge = style.safe_half_width()
        label.shift(RIGHT * (min(edge - label.get_right()[0], 0) + max(-edge - label.get_left()[0], 0)))
        return row, marks, arrow, label

    def lens_bars(self, run: dict, panel: dict) -> ProbabilityBars:
        """One lens point's top words, then the followed word if it is not among them, then "other" (the rest)."""
        ys = [PANEL_FIRST - i * PANEL_PITCH for i in range(len(run["shown"]) + 1)]
        return ProbabilityBars.next_words(run, self.h.lens["word"], ys, lang=self.lang, **panel)

    def chain(self, steps: list[tuple[str, dict]]) -> VGroup:
        """The scene's chain in one line: boxed steps (string key, values) joined by arrows, centred at CHAIN_Y.
        Each box is as wide as its step's text in the wider language: one layout in both."""
        boxes = VGroup(*[Label(self.s(key, **values), font_size=style.SMALL, color=VALUE) for key, values in steps])
        widths = [max(Label(self.strings(key, lang, **values), font_size=style.SMALL).width for lang in style.LANGUAGES)
                  for key, values in steps]
        frames = VGroup(*[RoundedRectangle(width=w + 0.24, height=CHAIN_BOX_H, corner_radius=0.08, color=VALUE)
                          for w in widths]).arrange(RIGHT, buff=CHAIN_GAP).move_to([0, CHAIN_Y, 0])
        for frame, box in zip(frames, boxes):     # the frames by the widths alone; each text centred in its frame
            box.move_to(frame)
        steps = VGroup(*[VGroup(f, b) for f, b in zip(frames, boxes)])
        arrows = VGroup(*[Arrow(a.get_right(), b.get_left(), buff=0.05, color=MUTED, stroke_width=3,
                                max_tip_length_to_length_ratio=0.35) for a, b in zip(steps[:-1], steps[1:])])
        out = VGroup()
        for i, step in enumerate(steps):
            out.add(VGroup(step, arrows[i - 1]) if i else step)
        if out.width > 2 * style.safe_half_width():
            out.scale_to_fit_width(2 * style.safe_half_width())
        return out

    def column_header(self, text: str, x: float, colour) -> Label:
        return self.header(text, x, colour, min(HEADER_BASELINE + self.row_top - ROW_TOP, HEADER_MAX))

    def product_line(self, token: int, parts: list[str], colours: dict) -> VGroup:
        """The token's chip, then the formula, centred on the top line."""
        chip = TokenColumn([self.h.tokens[token]], [token], [0.0], right=0.0, prompt=self.h.tokens)
        return self.formula_line(chip, self.tex(*parts, colours=colours), [0, FORMULA_Y, 0])
