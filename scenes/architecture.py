"""The architecture: the whole pipeline with our model's shapes, GPT-3's beside them, the unembedding turning the
final vector into one logit per word, and the logit lens showing one token's prediction form block by block.

    manim render -ql scenes/architecture.py Architecture
    python render.py architecture --lang zh

The shapes come from the configs (the shipped model's and model.config.GPT3_175B); the unembedding's numbers from
the trace (ln_f's output at the focus, the logits) and the weights (W_E: the unembedding is tied to it); the lens from
model.analysis.lens (the stream after every block through the final LayerNorm and the unembedding).

A model deeper than DRAWN_LAYERS (a checkpoint of one's own: GPT-2 small has 12) is drawn with its middle layers
elided by rule (layers_drawn): the first layer, a row "⋮ n more layers" with the true count, the last layer; the
lens rows follow the pipeline's, and the manifest keeps every point.
"""

from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Circle, Create, Dot, FadeIn, FadeOut, Indicate,
                   LaggedStart, Line, MoveAlongPath, SurroundingRectangle, VGroup, config)

from model import GPT3_175B
from model.analysis.lens import logit_lens
from scenes import style
from scenes.attention_chapter import FocusScene, shown_matrix, shown_vector
from scenes.prompts import own_language
from scenes.components import (BarChart, BarScale, Label, MatrixVectorProduct, NumberText, Table,
                               RoundedBox, CompactTokenRow, TokenRow)
from scenes.style import LOGIT, MUTED, PROB, SHARED, TEXT
from scenes.words import Words

WORDS = Words.beside(__file__)     # architecture.toml: the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

# --- layout (scene units; the frame is 14.2 × 8, title-safe is ±6.4 × ±3.6) --------
STREAM_X = -4.72                       # the residual stream, a vertical line
BOX_LEFT, BOX_RIGHT, BOX_H = -4.32, 0.55, 0.42
BOX_GAP = 0.35            # at least this between a stage's name and its shape in its box
EMBED_Y, FIRST_BLOCK_Y, PITCH = 2.45, 1.85, 0.55
LAYER_LABEL_RIGHT = -4.95
TABLE_LABEL_RIGHT, OURS_RIGHT, GPT3_RIGHT = 3.05, 4.6, 6.2
TABLE_ROWS = 6                         # the shapes compared, on the first rows' baselines whatever the depth
LENS_WORD_RIGHT, LENS_BAR, LENS_PERCENT_RIGHT = 2.7, (2.9, 1.8), 6.2   # words clear of the boxes
HEADER_Y = 3.1
# the unembedding beat: W_Uᵀ = W_E times x̂, the words of its rows on the left, the largest logit on the right
UNEMBED_TOP, UNEMBED_COLS = 2.25, 5    # top of the matrix's cells; its columns shown (the last one of them real last)
UNEMBED_LEFT = -6.2                    # left edge of the row words' column
FORMULA_Y = 3.25
STEP, PAUSE = style.STEP, style.PAUSE

# The pipeline draws a box for every block while the caption's area leaves room for DRAWN_LAYERS layers; a deeper
# model shows its first layer, one row "⋮ n more layers" (the true count), and its last layer.
DRAWN_LAYERS = 3


def layers_drawn(n_layer: int) -> list[int | None]:
    """The layers the pipeline draws, top to bottom; None is the one row that stands for the elided middle."""
    if n_layer <= DRAWN_LAYERS:
        return list(range(n_layer))
    return [0, None, n_layer - 1]


def pipeline_rows(n_layer: int) -> list[dict]:
    """The pipeline's rows, top to bottom, each with its y and the logit-lens points it stands for (indices into
    model.analysis.lens.lens_points): the embeddings, then each drawn layer's attention and MLP, and for the elided
    middle one row standing for all of its points."""
    rows = [{"kind": "embedding", "layer": None, "y": EMBED_Y, "points": [0]}]
    k = 0
    for layer in layers_drawn(n_layer):
        if layer is None:
            hidden = list(range(1, n_layer - 1))
            rows.append({"kind": "gap", "layer": None, "layers": hidden, "y": FIRST_BLOCK_Y - k * PITCH,
                         "points": [1 + 2 * l + j for l in hidden for j in (0, 1)]})
            k += 1
            continue
        for j, part in enumerate(("attention", "mlp")):
            rows.append({"kind": part, "layer": layer, "y": FIRST_BLOCK_Y - k * PITCH, "points": [1 + 2 * layer + j]})
            k += 1
    return rows


