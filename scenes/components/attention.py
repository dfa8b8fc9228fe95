"""Attention: the attention grid (keys down, queries across) and the masked cell."""

from __future__ import annotations

import numpy as np
from manim import RIGHT, Rectangle, VGroup

from .. import style
from ..style import ATTENTION as ATTENTION_STRINGS
from ..style import SMALL
from .charts import ColourScale
from .text import Label, LayoutError, NumberText, _glyph


# --- attention grid (attention chapter) --------------------------------------------------------
class AttentionGrid(VGroup):
    """An attention pattern as heatmap squares: KEYS DOWN THE LEFT (rows), QUERIES ACROSS THE TOP (columns).

    The same orientation in every scene of the lecture: column q is query q's line (softmax normalises
    it, so a weights column sums to 1), row k is key k; the causal mask darkens the lower-left triangle
    (key after query). `values` come in the trace's orientation [query, key]; −∞ cells are dark red.
    The axis titles say which axis is which; key rows are labelled with their word and position, query
    columns with their position (teal). Numbers go inside cells only through cell_numbers(), which
    refuses texts that would not fit at the legibility floor.
    """

    MAX_CELL = 0.46        # scene units
    LABEL_PITCH = 0.42     # the closest row/column label pitch that stays legible at 480p; closer rows share labels

    def __init__(self, values, scale: ColourScale, *, tokens: list[str], lang: str, height: float = 5.52,
                 font_size: float = SMALL, focus: int | None = None):
        """focus: a query whose line the scene will frame (line_frame): its position is always written above it,
        and a neighbour's that would crowd it is left out."""
        super().__init__()
        V = np.asarray(values, dtype=np.float64)
        T = len(tokens)
        if V.shape != (T, T):
            raise ValueError(f"an attention grid needs a {T} x {T} array, got {V.shape}")
        self.tokens, self.lang, self.values, self.colour_scale, self.font_size = list(tokens), lang, V, scale, font_size
        self.cell = cell = min(self.MAX_CELL, height / T)
        self._squares = [[None] * T for _ in range(T)]
        self.squares = VGroup()
        for q in range(T):
            for k in range(T):
                sq = Rectangle(width=cell * 0.92, height=cell * 0.92, stroke_color=style.CELL_OUTLINE, stroke_width=1,
                               fill_color=scale.colour(V[q, k]), fill_opacity=1).move_to([q * cell, -k * cell, 0])
                self._squares[q][k] = sq
                self.squares.add(sq)
        self.add(self.squares)
        stride = max(1, int(np.ceil(self.LABEL_PITCH / cell - 1e-9)))
        self.labelled = list(range(0, T, stride))
        self.key_words, self.key_indices, self.query_indices = VGroup(), VGroup(), VGroup()
        left = -cell / 2 - 0.1
        for k in self.labelled:
            idx = NumberText(str(k), font_size, style.POSITION).place(left, self._digit_baseline(self.row_y(k)))
            word = Label(style.token_label(tokens[k]), font_size=font_size)
            word.shift(RIGHT * (idx.get_left()[0] - 0.15 - word.get_right()[0])).on_baseline(idx.baseline())
            self.key_indices.add(idx)
            self.key_words.add(word)
        top = cell / 2 + 0.12
        self.framed: set[int] = set()          # the query lines framed by line_frame (tests/layout_checks.py)

        def index(q: int) -> NumberText:
            n = NumberText(str(q), font_size, style.POSITION, align="left").place(0, top)
            return n.shift(RIGHT * (self.column_x(q) - n.get_center()[0]))

        pinned = index(focus) if focus is not None else None
        kept = []                    # right to left: a two-digit index too close to the one after it is left out
        for q in sorted(set(self.labelled) | ({focus} if focus is not None else set()), reverse=True):
            n = pinned if q == focus else index(q)
            clear = lambda a, b: a.get_right()[0] + 0.15 <= b.get_left()[0] or b.get_right()[0] + 0.15 <= a.get_left()[0]
            if q == focus:
                kept = [k for k in kept if clear(n, k)] + [n]
            elif (not kept or n.get_right()[0] + 0.15 <= kept[-1].get_left()[0]) and (pinned is None or clear(n, pinned)):
                kept.append(n)
        self.query_indices.add(*sorted(kept, key=lambda n: n.get_center()[0]))
        self.query_title = Label(ATTENTION_STRINGS("queries_axis", lang), font_size=font_size, color=style.QUERY)
        self.query_title.shift(RIGHT * (left - self.query_title.get_right()[0])).on_baseline(top)
        self.key_title = Label(ATTENTION_STRINGS("keys_axis", lang), font_size=font_size, color=style.KEY)
        self.key_title.shift(RIGHT * (self.query_title.get_left()[0] - 0.3 - self.key_title.get_right()[0]))
        self.key_title.on_baseline(top)
        self.axes = VGroup(self.key_words, self.key_indices, self.query_indices, self.query_title, self.key_title)
        self.add(self.axes)

    # geometry (follows the grid when it moves)
    def cell_square(self, q: int, k: int) -> Rectangle:
        return self._squares[q][k]

    def line(self, q: int) -> VGroup:
        """Query q's line: its column, one cell per key."""
        return VGroup(*self._squares[q])

    def key_row(self, k: int) -> VGroup:
        return VGroup(*[self._squares[q][k] for q in range(len(self.tokens))])

    def column_x(self, q: int) -> float:
        return float(self._squares[q][0].get_center()[0])

    def row_y(self, k: int) -> float:
        return float(self._squares[0][k].get_center()[1])

    def _digit_baseline(self, y: float) -> float:
        return y - 0.5 * _glyph("0", self.font_size).shape.height

    def row_baseline(self, k: int) -> float:
        """Where a number beside row k sits, so it reads level with the row's label."""
        return self._digit_baseline(self.row_y(k))

    def line_frame(self, q: int, color=style.QUERY) -> Rectangle:
        """A frame around query q's line (give q as the grid's focus, so that its position is written above it)."""
        self.framed.add(q)
        col = self.line(q)
        return Rectangle(width=self.cell + 0.04, height=col.height + 0.1, stroke_color=color, stroke_width=3) \
            .move_to(col)

    # colours
    def set_values(self, values, scale: ColourScale | None = None) -> "AttentionGrid":
        """Recolour in place (e.g. after the mask or the softmax); values in the trace's [query, key] order."""
        self.values = np.asarray(values, dtype=np.float64)
        self.colour_scale = scale or self.colour_scale
        for q, column in enumerate(self._squares):
            for k, sq in enumerate(column):
                sq.set_fill(self.colour_scale.colour(self.values[q, k]), opacity=1)
        return self

    def recolour(self, values, scale: ColourScale | None = None, queries=None) -> list:
        """Animations that recolour the grid (only the given queries' lines, if given) to new values."""
        values = np.asarray(values, dtype=np.float64)
        scale = scale or self.colour_scale
        chosen = range(len(self.tokens)) if queries is None else queries
        anims = []
        for q in chosen:
            for k, sq in enumerate(self._squares[q]):
                anims.append(sq.animate.set_fill(scale.colour(values[q, k]), opacity=1))
        self.values = self.values.copy()
        for q in chosen:
            self.values[q] = values[q]
        self.colour_scale = scale
        return anims

    # marks and numbers
    def mask_marks(self, avoid_queries=()) -> VGroup:
        """"−∞" on the masked cells' first appearance: in every masked cell if it fits, else one mark on the masked
        cell nearest the middle of the masked triangle whose mark lies on masked cells only (none if no such cell:
        the legend's masked entry still says it), away from the lines of `avoid_queries` (lines about to be
        recoloured while the mark is up)."""
        masked = [(q, k) for q in range(len(self.tokens)) for k in range(len(self.tokens))
                  if np.isneginf(self.values[q, k])]
        if not masked:
            return VGroup()
        probe = Label(style.MASK_TEXT, font_size=self.font_size)
        if probe.width <= self.cell * 0.85:
            return VGroup(*[Label(style.MASK_TEXT, font_size=self.font_size).move_to(self._squares[q][k])
                            for q, k in masked])
        allowed = {c for c in masked if c[0] not in avoid_queries}
        centre = np.mean([self._squares[q][k].get_center() for q, k in masked], axis=0)
        for q, k in sorted(masked, key=lambda c: np.linalg.norm(self._squares[c[0]][c[1]].get_center() - centre)):
            probe.move_to(self._squares[q][k])
            under = {(a, b) for a in range(len(self.tokens)) for b in range(len(self.tokens))
                     if _overlaps(probe, self._squares[a][b])}
            if under <= allowed and _within(probe, self.squares):
                return VGroup(probe)
        return VGroup()

    def numbers_fit(self, texts) -> bool:
        """True if these texts (a T × T list in [query, key] order) can sit inside the cells legibly."""
        widest = max(NumberText(t, self.font_size).width for row in texts for t in row if t)
        return widest <= self.cell * 0.88

    def cell_numbers(self, texts) -> VGroup:
        """Numbers inside the cells ([query][key] texts; empty text = none); LayoutError if they cannot be read."""
        if not self.numbers_fit(texts):
            raise LayoutError("numbers do not fit inside the attention grid's cells at the legibility floor")
        group = VGroup()
        for q, row in enumerate(texts):
            for k, t in enumerate(row):
                if t:
                    n = NumberText(t, self.font_size, align="left").place(0, 0)
                    group.add(n.move_to(self._squares[q][k]))
        return group


def _overlaps(a, b, tol: float = 0.02) -> bool:
    """Whether two mobjects' boxes overlap by more than a hair."""
    return (a.get_left()[0] + tol < b.get_right()[0] and b.get_left()[0] + tol < a.get_right()[0]
            and a.get_bottom()[1] + tol < b.get_top()[1] and b.get_bottom()[1] + tol < a.get_top()[1])


def _within(a, b) -> bool:
    """Whether a's box lies inside b's."""
    return (a.get_left()[0] >= b.get_left()[0] and a.get_right()[0] <= b.get_right()[0]
            and a.get_bottom()[1] >= b.get_bottom()[1] and a.get_top()[1] <= b.get_top()[1])
