"""Multi-head attention: every head of one layer side by side, which are idle (the swap test) and which head fetches the
colour and which the texture (measured over 200 prompts), their outputs concatenated and projected by W_O.

    manim render -ql scenes/multi_head/beats.py MultiHead
    python render.py multi_head --lang zh --layer 0

The patterns, head outputs, concatenation and projection are the model's trace; the swap tests and the heads' jobs
are model.analysis.head_jobs'. Every value on screen is recorded at full precision in self.values (the manifest).

This module is the scene: each beat's build (build_<beat>, called by prepare) sits beside its play (beat_<beat>), with
the caption rule it applies; the numbers it reads are in numbers.py (LayerHeads), the grids' sizing in layout.py,
its words in words.toml.
"""

from __future__ import annotations

from pathlib import Path

from manim import (DOWN, LEFT, RIGHT, UP, Create, FadeIn, FadeOut, LaggedStart, Rectangle, ReplacementTransform,
                   SurroundingRectangle, VGroup)

from model.analysis import heads_delta
from scenes import style, why_beats
from scenes.components import (ColourLegend, ColourScale, CompactTokenRow, Label,
                               MagnitudeStrip, MatrixVectorProduct, Table, VectorColumn, column_texts,
                               rounded_columns, keep_inside_safe_area, keep_right_of, magnitude_scale, place_by_body,
                               shown_indices, sum_decimals)
from scenes.lecture import LectureScene
from model.analysis.head_jobs import IDLE_RULE, JOBS_RULE
from scenes.multi_head.layout import (CELL_H, CONCAT_MIN_PART, CONCAT_MIN_W, GRID_GAP, GRID_TOP, HEAD_TITLE_Y,
                                      IDLE_DIM, IDLE_LINE, JOBS_COLUMNS, JOBS_HEAD_RIGHT, JOBS_PITCH, JOBS_TOP,
                                      LABELS_FLOOR, MAX_ROWS, ROW_PITCH, ROW_TITLE_GAP, ROW_TOP, ROWS_FLOOR,
                                      STRIP_PITCH, STRIP_Y, TEXT_GAP, TITLE_ROOM, HeadLayout)
from scenes.multi_head.numbers import LayerHeads
from scenes.style import ATTENTION, MUTED, QUERY, SHARED, VALUE
from scenes.words import Words

WORDS = Words(Path(__file__).with_name("words.toml"))   # the captions, their spoken forms, the beat titles

S = SHARED | ATTENTION | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

STEP, PAUSE = style.STEP, style.PAUSE

QUESTION_RULE = ("question_same when every head's largest weight from the focus is on one word, question when each "
                 "head's is on a different word, else question_shared")


def question_rule(top_keys: list[int]) -> str:
    """The opening caption's key, by how many different words the heads look at most (QUESTION_RULE)."""
    k = len(set(top_keys))
    return "question_same" if k == 1 else "question" if k == len(top_keys) else "question_shared"


MAX_SPLIT_HEADS = 4       # W_O split into per-head blocks: this many columns of heads at most (more: the rest in one)
MAX_SPOKEN_HEADS = 8      # the focus beat names at most this many heads' targets (then "and n more")


