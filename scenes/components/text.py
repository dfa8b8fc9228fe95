"""Text: labels on a baseline, numbers that change every frame, captions, and formulas."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from manim import ORIGIN, UP, MathTex, Text, VectorizedPoint, VGroup, VMobject

from .. import style
from ..style import FONT, LABEL, TEXT


class LayoutError(RuntimeError):
    """Something would not fit legibly in the title-safe area."""


def light(mobject):
    """Drop the parsed SVG path each glyph keeps after building its points: copies (every Fade and
    Transform makes some) then cost a fraction of the time. Nothing reads it after construction."""
    for m in mobject.get_family():
        m.__dict__.pop("path_obj", None)
    return mobject


def plain_shape(glyph: VMobject, color=None) -> VMobject:
    """A bare copy of a glyph's outline: no SVG baggage, so copies and transforms stay cheap."""
    shape = VMobject(fill_color=color if color is not None else glyph.get_fill_color(), fill_opacity=1,
                     stroke_width=0)
    shape.points = glyph.points.copy()
    return shape


# --- text that sits on a baseline --------------------------------------------------
class Label(VGroup):
    """A single-line text whose baseline is known, so words of a row line up like type.

    Pango renders "H" + text; the H (which never forms a ligature) marks the baseline
    and is then dropped.
    """

    def __init__(self, text: str, font_size: float = LABEL, color=TEXT, weight: str = "NORMAL"):
        if not text.strip():
            raise ValueError("a Label needs visible text")
        outlines, baseline = _label_outlines(text, font_size, weight)
        shapes = []
        for points in outlines:
            shape = VMobject(fill_color=color, fill_opacity=1, stroke_width=0)
            shape.points = points.copy()
            shapes.append(shape)
        super().__init__(*shapes)
        self.text, self.font_size = text, font_size
        self._descent_ratio = (baseline - self.get_bottom()[1]) / max(self.height, 1e-9)

    def baseline(self) -> float:
        return self.get_bottom()[1] + self._descent_ratio * self.height

    def on_baseline(self, y: float) -> "Label":
        return self.shift((y - self.baseline()) * UP)


@lru_cache(maxsize=None)
def _label_outlines(text: str, font_size: float, weight: str) -> tuple[tuple[np.ndarray, ...], float]:
    """Pango's glyph outlines for "H" + text (the H dropped) and the H's baseline; shaped once per text and size."""
    ref = Text("H" + text, font=FONT, font_size=font_size, weight=weight)
    return tuple(g.points.copy() for g in ref.submobjects[1:]), float(ref[0].get_bottom()[1])


@dataclass(frozen=True)
class _Glyph:
    shape: VMobject | None    # None for a space
    advance: float
    dx: float                 # left edge of the shape, from the pen position
    dy: float                 # bottom of the shape, from the baseline

    @property
    def points(self) -> np.ndarray:
        """The outline with the pen at the origin on the baseline."""
        return self.shape.points - np.array([self.shape.get_left()[0] - self.dx, self.shape.get_bottom()[1] - self.dy, 0])


@lru_cache(maxsize=None)
def _glyph(char: str, font_size: float) -> _Glyph:
    """Measure one character between two zeros, once per size; digits get one common (tabular) advance."""
    zero_advance = _zero_advance(font_size)
    if char == " ":
        spaced = Text("0 0", font=FONT, font_size=font_size)
        return _Glyph(None, spaced[1].get_left()[0] - spaced[0].get_left()[0] - zero_advance, 0.0, 0.0)
    t = Text("0" + char + "0", font=FONT, font_size=font_size)
    if len(t) != 3:
        raise ValueError(f"cannot measure {char!r} as a single glyph")
    start = t[0].get_left()[0] + zero_advance
    shape = plain_shape(t[1])
    advance = t[2].get_left()[0] - start
    dx, dy = shape.get_left()[0] - start, shape.get_bottom()[1] - t[0].get_bottom()[1]
    if char.isdigit():
        cell = max(_glyph_width(d, font_size) for d in "0123456789") * 1.12
        return _Glyph(shape, cell, (cell - shape.width) / 2, dy)
    return _Glyph(shape, advance, dx, dy)


@lru_cache(maxsize=None)
def _zero_advance(font_size: float) -> float:
    zeros = Text("00", font=FONT, font_size=font_size)
    return zeros[1].get_left()[0] - zeros[0].get_left()[0]


@lru_cache(maxsize=None)
def _glyph_width(digit: str, font_size: float) -> float:
    return Text(digit, font=FONT, font_size=font_size)[0].width


