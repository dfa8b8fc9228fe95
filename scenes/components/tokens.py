"""Tokens: the chip, the prompt as a row of chips, a compact row, and a column of chips (keys down). A token's
colour is its id's (style.token_colours): the same word, the same colour, in every scene drawing the prompt."""

from __future__ import annotations

import numpy as np
from manim import DOWN, RIGHT, DashedVMobject, VGroup

from .. import style
from ..style import LABEL, SMALL, TEXT
from .boxes import RoundedBox
from .text import Label, LayoutError, NumberText, _glyph


# --- tokens --------------------------------------------------------------------------
def _is_cjk(word: str) -> bool:
    """A word written in CJK characters (its glyphs fill the em box: taller than Latin, no baseline to share)."""
    return any("\u2e80" <= ch <= "\u9fff" or "\u3000" <= ch <= "\u303f" or "\uff00" <= ch <= "\uffef" for ch in word)


class TokenChip(VGroup):
    """One token: its word in a softly filled rounded box in the token's colour. `box` and `label` are its parts.

    The word sits on a baseline `lift` above the box's bottom (None: centred on the box's digit height, as in a
    TokenColumn); `width` fixes the box's width (None: the word's width plus `pad_x` each side).
    """

    def __init__(self, word: str, colour, *, font_size: float = LABEL, pad_x: float = 0.16, height: float = 0.62,
                 width: float | None = None, corner_radius: float = 0.1, lift: float | None = 0.2):
        super().__init__()
        self.word = word
        self.label = Label(word, font_size=font_size)
        self.box = RoundedBox(corner_radius=corner_radius,
                              width=width if width is not None else self.label.width + 2 * pad_x,
                              height=height, stroke_color=colour, stroke_width=2, fill_color=colour,
                              fill_opacity=0.22)
        self.label.move_to(self.box, coor_mask=np.array([1, 0, 0]))
        if lift is None:
            self.label.on_baseline(self.box.get_center()[1] - 0.5 * _glyph("0", font_size).shape.height)
        else:
            self.label.on_baseline(self.box.get_bottom()[1] + lift)
        self.add(self.box, self.label)

    @classmethod
    def slot(cls, *, font_size: float = LABEL, height: float = 0.62) -> "TokenChip":
        """The dashed "?" box where the next token will go."""
        chip = cls("?", TEXT, font_size=font_size, width=0.7, height=height)
        dashed = DashedVMobject(RoundedBox(corner_radius=0.1, width=0.7, height=height, stroke_color=TEXT,
                                           stroke_width=2), num_dashes=24).move_to(chip.box)
        chip.remove(chip.box)
        chip.box = dashed
        chip.submobjects.insert(0, dashed)
        return chip


