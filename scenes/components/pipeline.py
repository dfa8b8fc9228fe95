"""Where we are: the model's pipeline, drawn small, lit at the part a scene is about, with that scene's numbers.

A scene's closing beat draws its one idea in the place of the whole model where it lives: the stages of the
architecture scene (embedding + position, each layer's attention and MLP on the residual stream, the final
LayerNorm, the unembedding and softmax), one box per stage at the same width as there (a little taller), every
box muted but the lit ones (white frames), and beside them a short column of the scene's numbers (lines given by
the scene, each read from its manifest), joined to the lit boxes by thin lines.

    where = PipelineMap(gpt.config.n_layer, lit=["attention:1"], lines=[("layer 2, head 3", MUTED), ...], lang=lang)
    where.play_in(scene)

Parts: "embedding", "attention:<layer>", "mlp:<layer>" (zero-based; "mlp:*" / "attention:*": every layer's),
"ln_f", "unembedding". A model deeper than MAX_LAYER_ROWS layers is drawn with its first and last layer and every
lit one, the layers between as a "⋮ n more layers" row. The geometry depends on the model's depth and the lit
parts only, never on the language: English and Chinese share one layout.
"""

from __future__ import annotations

from manim import Circle, Create, FadeIn, Line, VGroup

from .. import style
from ..style import ACCENT, MUTED, SMALL, TEXT
from ..words import Words
from .boxes import RoundedBox
from .text import Label, LayoutError

WORDS = Words.beside(__file__)     # pipeline.toml: the captions, their spoken forms, the beat titles

STRINGS = WORDS["strings"]

# --- geometry (scene units; title-safe is ±6.4 × ±3.6, the caption below y = -2.3), the architecture scene's ---
STREAM_X = -4.72
BOX_LEFT, BOX_RIGHT, BOX_H = -4.32, 0.55, 0.52   # a name at the type floor, Han or Latin, clears the outline
NAME_DROP = 0.13                   # a box's name: its baseline below the box's middle
LAYER_LABEL_RIGHT = -4.95
PITCH = 0.62                       # row to row, at most (a deep model's rows come closer)
TOP, BOTTOM = 3.3, -2.0            # the first and last rows' centres may reach these
CENTRE_Y = 0.72                    # a short map is centred here, between the top and the caption
CALLOUT_LEFT, CALLOUT_PITCH = 0.85, 0.5
BASELINE_DROP = 0.1                # a line's baseline below its middle (so every line is spaced alike)
LINE_H = 0.4                       # a line of the numbers, about (SMALL's height with its descender)
MAX_LAYER_ROWS = 3                 # the architecture scene draws every layer up to this depth


def _parts(part: str, n_layer: int) -> set[str]:
    kind, _, layer = part.partition(":")
    if layer == "*":
        return {f"{kind}:{l}" for l in range(n_layer)}
    return {part}