class MultiHead(HeadLayout, LectureScene):
    name = "multi_head"
    strings = S
    beat_titles = BEATS
    TITLE_TOP, NOTE_Y = 1.4, -1.3

    # --- title ------------------------------------------------------------------------------------------------
    def title_note(self) -> str:
        m = self.m
        if m.choice["causal"] and not m.choice["given"]["layer"]:   # the default lecture: the causal head's layer
            from scenes.attention_chapter import record_layer_story
            record_layer_story(self, m.choice)      # both languages' layers, where they differ: never said here
            return self.s("layer_watch", model=self.model_words("short"), layer=style.shown(m.layer), n=m.n_head,
                          focus=m.tokens[m.focus])
        key = "layer_given" if m.choice["given"]["layer"] else "layer_note"
        return self.s(key, model=self.model_words("short"), layer=style.shown(m.layer), n=m.n_head, focus=m.tokens[m.focus])

    def prepare(self):
        self.m = m = LayerHeads(self.gpt, self.params)
        self.params.update(prompt=m.prompt, focus=m.focus, layer=m.layer)    # `auto` resolved
        self.values.update(m.record())
        self.build_rows()
        self.build_grids()
        self.build_concat()
        self.build_product()
        self.build_split()
        self.build_jobs()

    # --- question: its build (shared with the summary), then its play -----------------------------------------
    def build_rows(self):
        """The question's and the summary's picture: the prompt up to the focus across the top (CompactTokenRow; a
        long prompt's earliest words give way to "⋯"), and per head (at most MAX_ROWS rows, the first heads, then
        "⋯ n more heads") a line "head h → word w" over a row of cells under the words, each the head's attention
        weight from the focus, its top key's cell framed; for the summary, |ΔE| of each head at the end of its line
        and |out| under the rows."""
        m, lang = self.m, self.lang
        row = CompactTokenRow(m.tokens[:m.focus + 1], lang=lang, indices=False)
        row.shift([-row.get_center()[0], ROW_TOP - row.get_top()[1], 0])
        chip_of = {row.first_shown + i: c for i, c in enumerate(row.chips)}
        heads = list(range(m.n_head)) if m.n_head <= MAX_ROWS else list(range(MAX_ROWS - 1))
        lines = len(heads) + (m.n_head > len(heads)) + 1                   # the heads, "⋯", |out|
        pitch = min(ROW_PITCH, (row.get_bottom()[1] - ROWS_FLOOR) / lines)
        scale = ColourScale("attention")
        left, right = row.get_left()[0], row.get_right()[0]
        names, cells, frames, targets, lengths, length_texts = [], [], [], [], [], []
        y = row.get_bottom()[1] - 0.2
        for h in heads:
            weights = m.patterns[h][m.focus]
            name = Label(S("head", lang, h=style.shown(h)), font_size=style.SMALL, color=VALUE)
            names.append(name.shift(RIGHT * (left - name.get_left()[0])).on_baseline(y - 0.3))
            top = m.top_keys[h]
            target = Label(f"\u2192 {style.token_label(m.tokens[top])} {style.percent(m.top_weights[h])}",
                           font_size=style.SMALL)
            targets.append(target.next_to(name, RIGHT, buff=0.35).on_baseline(y - 0.3))
            cy = y - 0.3 - 0.16 - CELL_H / 2
            line = VGroup(*[Rectangle(width=c.box.width, height=CELL_H, stroke_color=style.CELL_OUTLINE,
                                      stroke_width=1, fill_color=scale.colour(float(weights[j])), fill_opacity=1)
                            .move_to([c.get_center()[0], cy, 0]) for j, c in chip_of.items()])
            cells.append(line)
            frames.append(SurroundingRectangle(line[top - row.first_shown], color=QUERY, buff=0.03, stroke_width=3)
                          if top in chip_of else VGroup())
            text = f"{m.sizes['delta_lengths'][h]:.2f}"
            length_texts.append(text)
            lengths.append(Label(S("delta_length", lang, x=text), font_size=style.SMALL, color=VALUE)
                           .on_baseline(y - 0.3))
            y -= pitch
        # the summary marks an idle head (the swap test, IDLE_RULE) on its line, as the focus beat's tag does
        idles = [Label(S("idle_tag", lang), font_size=style.SMALL, color=MUTED).next_to(t, RIGHT, buff=0.3)
                 .on_baseline(n.baseline()) if m.idle[h] else VGroup() for h, t, n in zip(heads, targets, names)]
        # |ΔE| at the row's right end, or past the widest "head h → word w" and its idle tag where the prompt is short
        ends = [(p if m.idle[h] else t).get_right()[0] for h, t, p in zip(heads, targets, idles)]
        right = max(right, max(ends) + 0.4 + max(t.width for t in lengths))
        for length in lengths:
            length.shift(RIGHT * (right - length.get_right()[0]))
        more = VGroup()
        if m.n_head > len(heads):
            more = Label(S("question_more", lang, n=m.n_head - len(heads)), font_size=style.SMALL, color=MUTED)
            more.shift(RIGHT * (left - more.get_left()[0])).on_baseline(y - 0.3)
            y -= pitch
        out_text = f"{m.sizes['out_length']:.2f}"
        out = Label(S("out_length", lang, x=out_text), font_size=style.SMALL, color=VALUE)
        out.shift(RIGHT * (right - out.get_right()[0])).on_baseline(y - 0.3)
        focus_frame = SurroundingRectangle(chip_of[m.focus], color=QUERY, buff=0.05, corner_radius=0.08)
        picture = VGroup(row, focus_frame, *names, *cells, *frames, *targets, *lengths, more, out, *idles)
        if picture.get_right()[0] > style.safe_half_width():       # a short prompt's |ΔE| past the row: centred
            picture.shift(LEFT * picture.get_center()[0])
        self.rows = {"idles": idles, "prompt": row, "heads": heads, "names": names, "cells": cells, "frames": frames,
                     "targets": targets, "lengths": lengths, "length_texts": length_texts, "more": more, "out": out,
                     "out_text": out_text, "focus_frame": focus_frame}
        self.values["question"] = {"heads_shown": heads, "first_word_shown": row.first_shown,
                                   "weights": [m.patterns[h][m.focus][: m.focus + 1].tolist() for h in heads],
                                   "targets": [t.text for t in targets], "distinct_top_keys": len(set(m.top_keys)),
                                   "rule": QUESTION_RULE}
        self.values["answer"] = {"heads_shown": heads, "delta_lengths": m.sizes["delta_lengths"],
                                 "delta_labels": length_texts, "out_length": m.sizes["out_length"],
                                 "out_label": out_text, "idle": [m.idle[h] for h in heads],
                                 "source": "model.analysis.head_delta_sizes (|ΔE| of each head at the focus, |out|)"}

    def beat_question(self):
        """Why more than one head: the prompt up to the focus, and under each word one square per head of the layer,
        its attention weight from the focus (ColourScale attention); each head's top key framed and named on the
        right. The caption is chosen by how many different words the heads look at most (question_rule)."""
        m, rows = self.m, self.rows
        k = len(set(m.top_keys))
        key = self.caption_rule("question", question_rule(m.top_keys), QUESTION_RULE, top_keys=m.top_keys)
        self.say(key, focus=m.tokens[m.focus], n=m.n_head, k=k, layer=style.shown(m.layer),
                 src=style.token_label(m.tokens[m.top_keys[0]]))
        self.clear_stage()
        row = rows["prompt"]
        self.play(LaggedStart(*[FadeIn(c, shift=DOWN * 0.15) for c in row.chips], lag_ratio=0.06),
                  FadeIn(row.ellipsis), run_time=STEP + 0.04 * len(row.chips))
        self.play(Create(rows["focus_frame"]), run_time=0.6)
        self.play(LaggedStart(*[FadeIn(VGroup(n, c)) for n, c in zip(rows["names"], rows["cells"])], lag_ratio=0.2),
                  FadeIn(rows["more"]), run_time=2 * STEP)
        self.play(LaggedStart(*[Create(f) for f in rows["frames"]], lag_ratio=0.2),
                  LaggedStart(*[FadeIn(t) for t in rows["targets"]], lag_ratio=0.2), run_time=2 * STEP)
        self.wait(PAUSE + 1)

    # --- heads: the grids (the focus beat's too), then the play -----------------------------------------------
    def build_grids(self):
        """One AttentionGrid per head (keys down, queries across, as everywhere); words on the first only. The heads
        are laid in the number of rows that draws them largest (fit_grids): ours in one, a checkpoint's 12 in two."""
        m, lang = self.m, self.lang
        self.grids, self.head_titles, self.focus_frames, self.top_labels = [], VGroup(), [], VGroup()
        first, grid_w, rows, drop = self.fit_grids()
        self.grid_w, self.grid_rows = grid_w, rows
        self.per_row = per_row = -(-m.n_head // rows)      # heads a row (the last row may have fewer)
        self.values["grid_rows"] = rows
        q_title, k_title = self.place_axis_titles(first)
        grid_top, head_title_y = GRID_TOP - drop, HEAD_TITLE_Y - drop
        # the words' width sets the layout (the titles' widths differ between languages and fit in TITLE_ROOM)
        label_w = max(first.squares.get_left()[0] - first.key_words.get_left()[0], TITLE_ROOM)
        # a two-digit index over the last column may reach past the last grid's right edge: keep it on screen
        overhang = max(0.0, first.query_indices.get_right()[0] - first.squares.get_right()[0])
        total = label_w + per_row * grid_w + (per_row - 1) * GRID_GAP + overhang
        left = -total / 2 + label_w
        row_pitch = grid_w + self.row_extra(first)
        for h in range(m.n_head):
            row, col = divmod(h, per_row)
            g = first if h == 0 else self.grid(h, grid_w)
            top = grid_top - row * row_pitch
            g.shift([left + col * (grid_w + GRID_GAP) - g.squares.get_left()[0], top - g.squares.get_top()[1], 0])
            self.grids.append(g)
            x = g.squares.get_center()[0]
            title = Label(S("head", lang, h=style.shown(h)), font_size=style.SMALL, color=VALUE)
            if row == 0:
                title.move_to([x, head_title_y, 0])
            else:     # a lower row has no axis titles over it: its head titles sit just over its query indices
                title.move_to([x, 0, 0]).shift(UP * (g.query_indices.get_top()[1] + ROW_TITLE_GAP - title.get_bottom()[1]))
            self.head_titles.add(title)
            self.focus_frames.append(g.line_frame(m.focus))
            word = Label(f"\u2192 {style.token_label(m.tokens[m.top_keys[h]])}", font_size=style.SMALL)
            weight = Label(style.percent(m.top_weights[h]), font_size=style.SMALL, color=QUERY)
            base = g.squares.get_bottom()[1] - 0.5                      # on baselines, so the labels line up
            word.shift(RIGHT * (x - word.get_center()[0])).on_baseline(base)
            weight.shift(RIGHT * (x - weight.get_center()[0])).on_baseline(base - 0.45)
            self.top_labels.add(VGroup(word, weight))
        self.name_heads_by_stride()
        self.build_idle_tags()
        # the first grid's axis titles sit above its word labels, clear of the head titles
        self.values["grid_top_labels"] = [{"head": h, "key": m.top_keys[h], "word": m.tokens[m.top_keys[h]],
                                           "weight": m.top_weights[h]} for h in range(m.n_head)]

    def beat_heads(self):
        self.say("heads")
        self.clear_stage()
        self.play(LaggedStart(*[FadeIn(VGroup(t, g.squares, g.query_indices))
                                for t, g in zip(self.head_titles, self.grids)], lag_ratio=0.3),
                  FadeIn(VGroup(*[m for m in self.grids[0].axes if m is not self.grids[0].query_indices])),
                  run_time=2.5 * STEP)
        self.wait(PAUSE + 1)

    # --- focus ------------------------------------------------------------------------------------------------
    def build_idle_tags(self):
        """An idle head (the swap test at the focus moves P(answer) by under 1 point, IDLE_RULE) is marked where the
        grids are drawn: its grid dimmed (IDLE_DIM) and a muted tag "idle here" under its labels. A tag needs a line of
        its own: only the last row of grids has one, and only above the caption (LABELS_FLOOR); where there is no room
        the dimming alone marks the head. Recorded in values["idle_shown"]."""
        m, lang = self.m, self.lang
        room = self.grid_w + GRID_GAP - TEXT_GAP
        self.idle_tags, tagged = VGroup(), []
        for h, (g, labels) in enumerate(zip(self.grids, self.top_labels)):
            tag = VGroup()
            base = g.squares.get_bottom()[1] - 0.5 - 0.45 - IDLE_LINE
            last_row = h // self.per_row == self.grid_rows - 1
            if m.idle[h] and last_row:
                label = Label(S("idle_tag", lang), font_size=style.SMALL, color=MUTED)
                label.shift(RIGHT * (g.squares.get_center()[0] - label.get_center()[0])).on_baseline(base)
                if label.width <= room and label.get_bottom()[1] >= LABELS_FLOOR:
                    tag = label
                    tagged.append(h)
            self.idle_tags.add(tag)
        self.values["idle_shown"] = {"rule": IDLE_RULE, "idle": [bool(p) for p in m.idle],
                                     "dimmed": [h for h in range(m.n_head) if m.idle[h]], "opacity": IDLE_DIM,
                                     "tagged": tagged, "tag": "idle_tag"}

    def spoken_targets(self) -> str:
        """Each head's target from the focus, for the ear (the focus beat's spoken line): where it looks most and
        its weight, and, for an idle head (IDLE_RULE), that swapping the answer word moves P(answer) by under one
        percentage point. At most MAX_SPOKEN_HEADS heads, then how many more."""
        from speech.spoken import announced
        m, lang = self.m, self.lang
        shown = range(min(m.n_head, MAX_SPOKEN_HEADS))
        keys = ["target_idle" if m.idle[h] else "target" for h in shown]
        answer = style.token_label(m.swaps["answer"]) if m.swaps else ""
        parts = [announced(self.strings.table[key][lang], {"h": style.shown(h), "w": style.percent(m.top_weights[h]),
                                                            "word": style.token_label(m.tokens[m.top_keys[h]]),
                                                            "answer": answer}, lang)
                 for h, key in zip(shown, keys)]
        if m.n_head > len(shown):
            parts.append(self.s("target_more", n=m.n_head - len(shown)))
        self.values["targets"] = {"rule": IDLE_RULE, "keys": keys, "heads": list(shown)}
        return self.s("clause_joiner").join(parts)

    def beat_focus(self):
        m = self.m
        k = len(set(m.top_keys))
        key = self.caption_rule("focus", "focus_same" if k == 1 else "focus" if k == len(m.top_keys) else
                                "focus_shared", "focus_same when every head's largest weight is on one token, "
                                "focus when each head's is on a different token, else focus_shared",
                                top_keys=m.top_keys)
        idle_note = (" " if self.lang == "en" else "") + self.s("idle_note", answer=style.token_label(m.swaps["answer"])) \
            if any(m.idle) else ""
        self.say(key, focus=m.tokens[m.focus], n=len(m.top_keys), k=k, src=style.token_label(m.tokens[m.top_keys[0]]),
                 targets=self.spoken_targets(), idle_note=idle_note)
        self.play(*[Create(f) for f in self.focus_frames], run_time=STEP)
        self.play(LaggedStart(*[FadeIn(t, shift=DOWN * 0.1) for t in self.top_labels], lag_ratio=0.25),
                  run_time=2 * STEP)
        idle = [h for h in range(m.n_head) if m.idle[h]]
        if idle:         # the idle heads (the swap test): their grids dimmed, their tags under them
            self.play(*[self.grids[h].squares.animate.set_opacity(IDLE_DIM) for h in idle],
                      *[FadeIn(self.idle_tags[h]) for h in idle], run_time=STEP)
        self.wait(PAUSE + 1)

    # --- concat -----------------------------------------------------------------------------------------------
    def build_concat(self):
        """Each head's output at the focus as a strip under its grid; then side by side, the trace's concat."""
        m, lang = self.m, self.lang
        scale = magnitude_scale(m.head_out, m.concat)
        self.values["magnitude_scale_limit"] = scale.limit
        per_row = self.per_row      # in the grids' rows, the last row at STRIP_Y
        self.out_strips = [MagnitudeStrip(m.head_out[h], scale, width=self.grid_w, height=0.4)
                           .move_to([g.squares.get_center()[0],
                                     STRIP_Y + (self.grid_rows - 1 - h // per_row) * STRIP_PITCH, 0])
                           for h, g in enumerate(self.grids)]
        labels = [Label(S("output_of", lang, h=style.shown(h), dh=m.dh), font_size=style.SMALL, color=MUTED)
                  .next_to(s, DOWN, buff=0.2) for h, s in enumerate(self.out_strips)]
        # every stride-th head's output is named where neighbouring names would come closer than TEXT_GAP
        stride = self.name_stride(max(t.width for t in labels))
        self.out_labels = VGroup(*[t if (h % per_row) % stride == 0 else VGroup() for h, t in enumerate(labels)])
        # the trace's concat, drawn as its n_head consecutive parts of d_head entries (head h's part is entries
        # h·d_head … (h+1)·d_head − 1), each a strip like the head's own: a part too narrow for every entry is cut
        # the same way (first entries, ⋯, last), so the beat moves n_head strips of a few cells, not every entry
        # Many heads (a checkpoint's 12 under narrow grids) would leave each part a hairline: the concat then takes
        # at least CONCAT_MIN_W, and where a part would still be narrower than CONCAT_MIN_PART the parts follow the
        # honest ellipsis: the first heads' parts, "⋯", the last head's part (concat_heads; the label gives the size)
        width = max(m.n_head * self.grid_w * 0.95, CONCAT_MIN_W)
        gap = Label("\u22ef", font_size=style.SMALL, color=MUTED)
        if width / m.n_head >= CONCAT_MIN_PART:
            slots, gap_w = list(range(m.n_head)), 0.0
        else:
            gap_w = gap.width + 0.3
            slots = shown_indices(m.n_head, max(2, int((width - gap_w) / CONCAT_MIN_PART)))
        self.concat_heads = [h for h in slots if h is not None]
        part_w = (width - gap_w) / len(self.concat_heads)
        self.concat_parts, self.concat_gap, x = [], None, -width / 2
        for h in slots:
            if h is None:
                self.concat_gap = gap.move_to([x + gap_w / 2, 0.2, 0])
                x += gap_w
                continue
            part = MagnitudeStrip(m.concat[h * m.dh:(h + 1) * m.dh], scale, width=part_w, height=0.4)
            self.concat_parts.append(part.shift([x + part_w / 2 - part.get_center()[0], 0.2, 0]))
            x += part_w
        self.values["concat_heads_shown"] = self.concat_heads
        whole = VGroup(*self.concat_parts)
        ticks = [Label(S("head", lang, h=style.shown(h)), font_size=style.SMALL, color=VALUE)
                 .next_to(part, UP, buff=0.2) for h, part in zip(self.concat_heads, self.concat_parts)]
        if any(b.get_left()[0] - a.get_right()[0] < TEXT_GAP for a, b in zip(ticks, ticks[1:])):
            ticks = [ticks[0], ticks[-1]]     # too many heads to name each part: the first and the last
        self.concat_ticks = VGroup(*ticks)
        self.concat_label = Label(S("concat_label", lang, n=m.n_head, dh=m.dh, d=m.d), font_size=style.SMALL,
                                  color=MUTED).next_to(whole, DOWN, buff=0.25)
        self.legend = ColourLegend(scale, S("size_legend", lang), width=2.0)
        self.legend.shift([0, -1.45, 0] - self.legend.bar.get_center())   # by its bar: the same in en and zh

    def beat_concat(self):
        m = self.m
        self.say("concat", dh=m.dh, focus=m.tokens[m.focus], n=m.n_head, d=m.d)
        # heads in rows: the titles go with the grids (the outputs are stacked in rows of their own, each named)
        titles_now = [self.head_titles] if self.grid_rows > 1 else []
        self.play(FadeOut(VGroup(*[VGroup(g.squares, g.query_indices) for g in self.grids], self.grids[0].axes,
                                 *self.focus_frames, *self.top_labels, self.idle_tags, *titles_now)), run_time=0.8)
        self.play(LaggedStart(*[FadeIn(s, shift=UP * 0.2) for s in self.out_strips], lag_ratio=0.2),
                  FadeIn(self.out_labels), FadeIn(self.legend), run_time=2 * STEP)
        self.wait(PAUSE)
        moved = dict(zip(self.concat_heads, self.concat_parts))    # a head whose part is not drawn fades into "⋯"
        self.play(*[ReplacementTransform(s, moved[h]) if h in moved else FadeOut(s)
                    for h, s in enumerate(self.out_strips)],
                  *([FadeIn(self.concat_gap)] if self.concat_gap is not None else []),
                  FadeOut(self.out_labels), *([] if titles_now else [FadeOut(self.head_titles)]), run_time=2 * STEP)
        self.play(FadeIn(self.concat_label), FadeIn(self.concat_ticks), run_time=STEP)
        self.wait(PAUSE + 1)

    # --- project: W_O's product, its split by head, then the play ---------------------------------------------
    def build_product(self):
        """out = W_Oᵀ · concat + b_O: the trace's attention output at the focus."""
        m, lang = self.m, self.lang
        n = lambda k: S("n_numbers", lang, n=k)  # noqa: E731
        self.product = MatrixVectorProduct(m.W_O.T, m.concat, m.out, lang=lang, name="W_O\u1d40", bias=m.b_O,
                                           rows=6, cols=6, colour=VALUE, vector_label=f"concat: {m.d}",
                                           bias_label="b_O", output_label=f"out: {n(m.d)}",
                                           legend_title=S("weight_scale", lang), legend_width=1.8)
        body = VGroup(self.product.matrix.cells, self.product.output.brackets)
        self.product.shift([-0.45 - body.get_center()[0], 2.45 - self.product.matrix.cells.get_top()[1], 0])
        keep_inside_safe_area(self.product)      # a checkpoint's wider labels (GPT-2's −0.0075) may run off screen
        self.product.place_legend(-4.85, 3.35)         # top left, beside the formula line; by its bar
        self.project_formula = self.tex(r"\text{out}", "=", r"W_O^{\top}", r"\,\text{concat}", "+", "b_O",
                                        colours={r"\text{out}": VALUE}).move_to([0, 3.2, 0])
        keep_right_of(self.project_formula, self.product.legend)     # a wider legend (GPT-2's −0.021) pushes it

    def build_split(self):
        """W_O in per-head blocks: each head's ΔE at the focus (its output through its own rows of W_O) as a column,
        + ... + b_O = out, rounded row by row (components.sums). Up to MAX_SPLIT_HEADS heads one column each; more
        (a checkpoint's 12) keep the first MAX_SPLIT_HEADS − 1 and add the rest in one column ("heads 4–12": their
        ΔEs added entry by entry, model.analysis.heads_delta), so the drawn sum still adds up as shown."""
        m, lang = self.m, self.lang
        if m.n_head <= MAX_SPLIT_HEADS:
            groups = [[h] for h in range(m.n_head)]
        else:
            groups = [[h] for h in range(MAX_SPLIT_HEADS - 1)] + [list(range(MAX_SPLIT_HEADS - 1, m.n_head))]
        self.split_groups = groups
        deltas = [m.head_deltas[g[0]] if len(g) == 1 else heads_delta(self.gpt, m.trace, m.layer, m.focus, g)
                  for g in groups]
        vectors = [*deltas, m.b_O, m.out]
        d = sum_decimals(vectors)
        rounded = rounded_columns(vectors, shown=7, decimals=d)
        texts = column_texts(rounded)
        n = len(vectors)
        pitch = min(2.05, 2 * style.safe_half_width() / n)      # column centres, one operator between each two
        xs = [(i - (n - 1) / 2) * pitch for i in range(n)]
        columns = [place_by_body(VectorColumn(v, lang=lang, shown=7, pitch=0.42, decimals=d, texts=t), x, 0.1)
                   for v, t, x in zip(vectors, texts, xs)]
        for c in columns[:-1]:          # one size label, under out: the columns' own would run together
            c.remove(c.size_label)
        # each column named over it: "head h" (or "heads a–b") over "ΔE" (b_O and out on the lower line)
        top = columns[0].brackets.get_top()[1] + 0.2
        names = [(S("head", lang, h=style.shown(g[0])) if len(g) == 1 else
                  S("heads_range", lang, a=style.shown(g[0]), b=style.shown(g[-1])), "\u0394E") for g in groups]
        names += [("", "b_O"), ("", "out")]
        colours = [VALUE] * len(groups) + [MUTED, VALUE]
        heads = [VGroup(*([Label(a, font_size=style.SMALL, color=c).move_to([x, 0, 0]).on_baseline(top + 0.42)]
                          if a else []),
                        Label(b, font_size=style.SMALL, color=c).move_to([x, 0, 0]).on_baseline(top))
                 for (a, b), c, x in zip(names, colours, xs)]
        y = columns[0].entries.get_center()[1]
        # the formula: the one product, split into one block of W_O per head (the grouped ones as one Σ)
        parts = [r"\text{out}", "="]
        for g in groups:
            parts += [f"W_{{O,{g[0] + 1}}}^{{\\top}}\\,h_{{{g[0] + 1}}}" if len(g) == 1 else
                      f"\\textstyle\\sum_{{i={g[0] + 1}}}^{{{g[-1] + 1}}} W_{{O,i}}^{{\\top}}\\,h_i", "+"]
        self.split_formula = self.tex(*parts, "b_O", colours={r"\text{out}": VALUE}).move_to([0, 3.2, 0])
        if self.split_formula.width > 2 * style.safe_half_width():      # a checkpoint's Σ over heads 4–12 is wider
            self.split_formula.scale_to_fit_width(2 * style.safe_half_width() - 0.2)
        keep_inside_safe_area(self.split_formula)
        over = self.split_formula.get_top()[1] - (style.safe_half_height() - 0.02)   # and its limits stand taller
        self.split_formula.shift(DOWN * max(0.0, over))
        ops = VGroup(*[Label(rounded.relation if i == n - 2 else "+", font_size=style.HEADER).move_to([(xs[i] + xs[i + 1]) / 2, y, 0])
                       for i in range(n - 1)])
        clash = top + 0.42 + 0.3 + 0.12 - self.split_formula.get_bottom()[1]     # by the names' baseline: alike in
                                                                                   # both languages
        if clash > 0:            # the formula's subscripts (Σ's limits) reach the column names: the columns come down
            for m_ in (*columns, *heads, ops):
                m_.shift(DOWN * clash)
        self.split, self.split_rounded = (columns, heads, ops), rounded
        self.record_sum("project", "ΔE₁ + … + b_O = out", rounded, drawn=ops[-1])
        self.values["split"] = {"heads": m.n_head, "groups": groups, "decimals": d,
                                "source": "model.analysis.head_contribution (each head's output through "
                                          "gpt.head(layer, h).W_O); a group's column: model.analysis.heads_delta"}

    def beat_project(self):
        self.say("project")
        self.play(FadeOut(VGroup(self.concat_label, self.concat_ticks, self.legend)),
                  FadeOut(VGroup(*self.concat_parts, *([self.concat_gap] if self.concat_gap else []))),
                  run_time=0.8)
        product = self.product
        self.play(FadeIn(self.project_formula), FadeIn(product.matrix), FadeIn(product.legend),
                  FadeIn(product.vector), FadeIn(product.plus), FadeIn(product.bias), FadeIn(product.equals),
                  FadeIn(product.output.brackets), FadeIn(product.output.size_label), run_time=STEP)
        product.play(self, slow_rows=1)
        self.wait(PAUSE + 1)
        # W_O split into per-head blocks: each head's ΔE, added with b_O, is the same out (rounded as shown)
        m, split = self.m, self.split
        terms = [labels[0] for labels in self.split_rounded.labels]      # the first row, for the ear
        first = self.s("sum_row", terms=self.s("list_joiner").join(terms[:-1]), last=terms[-1],
                       total=self.split_rounded.total_labels[0])
        grouped = [g for g in self.split_groups if len(g) > 1]
        self.say("split_grouped" if grouped else "split", dh=m.dh, n=m.n_head, row=first,
                 a=style.shown(grouped[0][0]) if grouped else "", b=style.shown(grouped[0][-1]) if grouped else "")
        self.clear_stage()
        columns, heads, ops = split
        self.play(FadeIn(self.split_formula), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(VGroup(c, t)) for c, t in zip(columns[:-1], heads[:-1])], lag_ratio=0.25),
                  FadeIn(ops[:-1]), run_time=2 * STEP)
        self.play(FadeIn(ops[-1]), FadeIn(columns[-1]), FadeIn(heads[-1]), run_time=STEP)
        self.wait(PAUSE + 1)

    # --- jobs: which head fetches the colour, which the texture ---------------------------------------------------
    def build_jobs(self):
        """A table of the layer's heads (at most MAX_ROWS, the first heads): per form of the chapter's prompt (ending in
        "was": the colour; in "felt": the texture), in how many of the sample's prompts of that form the head's top
        key is the answer (the census), and how far the swap test on the chapter's prompt of that form moves
        P(answer), in points (model.analysis.head_jobs.form_jobs). The form's head by JOBS_RULE in QUERY (an idle
        one stays plain); a move under 1 point muted. A checkpoint of one's own has no census: no table."""
        m, lang = self.m, self.lang
        self.jobs_table = VGroup()
        if m.jobs is None:
            self.values["jobs_shown"] = None
            return
        heads = list(range(min(m.n_head, MAX_ROWS)))
        forms = m.jobs["forms"]
        base = JOBS_TOP - 2 * JOBS_PITCH
        baselines = [base - (i + 1) * JOBS_PITCH for i in range(len(heads))]
        columns = []
        for form in ("colour", "texture"):
            f = forms[form]
            tops = [S("jobs_of", lang, k=f["answer_top"][h], m=f["of"]) for h in heads]
            moves = [S("points", lang, x=f"{f['moves'][h]:.1f}") for h in heads]
            columns += [tops, moves]
        table = Table([S("head", lang, h=style.shown(h)) for h in heads], columns, baselines,
                      label_right=JOBS_HEAD_RIGHT, column_rights=list(JOBS_COLUMNS),
                      headers=[S("jobs_top", lang), S("jobs_swap", lang)] * 2, header_baseline=base, clamp=False)
        groups = VGroup()
        for k, form in enumerate(("colour", "texture")):
            f = forms[form]
            text = S("jobs_group", lang, word=f["recall"], what=S(f"what_{form}", lang), m=f["of"])
            label = Label(text, font_size=style.SMALL, color=VALUE)
            left = min(table.header[2 * k].get_left()[0], table.columns[2 * k].get_left()[0])
            x = (left + JOBS_COLUMNS[2 * k + 1]) / 2                 # centred over its two columns
            groups.add(label.move_to([x, 0, 0]).on_baseline(JOBS_TOP - JOBS_PITCH))
        for k, form in enumerate(("colour", "texture")):       # the form's head (JOBS_RULE), where it is useful
            f = forms[form]
            for c in (2 * k, 2 * k + 1):
                for i, h in enumerate(heads):
                    text = table.columns[c][i]
                    if f["useful"] and h == f["head"]:
                        text.set_color(QUERY)
                    elif f["moves"][h] < 1 and c % 2:
                        text.set_color(MUTED)
        for a, b in zip(groups, groups[1:]):       # two groups' headers never run together (a long one moves right)
            b.shift(RIGHT * max(0.0, a.get_right()[0] + TEXT_GAP - b.get_left()[0]))
        keep_inside_safe_area(VGroup(groups, table))
        self.jobs_table = VGroup(groups, table)
        self.jobs_parts = {"groups": groups, "table": table}
        self.values["jobs_shown"] = {       # the numbers as drawn (the words around them are the clip's language's)
            "heads": heads, "rule": JOBS_RULE,
            "counts": {form: [[forms[form]["answer_top"][h], forms[form]["of"]] for h in heads] for form in forms},
            "moves": {form: [f"{forms[form]['moves'][h]:.1f}" for h in heads] for form in forms},
            "recall": {form: forms[form]["recall"] for form in forms}}

    def jobs_rule(self) -> tuple[str, dict]:
        """The jobs caption (JOBS_RULE): two heads, one head for both, or the first form no head of the layer does."""
        m = self.m
        f = m.jobs["forms"]
        c, t = f["colour"], f["texture"]
        values = {"n": m.jobs["n"], "a": style.shown(c["head"]), "b": style.shown(t["head"]),
                  "ca": c["answer_top"][c["head"]], "mc": c["of"], "tb": t["answer_top"][t["head"]], "mt": t["of"],
                  "pa": f"{c['moves'][c['head']]:.1f}", "pb": f"{t['moves'][t['head']]:.1f}",
                  "was": c["recall"], "felt": t["recall"], "layer": style.shown(m.layer)}
        if not (c["useful"] and t["useful"]):
            form = "colour" if not c["useful"] else "texture"
            return "jobs_idle", {**values, "what": self.s(f"what_{form}")}
        if c["head"] == t["head"]:
            values["tb"] = t["answer_top"][c["head"]]
            return "jobs_same", values
        return "jobs", values

    def beat_jobs(self):
        """Two jobs in the layer, each measured over many prompts: the table of build_jobs, the caption by jobs_rule."""
        m = self.m
        if m.jobs is None:
            self.say("jobs_checkpoint")
            self.wait(PAUSE + 1)
            return
        key, values = self.jobs_rule()
        f = m.jobs["forms"]
        key = self.caption_rule("jobs", key, "jobs when the colour's and the texture's heads (JOBS_RULE) differ and "
                                "neither is idle, jobs_same when one head is both, else jobs_idle (the first form "
                                "no head does)", heads={k: v["head"] for k, v in f.items()},
                                useful={k: v["useful"] for k, v in f.items()})
        self.say(key, **values)
        self.clear_stage()
        table = self.jobs_parts["table"]
        self.play(FadeIn(self.jobs_parts["groups"]), FadeIn(table.header), FadeIn(table.labels), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(c) for c in table.columns], lag_ratio=0.3), run_time=2 * STEP)
        self.wait(PAUSE + 1)

    # --- summary: on the question's rows ----------------------------------------------------------------------
    beat_lab = why_beats.multi_head   # why several heads: the lab's record (scenes/why_beats.py)

    def beat_summary(self):
        """The answer, on the question's rows: each head's target again, and the length of the ΔE it writes at the
        focus (model.analysis.head_delta_sizes); under them the length of out, all of them added by W_O's blocks
        with b_O (added entry by entry, as the split beat drew: lengths do not add up)."""
        m, rows = self.m, self.rows
        self.say("summary", focus=m.tokens[m.focus], layer=style.shown(m.layer), out=rows["out_text"])
        self.clear_stage()
        row = rows["prompt"]
        self.play(FadeIn(row.chips), FadeIn(row.ellipsis), FadeIn(rows["focus_frame"]),
                  FadeIn(VGroup(*rows["names"], *rows["cells"], rows["more"], *rows["frames"], *rows["targets"])),
                  run_time=STEP)
        self.play(LaggedStart(*[FadeIn(t, shift=LEFT * 0.1) for t in rows["lengths"]], lag_ratio=0.2),
                  run_time=2 * STEP)
        idle = [i for i, h in enumerate(rows["heads"]) if m.idle[h]]
        if idle:         # the idle heads, muted and tagged as in the focus beat
            self.play(*[FadeIn(rows["idles"][i]) for i in idle],
                      *[VGroup(rows["names"][i], rows["lengths"][i]).animate.set_color(MUTED) for i in idle],
                      run_time=STEP)
        self.play(FadeIn(rows["out"]), run_time=STEP)
        self.wait(PAUSE + 2)
