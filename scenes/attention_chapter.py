"""The attention chapter's shared pieces: the head chosen by computation and its numbers, the attention grid's
place on screen, and the chapter's title card. Used by the queries/keys and causal-mask scenes (a scene never
imports another scene: what two scenes share lives here).
"""

from __future__ import annotations

import numpy as np
from manim import LEFT, RIGHT, UP

from scenes import style
from scenes.components import AttentionGrid, ColourLegend, Label, MatrixVectorProduct, NumberColumn, TokenChip, TokenRow
from scenes.lecture import LectureScene
from scenes.params import ParamError
from scenes.prompts import chapter_focus, lookback_head
from scenes.style import ATTENTION, QUERY, SHARED
from scenes.words import Words

WORDS = Words.beside(__file__)     # attention_chapter.toml: the captions, their spoken forms, the beat titles

STRINGS = SHARED | ATTENTION | WORDS["strings"]

TOP = 3.55                       # top of the title-safe area, less a hair

KINDS = WORDS["kinds"]           # what the chapter's adjective names: a colour or a texture
# One story in two languages: the default lecture's head (scenes.prompts.story_heads) is chosen by one rule on both
# languages' prompts. Each video names its own language's head only; where the two languages' picks differ, the
# manifest records both (values["languages_differ"]) with the course page's note (NOTES), never the other video.
NOTES = WORDS["notes"]
STORY_RULE = ("the causal head rule (scenes.prompts.HEAD_RULE) on the English and the Chinese default prompts: "
              "recorded when it picks a different (layer, head) in each")
# The layer of that head, where a scene follows a layer (multi_head, add_norm): the same story, said of the layer.
LAYER_STORY_RULE = ("the causal head rule (scenes.prompts.HEAD_RULE) on the English and the Chinese default "
                    "prompts: recorded when it picks a head in a different layer in each")


def record_layer_story(scene, choice: dict) -> None:
    """The layer the default lecture follows (the causal head's), in both languages: recorded as
    values["languages_differ"]["layer"] where the two languages' layers differ."""
    st = choice["story"]
    en, zh = int(st["chosen"]["en"][0]), int(st["chosen"]["zh"][0])
    if en != zh:
        scene.languages_differ("layer", LAYER_STORY_RULE, NOTES, "layer_differs", en=en, zh=zh,
                               en_layer=style.shown(en), zh_layer=style.shown(zh))


def record_story(scene, story: dict) -> None:
    """The default lecture's head (both languages' choices): recorded as values["languages_differ"]["head"] where
    the two languages' heads differ."""
    en, zh = [int(i) for i in story["chosen"]["en"]], [int(i) for i in story["chosen"]["zh"]]
    if en != zh:
        scene.languages_differ("head", STORY_RULE, NOTES, "head_differs", en=en, zh=zh,
                               en_layer=style.shown(en[0]), en_head=style.shown(en[1]),
                               zh_layer=style.shown(zh[0]), zh_head=style.shown(zh[1]))


def causal_note(scene, choice: dict, model: str) -> str:
    """The title note of a head chosen by the causal rule (the default lecture's): the scene's question. The head,
    the patching that chose it and both languages' picks are in the manifest (values["choice"]); where the two
    languages' heads differ, values["languages_differ"] too, with the course page's note (record_story)."""
    record_story(scene, choice["story"])
    return LectureScene.title_note(scene)


