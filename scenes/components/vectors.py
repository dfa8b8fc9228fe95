"""Vectors and matrices: bracketed columns with an honest ellipsis, matrices as coloured cells, the one
matrix × vector animation, whole-matrix heatmaps and magnitude strips."""

from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Animation, Create, FadeOut, Rectangle, SurroundingRectangle, Transform,
                   UpdateFromAlphaFunc, VGroup, VMobject)

from .. import style
from ..style import LABEL, MUTED, SHARED, SMALL, TEXT
from .charts import ColourLegend, ColourScale
from .text import Label, NumberText


# --- vectors and matrices --------------------------------------------------------------
def _bracket(height: float, side: int) -> VMobject:
    w = 0.12
    pts = [[side * w, height / 2, 0], [0, height / 2, 0], [0, -height / 2, 0], [side * w, -height / 2, 0]]
    return VMobject(stroke_color=TEXT, stroke_width=2).set_points_as_corners(pts)


def shown_indices(n: int, shown: int) -> list[int | None]:
    """The honest ellipsis: the first shown-1 entries, a gap (None), then the real last entry."""
    if n <= shown:
        return list(range(n))
    return list(range(shown - 1)) + [None, n - 1]


def vector_decimals(shown) -> int:
    """A vector's labels keep one decimal, unless every entry shown would read 0.0 with one (the largest shown under
    0.05: a random-init checkpoint's embeddings): then style.decimals_for's, enough for the largest to show two
    significant digits. Our model's vectors, whose labels reach 0.1, keep one decimal."""
    largest = float(np.abs(np.asarray(shown, dtype=np.float64)).max()) if len(shown) else 0.0
    return style.WEIGHT_DECIMALS if largest >= 0.05 or largest == 0.0 else style.decimals_for(shown)


def sum_decimals(vectors, shown: int = 7) -> int:
    """The decimals of columns drawn as one sum (E + ΔE = E′): the most any of them takes by vector_decimals, so
    −0.048 + −0.004 reads = −0.052, not = −0.1."""
    out = style.WEIGHT_DECIMALS
    for v in vectors:
        v = np.asarray(v, dtype=np.float64).ravel()
        out = max(out, vector_decimals([v[i] for i in shown_indices(len(v), shown) if i is not None]))
    return out


class VectorColumn(VGroup):
    """A vector as a bracketed column: its real first entries, ⋮, its real last entry, and its true size."""

    def __init__(self, values, *, lang: str, shown: int = 7, pitch: float = 0.5, decimals: int | None = None,
                 label: str | None = None, font_size: float = LABEL, texts: list[str] | None = None):
        """`texts`: the shown entries' labels where a sum writes them (components.sums: one number of decimals for
        every column, each label its entry's plain rounding)."""
        super().__init__()
        values = np.asarray(values, dtype=np.float64).ravel()
        self.values, self.indices_shown = values, shown_indices(len(values), shown)
        self.decimals = decimals if decimals is not None else vector_decimals(
            [values[i] for i in self.indices_shown if i is not None])
        scale = float(np.abs(values).max()) if values.size else 0.0
        shown_rows = [i for i in self.indices_shown if i is not None]
        if texts is not None and len(texts) != len(shown_rows):
            raise ValueError(f"{len(texts)} labels for {len(shown_rows)} entries shown")
        text_of = dict(zip(shown_rows, texts)) if texts is not None else {}
        self.entries = VGroup()
        for row, i in enumerate(self.indices_shown):
            y = -row * pitch
            if i is None:
                self.entries.add(Label("\u22ee", font_size=font_size, color=MUTED).move_to([-0.4, y + 0.14, 0]))
            else:
                n = NumberText(text_of.get(i) or style.signed(values[i], self.decimals), font_size,
                               style.activation_colour(values[i], scale)).place(0, y)
                self.entries.add(n)
        height = self.entries.height + 0.3
        self.brackets = VGroup(_bracket(height, 1).next_to(self.entries, LEFT, buff=0.12),
                               _bracket(height, -1).next_to(self.entries, RIGHT, buff=0.12))
        self.add(self.entries, self.brackets)
        text = label if label is not None else SHARED("n_numbers", lang, n=len(values))
        self.size_label = Label(text, font_size=SMALL, color=MUTED).next_to(self, DOWN, buff=0.18)
        self.add(self.size_label)


