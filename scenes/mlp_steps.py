"""What the MLP does to one token, from the real model: W_in's questions, the bias and GELU, W_out's directions
summed, the residual add, and every token at once.

    manim render -ql scenes/mlp_steps.py MlpSteps
    python render.py mlp_steps --lang zh --set layer=0

Every number comes from the model's trace and from model.analysis (mlp_steps, neuron_readout,
neuron_top_contexts over the documented sample); the prompt, layer and focus are chosen by documented rules
unless given. Every value on screen is recorded at full precision in self.values (the manifest).
"""

from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Create, FadeIn, LaggedStart, SurroundingRectangle,
                   TransformFromCopy, VGroup)

from model import language as model_language
from model.analysis import distinct_contexts, gelu_curve, mlp_steps, neuron_readout, neuron_top_contexts, sample_states
from model.analysis.mlp import vector_readout
from model.analysis.patching import MEAN_SAMPLE
from model.config import GPT3_175B
from scenes import style
from scenes import why_beats
from scenes.components import (BarChart, GeluPlot, Label, MatrixVectorProduct, NeuronStrip, NumberText, TokenColumn,
                               VectorColumn, column_texts, keep_inside_safe_area, keep_right_of, rounded_columns,
                               sum_decimals)
from scenes.lecture import LectureScene
from scenes.params import AUTO, ParamError
from scenes.prompts import fact_prompt, language_of, own_language
from scenes.style import EMBEDDING, EMBEDDING_UPDATED, LOGIT, MUTED, NEURON_ACTIVE, SHARED, TEXT
from scenes.words import Words

WORDS = Words.beside(__file__)     # mlp_steps.toml: the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]
NOTES = WORDS["notes"]   # the course page's notes where the languages differ (LectureScene.languages_differ)

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

K_NEURONS = 3        # neurons drawn in the up- and down-projection: the largest activations at the focus
N_CONTEXTS = 4       # top-activating contexts listed for the top neuron
N_WORDS = 5          # words the top neuron's row pushes up most
MAX_TOKENS = 12      # tokens of a prompt, at most
ALL_ROWS = 10        # rows of the every-token view: a sample text's last ALL_ROWS tokens (rows clear at 480p)
CONTEXT_POOL = 40    # the top contexts searched for N_CONTEXTS distinct ones (streams often share a prefix)
STEP, PAUSE = style.STEP, style.PAUSE

# the kinds of word of the training language (model/language.py's lists), to name a neuron by a stated rule
WORD_KINDS = {"first_names": model_language.FIRST_NAMES, "last_names": model_language.LAST_NAMES,
              "sports": model_language.SPORTS, "sport_verbs": list(model_language.SPORT_VERBS.values()),
              "cities": model_language.CITIES, "countries": model_language.COUNTRIES,
              "animals": model_language.CREATURES, "colours": model_language.COLOURS,
              "textures": model_language.TEXTURES, "places": [w for ws in model_language.PLACES.values() for w in ws],
              "motion_verbs": [w for ws in model_language.VERBS.values() for w in ws]}


def word_kind(word: str, lang: str) -> str | None:
    """The kind of a word of the training language (WORD_KINDS, in `lang`'s words), or None for any other word."""
    g = model_language.Language().grammar(lang)
    return next((k for k, ws in WORD_KINDS.items() if word in {g.t(w) for w in ws}), None)


def neuron_kind(words: list[str], lang: str) -> str | None:
    """The rule that names a neuron: the kind of word (WORD_KINDS) at which every one of its top contexts ends, if
    they share one; else None (no one meaning can be read off its contexts)."""
    kinds = {word_kind(w, lang) for w in words}
    return kinds.pop() if len(kinds) == 1 and None not in kinds else None


def prompt_language(tokens: list[str]) -> str:
    """The language a prompt is written in: the one whose vocabulary holds its first word (they share none)."""
    return "en" if tokens and tokens[0] in model_language.vocabulary_of("en") else "zh"


def language_word_ids(gpt, lang: str) -> list[int]:
    """The ids of the words of one language of the training language (the two share no word); a checkpoint of one's
    own (byte-level BPE) has no such split: its whole vocabulary."""
    if not own_language(gpt):
        return list(range(gpt.config.vocab_size))
    words = set(model_language.vocabulary_of(lang))
    return [i for i, w in enumerate(gpt.tokenizer.words) if w in words]


def _sample(gpt, lang: str) -> dict:
    """The documented sample of the scene's language (the mean-ablation sample's size and seed)."""
    return sample_states(gpt, model_language.Language(), MEAN_SAMPLE["n_streams"], MEAN_SAMPLE["seed"], lang=lang)


