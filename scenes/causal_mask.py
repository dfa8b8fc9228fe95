"""Softmax per query, and the causal mask: future keys get −∞, each query's line becomes weights that sum
to 1, masked cells become exactly 0; and the grid's size grows as context².

    manim render -ql scenes/causal_mask.py CausalMask
    python render.py causal_mask --lang zh --layer 0 --head 3

Every number comes from the model's trace (scaled, masked, weights) for the head chosen by
scenes.prompts.lookback_head, and from the configs (our context; GPT-3's, labelled as GPT-3's); the values
shown are recorded at full precision in self.values (the manifest).
"""

from __future__ import annotations

import numpy as np
from manim import (DL, DOWN, LEFT, RIGHT, UP, UR, AnimationGroup, Create, FadeIn, FadeOut, LaggedStart,
                   Line, Rectangle, ReplacementTransform, TransformFromCopy, UpdateFromAlphaFunc, VGroup)

from model import GPT3_175B
from scenes import style
from scenes.attention_chapter import STRINGS as CHAPTER_STRINGS
from scenes.attention_chapter import (GRID_HEIGHT, GRID_LEGEND_TOP, LEGEND_W, LEGEND_X, TOP, AttentionChapterScene, line_numbers,
                                      place_grid, place_legend)
from scenes.components import AttentionGrid, ColourLegend, ColourScale, FootedPercents, Label, NumberText
from scenes.prompts import own_language
from scenes.style import MUTED, QUERY, Strings

