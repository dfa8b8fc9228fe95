"""Add & Norm: the residual add after attention, then LayerNorm, on one token's real vector.

    manim render -ql scenes/add_norm.py AddNorm
    python render.py add_norm --lang zh --layer 0 --set focus=3

The vectors are the trace's resid_pre, attn.out and resid_mid of the chosen layer; LayerNorm (the layer's
ln_2, which the MLP reads) is shown step by step through model.analysis.layer_norm_steps, whose mean and
variance are the trace's. All values shown are recorded at full precision in self.values.
"""

from __future__ import annotations

import numpy as np
from manim import (RIGHT, UP, Create, DashedLine, FadeIn, FadeOut, Indicate, LaggedStart, Line, MathTex, Rectangle,
                   SurroundingRectangle, Transform, VGroup, config)

from model.analysis import best_lookback_head, layer_norm_steps
from scenes import style
from scenes import why_beats
from scenes.components import (ColumnBars, CompactTokenRow, Label, NormOrder, NumberText, VectorColumn, column_texts,
                               light, place_by_body, rounded_columns, shown_indices, sum_decimals)
from scenes.attention_chapter import FocusScene
from scenes.params import AUTO, ParamError
from scenes.prompts import own_language
from scenes.style import MUTED, SHARED, TEXT
from scenes.words import Words

WORDS = Words.beside(__file__)     # add_norm.toml: the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

# --- layout (scene units; the frame is 14.2 × 8, title-safe is ±6.4 × ±3.6) --------
COLUMN_XS = (-3.4, 0.0, 3.4)                  # x, attention output, x + attention
LEFT_COLUMN_X = -5.2                          # the vector being normalised, as numbers
CHART_LEFT, CHART_RIGHT = -3.7, 6.3           # the 64 entries as bars
CHART_ZERO, CHART_HALF = -0.15, 1.45          # the zero line, and the height of the largest |value|
STATS_BASELINE = 1.75
WHY_GAP = 0.24            # at least this between two LayerNorms' names (a deeper stack is cut: build_why)
WHY_ZERO, WHY_UNIT, WHY_TALLEST = -1.15, 1.6, 1.95  # variance bars: baseline, height of variance 1, tallest bar
STEP, PAUSE = style.STEP, style.PAUSE
SHARED_SCALE = 4.0  # the chart's stages share one scale while each one's longest bar is at least 1/this of the longest
DRIFT = 1.25        # caption rule: the variance "drifts" when its largest value is at least this times its smallest
NEAR_ONE = 0.05     # caption rule: a normalised variance "near 1" is within this of 1 as shown


def chart_units(largest: list[float]) -> list[float]:
    """Scene units per unit of value for each stage of the chart (input, normalised, × γ + β), from each one's largest
    |value|: one scale for all while every stage would be drawn at least 1/SHARED_SCALE as tall as the tallest (our
    model's: the bars grow and shrink as the numbers do); else each its own, so none is a flat line (a random-init
    GPT-2's residual of ±0.04 beside its normalised ±3; a trained one's large residual beside its normalised)."""
    top = max(largest)
    if top == 0.0:
        return [1.0] * len(largest)
    if min(largest) * SHARED_SCALE >= top:
        return [CHART_HALF / top] * len(largest)
    return [CHART_HALF / v if v > 0 else 1.0 for v in largest]