class MatrixGrid(VGroup):
    """A matrix as a grid of weight-coloured cells: real corner rows and columns, ⋯ and ⋮, and its true shape."""

    def __init__(self, matrix, *, name: str, rows: int = 5, cols: int = 5, cell: float = 0.95,
                 decimals: int | None = None, numbers: bool = True, font_size: float = LABEL,
                 cell_width: float | None = None):
        """cell: the cells' pitch (their height is 0.62 of it); cell_width: a wider pitch across, for longer labels."""
        super().__init__()
        M = np.asarray(matrix, dtype=np.float64)
        if M.ndim != 2:
            raise ValueError("MatrixGrid needs a 2-D array")
        self.matrix = M
        self.rows_shown, self.cols_shown = shown_indices(M.shape[0], rows), shown_indices(M.shape[1], cols)
        if decimals is None:   # one rule per matrix over the entries it shows (style.decimals_for)
            decimals = style.decimals_for([M[i, j] for i in self.rows_shown if i is not None
                                           for j in self.cols_shown if j is not None])
        self.decimals = decimals
        scale = float(np.abs(M).max()) if M.size else 0.0
        self.colour_scale = ColourScale("signed", scale) if scale > 0 else None  # the one fixed scale of this matrix
        self.cells = VGroup()
        h, w = cell * 0.62, cell_width or cell
        # each column's centre: wide cells (long labels) leave the ⋯ column at the plain pitch
        widths = [min(w, cell) if j is None else w for j in self.cols_shown]
        xs = np.cumsum([0.0] + [(a + b) / 2 for a, b in zip(widths, widths[1:])])
        for r, i in enumerate(self.rows_shown):
            for c, j in enumerate(self.cols_shown):
                centre = np.array([xs[c], -r * h, 0])
                if i is None or j is None:
                    mark = "\u22f1" if i is None and j is None else ("\u22ee" if i is None else "\u22ef")
                    self.cells.add(Label(mark, font_size=font_size, color=MUTED).move_to(centre))
                    continue
                square = Rectangle(width=w * 0.94, height=h * 0.9, stroke_width=0,
                                   fill_color=style.weight_colour(M[i, j], scale), fill_opacity=1).move_to(centre)
                group = VGroup(square)
                if numbers:
                    fill = style.weight_colour(M[i, j], scale)   # white on its cell, or black where white is too faint
                    ink = TEXT if style.contrast_ratio(TEXT, fill) >= style.MIN_CONTRAST else style.BACKGROUND
                    group.add(NumberText(style.signed(M[i, j], decimals), font_size, ink, align="left")
                              .place(0, 0).move_to(centre))
                self.cells.add(group)
        self.add(self.cells)
        shape = f"{name}: {M.shape[0]} \u00d7 {M.shape[1]}"
        self.shape_label = Label(shape, font_size=SMALL, color=MUTED).next_to(self.cells, DOWN, buff=0.2)
        self.add(self.shape_label)