class PipelineMap(VGroup):
    """The pipeline with the parts in `lit` framed, and `lines` ((text, colour), top to bottom) beside them.

    Groups: `base` (boxes, names, layer labels, the stream and its joins), `frames` (the lit boxes' white frames),
    `callout` (the lines) and `links` (a bar beside the lines, and a line from each lit box to it). `lit_parts` lists the lit parts, expanded."""

    def __init__(self, n_layer: int, *, lit: list[str], lines: list[tuple[str, object]], lang: str):
        super().__init__()
        self.n_layer, self.lang = n_layer, lang
        self.lit_parts = sorted(set().union(*[_parts(p, n_layer) for p in lit]))
        known = {"embedding", "ln_f", "unembedding"} | {f"{k}:{l}" for k in ("attention", "mlp") for l in range(n_layer)}
        unknown = set(self.lit_parts) - known
        if unknown or not (self.lit_parts or lines):     # none lit: a measured map may light nothing
            raise ValueError(f"PipelineMap: unknown or no lit parts {sorted(unknown) or lit}")

        rows = self.rows()
        pitch = min(PITCH, (TOP - BOTTOM) / max(len(rows) - 1, 1))
        top = min(TOP, CENTRE_Y + pitch * (len(rows) - 1) / 2)
        ys = [top - i * pitch for i in range(len(rows))]
        box_h = min(BOX_H, pitch - 0.08)      # a deep model's closer rows keep a gap between their boxes

        self.base, self.frames, self.links, self.callout = VGroup(), VGroup(), VGroup(), VGroup()
        self.boxes: dict[str, VGroup] = {}
        stream = Line([STREAM_X, ys[0], 0], [STREAM_X, ys[-2], 0], stroke_color=style.EMBEDDING, stroke_width=3)
        self.base.add(stream)
        for (kind, part, text, layer_label), y in zip(rows, ys):
            if kind == "gap":
                lit_inside = any(p.split(":")[0] in ("attention", "mlp") and int(p.split(":")[1]) in part
                                 for p in self.lit_parts)
                gap = Label(text, font_size=SMALL, color=TEXT if lit_inside else MUTED).on_baseline(y - NAME_DROP)
                self.base.add(gap.shift([(BOX_LEFT + 0.15) - gap.get_left()[0], 0, 0]))
                continue
            lit_here = part in self.lit_parts
            box = RoundedBox(corner_radius=0.08, width=BOX_RIGHT - BOX_LEFT, height=box_h, stroke_color=MUTED,
                             stroke_width=1.5, fill_color=style.BACKGROUND, fill_opacity=1)
            box.move_to([(BOX_LEFT + BOX_RIGHT) / 2, y, 0])
            name = Label(text, font_size=SMALL, color=TEXT if lit_here else MUTED).on_baseline(y - NAME_DROP)
            name.shift([(BOX_LEFT + 0.15) - name.get_left()[0], 0, 0])
            self.boxes[part] = VGroup(box, name)
            self.base.add(self.join(part, y), box, name)
            if layer_label is not None:
                label = Label(layer_label, font_size=SMALL, color=MUTED).on_baseline(y - pitch / 2 - NAME_DROP)
                self.base.add(label.shift([LAYER_LABEL_RIGHT - label.get_right()[0], 0, 0]))
            if lit_here:
                self.frames.add(RoundedBox(corner_radius=0.08, width=BOX_RIGHT - BOX_LEFT, height=box_h,
                                           stroke_color=ACCENT, stroke_width=4).move_to(box))

        # the numbers: left-aligned beside the map, centred on the lit boxes (inside the map's height)
        lit_ys = [self.boxes[p][0].get_center()[1] for p in self.lit_parts if p in self.boxes]
        # the lines' middles may reach from the first box's top to the last box's bottom; a short map (one layer)
        # with many lines (12 heads) would crowd them closer than LINE_H: their span then grows to LINE_H a line,
        # about the map's middle and kept inside the rows' area (TOP, BOTTOM)
        span_top, span_bottom = ys[0] + (box_h - LINE_H) / 2, ys[-1] - (box_h - LINE_H) / 2
        short = LINE_H * (len(lines) - 1) - (span_top - span_bottom)
        if short > 0:
            span_top, span_bottom = span_top + short / 2, span_bottom - short / 2
            area_top, area_bottom = TOP + (BOX_H - LINE_H) / 2, BOTTOM - (BOX_H - LINE_H) / 2
            shift = max(area_bottom - span_bottom, 0.0) + min(area_top - span_top, 0.0)
            span_top, span_bottom = span_top + shift, span_bottom + shift
        pitch_lines = min(CALLOUT_PITCH, (span_top - span_bottom) / max(len(lines) - 1, 1))
        half = pitch_lines * (len(lines) - 1) / 2
        low, high = span_bottom + half, span_top - half
        middle = min(max(sum(lit_ys) / len(lit_ys) if lit_ys else (ys[0] + ys[-1]) / 2, low), high)
        for i, (text, colour) in enumerate(lines):
            line = Label(text, font_size=SMALL, color=colour).on_baseline(middle + half - i * pitch_lines - BASELINE_DROP)
            self.callout.add(line.shift([CALLOUT_LEFT - line.get_left()[0], 0, 0]))
            if line.get_right()[0] > style.safe_half_width():
                raise LayoutError(f"PipelineMap: the line {text!r} runs past the title-safe area ({lang})")
        # a bar beside the lines, and from each lit box a line to it (level with the box where the bar reaches); the
        # bar spans the lines' slots, not their ink, so it stands alike in every language
        bar_x = CALLOUT_LEFT - 0.15
        bar_top, bar_bottom = middle + half + LINE_H / 2, middle - half - LINE_H / 2
        self.links.add(Line([bar_x, bar_top, 0], [bar_x, bar_bottom, 0], stroke_color=ACCENT, stroke_width=2))
        for y in lit_ys:
            self.links.add(Line([BOX_RIGHT + 0.06, y, 0], [bar_x, min(max(y, bar_bottom), bar_top), 0],
                                stroke_color=ACCENT, stroke_width=2))
        self.add(self.base, self.frames, self.links, self.callout)

    @staticmethod
    def join(part: str, y: float) -> VGroup:
        """Where a row meets the residual stream: a block adds to it at a ⊕; the embedding writes it and the final
        LayerNorm reads it; the unembedding reads the final LayerNorm (no line to the stream)."""
        if part == "unembedding":
            return VGroup()
        if part in ("embedding", "ln_f"):
            return VGroup(Line([STREAM_X, y, 0], [BOX_LEFT, y, 0], stroke_color=style.EMBEDDING, stroke_width=2))
        r = 0.09
        return VGroup(Circle(radius=r, stroke_color=style.EMBEDDING, stroke_width=2).move_to([STREAM_X, y, 0]),
                      Line([STREAM_X - 0.06, y, 0], [STREAM_X + 0.06, y, 0], stroke_color=style.EMBEDDING,
                           stroke_width=2),
                      Line([STREAM_X, y - 0.06, 0], [STREAM_X, y + 0.06, 0], stroke_color=style.EMBEDDING,
                           stroke_width=2),
                      Line([STREAM_X + r, y, 0], [BOX_LEFT, y, 0], stroke_color=style.EMBEDDING, stroke_width=2))

    def rows(self) -> list[tuple[str, object, str, str | None]]:
        """(kind, part, text, the layer's label if the row starts a layer) top to bottom; a gap's part is the set of
        layers it stands for."""
        s = lambda key, **v: STRINGS(key, self.lang, **v)
        n = self.n_layer
        if n <= MAX_LAYER_ROWS:
            shown = list(range(n))
        else:
            lit_layers = {int(p.split(":")[1]) for p in self.lit_parts if ":" in p}
            shown = sorted({0, n - 1} | (lit_layers if len(lit_layers) < n else set()))
        rows = [("box", "embedding", s("embedding"), None)]
        previous = -1
        for l in shown:
            if l > previous + 1:
                hidden = set(range(previous + 1, l))
                rows.append(("gap", hidden, s("more_layers", n=len(hidden)), None))
            rows.append(("box", f"attention:{l}", s("attention"), s("layer", n=style.shown(l))))
            rows.append(("box", f"mlp:{l}", s("mlp"), None))
            previous = l
        rows.append(("box", "ln_f", s("ln_f"), None))
        rows.append(("box", "unembedding", s("unembedding"), None))
        return rows

    def record(self) -> dict:
        """For the manifest: the parts lit (the lines' numbers are the scene's to record; their words change with
        the language, the manifest's values do not)."""
        return {"lit": self.lit_parts}

    def play_in(self, scene, step: float = style.STEP) -> None:
        """The pipeline, then its lit parts, then the numbers beside them."""
        scene.play(FadeIn(self.base), run_time=step)
        if len(self.frames):
            scene.play(Create(self.frames), run_time=step)
        scene.play(Create(self.links), FadeIn(self.callout), run_time=step)
        scene.wait(style.PAUSE)