# --- the numbers: read from the trace and model.analysis ----------------------------------------------
class MlpAtFocus:
    """One layer's MLP at the token in focus: the layer and focus by rule, the top neurons, every step's numbers."""

    def __init__(self, gpt, params: dict, sample: dict | None = None, light: bool = False):
        self.lang = lang = params.get("lang", "en")
        chosen = fact_prompt(lang, gpt) if params["prompt"] == AUTO else None
        self.prompt = chosen["prompt"] if chosen else params["prompt"]
        self.prompt_rule = chosen   # the default prompt's rule, with its language (None for a given prompt)
        self.trace = tr = gpt.trace(self.prompt)
        self.tokens, self.token_ids = list(tr["tokens"]), [int(i) for i in tr["token_ids"]]
        T = len(self.tokens)
        if T > MAX_TOKENS:
            raise ParamError(f"prompt: this scene shows every token's neurons, at most {MAX_TOKENS} tokens; "
                             f"got {T}")
        self.focus = T - 1 if params["focus"] == AUTO else int(params["focus"])
        if not 0 <= self.focus < T:
            raise ParamError(f"focus: the prompt has {T} tokens (positions 0..{T - 1}), got {self.focus}")
        self.focus_rule = "the prompt's last token" if params["focus"] == AUTO else "given"
        c = gpt.config
        self.n_layer, self.d, self.n = c.n_layer, c.n_embd, c.n_inner
        self.out_norms = [float(np.linalg.norm(tr["layers"][l]["mlp"]["out"][self.focus])) for l in range(c.n_layer)]
        self.layer_given = params["layer"] != AUTO
        self.layer = int(params["layer"]) if self.layer_given else int(np.argmax(self.out_norms))
        self.layer_rule = "given" if self.layer_given else \
            "the layer whose MLP output at the focus token has the largest norm (the earliest on a tie)"
        self.steps = st = mlp_steps(gpt, tr, self.layer, self.focus)
        self.threshold = st["threshold"]
        self.top = [int(i) for i in np.argsort(-st["act"], kind="stable")[:K_NEURONS]]
        self.n_active = int(st["active"].sum())
        self.W_in_cols = gpt.mlp(self.layer).W_in[:, self.top].T      # (k, d): the top neurons' questions
        self.prompt_lang = prompt_language(self.tokens) if own_language(gpt) else language_of([self.prompt])
        self.words_of_lang = language_word_ids(gpt, self.prompt_lang)
        self.readout = neuron_readout(gpt, tr, self.layer, self.top[0], self.focus, k=N_WORDS,
                                      word_ids=self.words_of_lang)
        p = np.asarray(tr["logits"][self.focus], np.float64)
        self.next_top = [gpt.tokenizer.words[int(i)] for i in np.argsort(-p, kind="stable")[:N_WORDS]]
        # the whole MLP output (every write and b_out) read the same way: what the sum raises, against one neuron
        self.sum_readout = vector_readout(gpt, tr, self.focus, tr["layers"][self.layer]["mlp"]["out"][self.focus],
                                          k=N_WORDS, word_ids=self.words_of_lang)
        if light:        # the choice and the readout only (the other language's, for the story)
            return
        sample = sample if sample is not None else _sample(gpt, self.prompt_lang)
        ranked = neuron_top_contexts(gpt, sample, self.layer, self.top[0], k=CONTEXT_POOL)
        self.contexts = distinct_contexts(ranked, N_CONTEXTS)
        self.context_words = list(dict.fromkeys(c["token"] for c in self.contexts))[:3]   # said: at most three
        # the neuron named by a stated rule (neuron_kind): the one kind of word every top context ends at, or none
        self.kind = neuron_kind([c["token"] for c in self.contexts], self.prompt_lang) if own_language(gpt) else None
        self.sample_size = len(sample["streams"])
        # every token at once, on a text long enough to see it: of the sample's positions with ALL_ROWS tokens up
        # to them, the one where the top neuron fires most (the earliest on a tie); its stream's last ALL_ROWS
        # tokens up to it, with the activations of the sample's own run of the whole stream
        acts = np.asarray(sample["mlp_act"][self.layer][..., self.top[0]], np.float64)[:, ALL_ROWS - 1:]
        stream, at = (int(i) for i in np.unravel_index(int(np.argmax(acts)), acts.shape))
        pos = at + ALL_ROWS - 1
        lo = pos - ALL_ROWS + 1
        self.all_source = {"rule": f"of the sample's positions with at least {ALL_ROWS} tokens up to them, the one "
                                   f"where neuron {self.top[0]} fires most (the first on a tie); its stream's last "
                                   f"{ALL_ROWS} tokens up to and including it; the activations of the sample's own "
                                   "run of the whole stream",
                           "stream": stream, "position": pos, "first": lo, "activation": float(acts.max()),
                           "stream_tokens": len(sample["streams"][stream])}
        self.all_tokens = list(sample["streams"][stream][lo:pos + 1])
        self.all_positions = list(range(lo, pos + 1))
        self.all_act = np.asarray(sample["mlp_act"][self.layer][stream, lo:pos + 1], np.float64)
        self.all_active = [int(n) for n in (self.all_act > self.threshold).sum(1)]
        self.resid_mid = tr["layers"][self.layer]["resid_mid"][self.focus]
        self.mlp_out = tr["layers"][self.layer]["mlp"]["out"][self.focus]
        self.resid_post = tr["layers"][self.layer]["resid_post"][self.focus]
        self.lengths = {k: float(np.linalg.norm(v)) for k, v in
                        (("resid_mid", self.resid_mid), ("mlp_out", self.mlp_out), ("resid_post", self.resid_post))}
        self.curve_x = np.linspace(min(-4.0, float(np.floor(st["pre"].min()))),
                                   max(2.0, float(np.ceil(st["pre"].max()))), 121)
        self.curve_y = gelu_curve(self.curve_x)

    def gelu_key(self) -> str:
        return "gelu_few" if self.n_active < self.n / 3 else "gelu_many"

    def readout_key(self) -> str:
        """The top neuron's word among the model's top guesses (agrees); else the whole output's (sum); else
        neither."""
        if self.readout["top"][0]["word"] in self.next_top:
            return "readout_agrees"
        return "readout_sum" if self.sum_readout["top"][0]["word"] in self.next_top else "readout_neither"

    def story_entry(self) -> dict:
        """What the story compares between the languages: the layer, the top neuron, its readout and the guesses."""
        return {"prompt": self.prompt, "focus": self.focus, "mlp_out_norms": self.out_norms, "layer": self.layer,
                "neuron": self.top[0], "readout_word": self.readout["top"][0]["word"], "next_top": self.next_top,
                "sum_word": self.sum_readout["top"][0]["word"],
                "readout_key": self.readout_key()}

    def residual_key(self) -> str:
        return "residual_big" if self.lengths["mlp_out"] > self.lengths["resid_mid"] else "residual_small"

    def record(self) -> dict:
        st = self.steps
        return {
            "prompt": self.prompt, "prompt_rule": self.prompt_rule, "tokens": self.tokens,
            "token_ids": self.token_ids, "focus": self.focus, "focus_rule": self.focus_rule,
            "layer": self.layer, "layer_rule": self.layer_rule, "mlp_out_norms": self.out_norms,
            "d_model": self.d, "d_mlp": self.n, "gpt3": {"d_model": GPT3_175B.n_embd, "d_mlp": GPT3_175B.n_inner},
            "x": st["x"], "pre_activations": st["pre"], "activations": st["act"], "b_in": st["b_in"],
            "dots": st["dots"], "threshold": self.threshold, "active_count": self.n_active,
            "neurons": [{"neuron": i, "W_in_column": self.W_in_cols[r], "dot": float(st["dots"][i]),
                         "bias": float(st["b_in"][i]), "pre": float(st["pre"][i]), "act": float(st["act"][i]),
                         "write": st["writes"][i]} for r, i in enumerate(self.top)],
            "neuron_choice": "the largest activations at the focus token",
            "contexts": {"neuron": self.top[0], "sample": {**MEAN_SAMPLE, "lang": self.prompt_lang},
                         "top": self.contexts, "kind": self.kind,
                         "kind_rule": "the neuron is named by the one kind of word (scenes/mlp_steps.py WORD_KINDS, "
                                      "model/language.py's lists) at which every one of its top contexts ends; none "
                                      "when they end at words of different kinds or at other words"},
            "gelu_curve": {"x": self.curve_x, "y": self.curve_y},
            "writes_sum_plus_bias": st["out"], "b_out": st["b_out"], "mlp_out": self.mlp_out,
            "readout": {"neuron": self.top[0], "top": self.readout["top"]},
            "sum_readout": {"what": "the MLP's output at the focus (every write and b_out) through ln_f (frozen) and "
                                    "the unembedding, among the prompt language's words",
                            "top": self.sum_readout["top"]},
            "lengths": self.lengths,
            "context_words": self.context_words,
            "next_top": self.next_top,
            "resid_mid": self.resid_mid, "resid_post": self.resid_post,
            "all_tokens": {**self.all_source, "tokens": self.all_tokens, "positions": self.all_positions},
            "all_activations": self.all_act, "active_per_token": self.all_active,
        }