# --- matrix × vector (attention chapter) -------------------------------------------------------
class MatrixVectorProduct(VGroup):
    """out = M · x (+ b), drawn the one way every matrix product of the lecture is drawn.

    The matrix shows its real corner entries with ⋯ and ⋮ and its true shape; the input vector shows exactly
    the entries of the matrix's shown columns (same honest ellipsis), and output entry r sits level with
    matrix row r. `output` must be the model's own result (a trace value); nothing is multiplied here.
    Run it with play(scene): a row of M, the vector (and the bias entry) light up and the output entry
    counts up to its real value, row after row: the first rows slowly, the rest quickly.
    """

    def __init__(self, matrix, vector, output, *, lang: str, name: str, bias=None, rows: int = 6, cols: int = 6,
                 colour=TEXT, vector_label: str | None = None, output_label: str | None = None,
                 bias_label: str | None = None, cell: float = 0.9, decimals: int | None = None,
                 legend_title: str | None = None,
                 legend_width: float = 2.4):
        super().__init__()
        M = np.asarray(matrix, dtype=np.float64)
        x, out = np.asarray(vector, np.float64).ravel(), np.asarray(output, np.float64).ravel()
        if M.shape != (out.size, x.size):
            raise ValueError(f"a {M.shape} matrix cannot map {x.size} numbers to {out.size}")
        self.colour = colour
        decimals_w, cell_w, cols = self.matrix_labels(M, rows, cols, cell)
        self.matrix = MatrixGrid(M, name=name, rows=rows, cols=cols, cell=cell, font_size=SMALL, decimals=decimals_w,
                                 cell_width=cell_w)
        pitch = cell * 0.62
        self.vector = VectorColumn(x, lang=lang, shown=cols, pitch=0.5, label=vector_label)
        self.output = VectorColumn(out, lang=lang, shown=rows, pitch=pitch, label=output_label, decimals=decimals)
        # the output's labels as they count up: by vector_decimals unless given (the matrix's own: style.decimals_for),
        # so a random-init GPT-2's ΔE of ±0.009 reads −0.0087, not a column of 0.0
        self.decimals = self.output.decimals
        self.output.brackets.set_color(colour)
        self.output.size_label.set_color(colour)
        self.bias = None
        if bias is not None:
            self.bias = VectorColumn(np.asarray(bias, np.float64).ravel(), lang=lang, shown=rows, pitch=pitch,
                                     label=bias_label)
        self.plus = Label("+", font_size=style.HEADER) if self.bias is not None else None
        self.equals = Label("=", font_size=style.HEADER)
        parts = [self.matrix, self.vector] + ([self.plus, self.bias] if self.bias is not None else []) \
            + [self.equals, self.output]
        def body(m):  # size labels may hang wider than their column: space the columns by their bodies
            return VGroup(m.entries, m.brackets) if isinstance(m, VectorColumn) else \
                m.cells if isinstance(m, MatrixGrid) else m

        for prev, nxt in zip(parts, parts[1:]):
            nxt.shift(RIGHT * (body(prev).get_right()[0] + 0.22 - body(nxt).get_left()[0]))
        top_row = self._row_cells(0)
        for column in [c for c in (self.output, self.bias) if c is not None]:
            first = column.entries[0]
            column.shift(UP * (top_row.get_center()[1] - first.get_center()[1]))
        matrix_mid = self.matrix.cells.get_center()[1]
        self.vector.shift(UP * (matrix_mid - self.vector.entries.get_center()[1]))
        for sym in [s for s in (self.plus, self.equals) if s is not None]:
            sym.shift(UP * (matrix_mid - sym.get_center()[1]))
        self.add(*parts)
        self._labels_below_matrix()
        self._stagger_labels()
        for entry in self.output.entries:
            entry.set_opacity(0)
        # its ends by the matrix's own rule (style.decimals_for): a random-init GPT-2's ±0.021, not "0.0 0 0.0"
        self.legend = ColourLegend(self.matrix.colour_scale, legend_title, width=legend_width, inline=True,
                                   decimals=style.decimals_for([self.matrix.colour_scale.limit])
                                   if self.matrix.colour_scale else None) \
            if legend_title else None

    @staticmethod
    def matrix_labels(M, rows: int, cols: int, cell: float) -> tuple[int, float, int]:
        """The matrix's decimals (style.decimals_for over the entries shown), its cells' width and its columns shown:
        labels of more than one decimal get cells as wide as the widest, and as many fewer columns as keep the
        matrix about as wide (at least 2 before the ⋯)."""
        def corner(c):
            return [M[i, j] for i in shown_indices(M.shape[0], rows) if i is not None
                    for j in shown_indices(M.shape[1], c) if j is not None]
        decimals = style.decimals_for(corner(cols))
        if decimals == style.WEIGHT_DECIMALS:
            return decimals, cell, cols
        def width_for(c, d):    # the cell width that holds the widest label of `c` columns at `d` decimals
            return max(cell, (max(NumberText(style.signed(v, d), SMALL).width for v in corner(c)) + 0.16) / 0.94)
        fewer = max(3, int((cols + 1) * cell / width_for(cols, decimals) + 1e-9) - 1)
        # the fewer columns' own decimals may be more (their largest entry smaller): the cells hold those labels
        decimals = style.decimals_for(corner(fewer))
        return decimals, width_for(fewer, decimals), fewer

    def place_legend(self, bar_left: float, top: float) -> ColourLegend:
        """Its matrix's legend (given legend_title), placed by its bar: the bar's left end at bar_left, its top at
        `top` (so it sits alike in every language). The legend is not part of the product: fade it in and out."""
        return self.legend.shift(RIGHT * (bar_left - self.legend.bar.get_left()[0])
                                 + UP * (top - self.legend.bar.get_top()[1]))

    def bodies(self) -> VGroup:
        """The product without its hanging size labels: centre on this, so every language lays out alike."""
        parts = [self.matrix.cells, VGroup(self.vector.entries, self.vector.brackets), self.equals,
                 VGroup(self.output.entries, self.output.brackets)]
        if self.bias is not None:
            parts += [self.plus, VGroup(self.bias.entries, self.bias.brackets)]
        return VGroup(*parts)

    def _labels_below_matrix(self, clearance: float = 0.0) -> None:
        """A column's size label that hangs left into the matrix's rows (wide cells of long labels leave the input
        vector's label under the matrix's last row) moves down to the matrix's shape label's line."""
        cells = self.matrix.cells
        for column in [c for c in (self.vector, self.bias, self.output) if c is not None]:
            label = column.size_label
            if label.get_left()[0] < cells.get_right()[0] + clearance and \
                    label.get_top()[1] > cells.get_bottom()[1] - clearance:
                label.shift(UP * (self.matrix.shape_label.get_top()[1] - label.get_top()[1]))

    def _stagger_labels(self, gap: float = 0.25, drop: float = 0.42) -> None:
        """Size labels hang wider than their columns: a label that would touch its left neighbour drops a line."""
        labels = [self.matrix.shape_label, self.vector.size_label] + \
            ([self.bias.size_label] if self.bias is not None else []) + [self.output.size_label]
        for prev, label in zip(labels, labels[1:]):
            same_line = abs(prev.get_center()[1] - label.get_center()[1]) < 0.2
            if same_line and label.get_left()[0] < prev.get_right()[0] + gap:
                label.shift(DOWN * drop)

    def _row_cells(self, slot: int) -> VGroup:
        per_row = len(self.matrix.cols_shown)
        return VGroup(*self.matrix.cells[slot * per_row:(slot + 1) * per_row])

    def highlight(self, slot: int) -> VGroup:
        """Frames around matrix row `slot`, the input vector, the bias entry and the output entry."""
        frames = [SurroundingRectangle(self._row_cells(slot), color=self.colour, buff=0.05),
                  SurroundingRectangle(self.vector.entries, color=self.colour, buff=0.08)]
        if self.bias is not None:
            frames.append(SurroundingRectangle(self.bias.entries[slot], color=self.colour, buff=0.06))
        frames.append(SurroundingRectangle(self.output.entries[slot], color=self.colour, buff=0.06))
        return VGroup(*frames)

    def count_up(self, slot: int, run_time: float = 1.0) -> Animation:
        """Output entry `slot` counts from 0 to its real value (rounded only in the label)."""
        entry, value = self.output.entries[slot], float(self.output.values[self.output.indices_shown[slot]])
        decimals = self.decimals

        def update(m, alpha):
            m.set_text(style.signed(alpha * value, decimals))
            m.set_fill(opacity=1)

        return UpdateFromAlphaFunc(entry, update, run_time=run_time)

    def play(self, scene, *, slow_rows: int = 2, slow: float = 1.2, fast: float = 0.45) -> None:
        """The whole product on `scene`: row by row, the first `slow_rows` slowly; then the ⋮ appears."""
        slots = [s for s, i in enumerate(self.output.indices_shown) if i is not None]
        frame = None
        for n, slot in enumerate(slots):
            run = slow if n < slow_rows else fast
            target = self.highlight(slot)
            if frame is None:
                frame = target
                scene.play(Create(frame), run_time=0.6 * run)
            else:
                scene.play(Transform(frame, target), run_time=0.4 * run)
            scene.play(self.count_up(slot, run), run_time=run)
        gaps = [self.output.entries[s] for s, i in enumerate(self.output.indices_shown) if i is None]
        scene.play(FadeOut(frame), *[g.animate.set_opacity(1) for g in gaps], run_time=0.6)

    def finish(self) -> "MatrixVectorProduct":
        """Show every output entry at its final value at once (e.g. when a beat is skipped to)."""
        for slot, i in enumerate(self.output.indices_shown):
            entry = self.output.entries[slot]
            if i is not None:
                entry.set_text(style.signed(float(self.output.values[i]), self.decimals))
            entry.set_opacity(1)
        return self


