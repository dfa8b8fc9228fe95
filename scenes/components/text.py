"""Text: labels on a baseline, numbers that change every frame, captions, and formulas."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from manim import ORIGIN, UP, MathTex, Text, VectorizedPoint, VGroup, VMobject

from .. import style
from . import outline_cache
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
    """Pango's glyph outlines for "H" + text (the H dropped) and the H's baseline; shaped once per text and size on
    this machine (outline_cache keeps them on disk), and read once per process."""
    path = outline_cache.entry_path(text, font_size, weight, FONT)
    found = outline_cache.load(path)
    if found is not None:
        return found
    ref = Text("H" + text, font=FONT, font_size=font_size, weight=weight)
    outlines, baseline = tuple(g.points.copy() for g in ref.submobjects[1:]), float(ref[0].get_bottom()[1])
    outline_cache.store(path, outlines, baseline)
    return outlines, baseline


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
    anchored at its right (or left, or `align="centre"` its middle) on its baseline while it changes.
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
        offset = x - pen if self.align == "right" else x - pen / 2 if self.align == "centre" else x
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


def _one_line(text: str) -> str:
    """The author's lines joined: by a space, or by nothing where either side is Chinese."""
    lines = text.split("\n")
    return "".join(line if i == 0 else (("" if _is_cjk(before[-1:]) or _is_cjk(line[:1]) else " ") + line)
                   for i, (line, before) in enumerate(zip(lines, [""] + lines)))


def rebreak(text: str, n_lines: int, font_size: float, max_width: float) -> list[str] | None:
    """The caption's words in `n_lines` lines (the author's breaks dropped), broken where the widest line is
    narrowest, counting a break that is not after punctuation as MID_CLAUSE wider (half as much again between two
    characters with no space, as inside a Chinese phrase); None if no break fits."""
    units = break_units(_one_line(text))
    width = _line_widths(units, font_size, _room(units, font_size))
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


def _room(units, font_size: float) -> float:
    """Between two units, the room the whole text as drawn puts there on average (a space, and the glyphs' side
    bearings the units' own widths leave out)."""
    own = sum(_unit_width(t, font_size) for t, _ in units)
    return (Label(join_units(units), font_size=font_size).width - own) / max(len(units) - 1, 1)


