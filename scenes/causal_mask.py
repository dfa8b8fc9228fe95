"""Softmax per query, and the causal mask. It opens on the question the mask answers: one pass predicts the next
word at every position, so a word that saw the words after it would read its answer. Then future keys get −∞, each
query's line becomes weights that sum to 1, masked cells become exactly 0; the grid's size grows as context²; and
it closes on the answer: every weight on a later word, in every layer and head, is exactly 0.

    manim render -ql scenes/causal_mask.py CausalMask
    python render.py causal_mask --lang zh --layer 0 --head 3

Every number comes from the model's trace (logits: model.analysis.next_word_predictions; scaled, masked, weights,
and every head's weights: later_weights) for the head chosen by
scenes.prompts.lookback_head, and from the configs (our context; GPT-3's, labelled as GPT-3's); the values
shown are recorded at full precision in self.values (the manifest).
"""

from __future__ import annotations

import numpy as np
from manim import (DL, DOWN, LEFT, RIGHT, UP, UR, AnimationGroup, Create, FadeIn, FadeOut, LaggedStart, Line, Rectangle,
                   ReplacementTransform, RoundedRectangle, SurroundingRectangle, TransformFromCopy, UpdateFromAlphaFunc,
                   VGroup)

from model import GPT3_175B
from model.analysis import later_weights, next_word_predictions
from scenes import style
from scenes import why_beats
from scenes.attention_chapter import STRINGS as CHAPTER_STRINGS
from scenes.attention_chapter import (GRID_HEIGHT, GRID_LEGEND_TOP, LEGEND_W, LEGEND_X, TOP, AttentionChapterScene, line_numbers,
                                      place_grid, place_legend)
from scenes.components import (AttentionGrid, ColourLegend, ColourScale, ColumnBars, RoundedPercents, Label, NumberText,
                               TokenRow, keep_inside_safe_area)
from scenes.prompts import own_language
from scenes.style import MUTED, PROB, QUERY
from scenes.words import Words

WORDS = Words.beside(__file__)     # causal_mask.toml: the captions, their spoken forms, the beat titles

S = CHAPTER_STRINGS | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

STEP, PAUSE = style.STEP, style.PAUSE
LEGEND_GAP = 0.35      # between the two legends
SUM_CLEARANCE = 0.2    # the Σ of a line keeps this far from the weight legend
TEXT_X = -1.0          # left edge of the growth figures
GROWTH_FIRST_LINE, GROWTH_PITCH = 2.1, 0.62   # their baselines
AREA = 4.6             # the side of the n × n area, top left: our context fills it, then GPT-3's
FINEST_CELL = 0.04     # an n × n area is drawn with its cells' lines, and its tokens as cells, while a cell is at
                       # least this wide (2.4 px at 480p); finer, only its outline and one bar for the tokens
SPECK_SIDE = 0.5        # a model's context drawn smaller than this in GPT-3's area is named beside it, with a pointer


def area_left() -> float:
    """The left edge of the growth beat's n × n area (the table to its right keeps clear of it)."""
    return -style.safe_half_width() + 0.3


def boxes_meet(a, b, clearance: float) -> bool:
    """Whether two mobjects' bounding boxes come within `clearance` of each other."""
    (al, ab, _), (ar, at, _) = a.get_corner(DL), a.get_corner(UR)
    (bl, bb, _), (br, bt, _) = b.get_corner(DL), b.get_corner(UR)
    return al < br + clearance and bl < ar + clearance and ab < bt + clearance and bb < at + clearance


def at_line(label: Label, line: float) -> Label:
    """A growth figure on its fixed baseline, left-aligned: the same place in every language."""
    return label.shift(RIGHT * (TEXT_X - label.get_left()[0])).on_baseline(GROWTH_FIRST_LINE - line * GROWTH_PITCH)


QUESTION_LINE = 2.8       # the question's prompt, on two lines where one is too wide: between their tops
QUESTION_BELOW, QUESTION_BAR, QUESTION_BAR_W = 0.5, 0.85, 0.3   # a bar's room below its chip; 100%'s height; width
QUESTION_STAGGER = 0.33   # a percentage that would touch its neighbour steps down this far
QUESTION_LOWEST = -2.2    # the lowest the note on yellow may reach (a two-line caption's top is below)


def example_query(h) -> tuple[int, str]:
    """A query with future keys, to show its exact zeros, and the rule that picked it."""
    if h.focus < h.T - 1:
        return h.focus, "the focus token (it has later tokens)"
    if h.source < h.T - 1:
        return h.source, "the token the focus looks at most (the focus is the last token)"
    return (h.T - 1) // 2, "the middle of the prompt (the focus and its source are both the last token)"