# --- heatmap (attention chapter) ----------------------------------------------------------------
class Heatmap(VGroup):
    """A whole matrix as cells: EVERY entry is one cell coloured by one fixed ColourScale, nothing elided.

    For tables too large for numbers (W_E: 64 × 123, the position table: 64 × 32). Colours are the
    scale's colours at LEVELS steps per sign (the value is rounded only for its colour, like a label);
    cells of one colour are drawn as one shape, so thousands of cells stay cheap to render and animate.
    Rows go down, columns across, in the order given; use column_frame / row_frame / cell_centre to
    point at entries, and pair it with a ColourLegend of the same scale.
    """

    LEVELS = 48

    def __init__(self, values, scale: "ColourScale", *, width: float, height: float):
        super().__init__()
        V = np.asarray(values, dtype=np.float64)
        if V.ndim != 2 or not V.size:
            raise ValueError("a Heatmap needs a non-empty 2-D array")
        self.values, self.colour_scale = V, scale
        self.n_rows, self.n_cols = V.shape
        self._width, self._height = width, height
        with np.errstate(invalid="ignore"):
            levels = np.clip(np.round(V / scale.limit * self.LEVELS), -self.LEVELS, self.LEVELS)
        self.levels = np.where(np.isneginf(V), -np.inf, levels)        # what each cell's colour shows
        cw, ch = width / self.n_cols, height / self.n_rows
        grow = 0.01 * min(cw, ch)                                      # no seams between neighbouring cells
        self.box = Rectangle(width=width, height=height, stroke_width=0, fill_opacity=0)
        self.add(self.box)
        for level in np.unique(self.levels):
            rows, cols = np.nonzero(self.levels == level)
            x0, x1 = -width / 2 + cols * cw - grow, -width / 2 + (cols + 1) * cw + grow
            y1, y0 = height / 2 - rows * ch + grow, height / 2 - (rows + 1) * ch - grow
            corners = np.stack([np.stack([x0, y1]), np.stack([x1, y1]), np.stack([x1, y0]), np.stack([x0, y0]),
                                np.stack([x0, y1])], axis=0).transpose(2, 0, 1)      # (cells, 5, 2)
            a, b = corners[:, :-1], corners[:, 1:]                                     # 4 straight edges each
            curves = np.stack([a, a + (b - a) / 3, a + 2 * (b - a) / 3, b], axis=2)   # (cells, 4, 4, 2)
            points = np.zeros((curves.shape[0] * 16, 3))
            points[:, :2] = curves.reshape(-1, 2)
            value = -np.inf if np.isneginf(level) else level / self.LEVELS * scale.limit
            shape = VMobject(fill_color=scale.colour(value), fill_opacity=1, stroke_width=0)
            shape.points = points
            self.add(shape)

    def shown_colour(self, i: int, j: int):
        """The colour cell (i, j) is drawn in."""
        level = self.levels[i, j]
        return self.colour_scale.colour(-np.inf if np.isneginf(level) else level / self.LEVELS * self.colour_scale.limit)

    @property
    def cell_width(self) -> float:
        return self.box.width / self.n_cols

    @property
    def cell_height(self) -> float:
        return self.box.height / self.n_rows

    def column_x(self, j: int) -> float:
        return self.box.get_left()[0] + (j + 0.5) * self.cell_width

    def row_y(self, i: int) -> float:
        return self.box.get_top()[1] - (i + 0.5) * self.cell_height

    def cell_centre(self, i: int, j: int) -> np.ndarray:
        return np.array([self.column_x(j), self.row_y(i), 0.0])

    def column_frame(self, j: int, color=TEXT, stroke_width: float = 2) -> Rectangle:
        """An outline around column j (all rows)."""
        return self.columns_frame(j, j, color, stroke_width)

    def columns_frame(self, first: int, last: int, color=TEXT, stroke_width: float = 2) -> Rectangle:
        """An outline around columns first..last (inclusive)."""
        width = (last - first + 1) * self.cell_width
        x = (self.column_x(first) + self.column_x(last)) / 2
        return Rectangle(width=width, height=self.box.height, stroke_color=color,
                         stroke_width=stroke_width).move_to([x, self.box.get_center()[1], 0])

    def row_frame(self, i: int, color=TEXT, stroke_width: float = 2) -> Rectangle:
        return Rectangle(width=self.box.width, height=self.cell_height, stroke_color=color,
                         stroke_width=stroke_width).move_to([self.box.get_center()[0], self.row_y(i), 0])