class TokenRow(VGroup):
    """The prompt as a row of words in softly filled rounded boxes, position indices underneath.

    If the row would be wider than max_width, the earliest tokens give way to a "⋯" box; positions in `keep` stay
    (a word the scene points at), so a run of hidden tokens between them gets a "⋯" box of its own.
    The shown tokens keep their true position indices (`positions`; `chip_for(position)` is a shown token's chip).
    Each chip takes its token's colour (style.token_colours: the same token, the same colour); `prompt`, when the
    row is part of a prompt or its words reordered, deals them.
    """

    PAD_X, GAP, CHIP_H = 0.16, 0.14, 0.62

    def __init__(self, tokens: list[str], *, lang: str = "en", next_slot: bool = False, indices: bool = True,
                 max_width: float | None = None, font_size: float = LABEL, slot_word: str | None = None,
                 min_widths: list[float] | None = None, prompt: list[str] | None = None, keep: tuple[int, ...] = ()):
        """slot_word: a word that may fill the slot later (slot_filled): the row keeps room for it, centred.
        min_widths: each token's chip at least this wide (room for what is written under it, e.g. its id).
        keep: positions never hidden."""
        super().__init__()
        max_width = max_width or 2 * style.safe_half_width()
        self.words = list(tokens)
        self.prompt = list(prompt) if prompt is not None else None
        chips = [self._chip(w, colour, font_size, min_widths[i] if min_widths else 0.0)
                 for i, (w, colour) in enumerate(zip(tokens, style.token_colours(tokens, prompt)))]
        slot = self._slot(font_size) if next_slot else None
        extra = max(self._chip(slot_word, style.MUTED, font_size).width - slot.width, 0) if slot and slot_word else 0
        hideable = [p for p in range(len(chips)) if p not in set(keep)]     # earliest first
        hidden_count = 0
        while True:
            hidden = set(hideable[:hidden_count])
            pieces, positions, dots = [], [], []
            for p, chip in enumerate(chips):
                if p not in hidden:
                    pieces.append(chip)
                    positions.append(p)
                elif p == 0 or p - 1 not in hidden:          # the first of a run of hidden tokens
                    dots.append(self._chip("\u22ef", style.MUTED, font_size))
                    pieces.append(dots[-1])
            shown = pieces + ([slot] if slot else [])
            width = sum(c.width for c in shown) + self.GAP * (len(shown) - 1) + 2 * extra
            if width <= max_width or hidden_count >= len(hideable) - 1:
                break
            hidden_count += 1
        if width > max_width:
            raise LayoutError("even one token does not fit in the token row")
        self.positions = positions
        self.first_shown = positions[0]
        self.chips = VGroup(*[chips[p] for p in positions])
        self.ellipsis = VGroup(*dots)
        self.slot = slot
        row = VGroup(*pieces, *([slot] if slot else [])).arrange(RIGHT, buff=self.GAP)
        self.add(row)
        self.indices = VGroup()
        if indices:
            numbered = positions + ([len(tokens)] if slot else [])
            for box, pos in zip([*self.chips, *([slot] if slot else [])], numbered):
                index = NumberText(str(pos), font_size=SMALL, color=style.POSITION, align="left")
                index.next_to(box, DOWN, buff=0.1)
                before = self.indices[-1] if len(self.indices) else None
                if before is not None and index.get_left()[0] < before.get_right()[0] + 0.04 and \
                        abs(before.get_top()[1] - index.get_top()[1]) < 1e-6:
                    index.shift(DOWN * (index.height + 0.08))   # two-digit indices under narrow chips: step down
                self.indices.add(index)
            self.add(self.indices)

    def chip_for(self, position: int) -> TokenChip:
        """The chip of a shown token position."""
        if position not in self.positions:
            raise LayoutError(f"token {position} is not shown in the row (shown: {self.positions})")
        return self.chips[self.positions.index(position)]

    def slot_filled(self, word: str, colour=None) -> TokenChip:
        """A chip for the word that fills the "?" slot, in the slot's place, in its token's colour: a word of the
        prompt keeps its colour, a new one takes the next."""
        colour = colour or style.token_colours([word], [*(self.prompt or []), *self.words])[0]
        chip = self._chip(word, colour, self.slot.label.font_size)
        return chip.shift(self.slot.box.get_left() - chip.box.get_left())

    def _chip(self, word: str, colour, font_size, min_width: float = 0.0) -> TokenChip:
        chip = TokenChip(word, colour, font_size=font_size, pad_x=self.PAD_X, height=self.CHIP_H)
        if chip.box.width >= min_width:
            return chip
        return TokenChip(word, colour, font_size=font_size, pad_x=self.PAD_X, height=self.CHIP_H, width=min_width)

    def _slot(self, font_size) -> TokenChip:
        return TokenChip.slot(font_size=font_size, height=self.CHIP_H)


class CompactTokenRow(TokenRow):
    """A TokenRow with tight chips at the legibility floor, so a whole story prompt fits on one line
    (a longer prompt still gives way to "⋯" like TokenRow). Chip centres are where a token's vector goes."""

    PAD_X, GAP = 0.07, 0.07

    def __init__(self, tokens: list[str], **kwargs):
        kwargs.setdefault("font_size", SMALL)
        super().__init__(tokens, **kwargs)

    def centre_x(self, position: int) -> float:
        """The x of the chip for a token position (it must be shown)."""
        return self.chip_for(position).get_center()[0]


