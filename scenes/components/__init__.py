"""The shared mobjects of every scene, so a token, a vector, a matrix or a bar looks the same everywhere
(the visual language: docs/visual-language.md). `from scenes.components import X` works for all of them.

Numbers are always given at full precision and rounded only by the label formatters in scenes/style.py.
`scenes/gallery.py` draws one of each from the model's numbers (and tests/test_components.py checks its frames).

By theme:

- text (text.py): `Label` (one line of text on a known baseline), `NumberText` (a number that can change
  every frame, tabular digits, anchored at one end), `Caption` / `caption()` (the narration at the bottom),
  `math_tex()` (a formula in the maths size, parts coloured), `light()`, `LayoutError`.
- tokens (tokens.py): `TokenChip` (one word in its box, in its token's colour: style.token_colours, the same word the same colour), `TokenRow` (the prompt, with
  position indices and an optional "?" slot), `CompactTokenRow` (the same at the legibility floor, so a whole
  story fits), `PromptText` (the prompt as it reads as text, a Label per token: punctuation against its word,
  Chinese run together), `TokenColumn` (chips stacked down the left, like the key rows of an attention grid).
- vectors and matrices (vectors.py): which one to use for a matrix or a vector:
    - `VectorColumn`: a vector as numbers in brackets, its real first entries, ⋮, its real last entry, its size.
    - `MatrixGrid`: a matrix small enough to READ: real corner entries as numbers in cells coloured on the
      matrix's signed scale, ⋯ and ⋮, its true shape. Used inside `MatrixVectorProduct`.
    - `MatrixVectorProduct`: out = M·x (+ b), the one animation of every matrix product (row by row).
    - `Heatmap`: a whole large matrix with EVERY entry a cell and no numbers (W_E 64 × 123, the position table);
      cells of one colour are one shape, so thousands stay cheap. Pair it with a `ColourLegend`.
    - `HeatMatrix`: a small whole matrix as cells without numbers, rows at a pitch that lines up with word
      labels (Q and K: one row per token), with its shape below.
    - `MagnitudeStrip`: one vector (an activation) as a row of cells by |entry| (no sign, grey -> white), for
      comparing many vectors side by side on one `magnitude_scale()`.
- attention (attention.py): `AttentionGrid` (keys down, queries across, in every scene), `MaskCell`.
- charts (charts.py): `LabelColumn`, `NumberColumn`, `BarColumn`, `ProbabilityBars` (rows of words, numbers
  and bars on baselines, `grow()` from 0%); `ColourScale` (one fixed numbers -> colours mapping: "signed" blue/red for weights
  and scores, "attention" black -> white for attention weights, "magnitude" grey -> white for the size of an
  activation) and `ColourLegend` (its bar, with the scale's real ends).
- bar charts and tables (barchart.py): `BarChart` (header, labels, signed bars from one zero line, numbers, kept
  inside the title-safe area, `grow()` from zero), `BarScale` (its zero line and unit: `fit` a range into a width,
  `widest` bar to a width), `ColumnBars` (vertical bars on one base line, standing, hanging or signed, `grow()`
  from the base), `StackedBar` (a whole as one bar, its parts end to end by their shares, `grow()` from the left),
  `Table` (label | numbers rows under a header row).
- MLP (mlp.py): `GeluPlot` (the GELU curve, green, with a token's neurons as points on it), `NeuronStrip`
  (a token's neurons as cells: dim grey inactive, green active).
- causal tracing (tracing.py): `TraceGrid` (restored shares, a column per token and a row per (layer,
  component), black -> gold on ColourScale("share"), shares above a floor written in their cells; given a
  max_width, its chips go on two rows by turns when one row would be wider).
- superposition (superposition.py): `AngleHistogram` (counts of angles in 1-degree bins, one fixed height scale, bars
  to Transform into per step), `LogChart` (log-log axes in decades, curves, dots, a vertical marker),
  `VectorFan` (a 2 × n matrix's columns as arrows in the plane, on the unit circle).
- sums (sums.py): `RoundedSum`, `rounded_columns()`, `RoundedPercents`: the one rule for numbers drawn as a sum (a
  column sum E + ΔE = E′, a column of percentages adding to 100%): each label its value's plain rounding at the
  precision shown, the sign `relation` ≈ instead of = where the labels do not add up (approx); `record()` is its
  manifest entry (values["sums"], LectureScene.record_sum).
- boxes (boxes.py): `RoundedBox` (a RoundedRectangle whose corners are rounded once per shape).
- layout (layout.py): `bounds()` (a bounding box in one pass), `inside_safe_area()`, `rule()`, `row_positions()`, `place_by_body()`.
- why (why.py): `WhyChart` (a why beat's picture: the lab's curves with and without a part, solid and dashed, the
  seeds' band, and a table of the final figures, each seed spread as ±), `verdict` (the one rule for a why beat's
  conclusion, over both languages: a clear difference or none), `read` (model.lab.why); scenes/why_beats.py plays it.
- where we are (pipeline.py): `PipelineMap` (the model's pipeline, small, lit at the part a scene is about, with
  that scene's numbers beside it: the closing beat of a scene).
"""

from .attention import AttentionGrid
from .boxes import RoundedBox
from .barchart import BarChart, BarScale, ColumnBars, StackedBar, Table
from .charts import (BarColumn, ColourLegend, ColourScale, LabelColumn, MaskCell, NumberColumn,
                     ProbabilityBars)
from .mlp import GeluPlot, NeuronStrip
from .tracing import TraceGrid
from .superposition import AngleHistogram, LogChart, VectorFan
from .pipeline import PipelineMap
from .layout import bounds, inside_safe_area, keep_inside_safe_area, keep_right_of, place_by_body, row_positions, rule
from .norm_order import NormOrder
from .text import Caption, Label, LayoutError, NumberText, caption, join_tokens, light, math_tex, plain_shape, wrap_words
from .tokens import CompactTokenRow, PromptText, TokenChip, TokenColumn, TokenRow
from .sums import CountSum, RoundedPercents, RoundedSum, NotASum, column_texts, rounded_columns
from .vectors import (Heatmap, HeatMatrix, MagnitudeStrip, MatrixGrid, MatrixVectorProduct, VectorColumn, sum_decimals,
                      magnitude_scale, shown_indices)

__all__ = [
    "AngleHistogram", "AttentionGrid", "BarChart", "BarColumn", "BarScale", "ColumnBars", "StackedBar", "Table", "LogChart", "VectorFan", "GeluPlot", "NeuronStrip", "Caption", "ColourLegend", "ColourScale", "CompactTokenRow", "HeatMatrix",
    "Heatmap", "NormOrder", "join_tokens", "wrap_words", "Label", "LabelColumn", "LayoutError", "MagnitudeStrip", "MaskCell", "MatrixGrid",
    "MatrixVectorProduct", "NumberColumn", "NumberText", "PipelineMap", "ProbabilityBars", "PromptText", "RoundedBox", "TokenChip", "TokenColumn", "TokenRow", "TraceGrid",
    "VectorColumn", "sum_decimals", "CountSum", "RoundedPercents", "RoundedSum", "NotASum", "column_texts", "rounded_columns", "bounds", "caption", "inside_safe_area", "keep_inside_safe_area", "keep_right_of", "light", "magnitude_scale", "math_tex", "place_by_body",
    "plain_shape", "row_positions", "rule", "shown_indices",
]