S = CHAPTER_STRINGS | Strings({
    "title": {"en": "The causal mask and softmax", "zh": "因果遮罩与 softmax"},
    "subtitle": {"en": "Softmax per query: how scores become attention weights",
                 "zh": "逐个查询做 softmax：分数如何变成注意力权重"},
    "scaled": {"en": "The scaled scores of layer {layer}, head {head}, from the last scene.\n"
                     "Each column is one query's line: how well every key matches it.",
               "zh": "上一节的缩放分数：第 {layer} 层第 {head} 个头。\n每一列属于一个查询：每个键与它有多匹配。"},
    "mask": {"en": "A token may not look ahead: every key after the query\n"
                   "gets −∞ before the softmax. This is the causal mask.",
             "zh": "一个词不能看后面的词：查询之后的每个键，\n在 softmax 之前都被设为 −∞。这就是因果遮罩。"},
    "softmax": {"en": "Softmax down one query's line: e to each score, over their sum.\n"
                      "Every weight is positive, and the line adds up to 100%.",
                "zh": "沿一个查询的那一列做 softmax：取 e 的幂，再除以总和。\n每个权重都是正数，整列加起来是 100%。"},
    "softmax_masked": {"en": "Softmax down one query's line: e to each score, over their sum.\n"
                             "Masked keys get 0; the rest are positive and add up to 100%.",
                       "zh": "沿一个查询的那一列做 softmax：取 e 的幂，再除以总和。\n被遮罩的键得到 0，其余权重都是正数，加起来是 100%。"},
    "softmax_nonneg": {"en": "Softmax down one query's line: e to each score, over their sum.\n"
                             "No weight is negative (the tiniest round to 0); the line adds up to 100%.",
                       "zh": "沿一个查询的那一列做 softmax：取 e 的幂，再除以总和。\n没有负的权重（极小的舍入为 0），整列加起来是 100%。"},
    "zeros_none": {"en": "Query \"{word}\" (position {i}) is the only token: it sees only itself,\n"
                         "so no key is masked and all 100% stays on it.",
                   "zh": "查询“{word}”（位置 {i}）是唯一的词：它只能看到自己，\n没有键被遮罩，100% 的权重都在它自己身上。"},
    "all_queries": {"en": "Every query's line is normalised the same way. The masked cells,\n"
                          "still dark red, become exactly 0, because e to the −∞ is 0.",
                    "zh": "每个查询的那一列都这样归一化。被遮罩的格子仍是深红色，\n恰好变成 0，因为 e 的 −∞ 次幂是 0。"},
    "zeros": {"en": "Query \"{word}\" (position {i}) sees keys 0 to {i} only:\n"
                    "its {n} future keys get exactly 0, the rest add up to 100%.",
              "zh": "查询“{word}”（位置 {i}）只能看到位置 0 到 {i} 的键：\n后面 {n} 个键的权重恰好为 0，其余加起来是 100%。"},
    "growth": {"en": "One score per pair of tokens: n tokens make n × n cells.\n"
                     "Twice the context, four times the scores.",
               "zh": "每一对词一个分数：n 个词就有 n × n 个格子。\n上下文加倍，分数变成四倍。"},
    "context": {"en": "{Model}'s context is {n} tokens:\n{n2} scores per head, in each of its {L} layers.",
                "zh": "{Model}的上下文是 {n} 个词：\n每层每个头 {n2} 个分数，共 {L} 层。"},
    "gpt3": {"en": "GPT-3's published shape: a context of {n} tokens,\n"
                   "{n2} scores per head, {H} heads in each of {L} layers.",
             "zh": "GPT-3 公开的结构：上下文 {n} 个词，\n每个头 {n2} 个分数，{L} 层，每层 {H} 个头。"},
    "in_all": {"en": "All heads and layers, by the configs: a full context makes\n"
                     "{gpt3} scores in GPT-3 and {ours} in {model}.",
               "zh": "按配置算出，所有层、所有头加起来，一个完整的上下文：\n"
                     "GPT-3 有 {gpt3} 个分数，{model}有 {ours} 个。"},
    "summary": {"en": "Masked and normalised, one line per query: these weights say\n"
                      "how much of each earlier token flows into that token's vector.",
                "zh": "遮罩并归一化后，每个查询一列：这些权重表示\n每个之前的词有多少信息流入这个词的向量。"},
    "cost": {"en": "At twice GPT-3's context, {n} tokens: {all2} scores,\n"
                   "four times as many. The square is why long contexts are costly.",
             "zh": "把 GPT-3 的上下文加倍到 {n} 个词，分数变成四倍，\n"
                   "共 {all2} 个：这个平方让长上下文代价高昂。"},
    "masked_zero": {"en": "exactly 0", "zh": "恰好为 0"},   # beside the masked swatch, under the weights' legend
    "where_weight": {"en": "weight {w}", "zh": "权重 {w}"},
    "scaled_scale": {"en": "q·k ÷ {root}", "zh": "q·k ÷ {root}"},
    "weight_scale_attn": {"en": "attention", "zh": "注意力权重"},
    "prompt_n": {"en": "our prompt: n = {n}", "zh": "本提示词：n = {n}"},
    "n_line": {"en": "n = {n} tokens", "zh": "n = {n} 个词"},
    "n2_line": {"en": "n × n = {n2} scores", "zh": "n × n = {n2} 个分数"},
    "ours_col": {"en": "{model}", "zh": "{model}"},
    "gpt3_col": {"en": "GPT-3", "zh": "GPT-3"},
    "row_n": {"en": "context n", "zh": "上下文 n"},
    "row_n2": {"en": "n × n per head", "zh": "每个头 n × n"},
    "row_heads": {"en": "heads × layers", "zh": "头数 × 层数"},
    "row_all": {"en": "all scores", "zh": "分数总数"},
    "ours_speck": {"en": "ours: {n} × {n}", "zh": "我们的：{n} × {n}"},
    "speck": {"en": "{n} × {n}", "zh": "{n} × {n}"},     # a checkpoint's: the words would reach the figures
    "gpt3_area": {"en": "GPT-3: {n} × {n}", "zh": "GPT-3：{n} × {n}"},
})

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | Strings({
    "scaled":       {"en": "The scaled scores", "zh": "缩放后的分数"},
    "mask":         {"en": "The causal mask", "zh": "因果遮罩"},
    "softmax":      {"en": "Softmax of one query", "zh": "一个查询的 softmax"},
    "all_queries":  {"en": "Every query normalised", "zh": "每个查询都归一化"},
    "zeros":        {"en": "The keys one query sees", "zh": "一个查询能看到的键"},
    "growth":       {"en": "How the grid grows", "zh": "网格如何增长"},
})

