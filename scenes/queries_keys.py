"""Queries and keys: W_q and W_k turn each token's normalised vector into a query and a key, and the grid of
K·Q dot products, scaled by 1/√d_k; the head's job over many stories, why ÷ √d_k (random dot products, the lab's
record), why learned projections (the keys ranked by x̂·x̂ against q·k). Pieces: queries_keys_parts.py.

    manim render -ql scenes/queries_keys.py QueriesKeys
    python render.py queries_keys --lang zh --layer 0 --head 2

Every number comes from the model's trace (ln_1.out, q, k, scores, scaled) or its weights (W_q, W_k, biases);
the values shown are recorded at full precision in self.values (the manifest).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Arrow, Create, CurvedArrow, FadeIn, FadeOut, GrowFromEdge, Group, LaggedStart,
                   SurroundingRectangle, TransformFromCopy, VGroup)

from scenes import style
from scenes.params import ParamError
from model.analysis import lookback_blocked, query_key_geometry
from model.analysis.query_key import direct_comparison, random_dots
from scenes.attention_chapter import KINDS
from scenes.attention_chapter import STRINGS as CHAPTER_STRINGS
from scenes.attention_chapter import (GRID_HEIGHT, GRID_LEGEND_TOP, LEGEND_W, TOP, AttentionChapterScene, line_numbers,
                                     place_grid, place_legend, shown_matrix, shown_vector)
from scenes.components import (AttentionGrid, inside_safe_area, keep_inside_safe_area, ColourLegend, ColourScale, Label, MatrixGrid,
                               MatrixVectorProduct, NumberColumn, ProbabilityBars, TokenRow, keep_right_of)
from scenes.prompts import LANGS, adjective_kind
from scenes.style import KEY, MUTED, QUERY, VALUE
from scenes.words import Words
from scenes import why_beats
from scenes.queries_keys_parts import (JOB_SHARE, blocks, head_census, labelled_rows, ordinal,  # noqa: F401
                                       random_dots_chart, ranking, story_row)

WORDS = Words.beside(__file__)     # queries_keys.toml: the captions, their spoken forms, the beat titles

S = CHAPTER_STRINGS | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

STEP, PAUSE = style.STEP, style.PAUSE
HEADER_Y = 3.25                  # the formula line at the top
MATRIX_TOP = 2.45                # top of a matrix × vector product's cells
MATRIX_X = -0.3                  # its centre (the output's size label hangs to the right)
MATRIX_LEGEND_X = -4.9           # its legend's bar, top left (the title to its left)
PRODUCT_CELL = 0.9               # a matrix cell's width in a product (MatrixVectorProduct's default)
K_BESIDE_GAP, K_BESIDE_COLS = 0.35, 5    # W_kᵀ beside W_qᵀ: between their cells; its columns shown (one fewer
                                         # than a product shows: both fit the title-safe width)
# the question beat: two panels of next-word bars, looking back (left) and seeing only the focus (right)
PANEL_HEADER_Y, PANEL_FIRST, PANEL_PITCH = 0.7, 0.15, 0.48
PANELS = ({"label_right": -4.15, "bar_left": -4.0, "bar_width": 1.8, "number_right": -0.7},
          {"label_right": 2.15, "bar_left": 2.3, "bar_width": 1.8, "number_right": 6.25})
# "looking back is needed" when seeing only the focus leaves less than this share of P(word)
NEEDED_SHARE = 0.5
ROLES_Y = (0.05, -0.6, -1.25)   # the idea beat's three lines: query, key, value
RANDOM_DIMS = (4, 16, 64, 256)     # the lengths of the random vectors whose dot products the scale beat draws
# the closing table under the question's row: the focus's best-matching keys, then "other"
ANSWER_ROWS, ANSWER_FIRST, ANSWER_PITCH = 3, 0.1, 0.5
ANSWER_COLS = {"label_right": -3.3, "dot_right": -1.75, "scaled_right": -0.2, "bar_left": 0.3, "bar_width": 3.6,
               "number_right": 5.9}


class QueriesKeys(AttentionChapterScene):
    name = "queries_keys"
    strings = S
    beat_titles = BEATS

    def prepare(self):
        self.h = h = self.choose_head()
        if h.T < 2:
            raise ParamError("prompt: a query is compared with the keys of at least 2 tokens; give 2 or more")
        # the question: the model's next word at the focus, looking back and seeing only the focus itself
        rule = h.choice["prompt_rule"]
        self.story = bool(rule and rule.get("adjective_index") is not None and h.focus == rule["focus_index"])
        self.lookback = lookback_blocked(self.gpt, h.token_ids[:h.focus + 1], rule["adjective"] if self.story else None)
        self.geometry = query_key_geometry(h.trace, h.layer, h.head, h.focus)
        self.values["question"] = {**self.lookback, "story": self.story,
                                   **({"adjective_index": rule["adjective_index"]} if self.story else {})}
        self.direct, self.census = direct_comparison(h.trace, h.layer, h.head, h.focus), \
            head_census(self.gpt, h) if self.story else None

    def lookback_rule(self) -> str:
        """needed / helps / unneeded: P(word) seeing only the focus against P(word) looking back, as shown."""
        lb = self.lookback
        p, p_blocked = lb["looking_back"]["p_word"], lb["blocked"]["p_word"]
        if self.shown_label("looking_back") == self.shown_label("blocked") or p_blocked >= p:
            return "lookback_unneeded"
        return "lookback_needed" if p_blocked < NEEDED_SHARE * p else "lookback_helps"

    def shown_label(self, name: str) -> str:
        """The compared word's percentage as its bar shows it (its plain rounding)."""
        bars = self.question_bars(self.lookback[name], PANELS[0])
        return bars.rounded.labels[bars.word_row]

    # --- the question, and the idea of queries, keys and values ----------------------------------------------------
    def question_bars(self, run: dict, panel: dict) -> ProbabilityBars:
        """A run's top words, then the compared word if it is not among them, then "other" (their true rest)."""
        ys = [PANEL_FIRST - i * PANEL_PITCH for i in range(len(run["shown"]) + 1)]
        return ProbabilityBars.next_words(run, self.lookback["word"], ys, lang=self.lang, **panel)

    def beat_question(self):
        h, lb = self.h, self.lookback
        focus = h.word(h.focus)
        if self.story:
            rule = h.choice["prompt_rule"]
            self.say("question_story", kind=KINDS(adjective_kind(rule["lang"], rule["adjective"]), self.lang),
                     adj=style.token_label(rule["adjective"]), focus=focus, n=h.focus - rule["adjective_index"])
        else:
            self.say("question_prompt", focus=focus)
        row = self.question_row = story_row(self.h, self.lang)
        marks = VGroup(SurroundingRectangle(self.chip_in(row, h.focus), color=QUERY, buff=0.06, corner_radius=0.1))
        if self.story and h.choice["prompt_rule"]["adjective_index"] >= row.first_shown:
            marks.add(SurroundingRectangle(self.chip_in(row, h.choice["prompt_rule"]["adjective_index"]), color=VALUE,
                                           buff=0.06, corner_radius=0.1))
        self.play(LaggedStart(*[FadeIn(c, shift=DOWN * 0.15) for c in row.chips], lag_ratio=0.06),
                  FadeIn(row.ellipsis), FadeIn(row.indices), FadeIn(row.slot), run_time=STEP + 0.06 * len(row.chips))
        self.play(Create(marks), run_time=0.8)
        self.wait(PAUSE)
        panels, shown = VGroup(), {}
        for name, panel, x in (("looking_back", PANELS[0], -3.2), ("blocked", PANELS[1], 3.2)):
            bars = self.question_bars(lb[name], panel)
            title = Label(self.s(name, focus=focus), font_size=style.LABEL, color=QUERY if name == "blocked" else style.TEXT)
            title.move_to([x, PANEL_HEADER_Y, 0])
            frame = SurroundingRectangle(VGroup(bars.labels[bars.word_row], bars.numbers[bars.word_row]),
                                         color=VALUE, buff=0.08, corner_radius=0.06)
            self.play(FadeIn(title), FadeIn(bars.labels), FadeIn(bars.bars.tracks), run_time=0.8)
            self.play(*[GrowFromEdge(b, LEFT) for b in bars.bars.bars], FadeIn(bars.numbers), run_time=STEP)
            self.play(Create(frame), run_time=0.6)
            panels.add(VGroup(title, bars, frame))
            self.record_sum("question", f"{name}: probabilities = 100%", bars.rounded)
            shown[name] = {"words": [r["word"] for r in bars.rows], "p": [r["p"] for r in bars.rows],
                           "other": bars.other_p, "labels": list(bars.rounded.labels)}
        self.values["question"]["shown"] = shown
        p, p_blocked = lb["looking_back"]["p_word"], lb["blocked"]["p_word"]
        label = {name: panels[i][1].rounded.labels[panels[i][1].word_row] for i, name in
                 enumerate(("looking_back", "blocked"))}      # the caption quotes the bars' labels
        key = self.caption_rule("lookback", self.lookback_rule(), "P(word) seeing only the focus (blocked) against "
                                "looking back: the two bars' labels alike, or blocked >= looking back: "
                                f"lookback_unneeded; blocked below {NEEDED_SHARE} of looking back: lookback_needed; "
                                "else lookback_helps", p_looking_back=p, p_blocked=p_blocked)
        self.say(key, word=style.token_label(lb["word"]), focus=focus, p=label["looking_back"],
                 p_blocked=label["blocked"])
        self.wait(PAUSE + 1)
        self.question_panels, self.question_marks = panels, marks

    def beat_idea(self):
        h = self.h
        row = self.question_row
        self.say("idea")
        self.play(FadeOut(VGroup(self.question_panels, self.question_marks)), run_time=0.8)
        roles = VGroup(*[Label(self.s(key), font_size=style.LABEL, color=colour).move_to([0, yy, 0])
                         for key, colour, yy in (("role_query", QUERY, ROLES_Y[0]), ("role_key", KEY, ROLES_Y[1]),
                                                 ("role_value", VALUE, ROLES_Y[2]))])
        self.play(LaggedStart(*[FadeIn(r) for r in roles], lag_ratio=0.6), run_time=2.5 * STEP)
        self.wait(PAUSE + 1)
        w = float(h.weights[h.focus, h.source])
        key = self.caption_rule("idea", "idea_self" if h.source == h.focus else "idea_value", "the key where the "
                                "focus's weights are largest (source): idea_self if it is the focus itself, else "
                                "idea_value", source=h.source, focus=h.focus)
        self.say(key, focus=h.word(h.focus), src=h.word(h.source), w=style.percent(w), layer=style.shown(h.layer),
                 head=style.shown(h.head))
        self.values["census"] = c = self.census
        # the focus asks (q), the word it matches best answers (k), and its value flows to the focus
        focus_chip = self.chip_in(row, h.focus)
        frames = VGroup(SurroundingRectangle(focus_chip, color=QUERY, buff=0.06, corner_radius=0.1))
        tag = lambda text, colour, chip: Label(text, font_size=style.LABEL, color=colour).move_to(  # noqa: E731
            chip.get_bottom() + DOWN * 0.75)                     # under the chip's position index
        tags = VGroup(tag("q", QUERY, focus_chip))
        label = Label(style.percent(w), font_size=style.SMALL, color=VALUE)
        arrow = VGroup()
        if h.source != h.focus and h.source >= row.first_shown:
            src_chip = self.chip_in(row, h.source)
            frames.add(SurroundingRectangle(src_chip, color=VALUE, buff=0.06, corner_radius=0.1))
            tags.add(tag("k", KEY, src_chip))
            arrow = CurvedArrow(tags[1].get_bottom() + DOWN * 0.05, tags[0].get_left() + LEFT * 0.08, angle=0.5,
                                color=VALUE, stroke_width=3, tip_length=0.18)
            label.next_to(arrow, DOWN, buff=0.12)
        else:
            label.next_to(tags[0], DOWN, buff=0.12)
        keep_inside_safe_area(label)
        self.play(Create(frames), FadeIn(tags), run_time=0.8)
        self.play(Create(arrow), FadeIn(label), run_time=STEP)
        self.wait(PAUSE + 1)
        if c:       # what the head does over many stories of this form: its job
            key = self.caption_rule("job", "job_kind" if c["answer"] > JOB_SHARE * c["n"] else "job_mixed",
                                    f"this head's top key in the seeded stories ending in the focus word "
                                    f"(model.analysis.head_jobs): the repeated word in more than {JOB_SHARE} of them: "
                                    "job_kind, else job_mixed", n=c["n"], answer=c["answer"])
            kind = KINDS(adjective_kind(c["lang"], h.choice["prompt_rule"]["adjective"]), self.lang)
            self.say(key, n=c["n"], k=c["answer"], focus=h.word(h.focus), kind=kind)
            self.wait(PAUSE)
        self.values["idea"] = {"weight": w, "source": h.source, "label": style.percent(w)}

    # --- the beats ------------------------------------------------------------------------------
    def beat_input(self):
        h = self.h
        self.say("input_first" if h.layer == 0 else "input_later", layer=style.shown(h.layer))
        self.clear_stage()
        row = TokenRow(h.tokens, lang=self.lang, max_width=2 * style.safe_half_width() - 0.2)  # room for a frame
        row.move_to([0, TOP - 0.1 - row.height / 2, 0])
        self.q_product = self.product(h.W_q.T, h.x_hat[h.focus], h.b_q, h.Q[h.focus], "q", QUERY)
        x = self.q_product.vector
        focus_chip = self.chip_in(row, h.focus)
        self.x_home = x.entries.get_center().copy()  # its place in the product, for the next beat
        half = max(1.35, x.width / 2)    # half the widest size label (the same place in every language), or this one
        x.move_to([np.clip(focus_chip.get_center()[0], -style.safe_half_width() + half, style.safe_half_width() - half),
                   0, 0]).shift(UP * (row.get_bottom()[1] - 0.6 - x.get_top()[1]))
        frame = SurroundingRectangle(focus_chip, color=QUERY, buff=0.06, corner_radius=0.1)
        index = row.indices[h.focus - row.first_shown]
        arrow = Arrow(index.get_bottom(), x.get_top(), buff=0.06, color=MUTED, stroke_width=3,
                      max_tip_length_to_length_ratio=0.4)
        self.play(LaggedStart(*[FadeIn(c, shift=DOWN * 0.15) for c in row.chips], lag_ratio=0.1),
                  FadeIn(row.ellipsis), FadeIn(row.indices), run_time=STEP + 0.1 * len(row.chips))
        self.play(Create(frame), run_time=0.6)
        self.play(Create(arrow), FadeIn(x, shift=DOWN * 0.2), run_time=STEP)
        self.wait(PAUSE + 1)
        self.token_row, self.input_arrow, self.focus_frame = row, arrow, frame
        self.values["query"] = {"token": h.focus, "x_hat": shown_vector(x)}

    def beat_weights(self):
        h, mv = self.h, self.q_product
        self.say("weights", d=h.d_model, dh=h.d_head)
        # W_qᵀ at its place in the product, W_kᵀ beside it: each with its own scale, framed in its colour
        # its labels, cells and columns by the rule the product's own matrix follows (wider cells for GPT-2's 0.012)
        decimals, cell_w, cols = MatrixVectorProduct.matrix_labels(h.W_k.T, 6, K_BESIDE_COLS, PRODUCT_CELL)
        k_grid = MatrixGrid(h.W_k.T, name="W_k\u1d40", rows=6, cols=cols, cell=PRODUCT_CELL, font_size=style.SMALL,
                            decimals=decimals, cell_width=cell_w)
        k_grid.shift(RIGHT * (mv.matrix.cells.get_right()[0] + K_BESIDE_GAP - k_grid.cells.get_left()[0])
                     + UP * (mv.matrix.cells.get_top()[1] - k_grid.cells.get_top()[1]))
        k_legend = ColourLegend(k_grid.colour_scale, S("weight_scale", self.lang), width=2.4, inline=True)
        k_legend.shift(RIGHT * (k_grid.cells.get_left()[0] + MATRIX_LEGEND_X - mv.matrix.cells.get_left()[0]
                                - k_legend.bar.get_left()[0]) + UP * (TOP - 0.2 - k_legend.bar.get_top()[1]))
        frames = VGroup(SurroundingRectangle(mv.matrix.cells, color=QUERY, buff=0.08),
                        SurroundingRectangle(k_grid.cells, color=KEY, buff=0.08))
        names = VGroup(mv.matrix.shape_label, k_grid.shape_label)
        self.play(FadeOut(VGroup(self.token_row, self.input_arrow, self.focus_frame, mv.vector)), run_time=STEP)
        mv.vector.shift(self.x_home - mv.vector.entries.get_center())
        self.play(FadeIn(mv.matrix), FadeIn(mv.place_legend(MATRIX_LEGEND_X, TOP - 0.2)), FadeIn(k_grid),
                  FadeIn(k_legend), Create(frames), run_time=STEP)
        self.play(names[0].animate.set_color(QUERY), names[1].animate.set_color(KEY), run_time=0.6)
        self.wait(PAUSE)
        # the query first: W_kᵀ gives way to the rest of q's product (it comes back for the keys)
        self.say("weights_query")
        self.header = keep_right_of(self.product_line(h.focus, ["q", "=", r"W_q^{\top}", r"\hat{x}", "+", "b_q"],
                                                      QUERY), mv.legend)    # a wider legend (GPT-2's) pushes it
        self.play(FadeOut(VGroup(k_grid, k_legend, frames)), names[0].animate.set_color(MUTED), run_time=STEP)
        self.play(FadeIn(self.header), FadeIn(mv.vector), run_time=STEP)
        self.play(FadeIn(VGroup(mv.plus, mv.bias, mv.equals, mv.output)), run_time=STEP)
        self.wait(PAUSE + 1)
        self.k_beside = k_grid
        self.values["query"].update({"W_shown": shown_matrix(mv), "bias": shown_vector(mv.bias)})
        self.values["weights"] = {"W_q": shown_matrix(mv), "W_k": shown_matrix(SimpleNamespace(matrix=k_grid))}

    def beat_query(self):
        h, mv = self.h, self.q_product
        self.say("query", d=h.d_model, dh=h.d_head)
        mv.play(self)
        self.say("smaller", d=h.d_model, dh=h.d_head, H=h.n_head)
        sizes = VGroup(SurroundingRectangle(mv.vector.size_label, color=MUTED, buff=0.06),
                       SurroundingRectangle(mv.output.size_label, color=QUERY, buff=0.06))
        self.play(Create(sizes), run_time=STEP)
        self.wait(PAUSE + 1.5)
        self.play(FadeOut(sizes), run_time=0.5)
        self.wait(0.5)
        self.values["query"]["q"] = shown_vector(mv.output)

    def beat_all_queries(self):
        h, mv = self.h, self.q_product
        self.say("all_queries", T=h.T, dh=h.d_head)
        # signed (blue +, red −), one scale for Q and K: the signs decide each product q·k, so they stay visible
        self.entry_scale = ColourScale.signed_for(np.concatenate([h.Q, h.K]))
        self.q_block, self.k_block, self.block_words = self.blocks()
        self.entry_legend = place_legend(ColourLegend(self.entry_scale, S("entry_scale", self.lang), width=2.25),
                                         x=6.35 - 2.25)     # beside the blocks, with room for a longer title
        self.play(FadeOut(VGroup(self.header, mv.matrix, mv.vector, mv.plus, mv.bias, mv.equals, mv.legend,
                                 mv.output.brackets, mv.output.size_label)), run_time=0.8)
        self.q_frame = SurroundingRectangle(self.q_block.rows[h.focus], color=QUERY, buff=0.04)
        self.play(FadeIn(self.block_words), TransformFromCopy(mv.output.entries, self.q_block.rows[h.focus]),
                  FadeOut(mv.output.entries), Create(self.q_frame), run_time=STEP)
        others = [r for i, r in enumerate(self.q_block.rows) if i != h.focus]
        self.play(*([LaggedStart(*[FadeIn(r, shift=RIGHT * 0.1) for r in others], lag_ratio=0.08)] if others else []),
                  FadeIn(self.q_block.shape_label), FadeIn(self.entry_legend), run_time=2 * STEP)
        self.wait(PAUSE + 1)
        self.values["Q"] = {"values": h.Q.tolist(), "scale": self.entry_scale.limit}

    def beat_key(self):
        h = self.h
        key = self.caption_rule("key", "key_self" if h.source == h.focus else "key", "the key shown is where the "
                                "focus's attention weights are largest (the earliest on a tie): key_self if that is "
                                "the focus itself, else key", source=h.source, focus=h.focus,
                                focus_weights=h.weights[h.focus, :h.focus + 1].tolist())
        self.say(key, word=h.word(h.source), focus=h.word(h.focus))
        blocks = VGroup(self.q_block, self.q_frame, self.block_words, self.entry_legend)
        self.play(FadeOut(blocks), run_time=0.8)
        mv = self.k_product = self.product(h.W_k.T, h.x_hat[h.source], h.b_k, h.K[h.source], "k", KEY)
        legend = mv.place_legend(MATRIX_LEGEND_X, TOP - 0.2)
        header = keep_right_of(self.product_line(h.source, ["k", "=", r"W_k^{\top}", r"\hat{x}", "+", "b_k"], KEY),
                               legend)
        self.play(FadeIn(header), FadeIn(VGroup(mv.matrix, mv.vector, mv.plus, mv.bias, mv.equals, mv.output)),
                  FadeIn(legend), run_time=STEP)
        mv.play(self, slow_rows=0)      # the same product as the query's, at its fast pace
        self.wait(PAUSE)
        self.say("all_keys", T=h.T, dh=h.d_head)
        self.play(FadeOut(VGroup(header, mv.matrix, mv.vector, mv.plus, mv.bias, mv.equals, mv.legend,
                                 mv.output.brackets, mv.output.size_label)), FadeIn(blocks), run_time=STEP)
        self.k_frame = SurroundingRectangle(self.k_block.rows[h.source], color=KEY, buff=0.04)
        self.play(TransformFromCopy(mv.output.entries, self.k_block.rows[h.source]), FadeOut(mv.output.entries),
                  Create(self.k_frame), run_time=STEP)
        others = [r for i, r in enumerate(self.k_block.rows) if i != h.source]
        self.play(*([LaggedStart(*[FadeIn(r, shift=RIGHT * 0.1) for r in others], lag_ratio=0.08)] if others else []),
                  FadeIn(self.k_block.shape_label), run_time=2 * STEP)
        self.wait(PAUSE + 1)
        self.values["key"] = {"token": h.source, "x_hat": shown_vector(mv.vector), "W_shown": shown_matrix(mv),
                              "bias": shown_vector(mv.bias), "k": shown_vector(mv.output)}
        self.values["K"] = {"values": h.K.tolist(), "scale": self.entry_scale.limit}

    def beat_scores(self):
        h = self.h
        self.say("scores", focus=h.word(h.focus))
        self.clear_stage()       # the K block
        mv = MatrixVectorProduct(h.K, h.Q[h.focus], h.scores[h.focus], lang=self.lang, name="K", rows=6, cols=6,
                                 colour=style.TEXT, vector_label=f"q: {S('n_numbers', self.lang, n=h.d_head)}",
                                 output_label=S("n_scores", self.lang, n=h.T))
        mv.vector.brackets.set_color(QUERY)
        mv.vector.size_label.set_color(QUERY)
        per_row = len(mv.matrix.cols_shown)
        words = VGroup()
        for s, i in enumerate(mv.matrix.rows_shown):
            if i is not None:
                cell = mv.matrix.cells[s * per_row]
                w = Label(h.word(i), font_size=style.SMALL)
                words.add(w.shift(RIGHT * (cell.get_left()[0] - 0.2 - w.get_right()[0])
                                  + UP * (cell.get_center()[1] - w.get_center()[1])))
        group = VGroup(words, mv)
        top = max(mv.matrix.cells.get_top()[1], mv.vector.brackets.get_top()[1])   # few keys: q is the taller
        group.shift(-VGroup(words, mv.bodies()).get_center()[0] * RIGHT + UP * (MATRIX_TOP - top))
        header = self.product_line(h.focus, ["K", "q"], QUERY, {"K": KEY, "q": QUERY})
        self.play(FadeIn(header), FadeIn(words), FadeIn(VGroup(mv.matrix, mv.vector, mv.equals, mv.output)),
                  run_time=STEP)
        mv.play(self, slow_rows=1)
        self.wait(PAUSE)
        self.values["scores_for_focus"] = {"K_shown": shown_matrix(mv), "q": shown_vector(mv.vector),
                                           "scores": shown_vector(mv.output)}
        # every query: the whole grid
        self.say("grid")
        score_scale = ColourScale.signed_for(h.scores)
        grid = self.grid = place_grid(AttentionGrid(h.scores, score_scale, tokens=h.tokens, lang=self.lang,
                                                              height=GRID_HEIGHT, focus=h.focus))
        self.score_legend = place_legend(ColourLegend(score_scale, S("score_scale", self.lang), width=LEGEND_W),
                                         top=GRID_LEGEND_TOP)
        self.line_numbers = line_numbers(grid, [style.signed(v, 1) for v in h.scores[h.focus]])
        self.line_title = self.line_header(grid, self.line_numbers)
        self.play(FadeOut(VGroup(header, words, mv.matrix, mv.vector, mv.equals, mv.output.brackets,
                                 mv.output.size_label)), run_time=0.8)
        self.play(FadeIn(grid.axes), TransformFromCopy(mv.output.entries, grid.line(h.focus)),
                  TransformFromCopy(mv.output.entries, self.line_numbers), FadeOut(mv.output.entries),
                  FadeIn(self.line_title), run_time=1.5 * STEP)
        self.frame = grid.line_frame(h.focus)
        others = [grid.line(q) for q in range(h.T) if q != h.focus]
        self.play(Create(self.frame), *([LaggedStart(*[FadeIn(c) for c in others], lag_ratio=0.08)] if others else []),
                  FadeIn(self.score_legend), run_time=2 * STEP)
        self.wait(PAUSE + 1.5)
        self.values["scores"] = {"grid": h.scores.tolist(), "scale": score_scale.limit,
                                 "focus_line": h.scores[h.focus].tolist()}

    def beat_scale(self):
        h = self.h
        root = math.sqrt(h.d_head)
        sp = self.geometry["spread"]     # model.analysis.query_key_geometry: the head's scores, every query's line
        w_un, w_sc = style.percent(sp["top_weight_unscaled"]), style.percent(sp["top_weight_scaled"])
        key = self.caption_rule("scale", "scale" if w_un != w_sc else "scale_same", "the focus's top softmax weight "
                                "without and with ÷ √d_k, as percentages: scale if they read differently, else "
                                "scale_same", top_weight_unscaled=sp["top_weight_unscaled"],
                                top_weight_scaled=sp["top_weight_scaled"])
        self.random_dots()
        self.say(key, dh=h.d_head, root=f"{root:g}", sd=f"{sp['scores_std']:.1f}", sd_scaled=f"{sp['scaled_std']:.1f}",
                 w_un=w_un, w_sc=w_sc)
        divide = VGroup(self.tex(r"\div\sqrt{d_k}"), self.tex("=", r"\div\," + f"{root:g}")) \
            .arrange(DOWN, aligned_edge=LEFT, buff=0.25)
        divide.next_to(self.score_legend, DOWN, buff=0.6).align_to(self.score_legend.bar, LEFT)
        scaled = line_numbers(self.grid, [style.signed(v, 1) for v in h.scaled[h.focus]])
        self.play(FadeIn(divide), run_time=STEP)
        self.play(*self.grid.recolour(h.scaled), *[TransformFromCopy(a, b) for a, b in zip(self.line_numbers, scaled)],
                  FadeOut(self.line_numbers), run_time=2 * STEP)
        self.wait(PAUSE + 1.5)
        self.line_numbers = scaled
        self.values["scaled"] = {"grid": h.scaled.tolist(), "d_k": h.d_head, "sqrt_d_k": root, "spread": sp,
                                 "focus_line": h.scaled[h.focus].tolist(), "scale": self.grid.colour_scale.limit}

    def random_dots(self):
        """Dot products of random vectors spread wider the longer the vectors (model.analysis.query_key.random_dots,
        for RANDOM_DIMS and d_k): the grid gives way to the strips, then comes back to be divided."""
        h = self.h
        data = random_dots(sorted(set(RANDOM_DIMS) | {h.d_head}))
        self.say("scale_random")
        stage = VGroup(self.grid, self.score_legend, self.line_numbers, self.line_title, self.frame)
        self.play(FadeOut(stage), run_time=0.8)
        spread = lambda sd: self.s("spread_label", v=f"{sd:.1f}")     # the number as recorded below   # noqa: E731
        length = lambda d, is_dk: self.s("d_k_label" if is_dk else "d_label", d=d, r=f"{math.sqrt(d):g}").split("\n")  # noqa: E731
        chart = random_dots_chart(data, h.d_head, spread, length)
        self.play(Create(chart.zero), *[FadeIn(st[2]) for st in chart.strips], run_time=STEP)
        self.play(LaggedStart(*[FadeIn(st[0]) for st in chart.strips], lag_ratio=0.5), run_time=2 * STEP)
        self.play(*[Create(st[1]) for st in chart.strips], *[FadeIn(st[3]) for st in chart.strips], run_time=STEP)
        self.wait(PAUSE + 1)
        self.play(FadeOut(chart), run_time=0.8)
        self.play(FadeIn(stage), run_time=0.8)
        self.values["random_dots"] = {**data, "d_k": h.d_head,
                                      "shown": {"spreads": [f"{sd:.1f}" for sd in data["spread"]],
                                                "lengths": [length(d, d == h.d_head) for d in data["dims"]]}}

    beat_lab = why_beats.queries_keys   # why this part: the lab's record (scenes/why_beats.py)

    def answer_rule(self) -> str:
        """The key the focus's query matches best (source: its largest weight, so its top scaled score among the keys
        up to it): the focus itself: answer_self; in the story, the adjective the question asked for: answer_word,
        another word: answer_not_word; without a story: answer_back."""
        h = self.h
        if h.source == h.focus:
            return "answer_self"
        if self.story:
            return "answer_word" if h.source == h.choice["prompt_rule"]["adjective_index"] else "answer_not_word"
        return "answer_back"

    def beat_summary(self):
        """The opening question answered on its prompt row: the focus's query met every key up to it; a table of
        the best-matching keys (q·k, ÷ √d_k, the attention weight; the rest as "other", each weight at its
        plain rounding), the best one framed on the row and in the table."""
        h = self.h
        n = h.focus + 1
        dots, scaled, weights = (np.asarray(m[h.focus][:n], np.float64) for m in (h.scores, h.scaled, h.weights))
        order = [int(j) for j in np.argsort(-scaled, kind="stable")[:min(ANSWER_ROWS, n)]]
        root = f"{math.sqrt(h.d_head):g}"
        self.clear_stage()
        row = story_row(self.h, self.lang)
        marks = VGroup(SurroundingRectangle(self.chip_in(row, h.focus), color=QUERY, buff=0.06, corner_radius=0.1))
        if h.source != h.focus and h.source >= row.first_shown:
            marks.add(SurroundingRectangle(self.chip_in(row, h.source), color=KEY, buff=0.06, corner_radius=0.1))
        ys = [ANSWER_FIRST - i * ANSWER_PITCH for i in range(len(order) + 1)]
        c = ANSWER_COLS
        bars = ProbabilityBars([h.word(j) for j in order], [float(weights[j]) for j in order],
                               float(weights.sum() - weights[order].sum()), ys, lang=self.lang,
                               label_right=c["label_right"], bar_left=c["bar_left"], bar_width=c["bar_width"],
                               number_right=c["number_right"], color=VALUE)
        dot_col = NumberColumn([style.signed(dots[j], 1) for j in order], ys[:len(order)], c["dot_right"])
        scaled_col = NumberColumn([style.signed(scaled[j], 1) for j in order], ys[:len(order)], c["scaled_right"])
        heads = VGroup(*[Label(self.s(k, root=root), font_size=style.SMALL, color=MUTED) for k in
                         ("col_key", "col_dot", "col_scaled", "col_weight")])
        for head, x in zip(heads, (c["label_right"], c["dot_right"], c["scaled_right"], c["number_right"])):
            head.shift(RIGHT * (x - head.get_right()[0])).on_baseline(PANEL_HEADER_Y)
        best = SurroundingRectangle(VGroup(bars.labels[0], bars.numbers[0]), color=KEY, buff=0.06, corner_radius=0.06)
        self.play(LaggedStart(*[FadeIn(ch, shift=DOWN * 0.15) for ch in row.chips], lag_ratio=0.04),
                  FadeIn(row.ellipsis), FadeIn(row.indices), FadeIn(row.slot), run_time=STEP + 0.04 * len(row.chips))
        self.play(Create(marks[0]), FadeIn(heads), run_time=0.8)
        key = self.caption_rule("answer", self.answer_rule(), "the key the focus's query matches best (its largest "
                                "attention weight, the top scaled score among the keys up to it): the focus itself: "
                                "answer_self; in the story, the adjective asked for: answer_word, else "
                                "answer_not_word; without a story: answer_back", source=h.source, focus=h.focus,
                                story=self.story, adjective_index=(h.choice["prompt_rule"]["adjective_index"]
                                                                   if self.story else None))
        w_label = bars.rounded.labels[0]
        self.say(key, focus=h.word(h.focus), src=h.word(h.source), n=n, dot=style.signed(dots[h.source], 1),
                 root=root, s=style.signed(scaled[h.source], 1), w=w_label,
                 adj=style.token_label(h.choice["prompt_rule"]["adjective"]) if self.story else "",
                 back=h.focus - h.source)
        self.play(FadeIn(bars.labels), FadeIn(dot_col), run_time=STEP)
        self.play(FadeIn(scaled_col), run_time=STEP)
        self.play(FadeIn(bars.bars.tracks), *[GrowFromEdge(b, LEFT) for b in bars.bars.bars], FadeIn(bars.numbers),
                  run_time=STEP)
        self.play(Create(best), *[Create(m) for m in marks[1:]], run_time=0.8)
        self.wait(PAUSE + 1.5)
        self.answer_table = VGroup(heads, bars, dot_col, scaled_col, best)
        self.answer_row = row
        self.record_sum("summary", "the focus's attention weights = 100%", bars.rounded)
        self.values["answer"] = {"keys": n, "source": h.source, "rows": [{"key": j, "word": h.tokens[j], "dot": float(dots[j]),
                                                      "scaled": float(scaled[j]), "weight": float(weights[j])}
                                                     for j in order],
                                 "other": float(weights.sum() - weights[order].sum()),
                                 "labels": {"dot": [m.text for m in dot_col], "scaled": [m.text for m in scaled_col],
                                            "weight": list(bars.rounded.labels)}}

    def beat_direct(self):
        """Why learned W_q and W_k: the focus's keys ranked by comparing the head's inputs directly (x̂·x̂) and by the
        head's q·k (model.analysis.query_key.direct_comparison), side by side under the prompt row, the followed key
        framed in both."""
        h, d = self.h, self.direct
        n, src = h.focus + 1, h.source
        top = d["direct_order"][0]
        key = self.caption_rule("direct", "direct_same" if top == d["head_order"][0] else
                                "direct_self" if top == h.focus else "direct_other",
                                "the key compared directly (x̂·x̂) ranks first against the head's first (q·k): the "
                                "same key: direct_same; else the focus itself: direct_self; else direct_other",
                                direct_first=top, head_first=d["head_order"][0], focus=h.focus)
        rank = d["direct_rank"][src]
        self.say(key, focus=h.word(h.focus), src=h.word(src), top=h.word(top), n=n,
                 rank=ordinal(rank) if self.lang == "en" else str(rank))
        keep = {id(m) for m in [*self.answer_row.get_family(), *self.current_caption.get_family()]}
        self.play(FadeOut(Group(*[m for m in self.mobjects if id(m) not in keep])), run_time=0.8)
        words = [h.word(j) for j in range(n)]
        sides = [ranking(words, d[v], d[o], d[r], src, self.s(t), x, PANEL_HEADER_Y, 0.48, c)
                 for v, o, r, t, x, c in (("direct", "direct_order", "direct_rank", "direct_plain", -3.4, style.TEXT),
                                          ("head_scores", "head_order", "head_rank", "direct_head", 3.4, KEY))]
        for side in sides:
            self.play(FadeIn(side[0]), LaggedStart(*[FadeIn(r) for r in side.rows], lag_ratio=0.15), run_time=STEP)
            self.play(Create(side.frame), run_time=0.6)
        self.wait(PAUSE + 1.5)
        self.values["direct"] = {**d, "shown": {"direct": {"keys": sides[0].keys, "labels": sides[0].labels},
                                               "head": {"keys": sides[1].keys, "labels": sides[1].labels}}}

    # --- building the pieces ----------------------------------------------------------------------
    def product(self, W, x, b, out, symbol: str, colour) -> MatrixVectorProduct:
        """W (turned: d_head × d_model) times x̂, plus the bias, equals the trace's q or k. Six of W's columns, or
        as many as keep the product inside the title-safe area in every language (the same columns in English and
        Chinese; a bias read in ten-thousandths, ours: b_k, or a checkpoint's wider labels widen it)."""
        def build(cols: int, lang: str) -> MatrixVectorProduct:
            mv = MatrixVectorProduct(
                W, x, out, lang=lang, name=f"W_{symbol}\u1d40", bias=b, rows=6, cols=cols, colour=colour,
                vector_label=f"x\u0302: {S('n_numbers', lang, n=len(x))}", bias_label=f"b_{symbol}",
                output_label=f"{symbol}: {S('n_numbers', lang, n=len(out))}",
                legend_title=S("weight_scale", lang))
            mv.shift((MATRIX_X - mv.bodies().get_center()[0]) * RIGHT + UP * (MATRIX_TOP - mv.matrix.cells.get_top()[1]))
            keep_inside_safe_area(mv)
            return mv

        for cols in (6, 5, 4, 3):
            mv = build(cols, self.lang)
            if inside_safe_area(mv) and all(inside_safe_area(build(cols, other)) for other in LANGS
                                            if other != self.lang):
                break
        return mv

    def product_line(self, token: int, parts: list[str], colour, colours: dict | None = None) -> VGroup:
        """The token's chip, then the formula, centred on the top line."""
        colours = colours or {p: colour for p in parts if p[0] in "qkW"}
        return self.formula_line(self.chip(token), self.tex(*parts, colours=colours), [0.6, HEADER_Y, 0])

    def chip_in(self, row: TokenRow, i: int):
        return row.chips[i - row.first_shown]

    def blocks(self):
        """Q and K as heat matrices, one row per token, words on the left (queries_keys_parts.blocks)."""
        return blocks(self.h, self.entry_scale)
