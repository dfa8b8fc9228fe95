"""The component gallery: one instance of every shared component (scenes/components), drawn from the shipped
model's numbers like every scene, on four pages. Not part of the lecture: it is where a change to a component is
seen (and frame-tested, tests/test_components.py) before it reaches the scenes.

    manim render -ql -s scenes/gallery.py GalleryText       # text and tokens
    manim render -ql -s scenes/gallery.py GalleryCharts     # rows, bars, probability bars, colour legends
    manim render -ql -s scenes/gallery.py GalleryMatrices   # vectors, matrices, the matrix × vector product
    manim render -ql -s scenes/gallery.py GalleryAttention  # the attention grid, the mask, magnitude strips

Every number is the model's: the chapter's default prompt (scenes.prompts.lookback_prompt), its trace, and
layer 1 head 0's weights; the page draws, it computes nothing.
"""

from __future__ import annotations

import numpy as np
from manim import RIGHT, Scene, VGroup

from model import probabilities
from scenes import style
from scenes.components import (AttentionGrid, BarChart, BarScale, ColourLegend, ColourScale, CompactTokenRow,
                               Heatmap, HeatMatrix, Label, MagnitudeStrip, MaskCell, MatrixVectorProduct,
                               NumberText, ProbabilityBars, TokenChip, TokenColumn, TokenRow,
                               caption, magnitude_scale, math_tex, row_positions, rule)
from scenes.lecture import load_model
from scenes.prompts import lookback_prompt

LAYER, HEAD = 1, 0
TOP = 3.15           # the page's name, top left (its baseline)


class GalleryPage(Scene):
    """One page of the gallery: its name at the top left, then build()'s components."""

    page = ""

    def construct(self):
        self.gpt = load_model()
        self.prompt = lookback_prompt()["prompt"]
        self.trace = self.gpt.trace(self.prompt)
        name = Label(self.page, font_size=style.HEADER, color=style.MUTED)
        name.shift(RIGHT * (-style.safe_half_width() - name.get_left()[0])).on_baseline(TOP)
        self.add(name, self.build())

    def build(self) -> VGroup:
        raise NotImplementedError


class GalleryText(GalleryPage):
    page = "text and tokens"

    def build(self) -> VGroup:
        tokens = list(self.trace["tokens"])
        label = Label("Label: one line on a baseline").move_to([-3.2, 2.5, 0])
        number = NumberText(style.signed(float(self.trace["logits"][-1].max()))).place(2.5, 2.4)
        formula = math_tex("q", "=", r"W_Q^{\top}", r"\hat{x}", "+", "b_Q",
                           colours={"q": style.QUERY, r"W_Q^{\top}": style.QUERY}).move_to([4.7, 2.55, 0])
        row = TokenRow(tokens[:5], next_slot=True).move_to([-2.3, 1.2, 0])
        chip = TokenChip(tokens[5], style.token_colour(tokens, 5)).move_to([3.4, 1.3, 0])
        compact = CompactTokenRow(tokens).move_to([0, -0.1, 0])
        column = TokenColumn(tokens[:3], [0, 1, 2], [-1.0, -1.4, -1.8], right=-4.0)
        note = caption("Caption: the narration, centred line by line,\nalways at the bottom of the safe area.", "en")
        return VGroup(label, number, formula, row, chip, compact, column, note)


class GalleryCharts(GalleryPage):
    page = "charts"

    def build(self) -> VGroup:
        logits = np.asarray(self.trace["logits"][-1], dtype=np.float64)
        top = np.argsort(-logits, kind="stable")[:4]
        words = [style.token_label(self.gpt.tokenizer.words[i]) for i in top]
        p = probabilities(logits)
        ys = row_positions(5, 2.3, 0.5)
        z = logits[top]
        logit_chart = BarChart(z, ys[:4], BarScale.widest(-4.0, 1.6, z), style.LOGIT, labels=words, label_right=-4.3,
                               numbers=style.signed, number_right=-0.6, number_colour=style.LOGIT)
        probs = ProbabilityBars(words, p[top], float(1 - p[top].sum()), ys, lang="en", bar_left=0.6, bar_width=3.2,
                                number_right=6.2)
        line = rule(4.9, 6.2, ys[-1] - 0.2)
        hw = self.gpt.head(LAYER, HEAD)
        signed = ColourLegend(ColourScale.signed_for(hw.W_Q), "ColourLegend: W_Q", width=2.4)
        signed.shift([-5.6 - signed.bar.get_left()[0], -1.2 - signed.bar.get_center()[1], 0])
        weight = ColourLegend(ColourScale("attention"), "attention weight", width=2.4, masked=True)
        weight.shift([-1.2 - weight.bar.get_left()[0], -1.2 - weight.bar.get_center()[1], 0])
        mask = MaskCell(0.6).move_to([4.5, -1.3, 0])
        return VGroup(logit_chart, probs, line, signed, weight, mask)


class GalleryMatrices(GalleryPage):
    page = "vectors and matrices"

    def build(self) -> VGroup:
        layer = self.trace["layers"][LAYER]
        hw = self.gpt.head(LAYER, HEAD)
        f = len(self.trace["tokens"]) - 1
        product = MatrixVectorProduct(hw.W_Q.T, layer["ln_1"]["out"][f], layer["attn"]["q"][HEAD][f], lang="en",
                                      name="W_Q\u1d40", bias=hw.b_Q, rows=4, cols=4, colour=style.QUERY,
                                      bias_label="b_Q", output_label="q").finish()
        product.shift([-0.3 - product.bodies().get_center()[0], 2.6 - product.matrix.cells.get_top()[1], 0])
        table = Heatmap(self.gpt.W_E.T, ColourScale.signed_for(self.gpt.W_E), width=4.4, height=0.9)
        table.move_to([-3.6, -2.6, 0])
        Q = layer["attn"]["q"][HEAD]
        heat = HeatMatrix(Q[:6], ColourScale.signed_for(Q), name="Q", cell_w=0.14, cell_h=0.2)
        heat.move_to([2.6, -2.5, 0])
        return VGroup(product, table, heat)


class GalleryAttention(GalleryPage):
    page = "attention"

    def build(self) -> VGroup:
        attn = self.trace["layers"][LAYER]["attn"]
        tokens = list(self.trace["tokens"])[:6]
        grid = AttentionGrid(attn["masked"][HEAD][:6, :6], ColourScale.signed_for(attn["scaled"][HEAD][:6, :6]),
                             tokens=tokens, lang="en", height=2.6)
        grid.shift([-2.3 - grid.squares.get_left()[0], 2.35 - grid.squares.get_top()[1], 0])
        marks = grid.mask_marks()
        weights = AttentionGrid(attn["weights"][HEAD][:6, :6], ColourScale("attention"), tokens=tokens, lang="en",
                                height=2.6)
        weights.shift([3.6 - weights.squares.get_left()[0], 2.35 - weights.squares.get_top()[1], 0])
        weights.remove(weights.axes)
        out = attn["head_out"][:, -1]
        scale = magnitude_scale(out)
        strips = VGroup(*[MagnitudeStrip(out[h], scale, width=3.0, height=0.3).move_to([-3.2, -0.8 - 0.5 * h, 0])
                          for h in range(len(out))])
        legend = ColourLegend(scale, "MagnitudeStrip: |entry|", width=2.4)
        legend.shift([1.2 - legend.bar.get_left()[0], -1.2 - legend.bar.get_center()[1], 0])
        return VGroup(grid, marks, weights, strips, legend)