class MagnitudeStrip(VGroup):
    """A vector as one row of cells: dark -> white by |entry| on one fixed ColourScale("magnitude", limit) shared by
    every strip it is compared with (and its ColourLegend); on a "signed" scale, blue (+) / red (−) by the entry
    itself, as Q and K are drawn.

    Every entry is a cell while a cell is at least MIN_CELL wide. A longer vector (a checkpoint's 64 numbers per
    head under a 0.5-wide grid) is cut by the visual language's rule for vectors: its real first entries, "⋯", and
    its real last entry (`indices_shown`, None for the gap), in as many cells of MIN_CELL as the width holds; its
    true length is said by the caller's label. `cells` are the entries drawn (the "⋯" is `gap`, not a cell)."""

    MIN_CELL = 0.08        # scene units: about 5 px at 480p, the narrowest cell told apart from its neighbours
    GAP_WIDTH = 0.3        # the room of the "⋯" in a cut strip

    def __init__(self, values, scale: ColourScale, *, width: float, height: float = 0.3):
        super().__init__()
        self.values, self.colour_scale = np.asarray(values, dtype=np.float64).ravel(), scale
        n = self.values.size
        mark = Label("\u22ef", font_size=SMALL, color=MUTED)
        if width / n >= self.MIN_CELL:
            self.indices_shown, gap_w = list(range(n)), 0.0
        else:   # the first entries, the gap, the last: at least one before the gap; the gap clears its "⋯"
            gap_w = max(self.GAP_WIDTH, mark.width + 0.1)
            fits = max(int((width - gap_w) / self.MIN_CELL), 2)
            self.indices_shown = shown_indices(n, fits)
        step = (width - gap_w) / sum(i is not None for i in self.indices_shown)
        self.cells, self.gap, x = VGroup(), None, 0.0
        for i in self.indices_shown:
            if i is None:
                self.gap = mark.move_to([x + gap_w / 2, 0, 0])
                x += gap_w
                continue
            self.cells.add(Rectangle(width=step * 0.9, height=height, stroke_color=style.CELL_OUTLINE,
                                     stroke_width=1, fill_color=self.cell_colour(self.values[i]), fill_opacity=1)
                           .move_to([x + step / 2, 0, 0]))
            x += step
        self.add(self.cells)
        if self.gap is not None:
            self.add(self.gap)

    def cell_colour(self, value: float):
        """An entry's colour: by its sign and size on a signed scale, else by its size."""
        return self.colour_scale.colour(value if self.colour_scale.kind == "signed" else abs(value))

    def recolour(self, values) -> list:
        """Animations to new values on the same scale."""
        self.values = np.asarray(values, dtype=np.float64).ravel()
        drawn = [self.values[i] for i in self.indices_shown if i is not None]
        return [c.animate.set_fill(self.cell_colour(v), opacity=1) for c, v in zip(self.cells, drawn)]