class CausalMask(AttentionChapterScene):
    name = "causal_mask"
    strings = S
    beat_titles = BEATS

    def prepare(self):
        self.h = self.choose_head()
        self.predictions = next_word_predictions(self.gpt, self.h.trace)   # the one pass's every prediction
        self.later = later_weights(self.h.trace)          # every weight on a later key, in every layer and head

    # --- the question: every position predicts its next word at once, so none may see ahead -------------------
    def question_row(self) -> tuple[TokenRow, list]:
        """The prompt with a "?" slot after it, on one line where it fits the title-safe width, else on two (broken
        after the first sentence's end, else in the middle; where two lines do not hold it either, one line whose
        earliest tokens give way to a "⋯"). Under every word from the second on, a bar: P(that word) from the words
        before it (yellow where it was the top guess), its percentage under it (one that would touch the one before
        it steps down); under the slot, the last word's top guess's. Returns the row and, per bar, (position predicted
        from, bar, label, probability, is top guess); the bars are one ColumnBars, `row.question_bars`."""
        h, preds = self.h, self.predictions
        slot_word = style.token_label(preds[-1]["top_word"])
        width = 2 * style.safe_half_width() - 0.2
        row = TokenRow(h.tokens, lang=self.lang, next_slot=True, slot_word=slot_word, max_width=1e9)
        boxes = [*row.chips, row.slot]
        extra = max(row.slot_filled(slot_word).width - row.slot.width, 0)   # the top guess fills the slot later
        if row.width + extra <= width:
            lines = [VGroup(row)]
        else:
            ends = [i + 1 for i, t in enumerate(h.tokens[:-1]) if t.strip() in (".", "\u3002")]
            split = ends[0] if ends else (h.T + 1) // 2
            lines = [VGroup(*[VGroup(boxes[i], row.indices[i]) for i in range(split)]),
                     VGroup(*[VGroup(boxes[i], row.indices[i]) for i in range(split, len(boxes))])]
            if lines[0].width > width or lines[1].width + extra > width:      # a checkpoint's long BPE pieces: one line, from "⋯" on
                row = TokenRow(h.tokens, lang=self.lang, next_slot=True, slot_word=slot_word,
                               max_width=2 * style.safe_half_width() - 0.2)      # keeps room for the top guess
                boxes, lines = [*row.chips, row.slot], [VGroup(row)]
        left = -max(line.width + (extra if n == len(lines) - 1 else 0) for n, line in enumerate(lines)) / 2
        # the lines as one block, centred (with the top guess in the slot), a second one starting under the first
        for n, line in enumerate(lines):
            line.shift(RIGHT * (left - line.get_left()[0]) + UP * (TOP - 0.1 - n * QUESTION_LINE - line.get_top()[1]))
        label = lambda p: NumberText(style.percent(p), style.SMALL, style.TEXT)   # noqa: E731
        places = []           # (position, x, base line, probability, is top guess), one a box from the second on
        for j, box in enumerate(boxes):
            i = row.first_shown + j - 1            # the position whose prediction this box is (chip i + 1, or the slot)
            if i < 0:
                continue
            r = preds[i]
            p, top = (r["p_next"], bool(r["next_is_top"])) if r["next_word"] is not None else (r["p_top"], True)
            places.append((i, box.get_center()[0], box.get_bottom()[1] - QUESTION_BELOW - QUESTION_BAR, p, top))
        # 100% is QUESTION_BAR tall; each bar stands on its own line's base (the row may wrap onto two lines)
        row.question_bars = ColumnBars([p for *_, p, _ in places], [x for _, x, *_ in places],
                                       [base for _, _, base, _, _ in places], QUESTION_BAR,
                                       [PROB if top else MUTED for *_, top in places], width=QUESTION_BAR_W,
                                       opacity=1, floor=0.01)
        bars = []
        for (i, x, base, p, top), bar in zip(places, row.question_bars):
            text = keep_inside_safe_area(label(p).place(x + label(p).width / 2, base - 0.36))
            if bars and bars[-1][2].get_right()[0] + 0.08 > text.get_left()[0] and \
                    abs(bars[-1][2].baseline() - text.baseline()) < 1e-6:
                text.shift(DOWN * QUESTION_STAGGER)     # a label that would touch the one before it steps down
            bars.append((i, bar, text, p, top))
        row.question_lines = lines
        return row, bars

    @staticmethod
    def bar_tracks(row: TokenRow, bars: list) -> VGroup:
        """A base line under each line's bars, as long as the line."""
        track = VGroup()
        for line in row.question_lines:
            own = [b[1] for b in bars if line.get_left()[0] - 1e-6 <= b[1].get_center()[0] <= line.get_right()[0] + 1e-6
                   and line.get_bottom()[1] - 2 * QUESTION_BAR < b[1].get_bottom()[1] < line.get_bottom()[1]]
            if own:
                y = own[0].get_bottom()[1]
                track.add(Line([line.get_left()[0], y, 0], [line.get_right()[0], y, 0], stroke_width=2, color=MUTED))
        return track

    @staticmethod
    def beside_bars(row: TokenRow, bars: list, mob) -> VGroup:
        """`mob` beside the last line's bars where it fits the title-safe width, else centred under the bars where it
        stays clear of a two-line caption; else an empty group (no room)."""
        last_line = row.question_lines[-1]
        if not bars:
            return VGroup()
        if last_line.get_right()[0] + 0.4 + mob.width <= style.safe_half_width():
            mob.next_to(last_line, RIGHT, buff=0.4)
            mob.shift(UP * (bars[-1][1].get_bottom()[1] + QUESTION_BAR / 2 - mob.get_center()[1]))
        else:
            mob.move_to([0, min(b[2].get_bottom()[1] for b in bars) - 0.2 - mob.height / 2, 0])
        return VGroup(mob) if mob.get_bottom()[1] >= QUESTION_LOWEST else VGroup()

    def question_position(self, row: TokenRow) -> tuple[int | None, str]:
        """The position whose next word the peek shows: the zeros beat's query (example_query) where it has a next
        word on screen, else the last shown position that has one; None when no shown word has a next word."""
        h = self.h
        q, rule = example_query(h)
        if row.first_shown <= q < h.T - 1:
            return q, rule
        if row.first_shown <= h.T - 2:
            return h.T - 2, "the last shown token with a next word (the zeros beat's query is not on screen)"
        return None, "no shown token has a next word"

    def beat_question(self):
        h, preds = self.h, self.predictions
        self.say("question", n=h.T)
        row, bars = self.question_row()
        track = self.bar_tracks(row, bars)
        self.play(LaggedStart(*[FadeIn(c, shift=DOWN * 0.15) for c in row.chips], lag_ratio=0.05),
                  FadeIn(row.ellipsis), FadeIn(row.indices), FadeIn(row.slot), FadeIn(track),
                  run_time=STEP + 0.05 * len(row.chips))
        self.play(LaggedStart(*row.question_bars.grow(), lag_ratio=0.08),
                  LaggedStart(*[FadeIn(b[2]) for b in bars], lag_ratio=0.08), run_time=2 * STEP)
        note = self.beside_bars(row, bars, Label(self.s("top_note"), font_size=style.SMALL, color=PROB))
        self.play(FadeIn(note), run_time=0.6)       # (no room for it: the next caption says what yellow means)
        # how many of the prompt's next words were the model's top guess; the last word's top guess fills the slot
        inner = [r for r in preds[:-1]]
        k, m = sum(bool(r["next_is_top"]) for r in inner), len(inner)
        key = self.caption_rule("predicted", "predicted_one" if not m else "predicted_all" if k == m else
                                "predicted_none" if k == 0 else "predicted_some",
                                "of the prompt's next words (positions 0..T-2), how many are the model's top guess "
                                "(argmax, lower id on a tie): predicted_all if every one, predicted_none if none, "
                                "else predicted_some; predicted_one for a one-token prompt",
                                top_count=k, next_words=m, next_is_top=[r["next_is_top"] for r in inner])
        last = preds[-1]
        self.say(key, k=k, m=m, last=h.word(h.T - 1), top=style.token_label(last["top_word"]),
                 p=style.percent(last["p_top"]))
        guess = row.slot_filled(style.token_label(last["top_word"]))
        self.play(FadeOut(row.slot), FadeIn(guess), run_time=STEP)
        self.wait(PAUSE)
        # the peek: if a word could see what follows, it would read its answer
        q, q_rule = self.question_position(row)
        boxes = [*row.chips, guess]
        marks = VGroup()
        if q is not None:
            self.say("peek", word=h.word(q), next=h.word(q + 1))
            chip_of = lambda i: boxes[i - row.first_shown]     # noqa: E731
            marks.add(SurroundingRectangle(chip_of(q), color=style.TEXT, buff=0.06, corner_radius=0.1),
                      SurroundingRectangle(chip_of(q + 1), color=style.MASK_ACCENT, buff=0.06, corner_radius=0.1))
            self.play(Create(marks), run_time=0.8)
            self.wait(PAUSE)
            covers = VGroup(*[Rectangle(width=b.width + 0.04, height=b.height + 0.04, stroke_width=2,
                                        stroke_color=style.MASK_ACCENT, fill_color=style.MASKED, fill_opacity=0.92)
                              .move_to(b) for b in boxes[q + 1 - row.first_shown:]])
            self.play(LaggedStart(*[FadeIn(c) for c in covers], lag_ratio=0.1), run_time=STEP)
            marks.add(covers)
        else:
            self.say("peek_alone")
        self.caption_rule("peek", "peek" if q is not None else "peek_alone", "peek if a shown token has a next word "
                          "(the position: " + q_rule + "), else peek_alone", position=q,
                          next_word=None if q is None else h.tokens[q + 1])
        self.wait(PAUSE + 1)
        self.values["question"] = {
            "predictions": preds, "first_shown": row.first_shown, "top_count": k, "next_words": m,
            "bars": [{"position": i, "p": p, "label": t.text, "top": top} for i, _, t, p, top in bars],
            "slot_word": last["top_word"], "peek": q, "peek_rule": q_rule, "note": len(note) > 0}
        self.question_group = VGroup(row, guess, track, note, marks, *[VGroup(b[1], b[2]) for b in bars])

    # --- the beats ------------------------------------------------------------------------------
    def beat_scaled(self):
        h = self.h
        self.say("scaled", layer=style.shown(h.layer), head=style.shown(h.head), focus=h.word(h.focus))
        self.scaled_scale = ColourScale.signed_for(h.scaled)
        grid = self.grid = place_grid(AttentionGrid(h.scaled, self.scaled_scale, tokens=h.tokens, lang=self.lang,
                                                    height=GRID_HEIGHT, focus=h.focus))
        root = f"{np.sqrt(h.d_head):g}"                 # √d_k, for the label only
        self.scaled_legend = place_legend(ColourLegend(self.scaled_scale, S("scaled_scale", self.lang, root=root),
                                                       width=LEGEND_W, masked=True), top=GRID_LEGEND_TOP)
        self.scaled_legend.remove(self.scaled_legend.mask_entry)       # it joins with the mask
        self.numbers = line_numbers(grid, [style.signed(v, 1) for v in h.scaled[h.focus]])
        self.header = self.line_header(grid, self.numbers)
        self.frame = grid.line_frame(h.focus)
        self.play(FadeOut(self.question_group), run_time=0.8)        # the question's picture gives way to the grid
        self.play(FadeIn(grid.axes), LaggedStart(*[FadeIn(grid.line(q)) for q in range(h.T)], lag_ratio=0.06),
                  FadeIn(self.scaled_legend), run_time=2 * STEP)
        self.play(Create(self.frame), FadeIn(self.header), FadeIn(self.numbers), run_time=STEP)
        self.wait(PAUSE + 1)
        self.values["scaled"] = {"grid": h.scaled.tolist(), "scale": self.scaled_scale.limit,
                                 "focus_line": h.scaled[h.focus].tolist()}

    def beat_mask(self):
        h, grid = self.h, self.grid
        # the frame moves to a line the mask changes (example_query's rule: the focus if it has later keys)
        q, rule = example_query(h)
        self.say("mask", word=h.word(q))
        future = [(a, k) for a in range(h.T) for k in range(h.T) if np.isneginf(h.masked[a, k])]
        anims = grid.recolour(h.masked)
        self.marks = grid.mask_marks(avoid_queries=[h.focus])   # its line is recoloured while they show
        masked_line = [style.MASK_TEXT if np.isneginf(v) else style.signed(v, 1) for v in h.masked[q]]
        new_numbers = line_numbers(grid, masked_line)
        header = self.line_header(grid, new_numbers, q)
        self.play(*anims, run_time=2 * STEP)
        self.play(self.frame.animate.move_to(grid.line(q)), FadeOut(self.header), FadeIn(header),
                  FadeIn(self.marks), FadeIn(self.scaled_legend.mask_entry), FadeOut(self.numbers),
                  FadeIn(new_numbers), run_time=STEP)
        self.numbers, self.header = new_numbers, header
        self.wait(PAUSE + 1.5)
        self.values["masked"] = {"grid": [[None if np.isneginf(v) else float(v) for v in row] for row in h.masked],
                                 "masked_cells": [list(c) for c in future],
                                 "focus_line": [None if np.isneginf(v) else float(v) for v in h.masked[h.focus]],
                                 "framed": {"query": q, "rule": rule,
                                            "line": [None if np.isneginf(v) else float(v) for v in h.masked[q]],
                                            "labels": masked_line}}

    def beat_softmax(self):
        h, grid = self.h, self.grid
        line, masked = h.weights[h.focus], np.isneginf(h.masked[h.focus])
        open_positive = bool(np.all(line[~masked] > 0))
        key = self.caption_rule("softmax", ("softmax_masked" if masked.any() else "softmax") if open_positive else
                                "softmax_nonneg", "the focus line's weights: every unmasked weight > 0 (softmax if "
                                "no key is masked, else softmax_masked), else softmax_nonneg",
                                weights=line.tolist(), masked=masked.tolist())
        self.say(key, focus=h.word(h.focus))
        self.weight_scale = ColourScale("attention", 1.0)
        # masked cells keep the masked colour after the softmax, beside "masked: exactly 0" (a small weight is dark
        # grey: the two no longer look alike)
        self.weight_legend = ColourLegend(self.weight_scale, S("weight_scale_attn", self.lang), width=LEGEND_W,
                                          masked=True, mask_text=S("masked_zero", self.lang))
        place_legend(self.weight_legend, top=self.scaled_legend.mask_entry.get_bottom()[1] - LEGEND_GAP)
        # one place in both languages: the bar moves left as far as the wider language's "exactly 0" needs
        words = self.weight_legend.mask_entry[1]
        widest = max(Label(S("masked_zero", lang), font_size=style.SMALL).width for lang in ("en", "zh"))
        room = style.safe_half_width() - (words.get_left()[0] - self.weight_legend.bar.get_left()[0]) - widest
        self.weight_legend.shift(RIGHT * (min(LEGEND_X, room) - self.weight_legend.bar.get_left()[0]))
        total = float(np.sum(h.weights[h.focus]))          # display only: the model's weights, added up
        rounded = RoundedPercents(h.weights[h.focus], total)    # each weight at its plain rounding, as quoted
        weights = line_numbers(grid, rounded.labels)
        self.sum_mark = self.line_sum(weights, rounded, avoid=self.weight_legend)
        self.record_sum("softmax", "\u03a3 = 100%", rounded, drawn=self.sum_mark[1])
        header = self.line_header(grid, weights)           # the frame goes back to the focus's line
        moves = [] if self.frame.get_center()[0] == grid.line_frame(h.focus).get_center()[0] else \
            [self.frame.animate.move_to(grid.line(h.focus)), FadeOut(self.header), FadeIn(header)]
        self.play(*grid.recolour(self.drawn_weights(), self.weight_scale, queries=[h.focus]), *moves,
                  *[TransformFromCopy(a, b) for a, b in zip(self.numbers, weights)], FadeOut(self.numbers),
                  FadeIn(self.weight_legend), run_time=2 * STEP)
        if moves:
            self.header = header
        self.play(FadeIn(self.sum_mark), run_time=STEP)
        self.numbers = weights
        self.wait(PAUSE + 1.5)
        self.values["softmax"] = {"query": h.focus, "weights": h.weights[h.focus].tolist(), "sum": total}

    def beat_all_queries(self):
        h, grid = self.h, self.grid
        self.say("all_queries")
        others = [q for q in range(h.T) if q != h.focus]
        recolour = grid.recolour(self.drawn_weights(), self.weight_scale, queries=others)
        per_line = len(recolour) // max(len(others), 1)
        lines = [AnimationGroup(*recolour[i * per_line:(i + 1) * per_line]) for i in range(len(others))]
        self.play(*([LaggedStart(*lines, lag_ratio=0.15)] if lines else []), FadeOut(self.marks), run_time=2.5 * STEP)   # a one-token prompt has no other line
        rise = UP * (self.scaled_legend.bar.get_top()[1] - self.weight_legend.bar.get_top()[1])
        self.play(FadeOut(VGroup(self.scaled_legend, self.scaled_legend.mask_entry)),
                  self.weight_legend.animate.shift(rise), run_time=STEP)
        self.wait(PAUSE + 1.5)
        self.values["weights"] = {"grid": h.weights.tolist(),
                                  "masked_weights": [float(h.weights[q, k]) for q in range(h.T) for k in range(h.T)
                                                     if np.isneginf(h.masked[q, k])]}

    def beat_zeros(self):
        h, grid = self.h, self.grid
        q, rule = example_query(h)
        future = h.T - 1 - q
        key = self.caption_rule("zeros", "zeros" if future else "zeros_none", "the example query's future keys: "
                                "zeros if it has any (their weights are exactly 0), else zeros_none",
                                query=q, future_keys=list(range(q + 1, h.T)),
                                future_weights=h.weights[q, q + 1:].tolist())
        self.say(key, word=h.word(q), i=q, n=future)
        total = float(np.sum(h.weights[q]))
        rounded = RoundedPercents(h.weights[q], total)
        numbers = line_numbers(grid, rounded.labels)
        header = self.line_header(grid, numbers, q)
        sum_mark = self.line_sum(numbers, rounded, avoid=self.weight_legend)
        self.record_sum("zeros", "\u03a3 = 100%", rounded, drawn=sum_mark[1])
        self.play(self.frame.animate.move_to(grid.line(q)), FadeOut(self.numbers), FadeIn(numbers),
                  FadeOut(self.header), FadeIn(header), FadeOut(self.sum_mark), FadeIn(sum_mark), run_time=STEP)
        zero_frame = VGroup(*[grid.cell_square(q, k) for k in range(q + 1, h.T)])
        zeros = VGroup(*[numbers[k] for k in range(q + 1, h.T)])
        highlight = VGroup(*[m.copy().set_stroke(style.MASK_ACCENT, width=3) for m in zero_frame])
        self.play(FadeIn(highlight), zeros.animate.set_color(style.MASK_ACCENT), run_time=STEP)
        self.wait(PAUSE + 2)
        self.numbers, self.header, self.sum_mark, self.zero_marks = numbers, header, sum_mark, highlight
        self.values["zeros"] = {"query": q, "rule": rule, "weights": h.weights[q].tolist(), "sum": total,
                                "future_keys": list(range(q + 1, h.T))}

    def beat_growth(self):
        """One score per pair of tokens: the grid shrinks into an n × n area, grows a token at a time to our model's
        whole context, then the area stands for GPT-3's (its published config) and ours shrinks into its corner. One
        line says it (issue 41: at most 20 s); the figures of every head and layer are recorded (values["growth"])."""
        h, grid = self.h, self.grid
        n_ctx, L, H = h.context, self.gpt.config.n_layer, h.n_head
        g = GPT3_175B
        model = self.model_words("short")
        self.say("growth", Model=model[:1].upper() + model[1:], n=f"{n_ctx:,}", n2=f"{n_ctx * n_ctx:,}",
                 g=f"{g.n_positions:,}", g2=f"{g.n_positions ** 2:,}")
        cell = AREA / n_ctx                            # the whole context fills the area
        origin = np.array([area_left(), TOP - 0.5, 0])   # top-left of the n × n area
        small = grid.squares.copy()
        small.scale(cell / grid.cell).move_to(origin + np.array([h.T * cell / 2, -h.T * cell / 2, 0]))
        area = VGroup(self.outline(h.T, cell, origin), self.cell_row(h.T, cell, origin))   # the lines, the tokens
        n_text, n2_text = VGroup(), VGroup()       # the figures of the grid drawn now, changing as it grows
        self.set_line(n_text, S("n_line", self.lang, n=h.T), 0)
        self.set_line(n2_text, S("n2_line", self.lang, n2=f"{h.T * h.T:,}"), 1)
        self.play(FadeOut(VGroup(self.numbers, self.header, self.sum_mark, self.zero_marks, self.frame,
                                 self.weight_legend, grid.axes)), ReplacementTransform(grid.squares, small),
                  FadeIn(area), FadeIn(n_text), FadeIn(n2_text), run_time=2 * STEP)
        # the whole context of our model: the grid grows a token at a time, its count with it
        sizes = list(range(h.T, n_ctx + 1))

        def grow(stage, alpha):
            n = sizes[min(int(alpha * len(sizes)), len(sizes) - 1)]
            area.submobjects = [self.outline(n, cell, origin), self.cell_row(n, cell, origin)]
            self.set_line(n_text, S("n_line", self.lang, n=f"{n:,}"), 0)
            self.set_line(n2_text, S("n2_line", self.lang, n2=f"{n * n:,}"), 1)

        self.play(UpdateFromAlphaFunc(self.stage_of(area, n_text, n2_text), grow), run_time=2 * STEP)
        # GPT-3, from its published config: the area now stands for its context, ours shrinks into its corner
        outline, tokens = area.submobjects
        border = Rectangle(width=AREA, height=AREA, stroke_color=style.TEXT, stroke_width=2)
        border.move_to(origin + np.array([AREA / 2, -AREA / 2, 0]))
        frame = border.copy().set_stroke(MUTED, 2)
        ours = self.stage_of(small, outline, border)
        self.play(FadeOut(tokens), FadeIn(border), FadeIn(frame), run_time=0.6)
        ours.save_state()
        finer = VGroup()        # the lines of GPT-3's n × n while there are few enough to see
        zoom = g.n_positions / n_ctx

        def zoom_out(stage, alpha):
            n = int(round(n_ctx * zoom ** alpha))
            ours.restore()
            ours.scale(n_ctx / n, about_point=origin)
            finer.submobjects = [self.outline(n, AREA / n, origin)]
            self.set_line(n_text, S("n_line", self.lang, n=f"{n:,}"), 0)
            self.set_line(n2_text, S("n2_line", self.lang, n2=f"{n * n:,}"), 1)

        self.play(UpdateFromAlphaFunc(self.stage_of(finer, ours, n_text, n2_text), zoom_out), run_time=2 * STEP)
        whole = Label(S("gpt3_area", self.lang, n=f"{g.n_positions:,}"), font_size=style.SMALL, color=MUTED)
        whole.shift(RIGHT * (origin[0] + AREA / 2 - whole.get_center()[0])).on_baseline(origin[1] - AREA - 0.45)
        speck = Label(S("ours_speck" if own_language(self.gpt) else "speck", self.lang, n=f"{n_ctx:,}"),
                      font_size=style.SMALL)
        side = AREA * n_ctx / g.n_positions       # the model's own context, in GPT-3's area
        if side > SPECK_SIDE:      # a square one can see (GPT-2 small's 1,024 is half GPT-3's): named under it
            speck.shift(RIGHT * (origin[0] + 0.1 - speck.get_left()[0])).on_baseline(origin[1] - side - 0.4)
            self.play(FadeIn(speck), FadeIn(whole), run_time=STEP)
        else:                                     # a speck (ours, 32): named beside it, with a pointer
            speck.move_to(origin + np.array([0.45 + speck.width / 2, -0.75, 0]))
            speck_pointer = Line(speck.get_left() + LEFT * 0.08 + UP * 0.05,
                                 ours.get_corner(DOWN + RIGHT) + RIGHT * 0.04, stroke_width=2, color=style.TEXT)
            self.play(FadeIn(speck), Create(speck_pointer), FadeIn(whole), run_time=STEP)
        self.wait(PAUSE)
        ours_all, gpt3_all = n_ctx * n_ctx * H * L, g.n_positions ** 2 * g.n_head * g.n_layer
        n2, all2 = 2 * g.n_positions, (2 * g.n_positions) ** 2 * g.n_head * g.n_layer
        self.values["growth"] = {"prompt_tokens": h.T, "prompt_cells": h.T * h.T, "context": n_ctx,
                                 "context_cells": n_ctx * n_ctx, "n_layer": L, "n_head": H,
                                 "all_cells": ours_all,
                                 "gpt3": {"source": "model.config.GPT3_175B (published shape)",
                                          "n_positions": g.n_positions, "cells": g.n_positions ** 2,
                                          "n_head": g.n_head, "n_layer": g.n_layer, "all_cells": gpt3_all,
                                          "double_context": n2, "double_context_all_cells": all2}}

    def drawn_weights(self) -> np.ndarray:
        """The weights as the grid colours them: a masked cell (its weight exactly 0) keeps the masked colour, −∞ to
        the colour scale, so it never looks like a small weight."""
        h = self.h
        return np.where(np.isneginf(h.masked), -np.inf, h.weights)

    def stage_of(self, *parts) -> VGroup:
        """The parts as one mobject on stage (each taken off as a mobject of its own), so that an updater that
        changes them all is drawn every frame of its play."""
        self.remove(*parts)
        stage = VGroup(*parts)
        self.add(stage)
        return stage

    @staticmethod
    def set_line(slot: VGroup, text: str, line: int) -> None:
        """A growth figure (a VGroup holding one Label) says `text` on its line: the same place, new words."""
        slot.submobjects = [at_line(Label(text, font_size=style.LABEL), line)]

    beat_lab = why_beats.causal_mask   # why the mask: the lab's record (scenes/why_beats.py)

    def beat_summary(self):
        """The opening's question answered on its own picture: the prompt's predictions again, each made without
        seeing its answer, for every weight on a later word, in every layer and head, is exactly 0
        (model.analysis.later_weights)."""
        h, lw = self.h, self.later
        self.clear_stage()                         # the growth's areas and table give way
        self.say("summary", n=h.T, cells=f"{lw['cells']:,}", L=lw["layers"], H=lw["heads"])
        row, bars = self.question_row()
        guess = row.slot_filled(style.token_label(self.predictions[-1]["top_word"]))
        self.play(FadeIn(VGroup(*row.chips, row.ellipsis, row.indices, guess, self.bar_tracks(row, bars))),
                  *[FadeIn(VGroup(b[1], b[2])) for b in bars], run_time=STEP)
        def lines(lang: str) -> VGroup:
            w = S("masked_zero", lang) if lw["largest"] == 0 else style.percent(lw["largest"])
            return VGroup(Label(S("answer_cells", lang, cells=f"{lw['cells']:,}"), font_size=style.SMALL, color=MUTED),
                          Label(S("answer_later", lang), font_size=style.SMALL, color=MUTED),
                          Label(S("answer_largest", lang, w=w), font_size=style.SMALL, color=style.MASK_ACCENT)
                          ).arrange(DOWN, buff=0.12, aligned_edge=LEFT)
        box = lines(self.lang)
        # one frame in both languages: as wide and tall as the wider language's lines need
        sizes = [(g.width, g.height) for g in (lines("en"), lines("zh"))]
        frame = RoundedRectangle(width=max(w for w, _ in sizes) + 0.3, height=max(hh for _, hh in sizes) + 0.3,
                                 corner_radius=0.1, color=style.MASK_ACCENT)
        box.shift(frame.get_corner(UP + LEFT) + np.array([0.15, -0.15, 0]) - box.get_corner(UP + LEFT))
        answer = self.beside_bars(row, bars, VGroup(frame, box))
        self.play(Create(answer), run_time=STEP)
        self.wait(PAUSE + 2)
        self.values["answer"] = {**lw, "label": "exactly 0" if lw["largest"] == 0 else style.percent(lw["largest"]),
                                 "shown": len(answer) > 0, "predictions": h.T}

    # --- building the pieces ----------------------------------------------------------------------
    def line_sum(self, numbers, rounded, avoid=None) -> VGroup:
        """A bracket down the right of a line's numbers and its sum (components.sums.RoundedPercents: "Σ = 100.0%", or
        "Σ ≈ 100.0%" where the labels do not add up to it), level with the last row; where the sum would
        come within SUM_CLEARANCE of `avoid` (the weight legend, top right, beside a short line's last row) or leave the
        title-safe area (a long "Σ ≈ 100.0%" beside wide numbers), it sits under the bracket's foot instead, its right end at the bracket."""
        x = numbers.get_right()[0] + 0.15
        top, bottom = numbers.get_top()[1] + 0.05, numbers.get_bottom()[1] - 0.05
        bracket = VGroup(Line([x, top, 0], [x, bottom, 0]), Line([x - 0.08, top, 0], [x, top, 0]),
                         Line([x - 0.08, bottom, 0], [x, bottom, 0])).set_stroke(MUTED, 2)
        text = Label(f"\u03a3 {rounded.relation} {rounded.total_label}", font_size=style.SMALL, color=QUERY)
        text.next_to(bracket, RIGHT, buff=0.15)
        text.on_baseline(numbers[-1].baseline())
        off_frame = text.get_right()[0] > style.safe_half_width()
        if off_frame or (avoid is not None and boxes_meet(text, avoid, SUM_CLEARANCE)):
            text.shift(RIGHT * (x - text.get_right()[0]))
            text.shift(UP * (bottom - 0.12 - text.get_top()[1]))
        return VGroup(bracket, text)

    def cell_row(self, n: int, cell: float, origin) -> VGroup:
        """n token cells in a line above the n × n area (one bar as long, where the cells would be too fine)."""
        if cell < FINEST_CELL:
            return VGroup(Rectangle(width=n * cell, height=0.8 * FINEST_CELL * 2, stroke_width=0, fill_color=MUTED,
                                    fill_opacity=1).move_to(origin + np.array([n * cell / 2, 0.3, 0])))
        return VGroup(*[Rectangle(width=cell * 0.8, height=cell * 0.8, stroke_width=0, fill_color=MUTED,
                                  fill_opacity=1).move_to(origin + np.array([(i + 0.5) * cell, 0.3, 0]))
                        for i in range(n)])

    @staticmethod
    def outline(n: int, cell: float, origin) -> VGroup:
        """The lines of an n × n grid of cells with its top-left corner at origin (only its edges, where the cells
        would be too fine to tell apart)."""
        x0, y0 = origin[0], origin[1]
        inner = range(n + 1) if cell >= FINEST_CELL else (0, n)
        lines = [Line([x0, y0 - i * cell, 0], [x0 + n * cell, y0 - i * cell, 0]) for i in inner]
        lines += [Line([x0 + i * cell, y0, 0], [x0 + i * cell, y0 - n * cell, 0]) for i in inner]
        return VGroup(*lines).set_stroke(style.CELL_OUTLINE, 1)