class NumberText(VGroup):
    """A number (or any short string of symbols) that can change every frame, cheaply.

    Glyphs are measured once and copied, digits are tabular, and the text stays
    anchored at its right (or left) end on its baseline while it changes.
    """

    def __init__(self, text: str, font_size: float = LABEL, color=TEXT, align: str = "right"):
        super().__init__()
        self.font_size, self.color_, self.align = font_size, color, align
        self.anchor = VectorizedPoint(ORIGIN)  # (x, baseline) of the aligned end
        self._pool: list[VMobject] = []        # glyph shapes, reused from frame to frame
        self.text = ""
        self.set_text(text)

    def anchor_point(self) -> np.ndarray:
        return self.anchor.get_location().copy()

    def set_text(self, text: str) -> "NumberText":
        if text == self.text and self.submobjects:
            return self
        x, y = self.anchor_point()[:2]
        previous = [m for m in self.submobjects if m is not self.anchor]
        opacity = max((m.get_fill_opacity() for m in previous), default=1.0)
        glyphs, pens, pen = [], [], 0.0
        for char in text:
            g = _glyph(char, self.font_size)
            if g.shape is not None:
                glyphs.append(g)
                pens.append(pen)
            pen += g.advance
        offset = x - pen if self.align == "right" else x
        while len(self._pool) < len(glyphs):
            self._pool.append(VMobject(fill_color=self.color_, fill_opacity=1, stroke_width=0))
        shapes = self._pool[:len(glyphs)]
        for s, g, p in zip(shapes, glyphs, pens):
            s.points = g.points + np.array([p + offset, y, 0])
            s.set_fill(self.color_, opacity=opacity)
        self.submobjects = [self.anchor, *shapes]
        self.text = text
        return self

    def place(self, x: float, baseline: float) -> "NumberText":
        self.shift(np.array([x, baseline, 0]) - self.anchor_point())
        return self

    def baseline(self) -> float:
        return self.anchor_point()[1]


NO_BREAK_BEFORE = set("\uff0c\u3002\uff1b\uff1a\u3001\uff09\u201d\u2019\uff01\uff1f,.;:)")   # full-width , . ; : (enumeration comma) ) closing quotes ! ?
NO_BREAK_AFTER = set("\u201c\u2018\uff08(")                                              # opening quotes, full-width (


def _is_cjk(ch: str) -> bool:
    return "\u2e80" <= ch <= "\u9fff" or "\u3000" <= ch <= "\u303f" or "\uff00" <= ch <= "\uffef"


def break_units(text: str) -> list[tuple[str, bool]]:
    """The text cut where a line may break: at spaces, and between two characters where one is Chinese (or Chinese
    punctuation), never before closing or after opening punctuation, nor between a word and the number after it
    or a number and the word after it. Each unit: (its text, whether a space comes before it); join_units gives
    back the text."""
    units, current, gap = [], "", False
    for i, ch in enumerate(text):
        after = text[i + 1:i + 2]
        if ch == " " and current and (after.isdigit() or (current[-1].isdigit() and _is_cjk(after))):
            # "MLP 2", "attn 0", "5" in Chinese "the first 5": a word and its number, a number and its Chinese word
            current += ch
            continue
        if ch == " ":
            if current:
                units.append((current, gap))
                current = ""
            gap = True
            continue
        prev = text[i - 1] if i else ""
        if current and (_is_cjk(ch) or _is_cjk(prev)) and ch not in NO_BREAK_BEFORE and prev not in NO_BREAK_AFTER \
                and not (prev.isdigit() or prev in "% "):      # "5" + a Chinese counter, "20%" + a particle: a number and its word stay together
            units.append((current, gap))
            current, gap = "", False
        current += ch
    if current:
        units.append((current, gap))
    return units


def join_units(units: list[tuple[str, bool]]) -> str:
    return "".join((" " if gap and i else "") + t for i, (t, gap) in enumerate(units))


BREAK_AFTER = set(",.;:\uff0c\u3002\uff1b\uff1a")      # a line had best end on one of these
MID_CLAUSE = 1.0          # scene units a line may be wider to end on one of BREAK_AFTER rather than mid-clause


def rebreak(text: str, n_lines: int, font_size: float, max_width: float) -> list[str] | None:
    """The caption's words in `n_lines` lines (the author's breaks dropped), broken where the widest line is
    narrowest, counting a break that is not after punctuation as MID_CLAUSE wider (half as much again between two
    characters with no space, as inside a Chinese phrase); None if no break fits."""
    joined = "".join(line if i == 0 else (("" if _is_cjk(text_end[-1:]) or _is_cjk(line[:1]) else " ") + line)
                     for i, (line, text_end) in enumerate(zip(text.split("\n"), [""] + text.split("\n"))))
    units = break_units(joined)
    unit_w = [_unit_width(t, font_size) for t, _ in units]
    # a line's width: its units' own widths and, between two units, the room the whole text as drawn puts there
    # on average (a space, and the glyphs' side bearings the units' own widths leave out)
    room = (Label(join_units(units), font_size=font_size).width - sum(unit_w)) / max(len(units) - 1, 1)
    at = np.concatenate([[0.0], np.cumsum([w + (room if i else 0.0) for i, w in enumerate(unit_w)])])

    def width(i: int, j: int) -> float:          # a line of units i..j-1 (the room before unit i is not in it)
        return at[j] - at[i] - (room if i else 0.0)

    # where a line as drawn is still wider than allowed, the break is chosen again within a limit lowered by that much
    limit = max_width
    for _ in range(8):
        lines = _best_breaks(units, n_lines, width, limit)
        if lines is None:
            return None
        widest = max(Label(line, font_size=font_size).width for line in lines)
        if widest <= max_width:
            return lines
        limit -= widest - max_width + 0.05
    return None


