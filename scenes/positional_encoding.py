"""Positional encoding: the question (does word order matter? the model's next word after the prompt and after the
same words with the earlier ones reversed), the position table (our sin/cos one, or a checkpoint's learned one, shown
as what it is), E = token embedding + position vector, what the model does without the table (the lab's record), and the answer
drawn on the question's two rows (one word at its two positions, and the next word after each order).

    manim render -ql scenes/positional_encoding.py PositionalEncoding
    python render.py positional_encoding --lang zh --set focus=3

The table is the model's own position table gpt.W_pos (32 positions × 64 numbers, filled by
model.numpy_gpt.sinusoidal_positions), drawn one COLUMN per position. The vectors are the trace's
token_embeddings, position_vectors and embeddings; the question's next words model.analysis.order_prediction.
Attention, its weights and heads are not used here: the attention chapter (queries_keys) defines them. All values shown are recorded at full precision in self.values.
"""

from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Create, FadeIn, FadeOut, LaggedStart, Line, MathTex, SurroundingRectangle,
                   TransformFromCopy, VGroup, config)

from model.analysis import order_prediction
from scenes import style
from scenes import why_beats
from scenes.components import (sum_decimals, column_texts, rounded_columns, ColourLegend, ColourScale,
                               CompactTokenRow, Heatmap, Label, NumberText, ProbabilityBars, VectorColumn, light,
                               place_by_body)
from scenes.attention_chapter import FocusScene
from scenes.params import ParamError
from scenes.style import MUTED, SHARED, TEXT
from scenes.words import Words

WORDS = Words.beside(__file__)     # positional_encoding.toml: the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

# --- layout (scene units; the frame is 14.2 × 8, title-safe is ±6.4 × ±3.6) --------
TABLE_LEFT, TABLE_WIDTH = -5.75, 8.64         # P, one column per position
TABLE_TOP, TABLE_HEIGHT = 1.7, 2.56           # 64 rows of 0.04
LEGEND_X = 3.55
STRIP_WIDTH = 0.3
STEP, PAUSE = style.STEP, style.PAUSE
# the question beat: the reversed row under the prompt's, two panels of next-word bars below (our order, reversed)
Q_ROW_GAP, PANEL_HEADER_GAP, PANEL_PITCH = 0.3, 0.45, 0.44
PANELS = ({"label_right": -4.15, "bar_left": -4.0, "bar_width": 1.8, "number_right": -0.7},
          {"label_right": 2.15, "bar_left": 2.3, "bar_width": 1.8, "number_right": 6.25})
ANSWER_PITCH = 0.6                            # the answer's lines of numbers


TABLE_POSITIONS = 64   # positions drawn in the table at most (ours has 32; GPT-2's 1,024 would be 786k cells)