# --- the numbers: read from the trace and the weights, never computed here --------------------
class HeadChoice:
    """The prompt, its trace, the focus token and the head, chosen once by scenes.prompts.lookback_head (a given
    layer and head, or the rule's: for the default prompt the causal rule in both languages,
    scenes.prompts.story_heads): what every scene about one head, or about the layer of that head, starts from.
    `head` overrides the parameters' head (AUTO: a layer's scene takes the rule's head in the given layer)."""

    def __init__(self, gpt, params: dict, head=None):
        ch = lookback_head(gpt, params["prompt"], params["focus"], params["layer"],
                           params["head"] if head is None else head, lang=params.get("lang", "en"))
        self.choice, self.trace = ch, ch["trace"]
        c = gpt.config
        self.prompt, self.tokens = ch["prompt"], list(self.trace["tokens"])
        self.token_ids = [int(i) for i in self.trace["token_ids"]]
        self.T, self.layer, self.head, self.focus = len(self.tokens), ch["layer"], ch["head"], ch["focus"]
        self.source = ch["source"]                      # where the focus row puts its largest weight
        self.d_model, self.d_head, self.n_head, self.context = c.n_embd, c.d_head, c.n_head, c.n_positions

    def word(self, i: int) -> str:
        return style.token_label(self.tokens[i])

    def keys_text(self, lang: str) -> str:
        words = [SHARED("quoted", lang, w=self.word(k)) for k in self.choice["keys"]]
        return SHARED("keys_joiner", lang).join(words)

    def record(self) -> dict:
        ch = self.choice
        return {
            "prompt": self.prompt, "tokens": self.tokens, "token_ids": self.token_ids,
            "layer": self.layer, "head": self.head, "focus": self.focus, "source": self.source,
            "choice": {"rule": ch["rule"], "score": ch["score"], "keys": ch["keys"], "given": ch["given"],
                       "source_weight": ch["source_weight"], "prompt_rule": ch["prompt_rule"],
                       "all_scores": np.asarray(ch["all_scores"]).tolist(), "weight": ch["weight"],
                       "causal": ch["causal"], "story": ch["story"]},
            "model": {"d_model": self.d_model, "d_head": self.d_head, "n_head": self.n_head,
                      "n_positions": self.context},
        }


class ChosenHead(HeadChoice):
    """The chosen head's numbers: its W_Q, W_K and biases, LN(x), Q, K, the scores, scaled, masked and the weights."""

    def __init__(self, gpt, params: dict):
        super().__init__(gpt, params)
        h = self.head
        weights = gpt.head(self.layer, h)
        self.W_q, self.W_k = weights.W_Q, weights.W_K                         # (d_model, d_head), as stored
        self.b_q, self.b_k = weights.b_Q, weights.b_K
        layer = self.trace["layers"][self.layer]
        attn = layer["attn"]
        self.x_hat = layer["ln_1"]["out"]                                     # LN(x): what W_q and W_k read
        self.Q, self.K = attn["q"][h], attn["k"][h]                           # (T, d_head), biases included
        self.scores, self.scaled = attn["scores"][h], attn["scaled"][h]      # [query, key]
        self.masked, self.weights = attn["masked"][h], attn["weights"][h]


def shown_matrix(mv: MatrixVectorProduct) -> dict:
    """The matrix entries a MatrixVectorProduct shows, in its displayed orientation, at full precision."""
    g = mv.matrix
    rows, cols = [i for i in g.rows_shown if i is not None], [j for j in g.cols_shown if j is not None]
    return {"rows": rows, "cols": cols, "values": g.matrix[np.ix_(rows, cols)].tolist(),
            "shape": list(g.matrix.shape), "scale": g.colour_scale.limit}


def shown_vector(column) -> dict:
    return {"indices": [i for i in column.indices_shown if i is not None], "values": column.values.tolist()}



# --- the grid's place on screen, the same in every scene of the chapter ----------------------------
GRID_HEIGHT = 5.2                # the grid's cells, at most (12 tokens at 0.43; a crowded index is left out)
GRID_LEFT = -2.75                # left edge of the grid's cells: the axis titles and key words fit to its left
GRID_TOP = TOP - 0.46            # top edge of the grid's cells: the query indices fit above
GRID_LEGEND_TOP = TOP - 0.5      # legends beside a grid start below the query indices' line
GRID_NUMBERS_RIGHT = 1.58        # the focus line's numbers: right edge, from the grid's right edge ("100.0%" fits)
LEGEND_W = 2.0                   # legends on the right, ending at the title-safe edge (titles ≤ 2.0 wide)
LEGEND_X = 6.35 - LEGEND_W


def place_grid(grid: AttentionGrid) -> AttentionGrid:
    """The cells at a fixed place (the same in every language), the query indices at the top."""
    return grid.shift(RIGHT * (GRID_LEFT - grid.squares.get_left()[0]) + UP * (GRID_TOP - grid.squares.get_top()[1]))