def _best_breaks(units, n_lines: int, width, max_width: float) -> list[str] | None:
    m = len(units)
    best = {(0, 0): (0.0, 0.0, [])}     # (lines, units placed) -> (cost, widest, breaks)
    for k in range(1, n_lines + 1):
        for j in range(1, m + 1):
            options = []
            for i in range(j):
                if (k - 1, i) not in best or width(i, j) > max_width:
                    continue
                cost, widest, cuts = best[k - 1, i]
                penalty = 0.0 if j == m or units[j - 1][0][-1] in BREAK_AFTER else \
                    MID_CLAUSE if units[j][1] else 1.5 * MID_CLAUSE       # at a space, else inside a run of text
                w = max(widest, width(i, j))
                options.append((max(cost, width(i, j) + penalty), w, cuts + [j]))
            if options:
                best[k, j] = min(options)
    if (n_lines, m) not in best:
        return None
    cuts = [0] + best[n_lines, m][2]
    return [join_units(units[a:b]) for a, b in zip(cuts, cuts[1:])]


@lru_cache(maxsize=4096)
def _unit_width(text: str, font_size: float) -> float:
    return Label(text, font_size=font_size).width


class Caption(VGroup):
    """Narration, centred line by line. Lines are broken by the author ("\\n"), never squeezed.

    Lines sit on fixed baselines, so a one-line and a two-line caption, in English or
    Chinese, end on the same line at the bottom of the title-safe area.

    Where the numbers or words filled in make an author's line wider than the title-safe area, the words are
    broken again into as many lines, where the widest is narrowest (rebreak: at spaces, and between Chinese
    characters); `text` is then the caption as shown. Only if no such break fits is it a LayoutError.
    """

    LEADING = 1.45   # baseline to baseline, in em

    def __init__(self, text: str, lang: str, font_size: float = style.CAPTION, bottom: float | None = None):
        super().__init__()
        limit = 2 * style.safe_half_width()
        lines = [Label(line, font_size=font_size) for line in text.split("\n")]
        wide = next((line for line in lines if line.width > limit), None)
        if wide is not None:
            again = rebreak(text, len(lines), font_size, limit)
            if again is None:
                raise LayoutError(f"caption line too wide for the title-safe area ({lang}): {wide.text!r}")
            text = "\n".join(again)
            lines = [Label(line, font_size=font_size) for line in again]
        self.text, self.font_size = text, font_size
        em = font_size * style.EM_PX_PER_FONT_SIZE / 60  # scene units per em (60 px per unit at 480p)
        last = (-style.safe_half_height() + 0.3 * em) if bottom is None else bottom
        for i, line in enumerate(lines):
            line.move_to(ORIGIN, coor_mask=np.array([1, 0, 0]))
            line.on_baseline(last + (len(lines) - 1 - i) * self.LEADING * em)
        self.add(*lines)


def caption(text: str, lang: str, y: float | None = None, font_size: float = style.CAPTION) -> Caption:
    """A caption at the bottom of the frame, or centred on y."""
    c = Caption(text, lang, font_size)
    if y is not None:
        c.move_to([0, y, 0])
    return c


def math_tex(*parts: str, colours: dict | None = None) -> MathTex:
    """A formula in the lecture's maths size, split into `parts`; a part listed in `colours` takes its colour."""
    m = light(MathTex(*parts, font_size=style.MATH_FONT_SIZE))
    for part, s in zip(m, parts):
        if colours and s in colours:
            part.set_color(colours[s])
    return m


ZH_STOPS = set("\u3002\uff0c\uff1b\uff1a\uff01\uff1f")   # Chinese punctuation: no space after it before Chinese
NO_SPACE_BEFORE = set(".,;:!?\u3002\uff0c\uff1b\uff1a\uff01\uff1f")   # a word that sticks to the one before it


def join_tokens(words: list[str]) -> str:
    """Generated words as text: a space between two words, none before punctuation or between two Chinese words."""
    out = ""
    for w in words:
        if out and not (w[:1] in NO_SPACE_BEFORE or (_is_cjk(out[-1]) or out[-1] in ZH_STOPS) and _is_cjk(w[:1])):
            out += " "
        out += w
    return out


def wrap_words(words: list[str], font_size: float, max_width: float) -> list[str]:
    """Words (a generated text's tokens) in lines no wider than max_width, filled greedily, joined by join_tokens;
    a word wider than the line on its own is a line of its own."""
    lines: list[list[str]] = [[]]
    for w in words:
        trial = lines[-1] + [w]
        if lines[-1] and Label(join_tokens(trial), font_size=font_size).width > max_width:
            lines.append([w])
        else:
            lines[-1] = trial
    return [join_tokens(line) for line in lines if line]