class PositionalEncoding(FocusScene):
    name = "positional_encoding"
    strings = S
    beat_titles = BEATS

    # --- the beats -------------------------------------------------------------------
    def beat_question(self):
        """The prompt and the same words with the earlier ones reversed, and the model's next word after each:
        the question position vectors answer, asked by the model's own run (model.analysis.order_prediction)."""
        q, rows, panels = self.prediction, self.q_rows, self.q_panels
        self.say("question", last=self.tokens[-1])
        self.play(LaggedStart(*[FadeIn(c, shift=DOWN * 0.1) for c in rows[0].chips], lag_ratio=0.05),
                  FadeIn(rows[0].ellipsis), FadeIn(rows[0].indices), run_time=STEP + 0.05 * len(rows[0].chips))
        a, b = rows[0].first_shown, rows[1].first_shown       # a long prompt's rows show their last tokens
        self.play(*[TransformFromCopy(rows[0].chips[i - a], rows[1].chips[j - b]) for j, i in enumerate(q["order"])
                    if i >= a and j >= b], *[FadeIn(rows[1].chips[j - b]) for j, i in enumerate(q["order"])
                                             if i < a <= j],
                  FadeIn(rows[1].ellipsis), FadeIn(rows[1].indices), run_time=2 * STEP)
        self.wait(PAUSE)
        for title, bars in panels:
            self.play(FadeIn(title), FadeIn(bars.labels), FadeIn(bars.bars.tracks), run_time=0.8)
            self.play(*bars.grow(), FadeIn(bars.numbers), run_time=STEP)
        key = self.question_key()
        self.say(key, word=style.token_label(q["word"]), rev_word=style.token_label(q["reversed"]["top"][0]["word"]),
                 **self.question_labels())
        self.wait(PAUSE + 2)

    def question_labels(self) -> dict:
        """The compared word's percentage as each panel's bar shows it (its plain rounding)."""
        return {name: bars.rounded.labels[bars.word_row] for name, (_, bars) in zip(("p", "p_rev"), self.q_panels)}

    def question_key(self) -> str:
        q, labels = self.prediction, self.question_labels()
        changes = q["reversed"]["top"][0]["word"] != q["word"]
        key = ("question_alike" if q["same_words"] or labels["p"] == labels["p_rev"] else
               "question_changes" if changes else "question_moves")
        return self.caption_rule("question", key, "the prompt's most likely next word after the prompt and after the "
                                 "same words with the earlier ones reversed: question_alike if the reversal changes no "
                                 "token or the two bars' labels are alike, question_changes if the reversed run's "
                                 "most likely word is another, else question_moves", word=q["word"],
                                 p=q["as_written"]["p_word"], p_reversed=q["reversed"]["p_word"],
                                 reversed_top=q["reversed"]["top"][0]["word"], same_words=q["same_words"],
                                 labels=labels)

    def beat_table(self):
        self.play(FadeOut(VGroup(*self.q_rows, *[VGroup(*p) for p in self.q_panels])), run_time=0.8)
        self.say("table" if self.sin_cos else "table_learned", last=self.n_pos - 1, d=self.d)
        self.play(FadeIn(self.formula), run_time=STEP)
        self.play(FadeIn(self.table), FadeIn(self.table_axes), run_time=2 * STEP)
        self.play(FadeIn(VGroup(*self.legend)), run_time=STEP)
        self.wait(PAUSE + 2)

    def beat_prompt(self):
        self.say("prompt", n=len(self.tokens), last=len(self.tokens) - 1)
        self.play(FadeOut(self.formula), run_time=0.6)
        self.play(LaggedStart(*[FadeIn(c, shift=DOWN * 0.1) for c in self.row.chips], lag_ratio=0.1),
                  FadeIn(self.row.ellipsis), FadeIn(self.row.indices), run_time=STEP + 0.08 * len(self.row.chips))
        self.play(Create(self.used_frame), LaggedStart(*[Create(l) for l in self.position_lines], lag_ratio=0.1),
                  run_time=2 * STEP)
        self.wait(PAUSE + 1)

    def beat_add(self):
        self.say("add", word=self.tokens[self.focus], pos=self.focus, shown=len(self.values["sum"]["dims"]),
                 d=self.d)
        self.play(FadeOut(VGroup(self.table, self.table_axes, self.used_frame, self.position_lines)),
                  FadeOut(VGroup(*self.legend)), Create(self.focus_frame), run_time=STEP)
        token, position, total = self.sum_columns
        self.play(FadeIn(token), FadeIn(self.sum_heads[0]), run_time=STEP)
        self.play(FadeIn(self.plus), FadeIn(position), FadeIn(self.sum_heads[1]), run_time=STEP)
        self.play(FadeIn(self.equals), FadeIn(self.sum_heads[2]),
                  TransformFromCopy(VGroup(token.entries, position.entries), total.entries),
                  FadeIn(VGroup(total.brackets, total.size_label)), run_time=2 * STEP)
        self.wait(PAUSE + 2)

    def beat_all(self):
        self.say("all", d=self.d)
        self.play(FadeOut(VGroup(*self.sum_columns, self.sum_heads, self.plus, self.equals)), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(s, shift=DOWN * 0.2) for s in self.strips], lag_ratio=0.08),
                  FadeIn(self.strips_label), FadeIn(self.e_legend), run_time=2 * STEP)
        self.wait(PAUSE + 2)

    beat_lab = why_beats.positional_encoding   # what positions add: the lab's record (scenes/why_beats.py)

    def beat_answer(self):
        """The question's two rows again, the answer drawn on them: one word framed at its two positions (two
        different position vectors, so two different inputs), and the scene's numbers below: the output change
        the next word after each order."""
        a = self.answer
        q = self.prediction
        key = self.caption_rule("answer", "answer_same" if q["same_words"] else "answer", "answer_same if the "
                                "reversal changes no token (the two orders are one input), else answer",
                                same_words=q["same_words"])
        self.say(key, **a["say"])
        self.clear_stage()
        rows = self.q_rows
        self.play(*[FadeIn(VGroup(r.chips, r.ellipsis, r.indices)) for r in rows], run_time=STEP)
        self.play(Create(self.answer_frames), FadeIn(self.answer_lines[0]), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(line, shift=UP * 0.1) for line in self.answer_lines[1:]], lag_ratio=0.5),
                  run_time=2 * STEP)
        self.wait(PAUSE + 3)

    # --- building the pieces, from the model's numbers --------------------------------
    def prepare(self):
        gpt, c = self.gpt, self.gpt.config
        trace = self.read_prompt()
        chosen = self.chosen
        T, self.focus = len(self.tokens), chosen["focus"]
        self.d, self.n_pos = c.n_embd, c.n_positions
        if T < 3:
            raise ParamError("prompt: the word-order experiment needs at least 3 tokens")
        P = gpt.W_pos                                               # (context, d): one row per position
        # our table is sin/cos (drawn with its formula); a checkpoint's is learned (GPT-2's): no formula is shown.
        # At most TABLE_POSITIONS positions are drawn, the first ones (the prompt's among them), and the label
        # says how many the table has.
        self.sin_cos = c.position_encoding == "sinusoidal"
        self.n_drawn = min(self.n_pos, TABLE_POSITIONS)
        if T > self.n_drawn:
            raise ParamError(f"prompt: this scene draws the first {self.n_drawn} positions; the prompt has {T} tokens")
        tok = np.asarray(trace["token_embeddings"], np.float64)
        pos = np.asarray(trace["position_vectors"], np.float64)
        E = np.asarray(trace["embeddings"], np.float64)

        # the table
        self.formula = self.sin_cos_formula().move_to([0, 2.66, 0]) if self.sin_cos else VGroup()
        scale = ColourScale.signed_for(P)
        # its left edge leaves room for the last dimension's number in the title-safe area (GPT-2's "767" is wider
        # than our "63"): the table narrows from the left where it must, its right edge (and the legend) stay
        last_dim = NumberText(str(self.d - 1), font_size=style.SMALL).width
        left = max(TABLE_LEFT, -style.safe_half_width() + last_dim + 0.1)
        width = TABLE_WIDTH - (left - TABLE_LEFT)
        self.table = Heatmap(P[:self.n_drawn].T, scale, width=width, height=TABLE_HEIGHT)
        self.table.move_to([left + width / 2, TABLE_TOP - TABLE_HEIGHT / 2, 0])
        self.table_axes = self.axes()
        self.legend = ColourLegend(scale, S("legend", self.lang), width=2.4)
        self.legend.shift([LEGEND_X - self.legend.bar.get_left()[0],                       # placed by its bar
                           self.table.get_center()[1] - self.legend.bar.get_center()[1], 0])

        # the prompt's positions
        top = config.frame_height / 2 - style.safe_half_height() + 0.08   # room for the focus frame
        self.row = CompactTokenRow(self.tokens, lang=self.lang).move_to([0, 0, 0]).to_edge(UP, buff=top)
        self.check_focus_shown(self.row)
        self.shown = list(range(self.row.first_shown, T))
        self.used_frame = self.table.columns_frame(0, T - 1, style.POSITION, 2)
        self.position_lines = VGroup(*[
            Line(self.row.indices[n].get_bottom() + DOWN * 0.06, [self.table.column_x(p), TABLE_TOP, 0],
                 stroke_color=style.token_colour(self.tokens, p), stroke_width=2) for n, p in enumerate(self.shown)])
        self.focus_frame = SurroundingRectangle(self.row.chips[self.focus - self.row.first_shown],
                                                color=style.ACCENT, buff=0.03, corner_radius=0.08)

        # E = token + position, for the token in focus
        f = self.focus
        d = sum_decimals([v[f] for v in (tok, pos, E)], shown=7)       # one sum: one number of decimals
        self.rounded = rounded_columns([v[f] for v in (tok, pos, E)], shown=7, decimals=d)   # each at its rounding
        columns = [VectorColumn(v[f], lang=self.lang, shown=7, pitch=0.4, decimals=d, texts=texts)
                   for v, texts in zip((tok, pos, E), column_texts(self.rounded))]
        columns[1].brackets.set_color(style.POSITION)
        columns[2].brackets.set_color(style.EMBEDDING)
        for column, x in zip(columns, (-3.0, 0.0, 3.0)):
            place_by_body(column, x, 0.05)
        self.sum_columns = columns
        self.plus = Label("+", font_size=style.HEADER).move_to([-1.5, columns[0].entries.get_center()[1], 0])
        self.equals = Label(self.rounded.relation, font_size=style.HEADER).move_to([1.5, columns[0].entries.get_center()[1],
                                                                                 0])     # ≈ where the labels miss
        heads = [S("token_head", self.lang, word=self.tokens[f]), S("position_head", self.lang, pos=f),
                 S("e_head", self.lang)]
        self.sum_heads = VGroup(*[Label(h, font_size=style.SMALL, color=col).move_to([c.get_center()[0], 0, 0])
                                  .on_baseline(c.brackets.get_top()[1] + 0.25)
                                  for h, c, col in zip(heads, columns, (TEXT, style.POSITION, TEXT))])

        # every token's E
        e_scale = ColourScale.magnitude_for(E)          # E is an activation: its entries by size, grey -> white
        strip_top = TABLE_TOP + 0.2
        self.strips = [Heatmap(E[p][:, None], e_scale, width=STRIP_WIDTH, height=TABLE_HEIGHT)
                       .move_to([self.row.centre_x(p), strip_top - TABLE_HEIGHT / 2, 0]) for p in self.shown]
        self.strips_label = Label(S("e_label", self.lang, n=T, d=self.d), font_size=style.SMALL, color=MUTED)
        self.strips_label.move_to([0, strip_top - TABLE_HEIGHT - 0.35, 0])
        self.e_legend = ColourLegend(e_scale, S("size_legend", self.lang), width=2.0, inline=True)  # title at its left
        self.e_legend.shift([1.0, strip_top - TABLE_HEIGHT - 0.9, 0] - self.e_legend.bar.get_center())   # by its bar

        # the question: the model's next word after the prompt and after the reversed one; the closing answer
        self.prediction = order_prediction(gpt, self.token_ids)
        self.build_question()
        self.build_answer()

        shown_dims = [i for i in columns[0].indices_shown if i is not None]
        self.values.update({
            "prompt": chosen["prompt"], "tokens": self.tokens, "token_ids": self.token_ids,
            "focus": f, "focus_rule": chosen["focus_rule"], "d_model": self.d, "n_positions": self.n_pos,
            "P": {"source": "wpe.weight", "stored_shape": list(P.shape), "shown_as": "transposed: one column per position",
                  "every_entry_as_colour": True, "colour_limit": scale.limit, "positions_drawn": self.n_drawn,
                  "kind": "sin/cos" if self.sin_cos else "learned",
                  **({"formula_exponent_denominator": self.d} if self.sin_cos else {})},
            "positions_used": list(range(T)),
            "sum": {"dims": shown_dims,
                    **{name: {"values": [float(v[f][i]) for i in shown_dims], "labels": texts}
                       for (name, v), texts in zip((("token_embedding", tok), ("position_vector", pos),
                                                    ("embedding", E)), column_texts(self.rounded))}},
            "E_strips": {"positions": self.shown, "colour_limit": e_scale.limit},
        })
        self.record_sum("add", "E = token + position", self.rounded, drawn=self.equals)

    def build_question(self):
        """The question's two rows (the prompt as the table's row will be, the reversed words under it) and its two
        panels of next-word bars, each recorded with its sum (a whole distribution: 100%)."""
        q = self.prediction
        reversed_words = [self.gpt.tokenizer.words[i] for i in q["reversed_ids"]]
        top = CompactTokenRow(self.tokens, lang=self.lang).move_to(self.row.get_center())
        below = CompactTokenRow(reversed_words, lang=self.lang, prompt=self.tokens)
        below.move_to([0, top.get_bottom()[1] - Q_ROW_GAP - below.height / 2, 0])
        self.q_rows = (top, below)
        header = below.get_bottom()[1] - PANEL_HEADER_GAP
        panels, shown = [], {}
        for name, panel, x in (("as_written", PANELS[0], -3.2), ("reversed", PANELS[1], 3.2)):
            run = q[name]
            rows = run["shown"]
            ys = [header - 0.6 - i * PANEL_PITCH for i in range(len(rows) + 1)]
            bars = ProbabilityBars.next_words(run, q["word"], ys, lang=self.lang, **panel)
            title = Label(self.s(name), font_size=style.LABEL, color=TEXT).move_to([x, header, 0])
            panels.append((title, bars))
            self.record_sum("question", f"{name}: probabilities = 100%", bars.rounded)
            shown[name] = {"words": [r["word"] for r in rows], "p": [r["p"] for r in rows], "other": run["other"],
                           "labels": list(bars.rounded.labels), "p_word": run["p_word"]}
        self.q_panels = panels
        self.values["question"] = {"word": q["word"], "rule": q["rule"], "order": q["order"],
                                   "reversed_tokens": reversed_words, "same_words": q["same_words"], "shown": shown,
                                   "top": {name: q[name]["top"] for name in ("as_written", "reversed")}}

    def build_answer(self):
        """The answer on the question's rows: one word framed in both (the predicted word where it is among the
        earlier words, else the first word: the one the reversal moves furthest), and four lines of numbers."""
        q, T = self.prediction, len(self.tokens)
        top, below = self.q_rows
        ids = self.token_ids
        mark = next((i for i in range(T - 1) if self.gpt.tokenizer.words[ids[i]] == q["word"]), 0)
        if mark < top.first_shown:                        # a long prompt's row: the earliest word it shows
            mark = top.first_shown
        moved = q["order"].index(mark)                    # where the marked word stands reversed
        frames = VGroup(*[SurroundingRectangle(row.chips[p - row.first_shown], color=style.POSITION, buff=0.05,
                                               corner_radius=0.08)
                          for row, p in ((top, mark), (below, moved)) if p >= row.first_shown])
        self.answer_frames = frames
        labels = self.question_labels()
        word, mark_word = style.token_label(q["word"]), style.token_label(self.tokens[mark])
        texts = [(self.s("answer_positions", mark=mark_word, a=mark, b=moved), style.POSITION),
                 (self.s("answer_word", word=word, **labels), TEXT)]
        y0 = below.get_bottom()[1] - 0.55
        self.answer_lines = VGroup(*[Label(t, font_size=style.LABEL, color=c).move_to([0, y0 - n * ANSWER_PITCH, 0])
                                     for n, (t, c) in enumerate(texts)])
        self.answer = {"say": {"mark": mark_word, "a": mark, "b": moved, "word": word, **labels}}
        self.values["answer"] = {"marked_position": mark, "marked_token": self.tokens[mark],
                                 "marked_position_reversed": moved,
                                 "mark_rule": "the prompt's most likely next word where it is among the earlier "
                                              "tokens (its first place), else the first token shown",
                                 "labels": labels,
                                 "p_word": {name: q[name]["p_word"] for name in ("as_written", "reversed")}}

    def sin_cos_formula(self) -> VGroup:
        d = self.d
        sin = MathTex(r"P_{pos,\,2i} = \sin\!\left(pos \,/\, 10000^{2i/" + str(d) + r"}\right)",
                      font_size=style.MATH_FONT_SIZE)
        cos = MathTex(r"P_{pos,\,2i+1} = \cos\!\left(pos \,/\, 10000^{2i/" + str(d) + r"}\right)",
                      font_size=style.MATH_FONT_SIZE)
        group = VGroup(light(sin), light(cos)).arrange(RIGHT, buff=0.6)
        if group.width > 2 * style.safe_half_width():
            group.arrange(DOWN, buff=0.05, aligned_edge=LEFT)
        return group

    def axes(self) -> VGroup:
        """Position ticks under the table (teal), the dimension range at its left, and its shape."""
        ticks = VGroup()
        y = self.table.box.get_bottom()[1] - 0.4
        for p in sorted({0, 8, 16, 24, self.n_drawn - 1}):
            if p < self.n_drawn:
                n = NumberText(str(p), font_size=style.SMALL, color=style.POSITION, align="left").place(0, y)
                ticks.add(n.shift(RIGHT * (self.table.column_x(p) - n.get_center()[0])))
        text = (S("table_label", self.lang, d=self.d, n_pos=self.n_pos) if self.n_drawn == self.n_pos else
                S("table_part", self.lang, d=self.d, shown=self.n_drawn, n_pos=f"{self.n_pos:,}"))
        shape = Label(text, font_size=style.SMALL, color=MUTED)
        shape.next_to(ticks, DOWN, buff=0.15).set_x(self.table.get_center()[0])
        dims = VGroup()
        for i in (0, self.d - 1):
            n = NumberText(str(i), font_size=style.SMALL, color=MUTED).place(0, 0)
            dims.add(n.shift([self.table.box.get_left()[0] - 0.08 - n.get_right()[0], self.table.row_y(i) - n.get_center()[1], 0]))
        return VGroup(ticks, shape, dims)