def line_numbers(grid: AttentionGrid, texts: list[str], color=style.TEXT) -> NumberColumn:
    """One number per key row, right of the grid, level with the rows: the focus query's line."""
    x = grid.squares.get_right()[0] + GRID_NUMBERS_RIGHT
    return NumberColumn(texts, [grid.row_baseline(k) for k in range(len(texts))], x, color=color,
                        font_size=style.SMALL)


def place_legend(legend: ColourLegend, top: float = TOP, x: float = LEGEND_X) -> ColourLegend:
    """A legend with its bar's left end at x and its title's line at `top` (default: top right), inside the
    safe area. Placed by its bar, so that it sits alike in every language."""
    legend.shift(RIGHT * (x - legend.bar.get_left()[0]) + UP * (top - 0.45 - legend.bar.get_top()[1]))
    overhang = legend.get_right()[0] - style.safe_half_width()
    return legend.shift(LEFT * max(overhang, 0))



class FocusScene(LectureScene):
    """A scene about the chapter's prompt and one token in it (the focus), each `auto` resolved by
    scenes.prompts.chapter_focus."""

    def read_prompt(self) -> dict:
        """Resolve the prompt and the focus, run the model: sets self.tokens, self.token_ids, self.focus and
        self.chosen (chapter_focus's record); records the prompt's rule in the manifest; returns the trace."""
        self.chosen = chosen = chapter_focus(self.gpt, self.params["prompt"], self.params["focus"], self.lang)
        self.params["prompt"], self.params["focus"] = chosen["prompt"], chosen["focus"]
        trace = self.gpt.trace(chosen["prompt"])
        self.tokens, self.token_ids = list(trace["tokens"]), [int(i) for i in trace["token_ids"]]
        self.focus = chosen["focus"]
        if chosen["prompt_rule"]:
            self.values["prompt_rule"] = chosen["prompt_rule"]
        return trace

    def check_focus_shown(self, row) -> None:
        """A long prompt's row shows only its last tokens: the focus must be one of them."""
        if self.focus not in row.positions:
            raise ParamError(f"focus: token {self.focus} does not fit on screen (a long prompt shows its last "
                             f"{len(row.chips)} tokens); choose a focus from {row.first_shown} on")


class AttentionChapterScene(LectureScene):
    """A scene about one head chosen by computation (self.h): its title card says which and why."""


    def choose_head(self) -> ChosenHead:
        head = ChosenHead(self.gpt, self.params)
        self.params.update({"prompt": head.prompt, "layer": head.layer, "head": head.head, "focus": head.focus})
        self.values.update(head.record())
        if head.choice.get("story"):    # the default lecture: both languages' heads, where they differ (the page's note)
            record_story(self, head.choice["story"])
        return head

    def title_note(self) -> str:
        """The scene's question; a head given on the command line is named instead, with where it looks. How the head
        was chosen (values["choice"]) is in the manifest (docs/teaching.md §8)."""
        h = self.h
        if not (h.choice["given"]["layer"] or h.choice["given"]["head"]):
            return super().title_note()
        return self.s("given", model=self.model_words("compact"), layer=style.shown(h.layer), head=style.shown(h.head),
                      focus=h.word(h.focus), score=style.percent(h.choice["score"]), keys=h.keys_text(self.lang))

    def line_header(self, grid: AttentionGrid, numbers, query: int | None = None) -> Label:
        """A query's word above its line's numbers, level with the query indices (a long word runs right)."""
        h = self.h
        label = Label(h.word(h.focus if query is None else query), font_size=style.SMALL, color=QUERY)
        left = max(grid.query_indices[-1].get_right()[0] + 0.2, numbers.get_right()[0] - label.width)
        label.shift(RIGHT * (left - label.get_left()[0]))
        return label.on_baseline(grid.query_indices[0].baseline())

    def chip(self, i: int) -> TokenChip:
        """Token i's chip, in the colour it has in every token row of this prompt."""
        return TokenRow(self.h.tokens, lang=self.lang, indices=False, max_width=1e9).chips[i].copy()