class AddNorm(FocusScene):
    name = "add_norm"
    strings = S
    beat_titles = BEATS

    def whose(self, key: str) -> str:
        """The string that names our model (`key`), or its checkpoint version when the numbers are a checkpoint's."""
        return key if own_language(self.gpt) else key + "_checkpoint"

    # --- the beats -------------------------------------------------------------------
    def beat_residual(self):
        self.say("residual")
        self.play(FadeIn(self.row), Create(self.focus_frame), run_time=STEP)
        x, delta, total = self.columns
        self.play(FadeIn(x), FadeIn(self.heads[0]), run_time=STEP)
        self.play(FadeIn(self.plus), FadeIn(delta), FadeIn(self.heads[1]), run_time=STEP)
        self.play(FadeIn(self.equals), FadeIn(self.heads[2]), FadeIn(total), run_time=2 * STEP)
        self.wait(PAUSE + 2)

    def beat_statistics(self):
        self.say("statistics", d=self.d)
        x, delta, total = self.columns
        self.play(FadeOut(VGroup(x, delta, self.plus, self.equals, self.heads[:2])), run_time=STEP)
        self.play(Transform(total, self.stage_columns[0]), Transform(self.heads[2], self.stage_heads[0]),
                  run_time=STEP)
        self.play(Create(self.zero_line), LaggedStart(*self.bars.grow(), lag_ratio=0.01), run_time=2 * STEP)
        self.play(Create(self.mean_lines[0]), FadeIn(self.stats[0]),
                  *([FadeIn(self.scale_notes[0])] if self.scale_notes else []), run_time=2 * STEP)
        self.wait(PAUSE + 2)

    def beat_normalise(self):
        mean_text, var_text = self.stat_texts[1]
        key = self.caption_rule("normalise", "normalise" if mean_text == style.signed(0, 2) and var_text == "1.00" else
                                "normalise_eps", "the normalised mean and variance as shown (2 decimals): mean 0 "
                                "and variance 1.00: normalise, else normalise_eps (ε keeps the variance under 1)",
                                mean_label=mean_text, var_label=var_text)
        self.say(key, var=var_text)
        total = self.columns[2]
        self.play(FadeIn(self.formulas[0]), FadeIn(self.ghost), FadeIn(self.ghost_key), run_time=STEP)
        self.play(*[Transform(b, t) for b, t in zip(self.bars, self.bar_targets[1])],
                  Transform(self.mean_lines[0], self.mean_lines[1]), Transform(self.stats[0], self.stats[1]),
                  Transform(total, self.stage_columns[1]), Transform(self.heads[2], self.stage_heads[1]),
                  *([Transform(self.scale_notes[0], self.scale_notes[1])] if self.scale_notes else []),
                  run_time=2.5 * STEP)
        self.wait(PAUSE)
        self.say("eps", eps=self.eps_text)    # ε's own meaning: the JL ε of a later chapter is another thing
        self.play(Indicate(self.formulas[0], color=style.ACCENT, scale_factor=1.05), run_time=STEP)
        self.wait(PAUSE + 1)

    def beat_scale(self):
        self.say("scale", d=self.d, layer=style.shown(self.layer))
        total = self.columns[2]
        self.play(FadeOut(self.formulas[0]), FadeIn(self.formulas[1]), FadeOut(self.stats[0]),
                  FadeOut(self.mean_lines[0]), FadeOut(self.ghost), FadeOut(self.ghost_key), run_time=STEP)
        self.play(*[Transform(b, t) for b, t in zip(self.bars, self.bar_targets[2])],
                  Transform(total, self.stage_columns[2]), Transform(self.heads[2], self.stage_heads[2]),
                  *([Transform(self.scale_notes[0], self.scale_notes[2])] if self.scale_notes else []),
                  run_time=2.5 * STEP)
        self.wait(PAUSE + 2)

    def beat_placement(self):
        """Where the LayerNorm sits: post-LN (the original Transformer, the source article) on the left, pre-LN
        (GPT-2, our model; at a checkpoint, this checkpoint) on the right, drawn once."""
        self.play(FadeOut(VGroup(self.bars, self.zero_line, self.formulas[1], self.columns[2], self.heads[2],
                                 self.row, self.focus_frame,
                                 *([self.scale_notes[0]] if self.scale_notes else []))), run_time=STEP)
        post, pre = self.orders
        self.say(self.whose("placement"))
        self.play(FadeIn(pre.heading), FadeIn(pre.arrows), FadeIn(pre.norm), FadeIn(pre.sub), FadeIn(pre.plus),
                  run_time=STEP)
        self.play(Create(pre.stream), run_time=1.5 * STEP)
        self.wait(PAUSE)
        self.say("placement_post")
        self.play(FadeIn(post.heading), FadeIn(post.arrows), FadeIn(post.norm), FadeIn(post.sub),
                  FadeIn(post.plus), run_time=STEP)
        self.play(Create(post.stream), Indicate(post.norm, color=style.ACCENT, scale_factor=1.05), run_time=1.5 * STEP)
        self.wait(PAUSE + 1)

    def beat_why(self):
        lo, hi = float(self.why_texts["lo"]), float(self.why_texts["hi"])
        key = self.caption_rule("why", "why" if hi >= DRIFT * lo else "why_steady", f"the variance before the "
                                f"LayerNorms as shown (style.statistic_decimals): largest >= {DRIFT} x smallest: why (it drifts), "
                                "else why_steady; the caption names the first bar's, the last bar's and the largest "
                                "bar's numbers as drawn", lo_label=self.why_texts["lo"], hi_label=self.why_texts["hi"],
                                start_label=self.why_texts["start"], end_label=self.why_texts["end"])
        self.play(FadeOut(self.orders), FadeIn(self.row), FadeIn(self.focus_frame), run_time=STEP)
        self.say(key, **self.why_texts)
        self.play(Create(self.why_base), FadeIn(self.why_labels), FadeIn(self.why_key), run_time=STEP)
        self.play(LaggedStart(*self.why_before.grow(), lag_ratio=0.15),
                  LaggedStart(*[FadeIn(n) for n in self.why_before_numbers], lag_ratio=0.15), run_time=2 * STEP)
        self.play(LaggedStart(*self.why_after.grow(), lag_ratio=0.15),
                  LaggedStart(*[FadeIn(n) for n in self.why_after_numbers], lag_ratio=0.15), run_time=2 * STEP)
        self.wait(PAUSE)
        after = [float(texts[1]) for texts in self.why_numbers]          # the coloured bars' labels, as drawn
        key = self.caption_rule("why_copy", "why_copy" if min(after) >= 1 - NEAR_ONE else "why_copy_low",
                                f"the variance after each LayerNorm as shown: every label at least {1 - NEAR_ONE:g}: "
                                "why_copy (near 1), else why_copy_low (the smallest named)",
                                after_labels=[texts[1] for texts in self.why_numbers])
        self.say(key, lo=style.statistic(min(after)), hi=style.statistic(max(after)))
        self.wait(PAUSE + 1)

    beat_lab = why_beats.add_norm   # why add and normalise: the lab's record (scenes/why_beats.py)

    # --- building the pieces, from the model's numbers --------------------------------
    def prepare(self):
        gpt, c = self.gpt, self.gpt.config
        trace = self.read_prompt()
        chosen = self.chosen
        f = self.focus = chosen["focus"]
        self.d = c.n_embd
        self.layer, layer_choice = self.choose_layer(trace, chosen)
        L = trace["layers"][self.layer]
        x, delta, mid = (np.asarray(v, np.float64)[f] for v in (L["resid_pre"], L["attn"]["out"], L["resid_mid"]))
        ln = layer_norm_steps(gpt, trace, f"h.{self.layer}.ln_2", f)

        top = config.frame_height / 2 - style.safe_half_height() + 0.08   # room for the focus frame
        self.row = CompactTokenRow(self.tokens, lang=self.lang).move_to([0, 0, 0]).to_edge(UP, buff=top)
        self.check_focus_shown(self.row)
        self.focus_frame = SurroundingRectangle(self.row.chips[f - self.row.first_shown], color=style.ACCENT,
                                                buff=0.03, corner_radius=0.08)

        # the residual add
        colours = (style.EMBEDDING, style.VALUE, style.EMBEDDING_UPDATED)
        d = sum_decimals((x, delta, mid), shown=7)      # one sum: one number of decimals
        self.rounded = rounded_columns((x, delta, mid), shown=7, decimals=d)     # each label its value's rounding
        self.columns = [place_by_body(self.column(v, colour, d, texts), cx, 0.05)
                        for v, colour, cx, texts in zip((x, delta, mid), colours, COLUMN_XS, column_texts(self.rounded))]
        mid_y = self.columns[0].entries.get_center()[1]
        self.plus = Label("+", font_size=style.HEADER).move_to([(COLUMN_XS[0] + COLUMN_XS[1]) / 2, mid_y, 0])
        self.equals = Label(self.rounded.relation, font_size=style.HEADER).move_to([(COLUMN_XS[1] + COLUMN_XS[2]) / 2,
                                                                                  mid_y, 0])   # ≈ where they miss
        texts = (S("x_head", self.lang, layer=style.shown(self.layer)), S("attn_head", self.lang), S("sum_head", self.lang))
        self.heads = VGroup(*[self.head(t, colour, col) for t, colour, col in zip(texts, colours, self.columns)])

        # LayerNorm, stage by stage: the input, normalised, then × γ + β
        self.stages = [ln["input"], ln["normalised"], ln["out"]]
        stage_colours = (style.EMBEDDING_UPDATED, TEXT, style.EMBEDDING_UPDATED)
        # the input is the sum above (resid_mid): it keeps the sum's decimals
        self.stage_columns = [place_by_body(self.column(v, colour, decimals), LEFT_COLUMN_X, 0.05)
                              for v, colour, decimals in zip(self.stages, stage_colours, (d, None, None))]
        self.stage_heads = [self.head(S(k, self.lang), colour, col) for k, colour, col in
                            zip(("sum_head", "normalised_head", "out_head"), stage_colours, self.stage_columns)]
        for h, col in zip(self.stage_heads, self.stage_columns):    # left-aligned: long names run into the chart's gap
            h.shift(RIGHT * (col.brackets.get_left()[0] - h.get_left()[0]))
        self.units = chart_units([float(np.abs(v).max()) for v in self.stages])
        pitch = (CHART_RIGHT - CHART_LEFT) / self.d
        self.bar_xs = [CHART_LEFT + (i + 0.5) * pitch for i in range(self.d)]
        self.bar_targets = [ColumnBars(values, self.bar_xs, CHART_ZERO, unit, colour, width=pitch * 0.7, opacity=0.85,
                                       floor=0.005, signed=True)        # each stage's 64 bars, up or down from zero
                            for values, colour, unit in zip(self.stages, stage_colours, self.units)]
        # stages at scales of their own: each says what its tallest bar stands for, under the chart's right end
        self.scale_notes = [self.scale_note(float(np.abs(v).max())) for v in self.stages] \
            if len(set(self.units)) > 1 else None
        self.bars = self.bar_targets[0].copy()
        # the normalise beat keeps the input's bars in grey behind the normalised ones, so the change is seen
        self.ghost = self.bar_targets[0].copy().set_fill(MUTED, opacity=0.45).set_z_index(-1)
        self.ghost_key = Label(S("ghost", self.lang), font_size=style.SMALL, color=MUTED)
        self.ghost_key.shift([CHART_LEFT - self.ghost_key.get_left()[0],
                              CHART_ZERO - CHART_HALF - 0.2 - self.ghost_key.get_top()[1], 0])
        self.eps_text = np.format_float_positional(ln["eps"], trim="-")
        self.orders = VGroup(*[NormOrder(order, [S(f"{order}_title", self.lang),
                                                 S(self.whose("pre_who") if order == "pre" else "post_who", self.lang)],
                                         S("sublayer", self.lang), S("ln_box", self.lang), cx, 2.1)
                               for order, cx in (("post", -2.6), ("pre", 3.9))])
        self.zero_line = Line([CHART_LEFT, CHART_ZERO, 0], [CHART_RIGHT, CHART_ZERO, 0], stroke_color=MUTED,
                              stroke_width=1.5)
        stats = [(ln["mean"], ln["var"]), (ln["normalised_mean"], ln["normalised_var"])]
        self.stat_texts = [(style.signed(m, style.statistic_decimals(v)), style.statistic(v))
                           for m, v in stats]      # a line's mean at its variance's decimals
        self.mean_lines = [DashedLine([CHART_LEFT, CHART_ZERO + m * unit, 0], [CHART_RIGHT, CHART_ZERO + m * unit, 0],
                                      stroke_color=style.ACCENT, stroke_width=2, dash_length=0.08)
                           for (m, _), unit in zip(stats, self.units)]
        self.stats = [self.stat_line(m, v) for m, v in self.stat_texts]
        formula_x = (CHART_LEFT + CHART_RIGHT) / 2 + 2.3
        self.formulas = [light(MathTex(r"\hat{x} = \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}}",
                                       font_size=style.MATH_FONT_SIZE)),
                         light(MathTex(r"y = \gamma \odot \hat{x} + \beta", font_size=style.MATH_FONT_SIZE))]
        for formula in self.formulas:
            formula.move_to([formula_x, STATS_BASELINE + 0.05, 0])

        # why: every LayerNorm of the stack, for the token in focus
        places = [f"h.{i}.{n}" for i in range(c.n_layer) for n in ("ln_1", "ln_2")] + ["ln_f"]
        steps = [layer_norm_steps(gpt, trace, w, f) for w in places]
        self.build_why(places, steps)

        shown = [i for i in self.columns[0].indices_shown if i is not None]

        def entries(v, column):     # the labels as the column draws them
            return {"values": [float(v[i]) for i in shown],
                    "labels": [m.text for m in column.entries if isinstance(m, NumberText)]}

        self.values.update({
            "prompt": chosen["prompt"], "tokens": self.tokens, "token_ids": self.token_ids,
            "focus": f, "focus_rule": chosen["focus_rule"], "layer": self.layer, "layer_choice": layer_choice,
            "d_model": self.d, "dims_shown": shown,
            "residual": {"resid_pre": entries(x, self.columns[0]), "attn_out": entries(delta, self.columns[1]),
                         "resid_mid": entries(mid, self.columns[2])},
            "layer_norm": {"where": f"h.{self.layer}.ln_2", "eps": ln["eps"],
                           "mean": ln["mean"], "var": ln["var"], "mean_label": self.stat_texts[0][0],
                           "var_label": self.stat_texts[0][1],
                           "normalised_mean": ln["normalised_mean"], "normalised_var": ln["normalised_var"],
                           "normalised_mean_label": self.stat_texts[1][0],
                           "normalised_var_label": self.stat_texts[1][1],
                           "bar_scales": {"shared": self.scale_notes is None, "units": self.units,
                                          "longest_labels": [n.text for n in self.scale_notes or []]},
                           "bars": {"input": [float(v) for v in ln["input"]],
                                    "normalised": [float(v) for v in ln["normalised"]],
                                    "out": [float(v) for v in ln["out"]]},
                           "columns": {"input": entries(ln["input"], self.stage_columns[0]),
                                       "normalised": entries(ln["normalised"], self.stage_columns[1]),
                                       "out": entries(ln["out"], self.stage_columns[2])}},
            "variances": [{"where": places[i], "var": steps[i]["var"], "var_label": self.why_numbers[n][0],
                     "normalised_var": steps[i]["normalised_var"], "normalised_var_label": self.why_numbers[n][1]}
                    for n, i in enumerate(self.why_shown)],
            "why_of": len(places),      # LayerNorms in the stack; "variances" lists those drawn (all of ours)
            "why_range_labels": self.why_texts,
        })
        self.record_sum("residual", "x + attention output", self.rounded, drawn=self.equals)

    def choose_layer(self, trace, chosen) -> tuple[int, dict]:
        """The given layer; for the default prompt and focus, the layer of the attention chapter's head (the causal
        rule, scenes.prompts.lookback_head, in both languages); else the layer of the head with the largest weight
        from the focus to an earlier token."""
        if self.params["layer"] != AUTO:
            layer = self.params["layer"]
            if not 0 <= layer < self.gpt.config.n_layer:
                raise ParamError(f"layer: the model has {self.gpt.config.n_layer} layers, got {layer}")
            return layer, {"rule": "given"}
        f = chosen["focus"]
        if chosen["prompt_rule"] and chosen["adjective_index"] is not None:   # the default lecture: one story
            from scenes.prompts import lookback_head
            head = lookback_head(self.gpt, lang=self.lang)
            if head["causal"]:
                self.params["layer"], self.head_choice = head["layer"], head
                from scenes.attention_chapter import record_layer_story
                record_layer_story(self, head)    # both languages' layers, where they differ: the page's note
                return head["layer"], {"rule": "the layer of the attention chapter's head: " + head["rule"],
                                       "head": head["head"], "score": head["score"], "story": head["story"]}
        best = max((best_lookback_head(trace, f, [k]) | {"key": k} for k in (range(f) if f else [0])),
                   key=lambda b: b["score"])
        self.params["layer"] = best["layer"]
        return best["layer"], {"rule": "the layer of the head with the largest attention weight from the focus token "
                                       "to one earlier token (over every layer, head and earlier token)",
                               "head": best["head"], "key": best["key"], "score": best["score"]}

    def column(self, values, colour, decimals: int | None = None, texts: list[str] | None = None) -> VectorColumn:
        column = VectorColumn(values, lang=self.lang, shown=7, pitch=0.4, decimals=decimals, texts=texts)
        column.brackets.set_color(colour)
        return column

    def head(self, text, colour, column) -> Label:
        return Label(text, font_size=style.SMALL, color=colour).move_to([column.brackets.get_center()[0], 0, 0]) \
            .on_baseline(column.brackets.get_top()[1] + 0.25)

    def scale_note(self, longest: float) -> Label:
        """What a stage's longest bar stands for, under the chart's right end (stages drawn at scales of their own)."""
        note = Label(S("longest", self.lang, v=style.statistic(longest)),
                     font_size=style.SMALL, color=MUTED)
        return note.shift([CHART_RIGHT - note.get_right()[0], CHART_ZERO - CHART_HALF - 0.2 - note.get_top()[1], 0])

    def stat_line(self, mean_text, var_text) -> VGroup:
        mean = Label(S("mean", self.lang, v=mean_text), font_size=style.SMALL)
        var = Label(S("variance", self.lang, v=var_text), font_size=style.SMALL)
        mean.shift(RIGHT * (CHART_LEFT + 0.5 - mean.get_left()[0])).on_baseline(STATS_BASELINE)
        var.next_to(mean, RIGHT, buff=0.5).on_baseline(STATS_BASELINE)
        return VGroup(mean, var)

    def why_name(self, where: str) -> str:
        """A LayerNorm's name under its bars: the sublayer it feeds ("L1 attn"), or the final one."""
        if where == "ln_f":
            return S("final", self.lang)
        layer, kind = int(where.split(".")[1]), where.split(".")[2]
        return S("sublayer_attn" if kind == "ln_1" else "sublayer_mlp", self.lang, layer=style.shown(layer))

    def build_why(self, places, steps):
        """Every LayerNorm's variance before and after, or, in a stack too deep for their names to stand WHY_GAP
        apart across the screen (GPT-2 small's 25), the honest ellipsis: the first LayerNorms, "⋯", the final one, as
        many as fit (why_shown; the caption's range is over those drawn)."""
        widths = [Label(self.why_name(w), font_size=style.SMALL).width for w in places]
        gap_width = Label("\u22ef", font_size=style.SMALL).width

        def fits(slots) -> bool:    # slots of 1/(n + 0.5) of the area: neighbours' names WHY_GAP apart at least
            w = [gap_width if i is None else widths[i] for i in slots]
            pitch = 2 * style.safe_half_width() / (len(slots) + 0.5)
            return all((a + b) / 2 + WHY_GAP <= pitch for a, b in zip(w, w[1:]))

        slots = list(range(len(places)))
        for shown in range(len(places) - 1, 1, -1):
            if fits(slots):
                break
            slots = shown_indices(len(places), shown)
        self.why_shown = [i for i in slots if i is not None]
        places, steps = [places[i] for i in self.why_shown], [steps[i] for i in self.why_shown]
        n = len(slots)
        slot = 2 * style.safe_half_width() / (n + 0.5)
        x0 = -style.safe_half_width() + slot * 0.75
        self.why_base = Line([x0 - slot * 0.45, WHY_ZERO, 0], [x0 + (n - 1) * slot + slot * 0.45, WHY_ZERO, 0],
                             stroke_color=MUTED, stroke_width=1.5)
        self.why_before_numbers, self.why_after_numbers, self.why_labels = VGroup(), VGroup(), VGroup()
        self.why_numbers = []
        unit = min(WHY_UNIT, WHY_TALLEST / max(max(s["var"] for s in steps), 1.0))   # one scale for the chart
        self.why_unit = unit
        columns = [x0 + i * slot for i, k in enumerate(slots) if k is not None]
        # each LayerNorm's pair: the variance before it (left) and after it (right), on one base line
        self.why_before = ColumnBars([s["var"] for s in steps], [cx - 0.3 for cx in columns], WHY_ZERO, unit,
                                     style.EMBEDDING, width=0.5, opacity=0.85, floor=0.01)
        self.why_after = ColumnBars([s["normalised_var"] for s in steps], [cx + 0.3 for cx in columns], WHY_ZERO, unit,
                                    style.EMBEDDING_UPDATED, width=0.5, opacity=0.85, floor=0.01)
        if None in slots:
            gap = slots.index(None)
            self.why_labels.add(Label("\u22ef", font_size=style.SMALL, color=MUTED).move_to([x0 + gap * slot, 0, 0])
                                .on_baseline(WHY_ZERO - 0.38))
        for i, (where, s) in enumerate(zip(places, steps)):
            self.why_numbers.append((style.statistic(s["var"]), style.statistic(s["normalised_var"])))
            label = Label(self.why_name(where), font_size=style.SMALL, color=MUTED)
            self.why_labels.add(label.move_to([columns[i], 0, 0]).on_baseline(WHY_ZERO - 0.38))
        # each number over its own bar, in its bar's colour (ColumnBars.numbers_above): the pair's two reach away
        # from each other (before to the left, after to the right), so neither sits over the other's bar
        self.why_before_numbers = self.why_before.numbers_above([t[0] for t in self.why_numbers], style.EMBEDDING,
                                                                align="right")
        self.why_after_numbers = self.why_after.numbers_above([t[1] for t in self.why_numbers],
                                                              style.EMBEDDING_UPDATED, align="left")
        for before, after in zip(self.why_before_numbers, self.why_after_numbers):   # level: they would read as one
            if before.get_bottom()[1] < after.get_top()[1] + 0.05 and after.get_bottom()[1] < before.get_top()[1] + 0.05:
                before.shift(UP * (after.get_top()[1] + 0.1 - before.get_bottom()[1]))
        low, high = min(s["var"] for s in steps), max(s["var"] for s in steps)
        self.why_texts = {"lo": style.statistic(low), "hi": style.statistic(high),
                          "start": self.why_numbers[0][0], "end": self.why_numbers[-1][0]}
        axis = Label(S("why_axis", self.lang, word=self.tokens[self.focus]), font_size=style.SMALL, color=MUTED)
        self.why_labels.add(axis.move_to([0, 0, 0]).on_baseline(WHY_ZERO - 0.8))
        keys = VGroup()
        for key, colour, x in (("before", style.EMBEDDING, -5.6), ("after", style.EMBEDDING_UPDATED, 0.4)):
            swatch = Rectangle(width=0.3, height=0.22, stroke_width=0, fill_color=colour, fill_opacity=0.85)
            swatch.move_to([x, STATS_BASELINE + 0.1, 0])                # fixed places: one layout in en and zh
            text = Label(S(key, self.lang), font_size=style.SMALL)
            text.shift(RIGHT * (x + 0.3 - text.get_left()[0])).on_baseline(STATS_BASELINE)
            keys.add(VGroup(swatch, text))
        self.why_key = keys
