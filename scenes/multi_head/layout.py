"""multi_head's layout: the scene's measures (scene units; the frame is 14.2 × 8, title-safe is ±6.4 × ±3.6) and the
attention grids' sizing and placement that the heads, focus and concat beats share (HeadLayout, a mixin of
MultiHead in beats.py: how large the grids are, in how many rows, where the axis titles go, which heads keep
their names).
"""

from __future__ import annotations

import numpy as np
from manim import RIGHT, UP, VGroup

from scenes import style
from scenes.components import AttentionGrid, ColourScale, Label

GRID_W, GRID_GAP = 2.3, 0.42
GRID_TOP = 2.45
MAX_ROWS = 4              # the question and summary draw at most this many heads' rows (then "⋯ n more heads")
ROW_TOP, ROW_PITCH, CELL_H = 3.3, 0.92, 0.32   # their prompt row's top, a head's line and cells, a weight cell
ROWS_FLOOR = -1.9         # the lowest of their lines (|out|) keeps above a two-line caption
IDLE_DIM = 0.3            # an idle head's grid (focus beat; the swap test, IDLE_RULE) is drawn at this opacity
IDLE_LINE = 0.45          # and its tag takes one more line under its labels (where there is room)
TITLE_ROOM = 2.2          # room left of the first grid for its axis titles
HEAD_TITLE_Y = 3.3
JOBS_TOP, JOBS_PITCH = 2.9, 0.5   # the jobs beat's table: its group headers' baseline, and between its lines
JOBS_HEAD_RIGHT = -4.7           # the heads' names, right-aligned here; then the four columns' right edges
JOBS_COLUMNS = (-1.9, 0.9, 3.4, 6.2)
CONCAT_MIN_W = 8.0        # the concat's least width (ours: 4 heads under 2.3-wide grids, 8.7)
CONCAT_MIN_PART = 1.2     # a head's part narrower than this (about 9 cells and the "⋯") is not drawn: see build_concat
TEXT_GAP = 0.2            # between two heads' titles (or their "→ word" labels), at least
LABELS_BELOW = 1.0        # a grid's "→ word" and weight labels reach this far under it (baselines 0.5 and 0.95)
LABELS_FLOOR = -2.35      # the lowest labels keep above a two-line caption
ROW_TITLE_GAP = 0.1       # a lower row's head title over its query indices
STRIP_Y, STRIP_PITCH = 1.6, 1.25  # the heads' outputs (concat beat): the last row's centre, and between rows