def magnitude_scale(*arrays) -> ColourScale:
    """The activation scale of vectors compared side by side (ColourScale.magnitude_for)."""
    return ColourScale.magnitude_for(*arrays)


class HeatMatrix(VGroup):
    """A whole matrix as coloured cells without numbers (e.g. Q: one row per token, one column per entry),
    on one ColourScale, with its true shape below. rows[r] is row r's cells; cells can be wider than tall
    so that rows line up with word labels at a legible pitch."""

    def __init__(self, matrix, scale: ColourScale, *, name: str, cell_w: float = 0.28, cell_h: float = 0.44,
                 font_size: float = SMALL):
        super().__init__()
        M = np.asarray(matrix, dtype=np.float64)
        if M.ndim != 2:
            raise ValueError("HeatMatrix needs a 2-D array")
        self.matrix, self.colour_scale = M, scale
        self.rows = VGroup()
        for r in range(M.shape[0]):
            self.rows.add(VGroup(*[Rectangle(width=cell_w * 0.9, height=cell_h * 0.9, stroke_width=0,
                                             fill_color=scale.colour(M[r, c]), fill_opacity=1)
                                   .move_to([c * cell_w, -r * cell_h, 0]) for c in range(M.shape[1])]))
        self.add(self.rows)
        self.shape_label = Label(f"{name}: {M.shape[0]} \u00d7 {M.shape[1]}", font_size=font_size, color=MUTED) \
            .next_to(self.rows, DOWN, buff=0.2)
        self.add(self.shape_label)

    def row_y(self, r: int) -> float:
        return float(self.rows[r].get_center()[1])
