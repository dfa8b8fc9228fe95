"""The architecture: the whole pipeline with our model's shapes, GPT-3's beside them, and the logit lens
showing one token's prediction form block by block.

    manim render -ql scenes/architecture.py Architecture
    python render.py architecture --lang zh

The shapes come from the configs (the shipped model's and model.config.GPT3_175B); the lens from
model.analysis.lens (the stream after every block through the final LayerNorm and the unembedding).
"""

from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Circle, Create, Dot, FadeIn, FadeOut, GrowFromEdge, Indicate,
                   LaggedStart, Line, MoveAlongPath, RoundedRectangle, SurroundingRectangle, VGroup, config)

from model import GPT3_175B
from model.analysis.lens import logit_lens
from scenes import style
from scenes.attention_chapter import FocusScene
from scenes.components import BarColumn, Label, LabelColumn, NumberColumn, CompactTokenRow
from scenes.style import MUTED, PROB, SHARED, TEXT, Strings

S = SHARED | Strings({
    "title": {"en": "The architecture", "zh": "模型的结构"},
    "subtitle": {"en": "From words to a prediction, block by block", "zh": "从词到预测，一层接一层"},
    "model_note": {"en": "Every shape here is our own small GPT's, from its config;\n"
                         "GPT-3's shapes come from its published config.",
                   "zh": "这里的形状都来自本项目小型 GPT 的配置；\nGPT-3 的形状来自它公开的配置。"},
    "pipeline": {"en": "Words become vectors, {n} layers of attention and MLP work on\n"
                       "them, and softmax turns the final scores into {vocab} probabilities.",
                 "zh": "词变成向量，经过 {n} 层注意力和 MLP，\n最后由 softmax 把分数变成 {vocab} 个词各自的概率。"},
    "stream": {"en": "One token's {d} numbers flow down the residual stream; each\n"
                     "block reads them, rescaled by a LayerNorm, and adds its output.",
               "zh": "一个词元的 {d} 维向量沿残差流向下流动：每个模块先读取它\n"
                     "（经 LayerNorm 缩放到均值 0、方差 1），再把输出加回去。"},
    "gpt3": {"en": "GPT-3 has the same pipeline, only larger:\n{layers} layers, vectors of {d} numbers, {vocab} tokens.",
             "zh": "GPT-3 的流程完全相同，只是更大：\n{layers} 层，{d} 维向量，{vocab} 个词元。"},
    "lens_forms": {"en": "A logit lens unembeds the stream after each block, as if last:\n"
                         "\"{answer}\" has the top logit (score) from {where} on.",
                   "zh": "logit 透镜把每个模块之后的残差流都当作最后一层来反嵌入：\n"
                         "从{where}起，\u201c{answer}\u201d的 logit（分数）一直排第一。"},
    "lens_embedding": {"en": "A logit lens unembeds the stream after each block, as if last:\n"
                             "\"{answer}\" has the top logit (score) from the embedding on.",
                       "zh": "logit 透镜把每个模块之后的残差流都当作最后一层来反嵌入：\n"
                             "从嵌入起，\u201c{answer}\u201d的 logit（分数）一直排第一。"},
    "embedding": {"en": "embedding", "zh": "嵌入"},
    "attention": {"en": "attention", "zh": "注意力"},
    "mlp": {"en": "MLP", "zh": "MLP"},
    "ln_f": {"en": "final LayerNorm", "zh": "最终 LayerNorm"},
    "ln_f_gloss": {"en": "rescales each vector", "zh": "把每个向量重新缩放"},   # what a LayerNorm does, beside its box
    "unembedding": {"en": "unembedding, softmax", "zh": "反嵌入，softmax"},
    "layer": {"en": "layer {n}", "zh": "第 {n} 层"},
    "heads": {"en": "{h} heads", "zh": "{h} 个头"},
    "stream_label": {"en": "stream\nd = {d}", "zh": "残差流\nd = {d}"},   # one Label a line, beside the last rows
    "where_attn": {"en": "layer {n}'s attention", "zh": "第 {n} 层的注意力"},
    "where_mlp": {"en": "layer {n}'s MLP", "zh": "第 {n} 层的 MLP"},
    "ours": {"en": "our model", "zh": "我们的模型"},
    "gpt3_name": {"en": "GPT-3", "zh": "GPT-3"},
    "row_layers": {"en": "layers", "zh": "层数"},
    "row_d": {"en": "vector size", "zh": "向量维数"},
    "row_heads": {"en": "heads", "zh": "每层的头"},
    "row_mlp": {"en": "MLP hidden", "zh": "MLP 隐藏层"},
    "row_vocab": {"en": "vocabulary", "zh": "词表"},
    "row_context": {"en": "context", "zh": "上下文"},
    "top_word": {"en": "top word", "zh": "排第一的词"},
    "p_answer": {"en": "P(\"{answer}\")", "zh": "P(\u201c{answer}\u201d)"},
})

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | Strings({
    "pipeline":  {"en": "The pipeline", "zh": "整条流水线"},
    "stream":    {"en": "The residual stream", "zh": "残差流"},
    "gpt3":      {"en": "The same pipeline in GPT-3", "zh": "GPT-3 的同一条流水线"},
    "lens":      {"en": "A logit lens", "zh": "logit 透镜：逐层读出"},
})