def _line_widths(units, font_size: float, room: float):
    """width(i, j): a line of units i..j-1 as estimated from the units' own widths and the room between them."""
    unit_w = [_unit_width(t, font_size) for t, _ in units]
    at = np.concatenate([[0.0], np.cumsum([w + (room if i else 0.0) for i, w in enumerate(unit_w)])])

    def width(i: int, j: int) -> float:          # the room before unit i is not in it
        return at[j] - at[i] - (room if i else 0.0)
    return width


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

    Where the numbers or words filled in make an author's line wider than the title-safe area, the caption is
    fitted (fit_caption), never refused: its words broken again into as many lines (rebreak); failing that, set
    smaller, down to the legibility floor (style.SMALL); failing that, its longest words cut with "…" (a
    checkpoint's long BPE tokens), then its end. `text` is the caption as shown, `fitted` how it was fitted
    ("", "rebroken", "scaled", "elided").
    """

    LEADING = 1.45   # baseline to baseline, in em

    def __init__(self, text: str, lang: str, font_size: float = style.CAPTION, bottom: float | None = None):
        super().__init__()
        lines, font_size, self.fitted = fit_caption(text, font_size, 2 * style.safe_half_width())
        text = "\n".join(line.text for line in lines)
        self.text, self.font_size = text, font_size
        em = font_size * style.EM_PX_PER_FONT_SIZE / 60  # scene units per em (60 px per unit at 480p)
        last = (-style.safe_half_height() + 0.3 * em) if bottom is None else bottom
        for i, line in enumerate(lines):
            line.move_to(ORIGIN, coor_mask=np.array([1, 0, 0]))
            line.on_baseline(last + (len(lines) - 1 - i) * self.LEADING * em)
        self.add(*lines)


ELLIPSIS = "\u2026"
MIN_LETTERS = 3     # a word in a caption is cut with "…" to no fewer letters than this
QUOTED = set('"\u201c\u201d\u2423\u2026')   # a unit with one of these is a quoted word or a token: the one to cut
WORD_IN_MARKS = re.compile(r"^(\W*?)(\w.*?\w|\w)?(\u2026?\W*)$")   # opening marks, letters, "…", closing marks


def fit_caption(text: str, font_size: float, limit: float) -> tuple[list[Label], float, str]:
    """The caption's lines, each at most `limit` wide, their size, and how they were fitted, in this order of
    preference (the first that fits):
      ""          the author's lines as they are;
      "rebroken"  the words in as many lines, broken again (rebreak);
      "scaled"    the same at a smaller size, a pixel at a time down to the legibility floor (style.SMALL);
      "elided"    at the floor, every quoted word or token without a digit cut to the most letters that fit, with
                  "…" (a checkpoint's BPE token, already cut to style.LABEL_UNITS, cut further), down to
                  MIN_LETTERS; if that does not fit, the last words are dropped for a "…".
    The number of lines never grows: the scene above the caption keeps its room."""
    n = text.count("\n") + 1
    lines = [Label(line, font_size=font_size) for line in text.split("\n")]
    if all(line.width <= limit for line in lines):
        return lines, font_size, ""
    sizes = [font_size]
    px = font_size * style.EM_PX_PER_FONT_SIZE
    while style.font_size_for_px(px - 1) >= style.SMALL - 1e-9:
        px -= 1
        sizes.append(style.font_size_for_px(px))
    if sizes[-1] > style.SMALL:
        sizes.append(style.SMALL)
    for size in sizes:
        again = rebreak(text, n, size, limit)
        if again is not None:
            return [Label(line, font_size=size) for line in again], size, "rebroken" if size == font_size else "scaled"
    size = sizes[-1]
    units = break_units(_one_line(text))
    room = _room(units, size)

    def fits(candidate) -> list[str] | None:     # estimated first (cheap), then broken and measured as drawn
        if _best_breaks(candidate, n, _line_widths(candidate, size, room), limit) is None:
            return None
        return rebreak(join_units(candidate), n, size, limit)

    # the quoted words and tokens, every one cut to at most `letters` letters: the most letters that fit
    longest = max((len(m.group(2) or "") for t, _ in units if _cuttable(t) for m in [WORD_IN_MARKS.match(t)]),
                  default=0)
    options = list(range(longest - 1, MIN_LETTERS - 1, -1))
    found = _first_fit(options, lambda letters: fits(_cut_words(units, letters)))
    if found is not None:
        return [Label(line, font_size=size) for line in found], size, "elided"
    units = _cut_words(units, MIN_LETTERS)
    # then the most units from the start that fit, ended by "…"
    found = _first_fit(list(range(len(units) - 1, 0, -1)), lambda k: fits(_ended(units[:k])))
    if found is not None:
        return [Label(line, font_size=size) for line in found], size, "elided"
    units = units[:1]
    # one unit with nothing to cut (a number wider than the frame): set to the width, below the floor, never a crash
    line = Label(join_units(units), font_size=size)
    ratio = limit / line.width
    line.scale(ratio)
    line.font_size = size * ratio
    return [line], size * ratio, "elided"


def _cuttable(unit: str) -> bool:
    """A quoted word or a token (QUOTED), letters inside, no digit: what elision may cut."""
    m = WORD_IN_MARKS.match(unit)
    return bool(QUOTED.intersection(unit)) and not any(ch.isdigit() for ch in unit) and m is not None and \
        len(m.group(2) or "") > MIN_LETTERS


def _cut_words(units: list[tuple[str, bool]], letters: int) -> list[tuple[str, bool]]:
    """Every cuttable unit with more than `letters` letters cut to that many, "…" before its closing marks."""
    out = []
    for t, gap in units:
        if _cuttable(t) and len(WORD_IN_MARKS.match(t).group(2)) > letters:
            lead, word, trail = WORD_IN_MARKS.match(t).groups()
            t = lead + word[:letters] + (trail if trail.startswith(ELLIPSIS) else ELLIPSIS + trail)
        out.append((t, gap))
    return out


def _ended(units: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """The units with "…" at the end of the last (its closing punctuation or "…" dropped first)."""
    *head, (t, gap) = units
    return head + [(t.rstrip(",.;:\uff0c\u3002\uff1b\uff1a\u2026") + ELLIPSIS, gap)]


def _first_fit(options: list, attempt):
    """attempt(option) for options in order of preference, where fitting is monotone (if one fits, every later one
    does): found by bisection, so a handful of attempts measure text. The first option's result that fits, or None."""
    lo, hi, best = 0, len(options) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        got = attempt(options[mid])
        if got is not None:
            best, hi = got, mid - 1
        else:
            lo = mid + 1
    return best


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


def text_width(text: str, font_size: float) -> float:
    """Label(text, font_size).width (its outline's extent), without building the Label."""
    xs = np.concatenate([points[:, 0] for points in _label_outlines(text, font_size, "NORMAL")[0]])
    return float(xs.max() - xs.min())


@lru_cache(maxsize=None)
def _gap_bound(font_size: float) -> float:
    """A bound on how much the width of a line changes, beyond the new word's own width, when a word is added: the
    space, the two side bearings, a kerned pair pulling the word back. Every one is under an em; this is an em and a
    half ("M" is about 0.8 em wide)."""
    return 1.9 * text_width("M", font_size)


def wrap_words(words: list[str], font_size: float, max_width: float) -> list[str]:
    """Words (a generated text's tokens) in lines no wider than max_width, filled greedily, joined by join_tokens;
    a word wider than the line on its own is a line of its own.

    Shaping a line is the cost, so a line is shaped only when its width is in doubt: the line's width so far plus the
    new word's own width is within _gap_bound of max_width. Further off, the answer is the same as shaping it."""
    lines: list[list[str]] = [[]]
    gap = _gap_bound(font_size)
    low = high = 0.0          # bounds on the width of the line so far (exact once it has been shaped)
    for w in words:
        if not lines[-1]:
            lines[-1] = [w]
            low = high = text_width(w, font_size)
            continue
        trial = lines[-1] + [w]
        word = text_width(w, font_size)
        low_t, high_t = low + word - gap, high + word + gap
        if high_t <= max_width:
            fits = True
        elif low_t > max_width:
            fits = False
        else:
            low_t = high_t = text_width(join_tokens(trial), font_size)
            fits = high_t <= max_width
        if fits:
            lines[-1], low, high = trial, low_t, high_t
        else:
            lines.append([w])
            low = high = word
    return [join_tokens(line) for line in lines if line]