STEP, PAUSE = style.STEP, style.PAUSE
LEGEND_GAP = 0.35      # between the two legends
SUM_CLEARANCE = 0.2    # the Σ of a line keeps this far from the weight legend
TEXT_X = -1.0          # left edge of the growth figures
GROWTH_FIRST_LINE, GROWTH_PITCH = 2.1, 0.62   # their baselines
AREA = 4.6             # the side of the n × n area, top left: our context fills it, then GPT-3's
FINEST_CELL = 0.04     # an n × n area is drawn with its cells' lines, and its tokens as cells, while a cell is at
                       # least this wide (2.4 px at 480p); finer, only its outline and one bar for the tokens
TABLE_TOP, TABLE_PITCH = 0.55, 0.55            # ours beside GPT-3: the header's baseline, then the rows'
TABLE_LABEL_RIGHT, OURS_RIGHT, GPT3_RIGHT = 1.35, 3.1, 6.3
TABLE_GAP = 0.3         # the least room between a column and the one before it
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

    # --- the beats ------------------------------------------------------------------------------
    def beat_scaled(self):
        h = self.h
        self.say("scaled", layer=style.shown(h.layer), head=style.shown(h.head))
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
        self.play(FadeIn(grid.axes), LaggedStart(*[FadeIn(grid.line(q)) for q in range(h.T)], lag_ratio=0.06),
                  FadeIn(self.scaled_legend), run_time=2 * STEP)
        self.play(Create(self.frame), FadeIn(self.header), FadeIn(self.numbers), run_time=STEP)
        self.wait(PAUSE + 1)
        self.values["scaled"] = {"grid": h.scaled.tolist(), "scale": self.scaled_scale.limit,
                                 "focus_line": h.scaled[h.focus].tolist()}

    def beat_mask(self):
        h, grid = self.h, self.grid
        self.say("mask")
        future = [(q, k) for q in range(h.T) for k in range(h.T) if np.isneginf(h.masked[q, k])]
        anims = grid.recolour(h.masked)
        self.marks = grid.mask_marks(avoid_queries=[h.focus])   # its line is recoloured while they show
        masked_line = [style.MASK_TEXT if np.isneginf(v) else style.signed(v, 1) for v in h.masked[h.focus]]
        new_numbers = line_numbers(grid, masked_line)
        self.play(*anims, run_time=2 * STEP)
        self.play(FadeIn(self.marks), FadeIn(self.scaled_legend.mask_entry), FadeOut(self.numbers),
                  FadeIn(new_numbers), run_time=STEP)
        self.numbers = new_numbers
        self.wait(PAUSE + 1.5)
        self.values["masked"] = {"grid": [[None if np.isneginf(v) else float(v) for v in row] for row in h.masked],
                                 "masked_cells": [list(c) for c in future],
                                 "focus_line": [None if np.isneginf(v) else float(v) for v in h.masked[h.focus]]}

    def beat_softmax(self):
        h, grid = self.h, self.grid
        line, masked = h.weights[h.focus], np.isneginf(h.masked[h.focus])
        open_positive = bool(np.all(line[~masked] > 0))
        key = self.caption_rule("softmax", ("softmax_masked" if masked.any() else "softmax") if open_positive else
                                "softmax_nonneg", "the focus line's weights: every unmasked weight > 0 (softmax if "
                                "no key is masked, else softmax_masked), else softmax_nonneg",
                                weights=line.tolist(), masked=masked.tolist())
        self.say(key)
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
        footed = FootedPercents(h.weights[h.focus], total, keep=(h.source,))   # adds up as shown; the quoted weight
        weights = line_numbers(grid, footed.labels)
        self.sum_mark = self.line_sum(weights, footed.total_label, avoid=self.weight_legend)
        self.record_sum("softmax", "\u03a3 = 100%", footed)
        self.play(*grid.recolour(self.drawn_weights(), self.weight_scale, queries=[h.focus]),
                  *[TransformFromCopy(a, b) for a, b in zip(self.numbers, weights)], FadeOut(self.numbers),
                  FadeIn(self.weight_legend), run_time=2 * STEP)
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
        footed = FootedPercents(h.weights[q], total)
        numbers = line_numbers(grid, footed.labels)
        header = self.line_header(grid, numbers, q)
        sum_mark = self.line_sum(numbers, footed.total_label, avoid=self.weight_legend)
        self.record_sum("zeros", "\u03a3 = 100%", footed)
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
        h, grid = self.h, self.grid
        self.say("growth")
        n_ctx, L, H = h.context, self.gpt.config.n_layer, h.n_head
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
        self.wait(PAUSE)
        # the whole context of our model: the grid grows a token at a time, its count with it
        model = self.model_words("short")
        self.say("context", Model=model[:1].upper() + model[1:], n=f"{n_ctx:,}", n2=f"{n_ctx * n_ctx:,}", L=L)
        sizes = list(range(h.T, n_ctx + 1))

        def grow(stage, alpha):
            n = sizes[min(int(alpha * len(sizes)), len(sizes) - 1)]
            area.submobjects = [self.outline(n, cell, origin), self.cell_row(n, cell, origin)]
            self.set_line(n_text, S("n_line", self.lang, n=f"{n:,}"), 0)
            self.set_line(n2_text, S("n2_line", self.lang, n2=f"{n * n:,}"), 1)

        self.play(UpdateFromAlphaFunc(self.stage_of(area, n_text, n2_text), grow), run_time=2 * STEP)
        prompt_note = at_line(Label(S("prompt_n", self.lang, n=h.T), font_size=style.SMALL, color=MUTED), 2)
        pointer = Line([TEXT_X - 0.15, prompt_note.baseline() + 0.12, 0], small.get_right() + RIGHT * 0.1,
                       stroke_width=2, color=MUTED)
        self.play(FadeIn(prompt_note), Create(pointer), run_time=STEP)
        self.wait(PAUSE + 1)
        # GPT-3, from its published config: the area now stands for its context, ours shrinks into its corner
        g = GPT3_175B
        self.say("gpt3", n=f"{g.n_positions:,}", n2=f"{g.n_positions ** 2:,}", H=g.n_head, L=g.n_layer)
        outline, tokens = area.submobjects
        border = Rectangle(width=AREA, height=AREA, stroke_color=style.TEXT, stroke_width=2)
        border.move_to(origin + np.array([AREA / 2, -AREA / 2, 0]))
        frame = border.copy().set_stroke(MUTED, 2)
        ours = self.stage_of(small, outline, border)
        self.play(FadeOut(VGroup(tokens, prompt_note, pointer)), FadeIn(border), FadeIn(frame), run_time=STEP)
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

        self.play(UpdateFromAlphaFunc(self.stage_of(finer, ours, n_text, n2_text), zoom_out), run_time=3 * STEP)
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
        # every head of every layer: ours beside GPT-3's, each from its config
        ours_all, gpt3_all = n_ctx * n_ctx * H * L, g.n_positions ** 2 * g.n_head * g.n_layer
        self.say("in_all", gpt3=f"{gpt3_all:,}", ours=f"{ours_all:,}", model=self.model_words("short"))
        table = self.scale_table([(S("row_n", self.lang), f"{n_ctx:,}", f"{g.n_positions:,}"),
                                  (S("row_n2", self.lang), f"{n_ctx ** 2:,}", f"{g.n_positions ** 2:,}"),
                                  (S("row_heads", self.lang), f"{H} \u00d7 {L}", f"{g.n_head} \u00d7 {g.n_layer}"),
                                  (S("row_all", self.lang), f"{ours_all:,}", f"{gpt3_all:,}")])
        self.play(FadeIn(table), run_time=STEP)
        self.wait(PAUSE + 1.5)
        self.table = table
        # the source's point: n² scores per head per layer, so a context twice as long costs four times the scores
        n2, all2 = 2 * g.n_positions, (2 * g.n_positions) ** 2 * g.n_head * g.n_layer
        self.say("cost", n=f"{n2:,}", all2=f"{all2:,}")
        self.wait(PAUSE + 1)
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

    def scale_table(self, rows: list[tuple[str, str, str]]) -> VGroup:
        """Our figures beside GPT-3's, each under its name: a row label, ours, GPT-3's (right-aligned)."""
        table = VGroup()
        ours = Label(S("ours_col", self.lang, model=self.model_words("short")), font_size=style.SMALL, color=MUTED)
        theirs = Label(S("gpt3_col", self.lang), font_size=style.SMALL, color=MUTED)
        # the columns where they stand for our model's figures; moved right by rule where a checkpoint's figures are
        # wider (GPT-2 small's 150,994,944), each a gap clear of the column before it
        widest = [max(Label(row[i], font_size=style.SMALL).width for row in rows) for i in (1, 2)]
        ours_right = max(OURS_RIGHT, TABLE_LABEL_RIGHT + TABLE_GAP + widest[0])
        gpt3_right = max(GPT3_RIGHT, ours_right + TABLE_GAP + max(widest[1], theirs.width))
        for head, right in ((ours, ours_right), (theirs, gpt3_right)):
            table.add(head.shift(RIGHT * (right - head.get_right()[0])).on_baseline(TABLE_TOP))
        for r, (name, a, b) in enumerate(rows):
            y = TABLE_TOP - (r + 1) * TABLE_PITCH
            label = Label(name, font_size=style.SMALL, color=MUTED)
            table.add(label.shift(RIGHT * (TABLE_LABEL_RIGHT - label.get_right()[0])).on_baseline(y),
                      NumberText(a, style.SMALL, style.TEXT).place(ours_right, y),
                      NumberText(b, style.SMALL, style.TEXT).place(gpt3_right, y))
        # wider than the title-safe area: the whole table moves left, as far as the n × n area allows, and past
        # that it is drawn smaller to fit between the two
        over = table.get_right()[0] - style.safe_half_width()
        if over > 0:
            table.shift(LEFT * over)
        room = style.safe_half_width() - (area_left() + AREA + TABLE_GAP)
        if table.width > room:
            table.scale(room / table.width, about_point=table.get_right())
        return table

    def beat_summary(self):
        """Where the weights are made: the pipeline lit at this head's layer's attention, with the focus's weight on
        the key the head looks back to."""
        self.say("summary")
        h = self.h
        weight = float(h.weights[h.focus][h.source])
        self.show_head_where((self.s("where_weight", w=style.percent(weight)), style.TEXT), weight=weight)

    # --- building the pieces ----------------------------------------------------------------------
    def line_sum(self, numbers, total: str, avoid=None) -> VGroup:
        """A bracket down the right of a line's numbers and its sum, level with the last row; where the sum would
        come within SUM_CLEARANCE of `avoid` (the weight legend, top right, beside a short line's last row), it
        sits under the bracket's foot instead, its right end at the bracket."""
        x = numbers.get_right()[0] + 0.15
        top, bottom = numbers.get_top()[1] + 0.05, numbers.get_bottom()[1] - 0.05
        bracket = VGroup(Line([x, top, 0], [x, bottom, 0]), Line([x - 0.08, top, 0], [x, top, 0]),
                         Line([x - 0.08, bottom, 0], [x, bottom, 0])).set_stroke(MUTED, 2)
        text = Label("\u03a3 = " + total, font_size=style.SMALL, color=QUERY)
        text.next_to(bracket, RIGHT, buff=0.15)
        text.on_baseline(numbers[-1].baseline())
        if avoid is not None and boxes_meet(text, avoid, SUM_CLEARANCE):
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