# --- layout (scene units; the frame is 14.2 × 8, title-safe is ±6.4 × ±3.6) --------
STREAM_X = -4.72                       # the residual stream, a vertical line
BOX_LEFT, BOX_RIGHT, BOX_H = -4.32, 0.55, 0.42
EMBED_Y, FIRST_BLOCK_Y, PITCH = 2.45, 1.85, 0.55
LAYER_LABEL_RIGHT = -4.95
TABLE_LABEL_RIGHT, OURS_RIGHT, GPT3_RIGHT = 3.05, 4.6, 6.2
LENS_WORD_RIGHT, LENS_BAR, LENS_PERCENT_RIGHT = 2.7, (2.9, 1.8), 6.2   # words clear of the boxes
HEADER_Y = 3.1
STEP, PAUSE = style.STEP, style.PAUSE


class Architecture(FocusScene):
    name = "architecture"
    strings = S
    beat_titles = BEATS

    # --- the beats -------------------------------------------------------------------
    def title_note(self) -> str:
        return self.s("model_note")

    def beat_pipeline(self):
        c = self.gpt.config
        self.say("pipeline", n=c.n_layer, vocab=c.vocab_size)
        self.play(FadeIn(self.row), Create(self.focus_frame), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(b, shift=DOWN * 0.1) for b in self.boxes], lag_ratio=0.12),
                  FadeIn(self.layer_labels), run_time=2.5 * STEP)
        self.wait(PAUSE)

    def beat_stream(self):
        self.say("stream", d=self.gpt.config.n_embd)
        self.play(Create(self.stream), FadeIn(self.links), FadeIn(self.stream_label), run_time=STEP)
        dot = Dot(self.stream.get_start(), color=style.ACCENT, radius=0.09)
        self.play(FadeIn(dot), run_time=0.4)
        self.play(MoveAlongPath(dot, self.stream), *[Indicate(box, color=style.ACCENT, scale_factor=1.03)
                                                     for box in self.block_boxes],
                  run_time=3 * STEP)
        self.play(FadeOut(dot), run_time=0.4)
        self.wait(PAUSE)

    def beat_gpt3(self):
        g = GPT3_175B
        self.say("gpt3", layers=g.n_layer, d=f"{g.n_embd:,}", vocab=f"{g.vocab_size:,}")
        self.play(FadeIn(self.table_headers), FadeIn(self.table_labels), FadeIn(self.ours_column), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(n, shift=LEFT * 0.2) for n in self.gpt3_column], lag_ratio=0.15),
                  run_time=2 * STEP)
        self.wait(PAUSE + 1)

    def beat_lens(self):
        self.say(self.lens_caption, answer=self.answer_word, where=self.lens_where)
        self.play(FadeOut(VGroup(self.table_headers, self.table_labels, self.ours_column, self.gpt3_column)),
                  run_time=STEP)
        self.play(FadeIn(self.lens_headers), FadeIn(self.lens_bars.tracks), run_time=STEP)
        for word, bar, number in zip(self.lens_words, self.lens_bars.bars, self.lens_numbers):
            self.play(FadeIn(word), GrowFromEdge(bar, LEFT), FadeIn(number), run_time=0.6 * STEP)
        self.play(Create(self.lens_frame), run_time=STEP)
        self.wait(PAUSE + 1)

    # --- building the pieces, from the model's numbers --------------------------------
    def prepare(self):
        gpt, c = self.gpt, self.gpt.config
        trace = self.read_prompt()
        words = gpt.tokenizer.words

        top = config.frame_height / 2 - style.safe_half_height()
        left = config.frame_width / 2 - style.safe_half_width()
        self.row = CompactTokenRow(self.tokens, lang=self.lang, indices=False, max_width=5.9)
        self.row.to_edge(UP, buff=top + 0.06).to_edge(LEFT, buff=left + 0.06)   # room for the focus frame
        self.check_focus_shown(self.row)
        self.focus_frame = SurroundingRectangle(self.row.chips[self.focus - self.row.first_shown],
                                                color=style.ACCENT, buff=0.03, corner_radius=0.06)

        # the pipeline: one box per stage, on the rows the lens reads
        self.row_ys = [EMBED_Y] + [FIRST_BLOCK_Y - i * PITCH for i in range(2 * c.n_layer)]
        baselines = [y - 0.09 for y in self.row_ys]     # text on a row sits on this baseline, centred on the box
        final_ys = [self.row_ys[-1] - PITCH, self.row_ys[-1] - 2 * PITCH]
        shape = {"embedding": f"{c.vocab_size} \u00d7 {c.n_embd}", "attention": self.s("heads", h=c.n_head),
                 "mlp": f"{c.n_embd} \u2192 {c.n_inner} \u2192 {c.n_embd}"}
        self.boxes, self.block_boxes = VGroup(), VGroup()
        self.boxes.add(self.stage_box("embedding", shape["embedding"], EMBED_Y))
        for l in range(c.n_layer):
            for k, part in enumerate(("attention", "mlp")):
                box = self.stage_box(part, shape[part], self.row_ys[1 + 2 * l + k])
                self.boxes.add(box)
                self.block_boxes.add(box)
        # the unembedding is W_E transposed (tied): its shape is the embedding row's, read the other way
        ln_f = self.stage_box("ln_f", "", final_ys[0])
        gloss = Label(self.s("ln_f_gloss"), font_size=style.SMALL, color=MUTED).move_to([0, final_ys[0], 0])
        ln_f.add(gloss.shift(RIGHT * (BOX_RIGHT + 0.15 - gloss.get_left()[0])))   # beside the box: nothing else there
        self.boxes.add(ln_f, self.stage_box("unembedding", "", final_ys[1]))
        self.layer_labels = VGroup(*[
            Label(self.s("layer", n=style.shown(l)), font_size=style.SMALL, color=MUTED).move_to(
                [0, (self.row_ys[1 + 2 * l] + self.row_ys[2 + 2 * l]) / 2, 0]) for l in range(c.n_layer)])
        for label in self.layer_labels:
            label.shift(RIGHT * (LAYER_LABEL_RIGHT - label.get_right()[0]))

        # the residual stream: down the left of the boxes; each block joins it at a ⊕
        self.stream = Line([STREAM_X, EMBED_Y, 0], [STREAM_X, final_ys[0], 0], stroke_color=style.EMBEDDING,
                           stroke_width=4)
        self.links = VGroup()
        for y in self.row_ys[1:]:
            join = Circle(radius=0.09, stroke_color=style.EMBEDDING, stroke_width=2).move_to([STREAM_X, y, 0])
            plus = VGroup(Line([STREAM_X - 0.06, y, 0], [STREAM_X + 0.06, y, 0]),
                          Line([STREAM_X, y - 0.06, 0], [STREAM_X, y + 0.06, 0])).set_stroke(style.EMBEDDING, 2)
            link = Line([STREAM_X + 0.09, y, 0], [BOX_LEFT, y, 0], stroke_color=style.EMBEDDING, stroke_width=2)
            self.links.add(VGroup(join, plus, link))
        for y in (EMBED_Y, final_ys[0]):
            self.links.add(Line([STREAM_X, y, 0], [BOX_LEFT, y, 0], stroke_color=style.EMBEDDING, stroke_width=2))
        self.stream_label = VGroup()
        for line, y in zip(self.s("stream_label", d=c.n_embd).split("\n"), final_ys):
            label = Label(line, font_size=style.SMALL, color=style.EMBEDDING).move_to([0, y, 0])
            self.stream_label.add(label.shift(RIGHT * (LAYER_LABEL_RIGHT - label.get_right()[0])))

        # our shapes beside GPT-3's, from the two configs
        g = GPT3_175B
        rows = [("row_layers", c.n_layer, g.n_layer), ("row_d", c.n_embd, g.n_embd), ("row_heads", c.n_head, g.n_head),
                ("row_mlp", c.n_inner, g.n_inner), ("row_vocab", c.vocab_size, g.vocab_size),
                ("row_context", c.n_positions, g.n_positions)]
        table_ys = baselines[:len(rows)]
        self.table_labels = LabelColumn([self.s(k) for k, _, _ in rows], table_ys, TABLE_LABEL_RIGHT,
                                        colours=[MUTED] * len(rows))
        self.ours_column = NumberColumn([f"{ours:,}" for _, ours, _ in rows], table_ys, OURS_RIGHT)
        self.gpt3_column = NumberColumn([f"{theirs:,}" for _, _, theirs in rows], table_ys, GPT3_RIGHT)
        self.table_headers = VGroup(self.column_header(self.s("ours"), OURS_RIGHT, TEXT),
                                    self.column_header(self.s("gpt3_name"), GPT3_RIGHT, TEXT))

        # the logit lens at the focus token
        lens = logit_lens(gpt, trace, self.focus)
        final = lens[-1]["probabilities"]
        answer = int(np.argmax(final))
        tops = [int(np.argmax(r["probabilities"])) for r in lens]
        p_answer = [float(r["probabilities"][answer]) for r in lens]
        settled = next(i for i in range(len(tops)) if all(t == answer for t in tops[i:]))
        self.answer_word = style.token_label(words[answer])
        self.lens_caption = self.caption_rule(
            "lens", "lens_embedding" if settled == 0 else "lens_forms",
            "lens_embedding if the final answer is the top word at every point from the embedding on, else "
            "lens_forms naming the first point from which it stays the top word",
            top_ids=tops, answer_id=answer, settled_index=settled)
        point = lens[settled]
        self.lens_where = "" if settled == 0 else self.s(f"where_{point['part']}", n=style.shown(point["layer"]))
        self.lens_words = LabelColumn([style.token_label(words[t]) for t in tops], baselines, LENS_WORD_RIGHT,
                                      colours=[TEXT if t == answer else MUTED for t in tops])
        self.lens_bars = BarColumn(p_answer, baselines, LENS_BAR[0], LENS_BAR[1], PROB, track=1.0)
        self.lens_numbers = NumberColumn([style.percent(p) for p in p_answer], baselines, LENS_PERCENT_RIGHT,
                                         color=PROB)
        # the words' header right-aligned with the words, the probability's just after the bars start
        word_header = self.column_header(self.s("top_word"), 0, MUTED)
        p_header = self.column_header(self.s("p_answer", answer=self.answer_word), 0, PROB)
        self.lens_headers = VGroup(word_header.shift(RIGHT * (LENS_WORD_RIGHT - word_header.get_right()[0])),
                                   p_header.shift(RIGHT * (LENS_BAR[0] + 0.1 - p_header.get_left()[0])))
        self.lens_frame = SurroundingRectangle(VGroup(self.lens_words[settled], self.lens_numbers[settled],
                                                      self.lens_bars.tracks[settled]),
                                               color=style.ACCENT, buff=0.08, corner_radius=0.06)

        self.values.update({
            "prompt": self.params["prompt"], "tokens": self.tokens, "token_ids": self.token_ids, "focus": self.focus,
            "focus_rule": self.chosen["focus_rule"],
            "shapes": {"ours": {k: getattr(c, k) for k in ("n_layer", "n_embd", "n_head", "n_inner", "vocab_size",
                                                           "n_positions")},
                       "gpt3": {k: getattr(g, k) for k in ("n_layer", "n_embd", "n_head", "n_inner", "vocab_size",
                                                           "n_positions")}},
            "lens": {"method": "the stream at the focus after each block, through ln_f (its own mean and variance) "
                               "and the unembedding W_E^T, softmax",
                     "answer_id": answer,
                     "points": [{"part": r["part"], "layer": r["layer"], "top_id": t, "p_top": float(r["probabilities"][t]),
                                 "p_answer": p} for r, t, p in zip(lens, tops, p_answer)]},
        })

    def stage_box(self, kind: str, shape: str, y: float) -> VGroup:
        """A stage of the pipeline: its name on the left, its shape (muted) on the right, in a rounded box."""
        box = RoundedRectangle(corner_radius=0.08, width=BOX_RIGHT - BOX_LEFT, height=BOX_H, stroke_color=MUTED,
                               stroke_width=1.5, fill_color=style.BACKGROUND, fill_opacity=1)
        box.move_to([(BOX_LEFT + BOX_RIGHT) / 2, y, 0])
        name = Label(self.s(kind), font_size=style.SMALL).move_to([0, y, 0])
        name.shift(RIGHT * (BOX_LEFT + 0.15 - name.get_left()[0]))
        group = VGroup(box, name)
        if shape:
            size = Label(shape, font_size=style.SMALL, color=MUTED).move_to([0, y, 0])
            size.shift(RIGHT * (BOX_RIGHT - 0.15 - size.get_right()[0]))
            group.add(size)
        return group

    def column_header(self, text: str, x: float, colour) -> Label:
        """A header above a column: centred on x, or right-aligned with a number column at its right edge."""
        label = Label(text, font_size=style.SMALL, color=colour)
        return label.move_to([x - label.width / 2 if x in (OURS_RIGHT, GPT3_RIGHT) else x, HEADER_Y, 0])