class Architecture(FocusScene):
    name = "architecture"
    strings = S
    beat_titles = BEATS

    # --- the beats -------------------------------------------------------------------
    def beat_pipeline(self):
        c = self.gpt.config
        self.say("pipeline", n=c.n_layer, d=c.n_embd, hidden=c.mlp_ratio * c.n_embd)
        self.play(FadeIn(self.row), Create(self.focus_frame), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(b, shift=DOWN * 0.1) for b in self.boxes], lag_ratio=0.12),
                  FadeIn(self.layer_labels), run_time=2.5 * STEP)
        self.wait(PAUSE)
        self.say("heads_gloss", h=c.n_head)     # the attention boxes' "{h} heads", glossed where the lecture first says it
        self.wait(PAUSE)
        self.say("pipeline_out", vocab=f"{c.vocab_size:,}")
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
        self.say("stream_norm")      # what the LayerNorm before each block does, in a sentence (add_norm has more)
        self.wait(PAUSE)

    def beat_gpt3(self):
        g = GPT3_175B
        self.say("gpt3", layers=g.n_layer, d=f"{g.n_embd:,}", vocab=f"{g.vocab_size:,}")
        clear = [FadeOut(self.ln_f_gloss)] if self.gloss_in_table else []   # a shallow model's gloss meets the table
        self.play(FadeIn(self.table_headers), FadeIn(self.table_labels), FadeIn(self.ours_column), *clear,
                  run_time=STEP)
        self.play(LaggedStart(*[FadeIn(n, shift=LEFT * 0.2) for n in self.gpt3_column], lag_ratio=0.15),
                  run_time=2 * STEP)
        self.wait(PAUSE + 1)

    def beat_unembed(self):
        c, mv = self.gpt.config, self.unembed
        self.say("unembed", d=c.n_embd, vocab=f"{c.vocab_size:,}")
        self.play(FadeOut(VGroup(self.table_headers, self.table_labels, self.ours_column, self.gpt3_column,
                                 self.pipeline, self.row, self.focus_frame)), run_time=STEP)
        self.play(FadeIn(self.unembed_formula), FadeIn(mv.matrix), FadeIn(self.unembed_words),
                  FadeIn(mv.place_legend(*self.unembed_legend_at)), run_time=STEP)
        self.wait(PAUSE)
        self.say("unembed_rows")
        self.play(FadeIn(VGroup(mv.vector, mv.equals, mv.output)), run_time=STEP)
        mv.play(self)
        self.say("unembed_all", vocab=f"{c.vocab_size:,}")
        self.play(Create(self.top_frame), FadeIn(self.top_label), run_time=STEP)
        self.wait(PAUSE + 1)

    def beat_lens(self):
        self.say(self.lens_caption, answer=self.answer_word, where=self.lens_where)
        mv = self.unembed
        self.play(FadeOut(VGroup(self.unembed_formula, self.unembed_words, mv, mv.legend, self.top_frame,
                                 self.top_label)), run_time=STEP)
        self.play(FadeIn(self.pipeline), FadeIn(self.row), FadeIn(self.focus_frame), run_time=STEP)
        self.play(FadeIn(self.lens_headers), FadeIn(self.lens.bars.tracks), FadeIn(self.lens_gap), run_time=STEP)
        for word, grow, number in zip(self.lens.labels, self.lens.grow(), self.lens.numbers):
            self.play(FadeIn(word), grow, FadeIn(number), run_time=0.6 * STEP)
        self.play(Create(self.lens_frame), run_time=STEP)
        self.wait(PAUSE + 1)

    # --- building the pieces, from the model's numbers --------------------------------
    def prepare(self):
        gpt, c = self.gpt, self.gpt.config
        trace = self.read_prompt()
        words = gpt.tokenizer.words

        top = config.frame_height / 2 - style.safe_half_height()
        left = config.frame_width / 2 - style.safe_half_width()
        # the logit lens at the focus token, read first: the row keeps the answer's last place in the prompt in
        # view when it is there (the lens asks for it; a long prompt's row hides its earliest words)
        lens = logit_lens(gpt, trace, self.focus)
        answer = int(np.argmax(lens[-1]["probabilities"]))
        keep = [p for p in range(self.focus) if self.token_ids[p] == answer][-1:]
        self.row = CompactTokenRow(self.tokens, lang=self.lang, indices=False, max_width=5.9, keep=tuple(keep))
        self.row.to_edge(UP, buff=top + 0.06).to_edge(LEFT, buff=left + 0.06)   # room for the focus frame
        self.check_focus_shown(self.row)
        self.values["row"] = {"positions": self.row.positions, "kept": keep,
                              "rule": "the last tokens that fit, and the answer's last place before the focus, if any"}
        self.focus_frame = SurroundingRectangle(self.row.chip_for(self.focus),
                                                color=style.ACCENT, buff=0.03, corner_radius=0.06)

        # the pipeline: one box per stage, on the rows the lens reads (a deep model's middle layers elided)
        self.rows = pipeline_rows(c.n_layer)
        baselines = [r["y"] - 0.09 for r in self.rows]     # text on a row sits on this baseline, centred on the box
        last_y = self.rows[-1]["y"]
        final_ys = [last_y - PITCH, last_y - 2 * PITCH]
        shape = {"embedding": f"{c.vocab_size} \u00d7 {c.n_embd}", "attention": self.s("heads", h=c.n_head),
                 "mlp": f"{c.n_embd} \u2192 {c.n_inner} \u2192 {c.n_embd}"}
        # the boxes widen to the right by rule where a stage's name and shape would come closer than BOX_GAP (GPT-2's
        # "embedding  50257 × 768"); ours fit in BOX_RIGHT
        needed = max(Label(self.s(kind), font_size=style.SMALL).width + BOX_GAP
                     + Label(text, font_size=style.SMALL).width for kind, text in shape.items())
        self.box_right = max(BOX_RIGHT, BOX_LEFT + 0.3 + needed)
        self.boxes, self.block_boxes, self.layer_labels = VGroup(), VGroup(), VGroup()
        self.boxes.add(self.stage_box("embedding", shape["embedding"], EMBED_Y))
        for r in self.rows[1:]:
            if r["kind"] == "gap":      # the elided layers: no box, the true count where their boxes would be
                gap = VGroup(Label("\u22ee", font_size=style.LABEL, color=MUTED),
                             Label(self.s("more_layers", n=len(r["layers"])), font_size=style.SMALL, color=MUTED))
                gap.arrange(RIGHT, buff=0.2).move_to([(BOX_LEFT + self.box_right) / 2, r["y"], 0])
                gap[1].on_baseline(r["y"] - 0.09)
                gap.phrase = True
                self.boxes.add(gap)
                continue
            box = self.stage_box(r["kind"], shape[r["kind"]], r["y"])
            self.boxes.add(box)
            self.block_boxes.add(box)
            if r["kind"] == "attention":   # the layer's name, level with the middle of its two boxes
                label = Label(self.s("layer", n=style.shown(r["layer"])), font_size=style.SMALL, color=MUTED)
                label.move_to([0, r["y"] - PITCH / 2, 0])
                self.layer_labels.add(label.shift(RIGHT * (LAYER_LABEL_RIGHT - label.get_right()[0])))
        # the unembedding is W_E transposed (tied): its shape is the embedding row's, read the other way
        ln_f = self.stage_box("ln_f", "", final_ys[0])
        self.ln_f_gloss = Label(self.s("ln_f_gloss"), font_size=style.SMALL, color=MUTED).move_to([0, final_ys[0], 0])
        ln_f.add(self.ln_f_gloss.shift(RIGHT * (self.box_right + 0.15 - self.ln_f_gloss.get_left()[0])))  # beside the box
        self.boxes.add(ln_f, self.stage_box("unembedding", "", final_ys[1]))   # its shape: the unembed beat

        # the residual stream: down the left of the boxes; each block joins it at a ⊕
        self.stream = Line([STREAM_X, EMBED_Y, 0], [STREAM_X, final_ys[0], 0], stroke_color=style.EMBEDDING,
                           stroke_width=4)
        self.links = VGroup()
        for y in [r["y"] for r in self.rows[1:] if r["kind"] != "gap"]:
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
        self.pipeline = VGroup(self.boxes, self.layer_labels, self.stream, self.links, self.stream_label)

        # our shapes beside GPT-3's, from the two configs
        g = GPT3_175B
        rows = [("row_layers", c.n_layer, g.n_layer), ("row_d", c.n_embd, g.n_embd), ("row_heads", c.n_head, g.n_head),
                ("row_mlp", c.n_inner, g.n_inner), ("row_vocab", c.vocab_size, g.vocab_size),
                ("row_context", c.n_positions, g.n_positions)]
        table_ys = [EMBED_Y - 0.09] + [FIRST_BLOCK_Y - 0.09 - i * PITCH for i in range(TABLE_ROWS - 1)]
        ours = self.s("ours" if own_language(self.gpt) else "ours_checkpoint")
        self.table = Table([self.s(k) for k, _, _ in rows], [[f"{n:,}" for _, n, _ in rows],
                                                             [f"{n:,}" for _, _, n in rows]], table_ys,
                           label_right=TABLE_LABEL_RIGHT, label_colours=[MUTED] * len(rows),
                           column_rights=[OURS_RIGHT, GPT3_RIGHT], headers=[ours, self.s("gpt3_name")],
                           header_centre=HEADER_Y, header_colours=[TEXT, TEXT])
        self.table_headers, self.table_labels = self.table.header, self.table.labels
        self.ours_column, self.gpt3_column = self.table.columns
        # a model of one or two layers ends its pipeline level with the table's rows: the gloss beside the final
        # LayerNorm gives way to the table
        self.gloss_in_table = self.ln_f_gloss.get_bottom()[1] < self.table_labels.get_top()[1] and \
            self.ln_f_gloss.get_top()[1] > self.table_labels.get_bottom()[1]
        self.unembedding(trace, words)

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
        # one lens row per drawn row; the elided middle's row shows ⋮ (the manifest keeps every point)
        drawn = [(r["points"][0], b) for r, b in zip(self.rows, baselines) if r["kind"] != "gap"]
        shown_points = [i for i, _ in drawn]
        shown_ys = [b for _, b in drawn]
        self.lens = BarChart([p_answer[i] for i in shown_points], shown_ys, BarScale(*LENS_BAR), PROB, track=1.0,
                             labels=[style.token_label(words[tops[i]]) for i in shown_points],
                             label_right=LENS_WORD_RIGHT,
                             label_colours=[TEXT if tops[i] == answer else MUTED for i in shown_points],
                             numbers=style.percent, number_right=LENS_PERCENT_RIGHT, number_colour=PROB)
        self.lens_gap = VGroup()
        for r, b in zip(self.rows, baselines):
            if r["kind"] == "gap":
                for x in (LENS_WORD_RIGHT - 0.3, LENS_PERCENT_RIGHT - 0.3):
                    self.lens_gap.add(Label("\u22ee", font_size=style.LABEL, color=MUTED).move_to([x, r["y"], 0]))
        # the probability's header ends with the percentages (it names the answer: not the top word's probability);
        # the words' header right-aligned with the words, or further left where the other needs the room
        word_header = self.column_header(self.s("top_word"), 0, MUTED)
        p_header = self.column_header(self.s("p_answer", answer=self.answer_word), 0, PROB)
        p_header.shift(RIGHT * (LENS_PERCENT_RIGHT - p_header.get_right()[0]))
        word_header.shift(RIGHT * (min(LENS_WORD_RIGHT, p_header.get_left()[0] - 0.35) - word_header.get_right()[0]))
        self.lens_headers = VGroup(word_header, p_header)
        if settled in shown_points:
            k = shown_points.index(settled)
            framed = VGroup(self.lens.labels[k], self.lens.numbers[k], self.lens.bars.tracks[k])
        else:      # it settles inside the elided layers (the caption names where): the frame goes round their row
            framed = VGroup(self.lens_gap, self.lens.bars.tracks[0].copy().move_to(
                [self.lens.bars.tracks[0].get_center()[0], self.lens_gap.get_center()[1], 0]))
        self.lens_frame = SurroundingRectangle(framed, color=style.ACCENT, buff=0.08, corner_radius=0.06)

        self.values.update({
            "prompt": self.params["prompt"], "tokens": self.tokens, "token_ids": self.token_ids, "focus": self.focus,
            "focus_rule": self.chosen["focus_rule"],
            "shapes": {"ours": {k: getattr(c, k) for k in ("n_layer", "n_embd", "n_head", "n_inner", "vocab_size",
                                                           "n_positions")},
                       "gpt3": {k: getattr(g, k) for k in ("n_layer", "n_embd", "n_head", "n_inner", "vocab_size",
                                                           "n_positions")}},
            "layers_drawn": layers_drawn(c.n_layer),
            "layers_rule": f"every layer up to {DRAWN_LAYERS}; a deeper model: the first, one row for the rest of "
                           f"the middle with their count, the last",
            "lens": {"method": "the stream at the focus after each block, through ln_f (its own mean and variance) "
                               "and the unembedding W_E^T, softmax",
                     "answer_id": answer, "shown_points": shown_points,
                     "points": [{"part": r["part"], "layer": r["layer"], "top_id": t, "p_top": float(r["probabilities"][t]),
                                 "p_answer": p} for r, t, p in zip(lens, tops, p_answer)]},
        })

    def unembedding(self, trace: dict, words) -> None:
        """logits = W_U x̂ at the focus, W_U = W_Eᵀ (tied), drawn turned as W_E: one row per word, its word on the
        left; x̂ is ln_f's output (the trace's), the logits the trace's own. The largest logit framed on the right."""
        gpt, c, lang = self.gpt, self.gpt.config, self.lang
        x_hat = np.asarray(trace["ln_f"]["out"][self.focus], dtype=np.float64)
        logits = np.asarray(trace["logits"][self.focus], dtype=np.float64)
        mv = self.unembed = MatrixVectorProduct(
            gpt.W_E, x_hat, logits, lang=lang, name="W_U\u1d40 = W_E", rows=6, cols=UNEMBED_COLS, colour=LOGIT,
            vector_label=f"x\u0302: {SHARED('n_numbers', lang, n=c.n_embd)}",
            output_label=self.s("n_logits", n=c.vocab_size), legend_title=SHARED("weight_scale", lang))
        per_row = len(mv.matrix.cols_shown)
        self.unembed_words = VGroup()
        for slot, i in enumerate(mv.matrix.rows_shown):
            if i is not None:
                cell = mv.matrix.cells[slot * per_row]
                w = Label(style.token_label(words[i]), font_size=style.SMALL)
                self.unembed_words.add(w.shift(RIGHT * (cell.get_left()[0] - 0.2 - w.get_right()[0])
                                               + UP * (cell.get_center()[1] - w.get_center()[1])))
        left = VGroup(self.unembed_words, mv.bodies()).get_left()[0]
        shift = RIGHT * (UNEMBED_LEFT - left) + UP * (UNEMBED_TOP - mv.matrix.cells.get_top()[1])
        mv.shift(shift)
        self.unembed_words.shift(shift)
        mv.output.brackets.set_color(LOGIT)
        # the size labels: the logits' count heads their column (teal); x̂'s sits on the matrix's line, a space right
        # of W_E's shape where that runs long (the matrix is taller than the five entries of x̂ shown)
        out_label, x_label = mv.output.size_label, mv.vector.size_label
        out_label.shift(RIGHT * (mv.output.brackets.get_center()[0] - out_label.get_center()[0])
                        + UP * (mv.output.brackets.get_top()[1] + 0.15 - out_label.get_bottom()[1]))
        x_label.shift(RIGHT * (mv.vector.brackets.get_center()[0] - x_label.get_center()[0]))
        x_label.on_baseline(mv.matrix.shape_label.baseline())
        x_label.shift(RIGHT * max(0.0, mv.matrix.shape_label.get_right()[0] + 0.25 - x_label.get_left()[0]))
        # the legend at the top left, its bar placed by the wider title of the two languages (one layout in both)
        title = max(Label(SHARED("weight_scale", l), font_size=style.SMALL).width for l in style.LANGUAGES)
        self.unembed_legend_at = (UNEMBED_LEFT + title + 0.2, FORMULA_Y + 0.1)
        chip = TokenRow(self.tokens, lang=lang, indices=False, max_width=1e9).chips[self.focus].copy()
        formula = self.tex("z", "=", r"W_U^{\top}", r"\hat{x}", colours={"z": LOGIT})
        self.unembed_formula = self.formula_line(chip, formula, [0, FORMULA_Y, 0])
        self.unembed_formula.shift(RIGHT * (mv.output.brackets.get_right()[0] - self.unembed_formula.get_right()[0]))
        # the largest logit of the whole column: its word and value, level with the column's ⋮
        top = int(np.argmax(logits))
        name = Label(self.s("largest"), font_size=style.SMALL, color=MUTED)
        word = Label(style.token_label(words[top]), font_size=style.LABEL)
        value = NumberText(style.signed(logits[top], 1), style.LABEL, LOGIT, align="left")
        gap_slot = next((s for s, i in enumerate(mv.output.indices_shown) if i is None), len(mv.output.entries) - 1)
        y = mv.output.entries[gap_slot].get_center()[1]
        # right of the column, or as far right as the title-safe edge lets the word and its frame sit (a long word)
        room = style.safe_half_width() - 0.12 - 0.1 - max(word.width, value.width)
        x = min(mv.output.brackets.get_right()[0] + 0.35, room)
        name.shift(RIGHT * (x - name.get_left()[0])).on_baseline(y + 0.55)
        word.shift(RIGHT * (x + 0.1 - word.get_left()[0])).on_baseline(y - 0.05)
        value.place(x + 0.1, y - 0.6)
        self.top_label = VGroup(name, word, value)
        self.top_frame = SurroundingRectangle(VGroup(word, value), color=LOGIT, buff=0.12, corner_radius=0.06)
        self.values["unembedding"] = {
            "position": self.focus, "tied": "W_U = W_E^T (wte.weight, transposed)",
            "x_hat": shown_vector(mv.vector), "W_U_T": shown_matrix(mv),
            "row_words": [words[i] for i in mv.matrix.rows_shown if i is not None],
            "logits": {"indices": [i for i in mv.output.indices_shown if i is not None],
                       "values": [float(logits[i]) for i in mv.output.indices_shown if i is not None],
                       "size": int(logits.size)},
            "largest": {"id": top, "word": words[top], "logit": float(logits[top])},
        }

    def stage_box(self, kind: str, shape: str, y: float) -> VGroup:
        """A stage of the pipeline: its name on the left, its shape (muted) on the right, in a rounded box."""
        box = RoundedBox(corner_radius=0.08, width=self.box_right - BOX_LEFT, height=BOX_H, stroke_color=MUTED,
                         stroke_width=1.5, fill_color=style.BACKGROUND, fill_opacity=1)
        box.move_to([(BOX_LEFT + self.box_right) / 2, y, 0])
        name = Label(self.s(kind), font_size=style.SMALL).move_to([0, y, 0])
        name.shift(RIGHT * (BOX_LEFT + 0.15 - name.get_left()[0]))
        group = VGroup(box, name)
        if shape:
            size = Label(shape, font_size=style.SMALL, color=MUTED).move_to([0, y, 0])
            size.shift(RIGHT * (self.box_right - 0.15 - size.get_right()[0]))
            group.add(size)
        return group

    def column_header(self, text: str, x: float, colour) -> Label:
        """A header above a column, centred on x (the table's are the Table's own)."""
        return Label(text, font_size=style.SMALL, color=colour).move_to([x, HEADER_Y, 0])
