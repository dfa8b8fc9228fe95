"""Values and the update ΔE: what one attention head carries to the token in focus, from the real model.

    manim render -ql scenes/values_update/beats.py ValuesUpdate
    python render.py values_update --lang zh --set focus=3

Every number comes from the model's trace and from model.analysis (head_update, ablation_effect); the head,
focus and prompt are chosen by scenes.prompts.lookback_head unless given. Every value on screen is recorded at
full precision in self.values (the manifest).

This module is the scene: each beat's build (build_<beat>, called by prepare) sits beside its play (beat_<beat>), with
the caption rule it applies, and a beat only plays what its build made; the numbers it reads are in numbers.py
(HeadAtFocus), the measures and shared pieces in layout.py, its words in words.toml.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from manim import (DOWN, LEFT, RIGHT, UP, ArcBetweenPoints, Create, CurvedArrow, FadeIn, FadeOut, GrowFromEdge,
                   LaggedStart, ReplacementTransform, SurroundingRectangle, TransformFromCopy, VGroup)

from scenes import style
from scenes.components import (AttentionGrid, BarChart, BarScale, ColourLegend, ColourScale, CompactTokenRow, RoundedPercents,
                               Label, MagnitudeStrip, MatrixVectorProduct, NumberColumn, NumberText,
                               TokenColumn, VectorColumn, column_texts, rounded_columns, keep_right_of,
                               rule, sum_decimals)
from scenes.lecture import LectureScene
from scenes.params import ParamError
from scenes.style import ATTENTION, EMBEDDING, EMBEDDING_UPDATED, KEY, MUTED, PROB, QUERY, SHARED, VALUE
from scenes.values_update.layout import (ANSWER_BARS_TOP, ANSWER_PITCH, ANSWER_ROW_Y, ARC_ANGLE, CHIP_RIGHT, CHIP_SLACK,
                                         DIMMED, FORMULA_Y, LEGEND_Y, LENS_HEADER_Y, MATRIX_LEGEND_TOP,
                                         MATRIX_LEGEND_W, MATRIX_LEGEND_X, OUT_TOP, OUT_X, PANEL_TITLE_Y, PANELS,
                                         PITCH, PROMPT_Y, QUESTION_ROW_Y, ROW_FLOOR, ROW_TOP, STRIP_W, TOP_MAX,
                                         TOTAL_FLOOR, V_LEFT, WEIGHT_RIGHT, WV_LEFT, ValuesLayout, place_column,
                                         place_product)
from scenes.values_update.numbers import ALMOST_ALL, KV_RULE, MOSTLY, HeadAtFocus
from scenes.words import Words

WORDS = Words(Path(__file__).with_name("words.toml"))   # the captions, their spoken forms, the beat titles

S = SHARED | ATTENTION | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

STEP, PAUSE = style.STEP, style.PAUSE


class ValuesUpdate(ValuesLayout, LectureScene):
    name = "values_update"
    strings = S
    beat_titles = BEATS
    TITLE_TOP, NOTE_Y = 1.9, -1.4      # room for a four-line note (the causal head and its story)

    # --- the title card; prepare: the numbers, then every beat's build ----------------------------------------
    def title_note(self) -> str:
        h = self.h
        given = h.choice["given"]["layer"] or h.choice["given"]["head"]
        if given:   # the user's head: say where it looks
            return self.s("given", layer=style.shown(h.layer), head=style.shown(h.head), focus=h.tokens[h.focus], src=h.tokens[h.source],
                          score=style.percent(h.weights[h.source]))
        if h.choice["causal"]:     # the default lecture's head, chosen by what it does, in both languages
            from scenes.attention_chapter import causal_note
            return causal_note(self, h.choice, self.model_words("compact"))
        keys = " ".join(h.tokens[k] for k in h.choice["keys"])   # the chosen head: the score it was chosen by
        return self.s("chosen", layer=style.shown(h.layer), head=style.shown(h.head), focus=h.tokens[h.focus], src=keys,
                      score=style.percent(h.choice["score"]))

    def prepare(self):
        self.h = h = HeadAtFocus(self.gpt, self.params)
        self.params.update(prompt=h.prompt, focus=h.focus, layer=h.layer, head=h.head)   # `auto` resolved
        self.values.update(h.record())
        self.keys = h.keys
        self.build_value_product()
        self.build_table()
        self.build_weights()
        self.build_sum()
        self.build_delta()
        self.build_update()
        self.build_meaning()
        self.build_effect()
        # the question's and the answer's pieces last: the question's sums follow the others' in
        # values["sums"], as when the question beat built them
        self.build_question()
        self.build_summary()

    # --- question ---------------------------------------------------------------------------------------------
    def build_question(self):
        """The question's pieces: the prompt's row with the head's arrow (pull_row), the lens's header, and for each
        lens point (entering the layer, after its attention) its title, bars and the followed word's frame; the two
        sums recorded, and what the bars show in values["question"]."""
        h = self.h
        self.question_row = self.pull_row(QUESTION_ROW_Y)
        lens, layer = h.lens, style.shown(h.layer)
        self.lens_header = Label(self.s("lens_header", focus=h.tokens[h.focus]), font_size=style.LABEL, color=PROB)
        self.lens_header.move_to([0, LENS_HEADER_Y, 0])
        self.lens_panels, self.lens_labels, shown = [], {}, {}
        for name, panel, x in (("before", PANELS[0], -3.2), ("after", PANELS[1], 3.2)):
            bars = self.lens_bars(lens[name], panel)
            title = Label(self.s(f"lens_{name}", layer=layer), font_size=style.LABEL, color=MUTED)
            title.move_to([x, PANEL_TITLE_Y, 0])
            frame = SurroundingRectangle(VGroup(bars.labels[bars.word_row], bars.numbers[bars.word_row]),
                                         color=VALUE, buff=0.08, corner_radius=0.06)
            self.lens_panels.append((title, bars, frame))
            self.record_sum("question", f"{name}: probabilities = 100%", bars.rounded)
            self.lens_labels[name] = bars.rounded.labels[bars.word_row]
            shown[name] = {"words": [r["word"] for r in lens[name]["shown"]], "p": [r["p"] for r in lens[name]["shown"]],
                           "other": lens[name]["other"], "labels": list(bars.rounded.labels)}
        self.values["question"] = {"shown": shown, "word": lens["word"]}

    def beat_question(self):
        """The question values answer: the prompt up to the focus, the head's largest weight drawn as an arrow (where
        the focus looks), then the logit lens at the focus entering the head's layer and after its attention
        (model.analysis.attention_lens): what did attention write into the vector?"""
        h = self.h
        key = self.caption_rule("question_where", "question_where_self" if h.source == h.focus else "question_where",
                                "the key with the focus's largest weight (source): itself: question_where_self, else "
                                "question_where", source=h.source, focus=h.focus)
        self.say(key, focus=h.tokens[h.focus], src=h.tokens[h.source], w=style.percent(h.weights[h.source]),
                 distance=h.focus - h.source)
        row, marks, arrow, label = self.question_row
        self.play(LaggedStart(*[FadeIn(c, shift=DOWN * 0.1) for c in row.chips], lag_ratio=0.06),
                  FadeIn(row.ellipsis), FadeIn(row.indices), FadeIn(row.slot), run_time=STEP + 0.05 * len(row.chips))
        self.play(Create(marks), run_time=0.8)
        self.play(Create(arrow), FadeIn(label), run_time=STEP)
        self.wait(PAUSE)
        self.play(FadeIn(self.lens_header), run_time=0.6)
        for title, bars, frame in self.lens_panels:
            self.play(FadeIn(title), FadeIn(bars.labels), FadeIn(bars.bars.tracks), run_time=0.8)
            self.play(*[GrowFromEdge(b, LEFT) for b in bars.bars.bars], FadeIn(bars.numbers), run_time=STEP)
            self.play(Create(frame), run_time=0.6)
        lens, layer, labels = h.lens, style.shown(h.layer), self.lens_labels
        before, after = lens["before"]["p_word"], lens["after"]["p_word"]
        key = "question_alike" if labels["before"] == labels["after"] else \
            "question_raises" if after > before else "question_lowers"
        key = self.caption_rule("question", key, "P(word) read by the logit lens at the focus entering the layer and "
                                "after its attention, as the bars show them: alike: question_alike; after above "
                                "before: question_raises; else question_lowers", p_before=before, p_after=after,
                                labels=labels)
        self.say(key, focus=h.tokens[h.focus], word=style.token_label(lens["word"]), layer=layer,
                 p_before=labels["before"], p_after=labels["after"])
        self.wait(PAUSE + 1)

    # --- values -----------------------------------------------------------------------------------------------
    def build_value_product(self):
        """v for the token the head looks at most: W_vᵀ x̂ + b_v, whose result is the trace's own v."""
        h, lang = self.h, self.lang
        n = lambda k: S("n_numbers", lang, n=k)  # noqa: E731
        self.value_product = MatrixVectorProduct(
            h.W_v.T, h.normalised[h.source], h.v[h.source], lang=lang, name="W_v\u1d40", bias=h.b_v, rows=6,
            cols=6, colour=VALUE, vector_label=f"x\u0302: {n(h.d)}", bias_label="b_v", output_label=f"v: {n(h.dh)}",
            legend_title=S("weight_scale", lang), legend_width=MATRIX_LEGEND_W)
        self.value_product.place_legend(MATRIX_LEGEND_X, MATRIX_LEGEND_TOP)
        place_product(self.value_product)
        self.value_formula = self.product_line(h.source, ["v", "=", r"W_v^{\top}", r"\hat{x}", "+", "b_v"],
                                               {"v": VALUE, r"W_v^{\top}": VALUE})
        keep_right_of(self.value_formula, self.value_product.legend)   # a wider legend (GPT-2's −0.089) pushes it

    def beat_values(self):
        self.say("values", dh=self.h.dh, d=self.h.d, src=self.h.tokens[self.h.source])
        self.clear_stage()
        product = self.value_product
        self.play(FadeIn(self.value_formula), FadeIn(product.matrix), FadeIn(product.legend), FadeIn(product.vector),
                  FadeIn(product.plus),
                  FadeIn(product.bias), FadeIn(product.equals), FadeIn(product.output.brackets),
                  FadeIn(product.output.size_label), run_time=STEP)
        product.play(self, slow_rows=1)
        self.wait(PAUSE)

    # --- all_values -------------------------------------------------------------------------------------------
    def build_table(self):
        """One row per key: its chip, and its v as a strip of every entry on one magnitude scale."""
        h, lang = self.h, self.lang
        self.row_top = top = min(max(ROW_TOP, ROW_FLOOR + (len(self.keys) - 1) * PITCH), TOP_MAX)
        self.pitch = pitch = PITCH
        self.rows_y = ys = [top - i * pitch for i in range(len(self.keys))]
        self.token_column = TokenColumn([h.tokens[k] for k in self.keys], self.keys, ys, right=CHIP_RIGHT, prompt=h.tokens)
        overflow = -style.safe_half_width() - self.token_column.get_left()[0]   # a long word and two-digit positions
        if overflow > CHIP_SLACK:
            raise ParamError("prompt: its longest word and two-digit positions do not fit the key column; "
                             "a shorter prompt or an earlier focus does")
        self.token_column.shift(RIGHT * max(overflow, 0))     # into the gap before the values, if it must
        self.focus_frame = SurroundingRectangle(self.token_column.chip(h.focus), color=QUERY, buff=0.05)
        self.keys_title = self.column_header(S("keys_axis", lang), self.token_column.chips.get_center()[0], KEY)
        # V signed, as Q and K are drawn (blue +, red −), on one scale with the weighted values and the head's output
        self.magnitudes = scale = ColourScale.signed_for(np.concatenate([np.ravel(h.v), np.ravel(h.head_out)]))
        self.values["magnitude_scale_limit"] = scale.limit
        self.v_strips = VGroup(*[MagnitudeStrip(v, scale, width=STRIP_W).move_to([V_LEFT + STRIP_W / 2, y, 0])
                                 for v, y in zip(h.v, ys)])
        self.v_header = self.column_header(S("v_header", lang), V_LEFT + STRIP_W / 2, VALUE)
        self.source_v_frame = SurroundingRectangle(self.v_strips[self.keys.index(h.source)], color=VALUE, buff=0.05)
        self.legend = ColourLegend(scale, S("entry_value", lang), width=2.0, decimals=1)
        self.legend.shift([OUT_X - 0.4, LEGEND_Y, 0] - self.legend.bar.get_center())   # by its bar: same in en and zh

    def beat_all_values(self):
        self.say("all_values", dh=self.h.dh)
        self.play(FadeOut(VGroup(self.value_product, self.value_product.legend, self.value_formula)), run_time=0.8)
        self.play(FadeIn(self.token_column), FadeIn(self.keys_title), FadeIn(self.v_header), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(s, shift=RIGHT * 0.2) for s in self.v_strips], lag_ratio=0.12),
                  FadeIn(self.legend), run_time=2 * STEP)
        self.play(Create(self.source_v_frame), run_time=0.8)
        self.wait(PAUSE)

    # --- weights ----------------------------------------------------------------------------------------------
    def build_weights(self):
        """The head's attention grid, its rows level with the key rows; the focus's column becomes the weights."""
        h = self.h
        ys = self.rows_y
        self.grid = AttentionGrid(h.pattern[: h.focus + 1, : h.focus + 1], ColourScale("attention"),
                                  tokens=[h.tokens[k] for k in self.keys], lang=self.lang,
                                  height=self.pitch * len(self.keys), focus=h.focus)
        self.grid.shift([WV_LEFT + 0.35 - self.grid.squares.get_left()[0], ys[0] - self.grid.row_y(0), 0])
        self.grid_frame = self.grid.line_frame(h.focus)
        baselines = [self.grid.row_baseline(k) for k in self.keys]
        # each weight at its plain rounding, as the captions quote it; the total "≈ 100.0%" where the labels miss it
        self.weights_rounded = RoundedPercents(h.weights, total=float(h.weights.sum()))
        self.weight_numbers = NumberColumn(self.weights_rounded.labels, baselines, WEIGHT_RIGHT, color=QUERY)
        self.w_header = self.column_header(S("w_header", self.lang), WEIGHT_RIGHT - 0.37, QUERY)
        # right-aligned like its numbers: clear of the next column's header in either language
        self.w_header.shift(RIGHT * (WEIGHT_RIGHT - self.w_header.get_right()[0]))
        self.weight_rule = rule(WEIGHT_RIGHT - 0.8, WEIGHT_RIGHT, ys[-1] - 0.25)
        self.weight_total = NumberText(self.weights_rounded.total_text(), color=QUERY)
        if ys[-1] >= TOTAL_FLOOR:
            self.weight_total.place(WEIGHT_RIGHT, ys[-1] - 0.6)
        else:                                      # beside the rule, under the last weight's right end
            self.weight_total.place(WEIGHT_RIGHT + 0.3 + self.weight_total.width, baselines[-1])
        self.values["weights_total"] = float(h.weights.sum())
        self.record_sum("weights", "weights = 100%", self.weights_rounded, drawn=self.weight_total)

    def beat_weights(self):
        self.say("weights", focus=self.h.tokens[self.h.focus])
        grid = self.grid
        self.play(FadeOut(self.source_v_frame), FadeOut(self.legend), run_time=0.6)
        self.play(Create(self.focus_frame), FadeIn(grid.squares), FadeIn(grid.query_indices),
                  FadeIn(grid.query_title), run_time=STEP)
        self.play(Create(self.grid_frame), run_time=0.8)
        self.wait(PAUSE)
        column = [grid.cell_square(self.h.focus, k).copy() for k in self.keys]
        self.play(FadeOut(VGroup(grid.squares, grid.query_indices, grid.query_title, self.grid_frame)),
                  *[ReplacementTransform(c, n) for c, n in zip(column, self.weight_numbers)],
                  FadeIn(self.w_header), run_time=2 * STEP)
        self.play(Create(self.weight_rule), FadeIn(self.weight_total), run_time=STEP)
        self.wait(PAUSE)

    # --- weighted and sum: the weighted values and their sum --------------------------------------------------
    def build_sum(self):
        """weight × v per key (the trace's weighted values), and their sum: the head's output (the trace's)."""
        h, lang, ys = self.h, self.lang, self.rows_y
        self.wv_strips = VGroup(*[MagnitudeStrip(wv, self.magnitudes, width=STRIP_W)
                                  .move_to([WV_LEFT + STRIP_W / 2, y, 0]) for wv, y in zip(h.weighted, ys)])
        self.wv_header = self.column_header(S("wv_header", lang), WV_LEFT + STRIP_W / 2, VALUE)
        self.source_wv_frame = SurroundingRectangle(self.wv_strips[self.keys.index(h.source)], color=VALUE,
                                                    buff=0.05)
        top, bottom, x = ys[0] + 0.2, ys[-1] - 0.2, WV_LEFT + STRIP_W + 0.2
        self.sum_brace = ArcBetweenPoints([x, top, 0], [x, bottom, 0], angle=-0.4, stroke_color=MUTED,
                                          stroke_width=2)
        self.sum_sign = self.tex(r"\Sigma").move_to([x + 0.5, (top + bottom) / 2, 0])
        self.out_column = VectorColumn(h.head_out, lang=lang, shown=6, pitch=0.42)
        self.out_column.brackets.set_color(VALUE)
        self.out_column.shift([OUT_X - self.out_column.entries.get_center()[0],
                               OUT_TOP - self.out_column.get_top()[1], 0])
        self.out_header = self.column_header(S("head_out", lang), OUT_X, VALUE)

    def beat_weighted(self):
        self.say("weighted")
        self.play(FadeOut(VGroup(self.weight_rule, self.weight_total)), FadeIn(self.wv_header),
                  FadeIn(self.legend), run_time=0.8)
        self.play(LaggedStart(*[TransformFromCopy(v, wv) for v, wv in zip(self.v_strips, self.wv_strips)],
                              lag_ratio=0.1), run_time=2.5 * STEP)
        self.wait(PAUSE)

    def beat_sum(self):
        h = self.h
        key = self.caption_rule("sum", h.share(), f"the source's weight: >= {ALMOST_ALL} sum, >= {MOSTLY} sum_mostly, "
                                "else sum_blend", source_weight=float(h.weights[h.source]))
        self.say(key, focus=h.tokens[h.focus], src=h.tokens[h.source])
        self.play(Create(self.sum_brace), FadeIn(self.sum_sign), FadeIn(self.out_header),
                  FadeIn(self.out_column.brackets), run_time=STEP)
        target = self.out_column.entries.get_center()
        self.play(LaggedStart(*[FadeOut(s.copy(), target_position=target, scale=0.4) for s in self.wv_strips],
                              lag_ratio=0.05),
                  FadeIn(self.out_column.entries, lag_ratio=0.1), FadeIn(self.out_column.size_label),
                  run_time=2 * STEP)
        self.play(Create(self.source_wv_frame), run_time=0.8)
        self.wait(PAUSE + 1)

    # --- delta ------------------------------------------------------------------------------------------------
    def build_delta(self):
        """ΔE = W_O,hᵀ · output: this head's rows of W_O; the result is model.analysis.head_update's ΔE."""
        h, lang = self.h, self.lang
        self.delta_product = MatrixVectorProduct(
            h.W_O_rows.T, h.head_out, h.delta, lang=lang, name=f"W_O\u1d40 ({S('this_head', lang)})", rows=6,
            cols=6, colour=VALUE, vector_label=S("n_numbers", lang, n=h.dh), output_label=S("n_numbers", lang, n=h.d),
            legend_title=S("weight_scale", lang), legend_width=MATRIX_LEGEND_W)
        self.delta_product.place_legend(MATRIX_LEGEND_X, MATRIX_LEGEND_TOP)
        place_product(self.delta_product)
        self.delta_formula = self.tex(r"\Delta E", "=", r"W_{O,h}^{\top}", r"\,\text{out}_h",
                                      colours={r"\Delta E": VALUE}).move_to([0, FORMULA_Y, 0])
        keep_right_of(self.delta_formula, self.delta_product.legend)

    def beat_delta(self):
        self.say("delta", dh=self.h.dh, d=self.h.d)
        self.clear_stage()
        product = self.delta_product
        self.play(FadeIn(self.delta_formula), FadeIn(product.matrix), FadeIn(product.legend), FadeIn(product.vector),
                  FadeIn(product.equals), FadeIn(product.output.brackets), FadeIn(product.output.size_label),
                  run_time=STEP)
        product.play(self, slow_rows=1)
        self.wait(PAUSE)

    # --- update -----------------------------------------------------------------------------------------------
    def build_update(self):
        """E (the residual entering the layer), the head's ΔE, and E′ = E + ΔE, all from head_update."""
        h, lang = self.h, self.lang
        y = 0.1
        d = sum_decimals((h.E, h.delta, h.E_new))      # one sum: one number of decimals
        rounded = rounded_columns((h.E, h.delta, h.E_new), shown=7, decimals=d)   # ΔE reads as the beat before
        e_texts, delta_texts, new_texts = column_texts(rounded)
        self.E_column = place_column(VectorColumn(h.E, lang=lang, pitch=0.42, decimals=d, texts=e_texts), -3.6, y)
        self.delta_column = place_column(VectorColumn(h.delta, lang=lang, pitch=0.42, decimals=d, texts=delta_texts),
                                         0, y)
        self.delta_column.brackets.set_color(VALUE)
        self.E_new_column = place_column(VectorColumn(h.E_new, lang=lang, pitch=0.42, decimals=d, texts=new_texts),
                                         3.6, y)
        self.E_new_column.brackets.set_color(EMBEDDING_UPDATED)
        self.update_signs = VGroup(Label("+", font_size=style.HEADER).move_to([-1.8, y + 0.2, 0]),
                                   Label(rounded.relation, font_size=style.HEADER).move_to([1.8, y + 0.2, 0]))
        self.record_sum("update", "E + \u0394E = E\u2032", rounded, drawn=self.update_signs[1])
        head_y = self.E_column.get_top()[1] + 0.4
        self.update_headers = VGroup(
            self.tex("E", colours={"E": EMBEDDING}).move_to([-3.6, head_y, 0]),
            self.tex(r"\Delta E", colours={r"\Delta E": VALUE}).move_to([0, head_y, 0]),
            self.tex("E'", colours={"E'": EMBEDDING_UPDATED}).move_to([3.6, head_y, 0]),
            Label(S("e_header", lang, word=h.tokens[h.focus], layer=style.shown(h.layer)), font_size=style.SMALL,
                  color=MUTED).move_to([0, FORMULA_Y, 0]),
        )

    def beat_update(self):
        self.say("update", n=self.h.n_head)
        product = self.delta_product
        self.play(FadeOut(VGroup(product.matrix, product.legend, product.vector, product.equals, self.delta_formula)),
                  run_time=0.8)
        delta = self.delta_column
        self.play(ReplacementTransform(product.output, delta), run_time=STEP)
        self.play(FadeIn(self.E_column), FadeIn(self.update_signs), FadeIn(self.update_headers), run_time=STEP)
        self.play(TransformFromCopy(VGroup(self.E_column.entries, delta.entries), self.E_new_column.entries),
                  FadeIn(self.E_new_column.brackets), FadeIn(self.E_new_column.size_label), run_time=2 * STEP)
        self.wait(PAUSE + 1)

    # --- meaning ----------------------------------------------------------------------------------------------
    def build_meaning(self):
        """The whole prompt; the focus, the token its head looks at most, and that weight."""
        h, lang = self.h, self.lang
        row = CompactTokenRow(h.tokens, lang=lang)
        if row.first_shown > h.source:          # a long prompt: the tokens after the focus give way first
            row = CompactTokenRow(h.tokens[:h.focus + 1], lang=lang)
        if row.first_shown > h.source:
            raise ParamError(f"prompt: the token the head looks at most (position {h.source}) does not fit on the "
                             f"prompt's row with the focus; a shorter prompt or an earlier focus shows it")
        self.prompt_row = row
        row.move_to([0, PROMPT_Y, 0])
        chip = lambda i: row.chips[i - row.first_shown]  # noqa: E731
        self.dim_later = [chip(i).animate.fade(1 - DIMMED) for i in range(h.focus + 1, len(row.words))
                          if i >= row.first_shown]
        self.focus_mark = chip(h.focus).box.copy().set_fill(opacity=0).set_stroke(QUERY, width=5)
        self.source_mark = chip(h.source).box.copy().set_fill(opacity=0).set_stroke(VALUE, width=5)
        label = S("head_name", lang, layer=style.shown(h.layer), head=style.shown(h.head)) + ": " + style.percent(h.weights[h.source])
        self.pull_label = Label(label, font_size=style.SMALL, color=VALUE)
        if h.source == h.focus:
            self.pull_arrow = VGroup()
            self.pull_label.next_to(self.focus_mark, UP, buff=0.2)
        else:
            start, end = self.source_mark.get_top() + UP * 0.05, self.focus_mark.get_top() + UP * 0.05
            self.pull_arrow = CurvedArrow(start, end, angle=ARC_ANGLE, color=VALUE, stroke_width=3, tip_length=0.18)
            self.pull_label.next_to(self.pull_arrow, UP, buff=0.15)
        edge = style.safe_half_width()           # over a token near either end, the label stays on screen
        self.pull_label.shift(RIGHT * (min(edge - self.pull_label.get_right()[0], 0) +
                                       max(-edge - self.pull_label.get_left()[0], 0)))
        self.values["pull_label"] = {"weight": float(h.weights[h.source])}

    def beat_meaning(self):
        h = self.h
        key = self.caption_rule("meaning", h.meaning(), f"where the focus's largest weight is (itself: meaning_self) "
                                f"and whether it is at least {MOSTLY} (else the _blend caption)",
                                source=h.source, focus=h.focus, source_weight=float(h.weights[h.source]))
        self.say(key, focus=h.tokens[h.focus], src=h.tokens[h.source], distance=h.focus - h.source)
        self.clear_stage()
        row = self.prompt_row
        self.play(LaggedStart(*[FadeIn(c, shift=DOWN * 0.1) for c in row.chips], lag_ratio=0.08),
                  FadeIn(row.indices), run_time=2 * STEP)
        self.play(Create(self.focus_mark), Create(self.source_mark), *self.dim_later, run_time=STEP)
        self.play(Create(self.pull_arrow), FadeIn(self.pull_label), run_time=1.5 * STEP)
        self.wait(PAUSE + 1)

    # --- ablation ---------------------------------------------------------------------------------------------
    def build_effect(self):
        """The one intervention, the swap test split in two (model.analysis.head_jobs.key_value_swap): P(answer) as
        trained, with the answer word swapped in this head's key only, and in its value only (averaged over the
        swaps). None where the prompt has no swap test."""
        h, lang = self.h, self.lang
        self.effect_bars = None
        if h.kv is None:
            self.values["key_value_shown"] = None
            return
        kv = h.kv
        names = [S("as_trained", lang), S("key_swapped", lang), S("value_swapped", lang)]
        probs = [kv["p_clean"], kv["key_only"]["p"], kv["value_only"]["p"]]
        texts = [style.percent(p) for p in probs]
        ys = [0.9 - i * 0.75 for i in range(3)]
        self.effect_bars = BarChart(probs, ys, BarScale(-1.4, 4.6), PROB, labels=names, label_right=-1.7,
                                    label_colours=[style.TEXT, KEY, VALUE], numbers=texts, number_right=5.9,
                                    number_colour=PROB, header=S("p_next", lang, word=style.token_label(kv["answer"])),
                                    header_at=(0, 1.65), header_colour=PROB, header_size=style.LABEL, track=1.0,
                                    clamp=False)
        # the bars by what they are (their drawn names are the clip's words): the same in both languages' manifests
        self.values["key_value_shown"] = {"bars": ["as_trained", "key_swapped", "value_swapped"], "p": probs,
                                          "labels": texts}

    def beat_ablation(self):
        """The one intervention, explained: an ablation replaces a part and measures what changes; here only this head
        sees another word in place of the answer word, first in its key, then in its value (KV_RULE)."""
        h = self.h
        key = self.caption_rule("ablation", h.effect(), KV_RULE,
                                **({"p_clean": h.kv["p_clean"], "p_key": h.kv["key_only"]["p"],
                                    "p_value": h.kv["value_only"]["p"]} if h.kv else {}))
        if h.kv is None:
            self.say(key)
            self.wait(PAUSE + 1)
            return
        self.record_kv_story(key)
        kv, chart = h.kv, self.effect_bars
        texts = self.values["key_value_shown"]["labels"]
        self.say("ablation", focus=h.tokens[h.focus], adj=style.token_label(kv["answer"]))
        self.clear_stage()
        self.play(FadeIn(chart.header), FadeIn(chart.labels), FadeIn(chart.bars.tracks), run_time=STEP)
        grows = chart.grow()
        self.play(grows[0], FadeIn(chart.numbers[0]), run_time=STEP)
        self.wait(PAUSE)
        from scenes.attention_chapter import KINDS
        kind = KINDS(kv["group"], self.lang) if kv["group"] in ("colour", "texture") else self.s("kind_other")
        self.say(key, adj=style.token_label(kv["answer"]), p=texts[0], p_key=texts[1], p_value=texts[2], kind=kind)
        self.play(grows[1], FadeIn(chart.numbers[1]), run_time=STEP)
        self.play(grows[2], FadeIn(chart.numbers[2]), run_time=STEP)
        self.wait(PAUSE + 1)

    def record_kv_story(self, key: str) -> None:
        """The default lecture (the causal head in each language): the key/value verdict in both languages, recorded
        as values["languages_differ"]["ablation"] with the course page's note where the two differ; never said."""
        h = self.h
        st, given = h.choice["story"], h.choice["given"]
        if not h.choice["causal"] or st is None or given["layer"] or given["head"]:
            return
        from scenes.attention_chapter import NOTES
        from scenes.values_update.numbers import HeadAtFocus
        verdicts, fill = {}, {}
        for lang in ("en", "zh"):
            other = h if lang == self.lang else HeadAtFocus(self.gpt, {**self.params, "prompt": "auto", "focus": "auto",
                                                                       "layer": "auto", "head": "auto", "lang": lang})
            verdicts[lang] = other.effect()
            fill[lang] = (style.percent(other.kv["key_only"]["p"]), style.percent(other.kv["value_only"]["p"]))
        if verdicts["en"] != verdicts["zh"]:
            self.languages_differ("ablation", KV_RULE, NOTES, "kv_differs", en=verdicts["en"], zh=verdicts["zh"],
                                  en_key=fill["en"][0], en_value=fill["en"][1], zh_key=fill["zh"][0],
                                  zh_value=fill["zh"][1])

    # --- summary: the answer ----------------------------------------------------------------------------------
    def build_summary(self):
        """The answer's pieces: the prompt's row and the head's arrow again (pull_row), the scene's chain (weight, V,
        Σ, W_O, ΔE), and P(word) read by the logit lens entering the layer, with this head's ΔE alone, and after the
        layer's whole attention (attention_lens), as bars; what they show in values["answer"]."""
        h = self.h
        lens, layer = h.lens, style.shown(h.layer)
        p = {name: lens[name]["p_word"] for name in ("before", "head_only", "after")}
        texts = {name: style.percent(v) for name, v in p.items()}
        self.answer_row = self.pull_row(ANSWER_ROW_Y)
        steps = [("chain_weight", {"w": style.percent(h.weights[h.source])}), ("chain_value", {"src": h.tokens[h.source]}),
                 ("chain_sum", {}), ("chain_wo", {}), ("chain_delta", {})]
        self.answer_chain = self.chain(steps)
        names = [self.s("answer_before", layer=layer), self.s("answer_head"), self.s("answer_after", layer=layer)]
        ys = [ANSWER_BARS_TOP - i * ANSWER_PITCH for i in range(3)]
        self.answer_chart = BarChart([p["before"], p["head_only"], p["after"]], ys, BarScale(-0.4, 5.0), PROB,
                                     labels=names, label_right=-0.6, label_colours=[style.TEXT, VALUE, style.TEXT],
                                     numbers=[texts["before"], texts["head_only"], texts["after"]], number_right=6.3,
                                     number_colour=PROB, header=self.s("p_next", word=lens["word"]),
                                     header_at=(1.2, ANSWER_BARS_TOP + 0.6), header_colour=PROB,
                                     header_size=style.LABEL, track=1.0, clamp=False)
        self.answer_p, self.answer_texts = p, texts
        self.values["answer"] = {"p": [p["before"], p["head_only"], p["after"]],
                                 "labels": [texts["before"], texts["head_only"], texts["after"]],
                                 "weight": float(h.weights[h.source]), "weight_label": steps[0][1]["w"]}

    def beat_summary(self):
        """The opening question answered: the prompt and the head's arrow again, the scene's chain under it (weight,
        V, Σ, W_O, ΔE), and P(word) read by the logit lens entering the layer, with this head's ΔE alone, and after
        the layer's whole attention (attention_lens)."""
        h = self.h
        chart = self.answer_chart
        lens, layer, p, texts = h.lens, style.shown(h.layer), self.answer_p, self.answer_texts
        numbers = chart.numbers
        key = "summary_lifts" if p["head_only"] > p["before"] and texts["head_only"] != texts["before"] \
            else "summary_other"
        key = self.caption_rule("summary", key, "P(word) read by the logit lens at the focus entering the layer and "
                                "with this head's ΔE alone added: above it and shown apart: summary_lifts; else "
                                "summary_other", p_before=p["before"], p_head=p["head_only"])
        word = style.token_label(lens["word"])
        self.say(key, focus=h.tokens[h.focus], src=h.tokens[h.source], word=word, p_before=texts["before"],
                 p_head=texts["head_only"])
        self.clear_stage()
        row, marks, arrow, label = self.answer_row
        self.play(FadeIn(row), Create(marks), Create(arrow), FadeIn(label), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(c) for c in self.answer_chain], lag_ratio=0.5), run_time=2.5 * STEP)
        self.play(FadeIn(chart.header), FadeIn(chart.labels), FadeIn(chart.bars.tracks), run_time=STEP)
        for i in range(2):
            self.play(chart.grow()[i], FadeIn(numbers[i]), run_time=STEP)
        self.wait(PAUSE)
        self.say("summary_layer", layer=layer, p_after=texts["after"])
        self.play(chart.grow()[2], FadeIn(numbers[2]), run_time=STEP)
        self.wait(PAUSE + 2)
