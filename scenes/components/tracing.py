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

CHIP_H, CHIP_GAP = 0.5, 0.1      # a chip's height; the least room between two chips on one row
ROW_LABEL_GAP = 0.2              # between a row's label and its first cell
CELL_GAP = 0.06                  # between two cells
ELLIPSIS = "\u2026"


def share_text(v: float) -> str:
    """A restored share in at most four characters (it is a ratio, above 1 when restoring overshoots): two
    decimals below 10, one below 100, none above; a negative share (restoring it lowers the answer) with its sign."""
    if v < 0 and share_text(-v) != "0.00":
        return style.MINUS + share_text(-v)
    v = abs(v)
    return f"{v:.2f}" if v < 9.995 else f"{v:.1f}" if v < 99.95 else f"{v:.0f}"


class TraceGrid(VGroup):
    """`share` is (rows × positions), given by the caller (model.analysis); `row_labels` name the rows
    ("attn 0", "MLP 0", ...), `tokens` the columns (chips above, in their positions' colours). A cell's number is
    written (share_text) when its share is at least `write_floor`; `numbers` lists them with their (row, column).
    The grid's top-left cell sits at (left, top). Nothing is computed here.

    Layout, by rule, so that the whole grid (labels, cells, chips) is at most `max_width` wide:
    1. the chips on one row, each column as wide as its word needs and at least `cell_w` (`stagger` False);
    2. if that is too wide: the chips on two rows, by turns (even columns low, odd columns high), each column at
       least as wide as its written number needs and as wide as keeps chips two columns apart from touching;
    3. if that is still too wide: the widest word is cut a letter at a time, with "…", until the grid fits
       (`cut` lists the columns cut). Each still sits over its own column in its token's colour (style.token_colours).
    """

    def __init__(self, share, row_labels: list[str], tokens: list[str], *, left: float, top: float,
                 cell_w: float = 1.0, cell_h: float = 0.5, write_floor: float = 0.05,
                 max_width: float | None = None):
        super().__init__()
        share = np.asarray(share, np.float64)
        rows, cols = share.shape
        self.cell_w, self.cell_h, self.left, self.top = cell_w, cell_h, left, top
        labels = [Label(text, font_size=SMALL, color=MUTED) for text in row_labels]
        label_w = max(m.width for m in labels) + ROW_LABEL_GAP
        words = [style.token_label(w) for w in tokens]
        colours = style.token_colours(tokens)
        chips = [self.chip(w, colour) for w, colour in zip(words, colours)]
        self.stagger, self.cut = False, []
        self.widths = [max(cell_w, chip.width + 0.12) for chip in chips]
        if max_width is not None and self.extent(label_w, chips) > max_width:
            self.stagger = True
            least = NumberText("0.00", SMALL, TEXT).width + 2 * CELL_GAP     # a written share fits its cell
            keep = [len(w) for w in words]                                   # letters kept of each word
            while True:
                self.widths = self.staggered_widths([chip.width for chip in chips], least)
                if self.extent(label_w, chips) <= max_width + 1e-9:
                    break
                c = max(range(cols), key=lambda i: (keep[i] > 1, chips[i].width))
                if keep[c] <= 1:
                    break          # nothing left to cut: the caller's max_width is too small for these columns
                keep[c] -= 1
                words[c] = style.token_label(tokens[c])[:keep[c]] + ELLIPSIS
                chips[c] = self.chip(words[c], colours[c])
            self.cut = [c for c in range(cols) if keep[c] < len(style.token_label(tokens[c]))]
        self.words = words
        self.edges = np.concatenate([[0.0], np.cumsum(self.widths)])
        self.scale = ColourScale("share", 1.0)
        self.cells, self.numbers, self.written = VGroup(), VGroup(), []
        for r in range(rows):
            for c in range(cols):
                v = float(share[r, c])
                cell = Rectangle(width=self.widths[c] - CELL_GAP, height=cell_h * 0.9,
                                 stroke_color=style.CELL_OUTLINE, stroke_width=1, fill_color=self.scale.colour(v),
                                 fill_opacity=1)
                cell.move_to(self.centre(r, c))
                self.cells.add(cell)
                if v >= write_floor:
                    ink = "#000000" if v > 0.45 else TEXT
                    n = NumberText(share_text(v), SMALL, ink).place(0, 0)
                    n.move_to(self.centre(r, c))
                    self.numbers.add(n)
                    self.written.append((r, c))
        self.row_labels = VGroup()
        for r, label in enumerate(labels):
            label.shift(RIGHT * (left - ROW_LABEL_GAP - label.get_right()[0]))
            label.shift([0, self.centre(r, 0)[1] - label.get_center()[1], 0])
            self.row_labels.add(label)
        self.chips = VGroup()
        for c, chip in enumerate(chips):
            chip.move_to([self.centre(0, c)[0], self.chip_y(c), 0])
            self.chips.add(chip)
        self.add(self.cells, self.numbers, self.row_labels, self.chips)

    @staticmethod
    def chip(word: str, colour) -> TokenChip:
        return TokenChip(word, colour, font_size=SMALL, height=CHIP_H, lift=0.14)

    def chip_y(self, c: int) -> float:
        """A chip's centre: just above the grid, or on the second row for odd columns when staggered."""
        return self.top + 0.5 + (CHIP_H + CHIP_GAP if self.stagger and c % 2 else 0.0)

    def staggered_widths(self, chip_w: list[float], least: float) -> list[float]:
        """Columns at least `least` wide; where two chips on one row (c and c + 2) would come closer than CHIP_GAP,
        the column between them widens."""
        w = [least] * len(chip_w)
        for c in range(len(chip_w) - 2):
            need = (chip_w[c] + chip_w[c + 2]) / 2 + CHIP_GAP
            have = w[c] / 2 + w[c + 1] + w[c + 2] / 2
            if need > have:
                w[c + 1] += need - have
        return w

    def extent(self, label_w: float, chips: list[TokenChip]) -> float:
        """Width of the whole grid for the current column widths: row labels, cells and any chip sticking out."""
        edges = np.concatenate([[0.0], np.cumsum(self.widths)])
        centres = (edges[:-1] + edges[1:]) / 2
        lo = min(-label_w, min(x - chip.width / 2 for x, chip in zip(centres, chips)))
        hi = max(edges[-1], max(x + chip.width / 2 for x, chip in zip(centres, chips)))
        return hi - lo

    def centre(self, r: int, c: int) -> np.ndarray:
        return np.array([self.left + (self.edges[c] + self.edges[c + 1]) / 2, self.top - (r + 0.5) * self.cell_h, 0.0])

    def cell(self, r: int, c: int) -> Rectangle:
        return self.cells[r * len(self.chips) + c]