# --- the prompt as text ------------------------------------------------------------------------------
class PromptText(VGroup):
    """The prompt as it reads as text, one Label per token (each can become its chip): English words a space apart,
    a punctuation mark against its word, Chinese run together (scenes/prompts.py spaces_before); `spaces`, if
    given, says instead which tokens have a space before them (a BPE's, by the ␣ it begins with; `tokens` are then
    the words as written, without it). Two neighbours stand as far apart as the font sets them in one line of text. The words sit
    on the baseline y = 0, the first starting at x = 0."""

    def __init__(self, tokens: list[str], lang: str = "en", *, font_size: float = LABEL,
                 spaces: list[bool] | None = None):
        from ..prompts import spaces_before
        super().__init__()
        self.words = list(tokens)
        self.spaces = list(spaces) if spaces is not None else spaces_before(self.words, lang)
        x = 0.0
        for i, (word, space) in enumerate(zip(self.words, self.spaces)):
            label = Label(word, font_size=font_size)
            if i:
                x += self.gap(self.words[i - 1][-1:], word[:1], space, font_size)
            label.shift([x - label.get_left()[0], 0, 0]).on_baseline(0.0)
            x = label.get_right()[0]
            self.add(label)

    @staticmethod
    def gap(before: str, after: str, space: bool, font_size: float) -> float:
        """Ink to ink between two neighbouring characters, with a space between them or none, as one Label sets it."""
        width = lambda t: Label(t, font_size=font_size).width   # noqa: E731
        return width(before + (" " if space else "") + after) - width(before) - width(after)


# --- token column and magnitude strip (attention chapter) ---------------------------------------
class TokenColumn(VGroup):
    """Tokens stacked down the left like an attention grid's key rows: chips of one width, positions (teal)
    beside them, one row per baseline-free centre y. Keys run down, as in AttentionGrid. Rows too close for a
    chip to hold its word (with MARGIN to spare) give each word a tab of its colour before it instead (`tabs`; a
    chip's `box` is then its tab, and `tab` is True): no word crosses a border. Each word takes its token's colour
    (style.token_colours); `prompt`, the whole prompt when the column holds only some of its tokens, deals them."""

    CHIP_H, PAD_X = 0.36, 0.1
    MARGIN, GAP = 0.04, 0.04          # a word's ink to its chip's border; between two chips
    TAB_W, TAB_H = 0.1, 0.3           # rows too close for chips: a tab of the token's colour before the word

    def __init__(self, tokens: list[str], positions: list[int], centres: list[float], *, right: float,
                 font_size: float = SMALL, prompt: list[str] | None = None):
        super().__init__()
        if not (len(tokens) == len(positions) == len(centres)):
            raise ValueError("a token column needs one position and one centre per token")
        labels = [Label(style.token_label(w), font_size=font_size) for w in tokens]
        width = max(label.width for label in labels) + 2 * self.PAD_X
        # the chips hold every word's ink (a Chinese word is taller than Latin letters, a descender reaches below the
        # digits' baseline) with MARGIN to spare, up to the rows' pitch less a gap
        pitch = min((abs(a - b) for a, b in zip(centres, centres[1:])), default=float("inf"))
        digit = 0.5 * _glyph("0", font_size).shape.height
        reach = max(label.height / 2 if _is_cjk(w) else
                    max(label.get_top()[1] - label.baseline() - digit, label.baseline() + digit - label.get_bottom()[1])
                    for w, label in zip(tokens, labels))
        height = max(self.CHIP_H, 2 * (reach + self.MARGIN))
        # rows too close for such chips: each word gets a tab of its colour before it instead of a box around it
        self.tabs = height > pitch - self.GAP
        self.chip_height = height = min(pitch - self.GAP, self.TAB_H) if self.tabs else height
        width += (self.TAB_W + 0.08) if self.tabs else 0.0
        self.positions = list(positions)
        self.chips, self.indices = VGroup(), VGroup()
        for word, pos, y, colour in zip(tokens, positions, centres, style.token_colours(tokens, prompt)):
            chip = TokenChip(style.token_label(word), colour, font_size=font_size, width=width,
                             height=height, corner_radius=0.08, lift=None)
            if _is_cjk(word):           # no Latin baseline to keep: centre the ink in the box
                chip.label.set_y(chip.box.get_center()[1])
            chip.shift([right - width / 2, y, 0] - chip.box.get_center())
            if self.tabs:
                chip.label.shift(RIGHT * (right - self.PAD_X - chip.label.get_right()[0]))
                chip.box.stretch_to_fit_width(self.TAB_W).set_fill(opacity=0.9).set_stroke(width=0)
                chip.box.shift(RIGHT * (chip.label.get_left()[0] - 0.08 - chip.box.get_right()[0]))
                chip.tab = True
            self.chips.add(chip)
            digits = chip.box.get_center()[1] - 0.5 * _glyph("0", font_size).shape.height   # digits centred
            self.indices.add(NumberText(str(pos), font_size, style.POSITION).place(right - width - 0.1, digits))
        self.add(self.indices, self.chips)

    def chip(self, position: int) -> TokenChip:
        return self.chips[self.positions.index(position)]