class HeadLayout:
    """The grids' sizes and places, for MultiHead (self.m: LayerHeads; self.lang; self.s: the scene's words)."""

    def grid(self, h: int, side: float) -> AttentionGrid:
        m = self.m
        return AttentionGrid(m.patterns[h], ColourScale("attention"), tokens=m.tokens, lang=self.lang, height=side,
                             focus=m.focus)

    def fit_grids(self) -> tuple[AttentionGrid, float, int, float]:
        """(the first grid, the grids' side, rows, how far the grids come down for the axis titles): for 1, 2 and 3
        rows, the side is the largest that fits the row's heads across the title-safe width (a long key word or many
        heads shrink it; the index over the last column may hang further past a smaller grid, so it is fitted
        again) and the rows, each with its "→ word / weight" labels under it and the next row's titles over it,
        above the caption (LABELS_FLOOR), at most GRID_W; the rows that give the largest side, the fewest on a tie."""
        best = None
        for rows in (1, 2, 3):
            per_row = -(-self.m.n_head // rows)
            if rows > 1 and per_row * (rows - 1) >= self.m.n_head:
                break                                     # a row would be empty
            side = GRID_W
            first = self.grid(0, side)
            for _ in range(3):
                label_w = max(first.squares.get_left()[0] - first.key_words.get_left()[0], TITLE_ROOM)
                overhang = max(0.0, first.query_indices.get_right()[0] - first.squares.get_right()[0])
                room = 2 * style.safe_half_width() - label_w - (per_row - 1) * GRID_GAP - overhang
                if per_row * side <= room + 1e-9:
                    break
                side = room / per_row
                first = self.grid(0, side)
            drop = self.title_drop(first)
            tall = (GRID_TOP - drop - LABELS_FLOOR - LABELS_BELOW - (rows - 1) * self.row_extra(first)) / rows
            if tall < side - 1e-9:
                side = tall
                first = self.grid(0, side)
                drop = self.title_drop(first)
            if best is None or side > best[1] + 1e-9:
                best = (first, side, rows, drop)
        return best

    @staticmethod
    def place_axis_titles(first: AttentionGrid):
        """The axis titles, stacked over the first grid's key words (small cells leave no room beside them), left
        of the grid and of its first query index (which hangs past a column narrower than the digit)."""
        q_title, k_title = first.query_title, first.key_title
        grid_left = min(first.squares.get_left()[0], first.query_indices.get_left()[0])
        q_title.shift(RIGHT * (grid_left - 0.15 - q_title.get_right()[0]))
        q_title.shift(UP * (first.key_indices[0].get_top()[1] + 0.1 - q_title.get_bottom()[1]))
        k_title.shift(RIGHT * (q_title.get_right()[0] - k_title.get_right()[0]))
        k_title.shift(UP * (q_title.get_top()[1] + 0.12 - k_title.get_bottom()[1]))
        return q_title, k_title

    def title_drop(self, first: AttentionGrid) -> float:
        """Small cells put the first row (and the titles stacked over it) nearer the top: the grids come down as far
        as the top title would pass the title-safe area, and the head titles with them."""
        _, k_title = self.place_axis_titles(first)
        return max(0.0, k_title.get_top()[1] - (first.squares.get_top()[1] - GRID_TOP) - style.safe_half_height())

    def row_extra(self, first: AttentionGrid) -> float:
        """From one row's grid bottom to the next row's grid top: its labels, a gap, the next row's query indices
        and head titles."""
        title_h = Label(self.s("head", h="1"), font_size=style.SMALL).height
        over = first.query_indices.get_top()[1] - first.squares.get_top()[1] + ROW_TITLE_GAP + title_h
        return LABELS_BELOW + TEXT_GAP + over

    def name_heads_by_stride(self):
        """Each head's title is centred over its grid but never starts left of it, nor within TEXT_GAP + 0.1 of the
        axis titles stacked left of the first grid (a 2-token grid is narrower than "head 1"). Where neighbouring titles or
        "→ word / weight" labels would come closer than TEXT_GAP (many heads in narrow grids: a checkpoint's 12),
        every stride-th head from each row's first keeps them (the smallest stride that clears); the others' are empty."""
        titles_end = self.grids[0].key_title.get_right()[0] + TEXT_GAP + 0.1     # two spaces past "keys ↓", and more
        per_row = self.per_row
        for h, (t, g) in enumerate(zip(self.head_titles, self.grids)):
            start = max(g.squares.get_left()[0], titles_end if h < per_row else -np.inf)   # the axis titles: row 1
            if t.get_left()[0] < start:
                t.shift(RIGHT * (start - t.get_left()[0]))
        stride = self.name_stride(max([m.width for m in self.head_titles] + [m.width for m in self.top_labels]))
        self.heads_named = [h for h in range(self.m.n_head) if (h % per_row) % stride == 0]   # each row's first
        for h in range(self.m.n_head):
            if h not in self.heads_named:
                self.head_titles.submobjects[h] = VGroup()
                self.top_labels.submobjects[h] = VGroup()
        self.values["heads_named"] = self.heads_named

    def name_stride(self, widest: float) -> int:
        """Every how-many-th head in a row keeps its name so that names `widest` wide stay TEXT_GAP apart."""
        return max(1, int(np.ceil((widest + TEXT_GAP) / (self.grid_w + GRID_GAP) - 1e-9)))