def place_column(column: VectorColumn, x: float, top: float) -> VectorColumn:
    """A vector column placed by its brackets: centred on x, its top at `top` (same in every language)."""
    return column.shift([x - column.brackets.get_center()[0], top - column.brackets.get_top()[1], 0])


# --- layout (scene units; title-safe is ±6.4 × ±3.6; the caption sits below −2.5) -------------------
FORMULA_Y = 3.2
PRODUCT_TOP = 2.4
SHAPES_Y = -2.15
COLUMN_TOP = 2.55
ROW_TOP, ROWS_MID, PITCH = 2.1, 0.9, 0.55
ROWS_SPAN = 4.05    # every token's view: from the first row's centre to the last's, at most (above the caption)
STRIPS_X, STRIPS_W = 0.6, 7.4   # every token's neurons: the strips' centre and width
DOWN_TOP, DOWN_XS, REST_X, EQUALS_X, OUT_X = 2.15, (-5.15, -2.85, -0.55), 1.5, 3.25, 4.55


class MlpSteps(LectureScene):
    name = "mlp_steps"
    strings = S
    beat_titles = BEATS

    def title_note(self) -> str:
        """The scene's question; a layer given on the command line is named instead, with its output's length. Both
        languages' picks (values["story"]) are in the manifest, never said (docs/teaching.md §6)."""
        m = self.m
        if not m.layer_given:
            return super().title_note()
        return self.s("given", layer=style.shown(m.layer), focus=m.tokens[m.focus], n=m.n_layer,
                      norm=f"{m.out_norms[m.layer]:.1f}")

    def listed(self, items: list[str]) -> str:
        """Up to three items as a list in the scene's language: "a, b and c" (list_2, list_3 in mlp_steps.toml)."""
        return self.s(f"list_{len(items)}", **dict(zip("abc", items)))

    def quoted_list(self, words: list[str]) -> str:
        """Words in quotes, as a list: the voice announces them as words ("the words ...", and in Chinese "... this word")."""
        return self.listed([self.s("quoted", w=style.token_label(w)) for w in words])

    # --- the numbers and the pieces ------------------------------------------------------------------------
    def prepare(self):
        default = self.params["prompt"] == AUTO and self.params["layer"] == AUTO and self.params["focus"] == AUTO
        self.m = m = MlpAtFocus(self.gpt, self.params)
        self.params.update(prompt=m.prompt, focus=m.focus, layer=m.layer)   # `auto` resolved
        self.values.update(m.record())
        # one story in two languages: the default lecture runs the same rules on the other language's default prompt
        self.story = None
        if default and m.prompt_rule is not None:
            other = "zh" if self.lang == "en" else "en"
            o = MlpAtFocus(self.gpt, {**self.params, "prompt": AUTO, "layer": AUTO, "focus": AUTO, "lang": other},
                           light=True)
            self.story = {self.lang: m.story_entry(), other: o.story_entry()}
            self.values["story"] = {**self.story, "rule": "the scene's rules (layer, top neuron, readout) run on both "
                                                          "languages' default prompts"}
            en, zh = self.story["en"], self.story["zh"]
            if (en["layer"], en["neuron"]) != (zh["layer"], zh["neuron"]):   # the page's note, never said here
                self.languages_differ("neuron", "the scene's rules (layer, top neuron) on the English and the Chinese "
                                      "default prompts: recorded when they pick a different layer or neuron",
                                      NOTES, "neuron_differs", en=[en["layer"], en["neuron"]],
                                      zh=[zh["layer"], zh["neuron"]], en_layer=style.shown(en["layer"]),
                                      en_neuron=en["neuron"], zh_layer=style.shown(zh["layer"]), zh_neuron=zh["neuron"])
        self.build_up()
        self.build_contexts()
        self.build_gelu()
        self.build_down()
        self.build_readout()
        self.build_residual()
        self.build_all()

    def build_up(self):
        m, lang, st = self.m, self.lang, self.m.steps
        n = lambda k: S("n_numbers", lang, n=k)  # noqa: E731
        self.up_product = MatrixVectorProduct(
            m.W_in_cols, st["x"], st["pre"][m.top], lang=lang, name=self.s("up_rows"), bias=st["b_in"][m.top],
            rows=K_NEURONS, cols=5, colour=NEURON_ACTIVE, vector_label=f"x: {n(m.d)}", bias_label="b_in",
            output_label=f"{K_NEURONS} / {m.n}")
        body = self.up_product.bodies()
        self.up_product.shift([-0.45 - body.get_center()[0], PRODUCT_TOP - body.get_top()[1], 0])
        self.up_formula = self.tex("z_i", "=", "x", r"\cdot", r"W_{in}[:, i]", "+", "b_i",
                                   colours={"z_i": NEURON_ACTIVE}).move_to([0, FORMULA_Y, 0])
        out = self.up_product.output
        self.neuron_ids = VGroup(*[NumberText(f"#{i}", style.SMALL, MUTED, align="left")
                                   .place(out.brackets.get_right()[0] + 0.25, out.entries[r].get_bottom()[1])
                                   for r, i in enumerate(m.top)])
        keep_inside_safe_area(VGroup(self.up_product, self.neuron_ids))    # a checkpoint's wider cells may push it
        self.shapes = Label(self.s("shapes", d=m.d, n=m.n, gd=f"{GPT3_175B.n_embd:,}", gn=f"{GPT3_175B.n_inner:,}"),
                            font_size=style.SMALL, color=MUTED)
        self.shapes.move_to([0, SHAPES_Y, 0])

    def build_contexts(self):
        m, lang = self.m, self.lang
        self.ctx_header = Label(self.s("contexts_header", neuron=m.top[0], layer=style.shown(m.layer)), font_size=style.LABEL,
                                color=NEURON_ACTIVE)
        self.ctx_header.move_to([0, 2.6, 0])
        join = " " if lang == "en" else ""
        self.ctx_rows = VGroup()
        self.ctx_numbers = VGroup()
        for r, c in enumerate(m.contexts):
            y = 1.5 - r * 0.75
            words = [style.token_label(w) for w in c["context"][:-1]]
            while True:   # the context's last words that fit the safe area, "…" for the ones left out
                before = ("\u2026" + join if len(words) < len(c["context"]) - 1 else "") + join.join(words)
                row = VGroup()
                if before:
                    row.add(Label(before + join, font_size=style.LABEL, color=MUTED))
                row.add(Label(style.token_label(c["token"]), font_size=style.LABEL, color=TEXT))
                row.arrange(RIGHT, buff=0.12 if lang == "en" else 0.05, aligned_edge=DOWN)
                row.shift([2.6 - row.get_right()[0], 0, 0])
                if not words or row.get_left()[0] >= -style.safe_half_width():
                    break
                words = words[1:]
            for part in row:
                part.on_baseline(y)
            row.phrase = True          # its parts are one line of text, in two colours (tests/layout_checks.py)
            self.ctx_rows.add(row)
            self.ctx_numbers.add(NumberText(f"{c['activation']:.2f}", style.LABEL, NEURON_ACTIVE).place(4.4, y))

    def build_gelu(self):
        m = self.m
        self.gelu = GeluPlot(m.curve_x, m.curve_y, m.steps["pre"], m.steps["act"], m.threshold,
                             width=8.0, height=4.4, x_name=self.s("x_axis"))
        # placed by its axes, curve and points (its labels' widths differ between the languages)
        self.gelu.shift(np.array([-0.5, 0.55, 0]) - VGroup(self.gelu.axes, self.gelu.curve, self.gelu.dots).get_center())
        self.active_label = Label(self.s("active_count", t=f"{m.threshold:g}", active=m.n_active, n=m.n),
                                  font_size=style.SMALL, color=NEURON_ACTIVE)
        keep_inside_safe_area(self.active_label.move_to([-3.95, 2.0, 0]))    # "1112 / 3072" is wider than ours
        y_axis_x = self.gelu.axes.c2p(0, 0)[0]
        y_ticks = [t for t in self.gelu.ticks if abs(t.get_center()[0] - (y_axis_x - 0.3)) < 0.01
                   and t.get_center()[1] > self.gelu.axes.c2p(0, 0)[1]]        # the y axis's numbers
        if y_ticks and self.active_label.get_right()[0] > min(t.get_left()[0] for t in y_ticks) - 0.1:
            # the y axis stands too far left (a long positive range of x): the count goes above the plot
            self.active_label.next_to(self.gelu.axes, UP, buff=0.2).align_to(self.gelu.axes, LEFT)
        self.gelu_name = Label(self.s("gelu_axis"), font_size=style.LABEL, color=style.GELU_CURVE)
        self.gelu_name.next_to(self.gelu.curve, UP, buff=0.1).align_to(self.gelu.curve, RIGHT)

    def build_down(self):
        m, lang, st = self.m, self.lang, self.m.steps
        xs = DOWN_XS
        self.write_columns = VGroup(*[place_column(VectorColumn(st["writes"][i], lang=lang, shown=6, pitch=0.42),
                                                   x, DOWN_TOP) for i, x in zip(m.top, xs)])
        for col in self.write_columns:     # side by side, their sizes would collide: MLP(x)'s says it
            col.remove(col.size_label)
        # "neuron 1483" side by side would run together (a checkpoint's 3,072 neurons): then "#1483", as the up beat
        names = [self.s("neuron_n", i=i) for i in m.top]
        if max(Label(t, font_size=style.SMALL).width for t in names) + 0.4 > min(b - a for a, b in zip(xs, xs[1:])):
            names = [f"#{i}" for i in m.top]
        # the column drawn is already activation × row: its header says so ("4.56 × its row"), not "× 4.56"
        self.write_headers = VGroup(*[
            VGroup(self.header(name, x, NEURON_ACTIVE, DOWN_TOP + 0.75),
                   self.header(self.s("times_row", a=f"{st['act'][i]:.2f}"), x, NEURON_ACTIVE, DOWN_TOP + 0.3))
            for name, i, x in zip(names, m.top, xs)])
        mid_y = self.write_columns[0].brackets.get_center()[1]
        self.plus_signs = VGroup(*[Label("+", font_size=style.HEADER).move_to([(a + b) / 2, mid_y, 0])
                                   for a, b in zip(xs, xs[1:])])
        self.rest_label = VGroup(Label(self.s("rest", n=m.n - K_NEURONS), font_size=style.SMALL, color=MUTED),
                                 Label("+ b_out", font_size=style.SMALL, color=MUTED))
        self.rest_label[0].move_to([REST_X, mid_y + 0.25, 0])
        self.rest_label[1].move_to([REST_X, mid_y - 0.25, 0]).align_to(self.rest_label[0], LEFT)
        keep_right_of(self.rest_label, self.write_columns[-1], 0.3)   # a checkpoint's 4-decimal writes are wider
        self.out_column = place_column(VectorColumn(m.mlp_out, lang=lang, shown=6, pitch=0.42), OUT_X, DOWN_TOP)
        self.out_column.brackets.set_color(NEURON_ACTIVE)
        self.equals = Label("=", font_size=style.HEADER).move_to([EQUALS_X, mid_y, 0])
        self.out_header = self.header(self.s("mlp_out"), OUT_X, NEURON_ACTIVE, DOWN_TOP + 0.3)
        self.down_formula = self.tex(r"\mathrm{MLP}(x)", "=", r"\sum_i a_i\, W_{out}[i]", "+", "b_{out}",
                                     colours={r"\mathrm{MLP}(x)": NEURON_ACTIVE}).move_to([-0.9, -1.85, 0])

    def build_readout(self):
        m = self.m
        ys = [2.0 - r * 0.55 for r in range(N_WORDS)]
        guesses = set(m.next_top)
        self.read_charts = VGroup()
        for side, (top, field, header) in enumerate((
                (m.readout["top"], "logit_per_unit", self.s("readout_header", neuron=m.top[0])),
                (m.sum_readout["top"], "logit", self.s("sum_header", n=m.n)))):
            # each chart in its half of the title-safe area: words (as wide as the widest), bars, numbers
            x0, x1 = (-style.safe_half_width() + 0.05, -0.25) if side == 0 else (0.25, style.safe_half_width() - 0.05)
            words = [style.token_label(t["word"]) for t in top]
            amounts = [t[field] for t in top]
            # a word the model guesses here in full colour, the others muted: the caption's rule, drawn
            colours = [TEXT if t["word"] in guesses else MUTED for t in top]
            widest = max(Label(w, font_size=style.LABEL).width for w in words)
            colour = LOGIT if side == 0 else NEURON_ACTIVE
            # the widest bar ends 0.2 short of the numbers
            self.read_charts.add(BarChart(
                amounts, ys, None, colour, bar_left=x0 + widest + 0.15, gap=0.2,
                labels=words, label_right=x0 + widest, label_colours=colours,
                numbers=lambda a, d=(2 if side == 0 else 1): style.signed(a, d), number_right=x1, number_colour=colour,
                header=header, header_at=((x0 + x1) / 2, 2.8), header_colour=colour))
        self.read_header, self.read_words, self.read_bars, self.read_numbers = self.read_charts[0]
        self.sum_numbers = self.read_charts[1][3]
        words = " ".join(self.s("quoted", w=style.token_label(w)) for w in m.next_top)
        # the guesses' name and the guesses: one line, or two where long words would leave the title-safe area
        self.guess_line = VGroup(Label(self.s("guesses", k=N_WORDS, words="").rstrip(), font_size=style.SMALL,
                                       color=TEXT), Label(words, font_size=style.SMALL, color=TEXT))
        self.guess_line.arrange(RIGHT, buff=0.15)
        self.guess_line[1].on_baseline(self.guess_line[0].baseline())
        self.guess_line.phrase = True       # one line of text in two parts (tests/layout_checks.py)
        if self.guess_line.width > 2 * style.safe_half_width():
            self.guess_line.arrange(DOWN, buff=0.12)
        self.guess_line.move_to([0, ys[-1] - 0.75, 0]).align_to([0, ys[-1] - 0.55, 0], UP)

    def build_residual(self):
        m, lang = self.m, self.lang
        xs = [-3.6, 0.0, 3.6]
        d = sum_decimals((m.resid_mid, m.mlp_out, m.resid_post), shown=6)      # one sum: one number of decimals
        # every label its value's plain rounding (the MLP's output reads as the beat before drew it); ≈ where they miss
        rounded = rounded_columns((m.resid_mid, m.mlp_out, m.resid_post), shown=6, decimals=d)
        cols = [VectorColumn(v, lang=lang, shown=6, pitch=0.42, decimals=d, texts=texts)
                for v, texts in zip((m.resid_mid, m.mlp_out, m.resid_post), column_texts(rounded))]
        self.res_columns = VGroup(*[place_column(c, x, COLUMN_TOP) for c, x in zip(cols, xs)])
        self.res_columns[0].brackets.set_color(EMBEDDING)
        self.res_columns[1].brackets.set_color(NEURON_ACTIVE)
        self.res_columns[2].brackets.set_color(EMBEDDING_UPDATED)
        heads = [(self.s("e_prime"), EMBEDDING), (self.s("mlp_out"), NEURON_ACTIVE), (self.s("e_next"),
                                                                                       EMBEDDING_UPDATED)]
        self.res_headers = VGroup(*[self.header(t, x, c, COLUMN_TOP + 0.35) for (t, c), x in zip(heads, xs)])
        lengths = [m.lengths[k] for k in ("resid_mid", "mlp_out", "resid_post")]
        self.res_lengths = VGroup(*[Label(self.s("length", v=f"{v:.1f}"), font_size=style.SMALL, color=c)
                                    .move_to([x, col.get_bottom()[1] - 0.3, 0])
                                    for v, x, col, c in zip(lengths, xs, self.res_columns,
                                                            (EMBEDDING, NEURON_ACTIVE, EMBEDDING_UPDATED))])
        y = self.res_columns[0].brackets.get_center()[1]
        self.res_signs = VGroup(Label("+", font_size=style.HEADER).move_to([-1.8, y, 0]),
                                Label(rounded.relation, font_size=style.HEADER).move_to([1.8, y, 0]))
        self.record_sum("residual", "E\u2032 + MLP output = E\u2032 + MLP", rounded, drawn=self.res_signs[1])

    def build_all(self):
        m = self.m
        T = len(m.all_tokens)
        pitch = min(PITCH, ROWS_SPAN / max(T - 1, 1))          # ALL_ROWS rows still clear one another
        top = min(ROW_TOP, ROWS_MID + (T - 1) * pitch / 2)     # a short prompt sits mid-stage
        ys = [top - r * pitch for r in range(T)]
        # the strips leave the chips and their indices room for the longest words (chips hold a word's whole ink)
        self.all_tokens = TokenColumn(m.all_tokens, m.all_positions, ys, right=STRIPS_X - STRIPS_W / 2 - 0.2)
        limit = float(np.ceil(m.all_act.max() * 10) / 10)
        self.values["neuron_colour_limit"] = limit
        self.all_strips = VGroup(*[NeuronStrip(a, m.threshold, limit, width=STRIPS_W, height=pitch * 0.6)
                                   .move_to([STRIPS_X, y, 0]) for a, y in zip(m.all_act, ys)])
        self.all_counts = VGroup(*[NumberText(str(n), style.SMALL, NEURON_ACTIVE).place(5.8, y - 0.1)
                                   for n, y in zip(m.all_active, ys)])
        self.all_header = Label(self.s("all_header", n=m.n), font_size=style.SMALL, color=MUTED)
        self.all_header.move_to([STRIPS_X, top + 0.55, 0])
        self.count_header = self.header(self.s("active_short", t=f"{m.threshold:g}"), 5.6, NEURON_ACTIVE,
                                        top + 0.45)
        # the header ends a clear gap before the counts' header (in English it is nearly as wide as strips and counts)
        self.all_header.shift(RIGHT * min(0.0, self.count_header.get_left()[0] - 0.5 - self.all_header.get_right()[0]))
        self.all_formula = self.tex("A", "=", r"\mathrm{GELU}(X W_{in} + b_{in})",
                                    colours={"A": NEURON_ACTIVE})
        self.all_formula.move_to([0.3, FORMULA_Y, 0])
        # the text's last row: the token where the top neuron fires most in the sample
        self.focus_frame = SurroundingRectangle(self.all_strips[-1], color=TEXT, buff=0.05)

    # --- the beats ------------------------------------------------------------------------------------------
    def beat_up(self):
        m = self.m
        self.say("up", d=m.d, n=m.n)
        p = self.up_product
        self.play(FadeIn(self.up_formula), FadeIn(p.matrix), FadeIn(p.vector), FadeIn(p.plus), FadeIn(p.bias),
                  FadeIn(p.equals), FadeIn(p.output.brackets), FadeIn(p.output.size_label), FadeIn(self.shapes),
                  run_time=STEP)
        # the inputs as the output column shows them (one decimal)
        z = self.listed([style.signed(float(m.steps["pre"][i]), 1) for i in m.top])
        self.say("up_align", k=K_NEURONS, focus=style.token_label(m.tokens[m.focus]), z=z)
        p.play(self, slow_rows=1)
        self.play(FadeIn(self.neuron_ids), run_time=STEP)
        self.wait(PAUSE)

    def beat_contexts(self):
        m = self.m
        key = self.caption_rule("contexts", "contexts_named" if m.kind else "contexts_mixed",
                                "every top context ends at one kind of word (WORD_KINDS): contexts_named, else "
                                "contexts_mixed", kind=m.kind, words=[c["token"] for c in m.contexts])
        self.say(key, neuron=m.top[0], n=m.sample_size, words=self.quoted_list(m.context_words),
                 kind=self.s(f"kind_{m.kind}") if m.kind else "")
        self.clear_stage()
        self.play(FadeIn(self.ctx_header), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(VGroup(r, n), shift=RIGHT * 0.2)
                                for r, n in zip(self.ctx_rows, self.ctx_numbers)], lag_ratio=0.2),
                  run_time=2 * STEP)
        self.wait(PAUSE)

    def beat_gelu(self):
        m = self.m
        key = self.caption_rule("gelu", m.gelu_key(), "active neurons (GELU > threshold) fewer than a third of all: "
                                "gelu_few, else gelu_many", active=m.n_active, n=m.n, threshold=m.threshold)
        self.say(key, active=m.n_active, n=m.n, t=f"{m.threshold:g}")
        self.clear_stage()
        g = self.gelu
        self.play(Create(g.axes), FadeIn(g.ticks), run_time=STEP)
        self.play(Create(g.curve), FadeIn(self.gelu_name), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(d, scale=0.5) for d in g.dots], lag_ratio=0.005), run_time=2 * STEP)
        self.play(FadeIn(self.active_label), run_time=STEP)
        self.wait(PAUSE)

    def beat_down(self):
        m = self.m
        self.say("down", n=m.n, d=m.d, i=m.top[0], a=f"{m.steps['act'][m.top[0]]:.2f}", rest=m.n - K_NEURONS)
        self.clear_stage()
        self.play(LaggedStart(*[FadeIn(VGroup(c, h)) for c, h in zip(self.write_columns, self.write_headers)],
                              lag_ratio=0.3), FadeIn(self.plus_signs), run_time=2 * STEP)
        self.play(FadeIn(self.rest_label), FadeIn(self.down_formula), run_time=STEP)
        self.play(FadeIn(self.equals), TransformFromCopy(VGroup(*[c.entries for c in self.write_columns]),
                                                        self.out_column.entries),
                  FadeIn(self.out_column.brackets), FadeIn(self.out_column.size_label), FadeIn(self.out_header),
                  run_time=2 * STEP)
        self.wait(PAUSE)

    def beat_readout(self):
        m = self.m
        word, sum_word = (style.token_label(r["top"][0]["word"]) for r in (m.readout, m.sum_readout))
        self.clear_stage()
        self.say("readout", neuron=m.top[0], word=word, sum_word=sum_word, n=m.n, k=N_WORDS,
                 a=f'{m.readout["top"][0]["logit_per_unit"]:.2f}', b=f'{m.sum_readout["top"][0]["logit"]:.1f}')
        left, right = self.read_charts
        self.play(FadeIn(left[0]), FadeIn(left[1]), FadeIn(right[0]), FadeIn(right[1]), run_time=STEP)
        self.play(*[grow for c in self.read_charts for grow in c.grow()], FadeIn(left[3]),
                  FadeIn(right[3]), run_time=STEP)
        self.play(FadeIn(self.guess_line), run_time=STEP)
        # the payoff, by rule: does the neuron, or the whole output, raise one of the model's guesses most?
        key = self.caption_rule("readout", m.readout_key(),
                                f"the word the top neuron's row raises most is among the model's top {N_WORDS} next "
                                "words at the focus: readout_agrees; else the word the whole MLP output raises most "
                                "is: readout_sum; else readout_neither",
                                word=m.readout["top"][0]["word"], sum_word=m.sum_readout["top"][0]["word"],
                                next_top=m.next_top)
        self.say(key, word=word, sum_word=sum_word, k=N_WORDS)
        keys = {lang: e["readout_key"] for lang, e in (self.story or {}).items()}
        if len(set(keys.values())) > 1:    # the default lecture: the other language's readout differs
            self.languages_differ(
                "readout", "the readout rule on the English and the Chinese default prompts: recorded when its key "
                "differs", NOTES, "readout_differs", en=keys["en"], zh=keys["zh"],
                fill={lang: {f"{l}_finding": NOTES("finding_" + k.split("_")[1], lang, k=N_WORDS)
                             for l, k in keys.items()} for lang in ("en", "zh")})
        self.wait(PAUSE)

    def beat_residual(self):
        m = self.m
        key = self.caption_rule("residual", m.residual_key(), "|MLP output| > |E'| at the focus: residual_big, "
                                "else residual_small", mlp_out_norm=float(np.linalg.norm(m.mlp_out)),
                                resid_mid_norm=float(np.linalg.norm(m.resid_mid)))
        self.say(key, d=m.d, out=f"{m.lengths['mlp_out']:.1f}", mid=f"{m.lengths['resid_mid']:.1f}")
        self.clear_stage()
        c = self.res_columns
        self.play(FadeIn(c[0]), FadeIn(c[1]), FadeIn(self.res_headers[:2]), FadeIn(self.res_signs[0]),
                  run_time=STEP)
        self.play(FadeIn(self.res_signs[1]), TransformFromCopy(VGroup(c[0].entries, c[1].entries), c[2].entries),
                  FadeIn(c[2].brackets), FadeIn(c[2].size_label), FadeIn(self.res_headers[2]), run_time=2 * STEP)
        self.play(FadeIn(self.res_lengths), run_time=STEP)
        self.wait(PAUSE)

    def beat_all_tokens(self):
        m = self.m
        self.say("all_tokens", t=len(m.all_tokens), T=m.all_source["stream_tokens"], d=m.d, n=m.n, neuron=m.top[0],
                 at=m.all_source["position"] + 1,
                 lo=min(m.all_active), hi=max(m.all_active), word=style.token_label(m.all_tokens[-1]))
        self.clear_stage()
        self.play(FadeIn(self.all_formula), FadeIn(self.all_tokens), FadeIn(self.all_header), run_time=STEP)
        self.play(*[FadeIn(s, shift=RIGHT * 0.2) for s in self.all_strips], FadeIn(self.all_counts), FadeIn(self.count_header),
                  run_time=STEP)
        self.play(Create(self.focus_frame), run_time=0.8)
        self.wait(PAUSE)

    beat_lab = why_beats.mlp_steps   # why this part: the lab's record (scenes/why_beats.py)

    def beat_summary(self):
        """The whole MLP in one line, with this token's numbers: the questions asked, the yeses, the write's length;
        the pipeline lit at this layer's MLP."""
        m = self.m
        focus, out = style.token_label(m.tokens[m.focus]), f"{m.lengths['mlp_out']:.1f}"
        self.say("summary", n=m.n, active=m.n_active, focus=focus, out=out, layer=style.shown(m.layer))
        self.show_where([f"mlp:{m.layer}"], [
            (self.s("where_at", focus=focus), MUTED),
            (self.s("active_count", t=f"{m.threshold:g}", active=m.n_active, n=m.n), NEURON_ACTIVE),
            (self.s("write_length", out=out), NEURON_ACTIVE)],
            layer=m.layer, d_mlp=m.n, active_count=m.n_active, threshold=m.threshold,
            write_length=m.lengths["mlp_out"])
