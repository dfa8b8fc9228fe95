"""Causal tracing drawn: a grid of restored shares, one column per token of the prompt, one row per (layer,
component), each cell black (0) -> gold (1) on one fixed scale (ColourScale("share")), with the share written in
the cells at or above a floor."""

from __future__ import annotations

import numpy as np
from manim import RIGHT, Rectangle, VGroup

from .. import style
from ..style import MUTED, SMALL, TEXT
from .charts import ColourScale
from .text import Label, NumberText
from .tokens import TokenChip


class TraceGrid(VGroup):
    """`share` is (rows × positions), given by the caller (model.analysis); `row_labels` name the rows
    ("attn 0", "MLP 0", ...), `tokens` the columns (chips above, in their positions' colours). A cell's number is
    written (two decimals) when its share is at least `write_floor`; `numbers` lists them with their (row, column).
    The grid's top-left cell sits at (left, top); a column is `cell_w` wide, or as wide as its word needs. Nothing is computed here."""

    def __init__(self, share, row_labels: list[str], tokens: list[str], *, left: float, top: float,
                 cell_w: float = 1.0, cell_h: float = 0.5, write_floor: float = 0.05):
        super().__init__()
        share = np.asarray(share, np.float64)
        rows, cols = share.shape
        chips = [TokenChip(style.token_label(w), style.token_colour(c), font_size=SMALL, height=0.5, lift=0.14)
                 for c, w in enumerate(tokens)]
        # a column is as wide as its word needs, at least cell_w
        self.widths = [max(cell_w, chip.width + 0.12) for chip in chips]
        self.edges = np.concatenate([[0.0], np.cumsum(self.widths)])
        self.scale = ColourScale("share", 1.0)
        self.cells, self.numbers, self.written = VGroup(), VGroup(), []
        self.cell_w, self.cell_h, self.left, self.top = cell_w, cell_h, left, top
        for r in range(rows):
            for c in range(cols):
                v = float(share[r, c])
                cell = Rectangle(width=self.widths[c] - 0.06, height=cell_h * 0.9, stroke_color=style.CELL_OUTLINE,
                                 stroke_width=1, fill_color=self.scale.colour(v), fill_opacity=1)
                cell.move_to(self.centre(r, c))
                self.cells.add(cell)
                if v >= write_floor:
                    ink = "#000000" if v > 0.45 else TEXT
                    n = NumberText(f"{v:.2f}", SMALL, ink).place(0, 0)
                    n.move_to(self.centre(r, c))
                    self.numbers.add(n)
                    self.written.append((r, c))
        self.row_labels = VGroup()
        for r, text in enumerate(row_labels):
            label = Label(text, font_size=SMALL, color=MUTED)
            label.shift(RIGHT * (left - 0.2 - label.get_right()[0]))
            label.shift([0, self.centre(r, 0)[1] - label.get_center()[1], 0])
            self.row_labels.add(label)
        self.chips = VGroup()
        for c, chip in enumerate(chips):
            chip.move_to([self.centre(0, c)[0], top + 0.5, 0])
            self.chips.add(chip)
        self.add(self.cells, self.numbers, self.row_labels, self.chips)

    def centre(self, r: int, c: int) -> np.ndarray:
        return np.array([self.left + (self.edges[c] + self.edges[c + 1]) / 2, self.top - (r + 0.5) * self.cell_h, 0.0])

    def cell(self, r: int, c: int) -> Rectangle:
        return self.cells[r * len(self.chips) + c]
