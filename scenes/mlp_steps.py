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
from manim import (DOWN, LEFT, RIGHT, UP, Create, FadeIn, FadeOut, GrowFromEdge, LaggedStart, SurroundingRectangle,
                   TransformFromCopy, VGroup)

from model import language as model_language
from model.analysis import gelu_curve, mlp_steps, neuron_readout, neuron_top_contexts, sample_states
from model.analysis.patching import MEAN_SAMPLE
from model.config import GPT3_175B
from scenes import style
from scenes.components import (sum_decimals, column_texts, footed_columns, BarColumn, GeluPlot, Label, LabelColumn, MatrixVectorProduct, NeuronStrip,
                               NumberColumn, NumberText, TokenColumn, VectorColumn, keep_inside_safe_area,
                               keep_right_of)
from scenes.lecture import LectureScene
from scenes.params import AUTO, ParamError
from scenes.prompts import fact_prompt, language_of, own_language
from scenes.style import EMBEDDING, EMBEDDING_UPDATED, LOGIT, MUTED, NEURON_ACTIVE, SHARED, TEXT, Strings

S = SHARED | Strings({
    "title": {"en": "Inside the MLP", "zh": "MLP 内部"},
    "subtitle": {"en": "What the feed-forward layer does to one token", "zh": "前馈层对一个词元做了什么"},
    "chosen": {"en": "Layer {layer}'s MLP at \"{focus}\": of the {n} layers,\n"
                     "its output there is the largest (length {norm}).",
               "zh": "第 {layer} 层的 MLP，看 \u201c{focus}\u201d：在 {n} 层中，\n它在这里的输出最大（长度 {norm}）。"},
    "mlp_story_same": {"en": "The same rule picks this layer and neuron {en_neuron} in English and in Chinese.",
                       "zh": "在英文和中文里，同一规则都选出这一层和神经元 {en_neuron}。"},
    "mlp_story_differs": {"en": "By this rule: layer {en_layer}, neuron {en_neuron} in English;\n"
                                "layer {zh_layer}, neuron {zh_neuron} in Chinese.",
                          "zh": "按这条规则：英文里是第 {en_layer} 层的神经元 {en_neuron}；\n"
                                "中文里是第 {zh_layer} 层的神经元 {zh_neuron}。"},
    "given": {"en": "Layer {layer}'s MLP at \"{focus}\":\nits output there has length {norm}.",
              "zh": "第 {layer} 层的 MLP，看 \u201c{focus}\u201d：\n它在这里的输出长度为 {norm}。"},
    "up": {"en": "Each neuron asks one question: its column of W_in times x,\n"
                 "plus a bias. Here the {k} that fire most at \"{focus}\".",
           "zh": "每个神经元问一个问题：W_in 中它的那一列乘以 x，\n再加偏置。这里是在 \u201c{focus}\u201d 处最活跃的 {k} 个。"},
    "up_rows": {"en": "rows of W_in\u1d40", "zh": "W_in\u1d40 的行"},
    "shapes": {"en": "W_in: {d} \u00d7 {n} here; GPT-3: {gd} \u00d7 {gn}",
               "zh": "W_in：这里 {d} \u00d7 {n}；GPT-3：{gd} \u00d7 {gn}"},
    "contexts": {"en": "What neuron {neuron} answers yes to, across the language:\n"
                       "its highest activations in {n} sample texts.",
                 "zh": "神经元 {neuron} 在整个语言里对什么回答\u201c是\u201d：\n它在 {n} 段样本文本中的最高激活。"},
    "contexts_header": {"en": "neuron {neuron}, layer {layer}: highest activations",
                        "zh": "第 {layer} 层神经元 {neuron}：最高激活"},
    "gelu_few": {"en": "GELU squashes negatives to near 0 and lets positives pass:\n"
                       "only {active} of {n} neurons are active (above {t}).",
                 "zh": "GELU 把负数压到接近 0，正数通过：\n{n} 个神经元中只有 {active} 个被激活（大于 {t}）。"},
    "gelu_many": {"en": "GELU squashes negatives to near 0 and lets positives pass:\n"
                        "{active} of {n} neurons are active (above {t}).",
                  "zh": "GELU 把负数压到接近 0，正数通过：\n{n} 个神经元中有 {active} 个被激活（大于 {t}）。"},
    "active_count": {"en": "active (> {t}): {active} of {n}", "zh": "激活（> {t}）：{active} / {n}"},
    "gelu_axis": {"en": "GELU(x)", "zh": "GELU(x)"},
    "x_axis": {"en": "x: a neuron's input", "zh": "x：神经元的输入"},
    "down": {"en": "Each neuron writes its row of W_out, scaled by its activation;\n"
                   "all {n} writes plus a bias add up to one vector of {d}.",
             "zh": "每个神经元写出 W_out 中它的那一行，乘以它的激活；\n全部 {n} 份加上偏置，合成一个 {d} 维向量。"},
    "neuron_n": {"en": "neuron {i}", "zh": "神经元 {i}"},
    "times_row": {"en": "\u00d7 {a}", "zh": "\u00d7 {a}"},
    "rest": {"en": "+ {n} more", "zh": "+ 另外 {n} 个"},
    "mlp_out": {"en": "MLP output", "zh": "MLP 输出"},
    "readout_agrees": {"en": "Read through the unembedding, neuron {neuron}'s row\n"
                             "raises \"{word}\" most; the model's top guess here is \"{next}\".",
                       "zh": "经过解嵌入读出，神经元 {neuron} 的那一行\n最提升 \u201c{word}\u201d；模型在这里的首选是 \u201c{next}\u201d。"},
    "readout_other": {"en": "Read through the unembedding, neuron {neuron}'s row\n"
                            "raises \"{word}\" most: not among the model's top {k} guesses here.",
                      "zh": "经过解嵌入读出，神经元 {neuron} 的那一行最提升 \u201c{word}\u201d：\n它不在模型此处的前 {k} 个候选里。"},
    "readout_langs": {"en": "Read through the unembedding, neuron {neuron}'s row\n"
                            "raises \"{word}\" most. In English the top neuron's word\n"
                            "{en_is} the model's top {k} guesses; in Chinese it {zh_is} them.",
                      "zh": "经过解嵌入读出，神经元 {neuron} 的那一行最提升 \u201c{word}\u201d。\n"
                            "两种语言不同：最活跃神经元最提升的词，\n"
                            "英文里{en_is}模型的前 {k} 个候选里，中文里{zh_is}其中。"},
    "is_agrees": {"en": "is among", "zh": "在"},
    "is_other": {"en": "is not among", "zh": "不在"},
    "readout_header": {"en": "logit added per unit of neuron {neuron}", "zh": "神经元 {neuron} 每单位激活增加的 logit"},
    "residual_big": {"say_en": "The MLP's output is added to the stream: the stream plus what the MLP computes from its normalised copy. Here it is longer than the stream it joins.",
                     "say_zh": 'MLP 的输出加回残差流：残差流，加上 MLP 从它归一化后的副本算出的结果。这里它比它加入的残差流还长。',
                     "en": "The MLP's output is added to the stream: E\u2032 + MLP(LN(E\u2032)).\n"
                           "Here it is longer than the stream it joins.",
                     "zh": "MLP 的输出加回残差流：E\u2032 + MLP(LN(E\u2032))。\n这里它比它加入的残差流还长。"},
    "residual_small": {"say_en": "The MLP's output is added to the stream: the stream plus what the MLP computes from its normalised copy. Here it is shorter than the stream it joins.",
                       "say_zh": 'MLP 的输出加回残差流：残差流，加上 MLP 从它归一化后的副本算出的结果。这里它比它加入的残差流短。',
                       "en": "The MLP's output is added to the stream: E\u2032 + MLP(LN(E\u2032)).\n"
                             "Here it is shorter than the stream it joins.",
                       "zh": "MLP 的输出加回残差流：E\u2032 + MLP(LN(E\u2032))。\n这里它比它加入的残差流短。"},
    "e_prime": {"en": "E\u2032", "zh": "E\u2032"},
    "e_next": {"en": "E\u2032 + MLP", "zh": "E\u2032 + MLP"},
    "all_tokens": {"en": "Every token goes through the same W_in and W_out at once:\n"
                         "one matrix product, {t} \u00d7 {d} by {d} \u00d7 {n}.",
                   "zh": "每个词元同时经过同一个 W_in 和 W_out：\n一次矩阵乘法，{t} \u00d7 {d} 乘 {d} \u00d7 {n}。"},
    "active_short": {"en": "> {t}", "zh": "> {t}"},
    "all_header": {"en": "all {n} neurons per token: grey inactive, green active",
                   "zh": "每个词元的 {n} 个神经元：灰色未激活，绿色激活"},
    "summary": {"en": "The MLP asks many questions of each token on its own,\n"
                      "and adds the answers' directions back into its vector.",
                "zh": "MLP 对每个词元单独提出许多问题，\n再把答案对应的方向加回它的向量。"},
    "where_at": {"en": "at \"{focus}\":", "zh": "在\u201c{focus}\u201d处："},   # the closing map
})

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | Strings({
    "up":          {"en": "The neurons' questions: W_in", "zh": "神经元的问题：W_in"},
    "contexts":    {"en": "A neuron's top contexts", "zh": "一个神经元的高激活语境"},
    "gelu":        {"en": "GELU", "zh": "GELU 激活"},
    "down":        {"en": "Writing back: W_out", "zh": "写回：W_out"},
    "readout":     {"en": "Reading a neuron's row", "zh": "读出神经元的一行"},
    "residual":    {"en": "Adding to the stream", "zh": "加回残差流"},
    "all_tokens":  {"en": "Every token at once", "zh": "所有词元一起"},
})

K_NEURONS = 3        # neurons drawn in the up- and down-projection: the largest activations at the focus
N_CONTEXTS = 4       # top-activating contexts listed for the top neuron
N_WORDS = 5          # words the top neuron's row pushes up most
MAX_TOKENS = 12      # rows of the every-token view
STEP, PAUSE = style.STEP, style.PAUSE


CONTEXT_POOL = 40    # the top contexts searched for N_CONTEXTS distinct ones (streams often share a prefix)


def distinct_contexts(ranked: list[dict], k: int) -> list[dict]:
    """The first k contexts of a ranking whose words differ (identical windows from different streams count once)."""
    seen, out = set(), []
    for c in ranked:
        key = tuple(c["context"])
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out[:k]


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
        if light:        # the choice and the readout only (the other language's, for the story)
            return
        sample = sample if sample is not None else _sample(gpt, self.prompt_lang)
        ranked = neuron_top_contexts(gpt, sample, self.layer, self.top[0], k=CONTEXT_POOL)
        self.contexts = distinct_contexts(ranked, N_CONTEXTS)
        self.sample_size = len(sample["streams"])
        self.all_act = tr["layers"][self.layer]["mlp"]["act"]
        self.all_active = [int(n) for n in (self.all_act > self.threshold).sum(1)]
        self.resid_mid = tr["layers"][self.layer]["resid_mid"][self.focus]
        self.mlp_out = tr["layers"][self.layer]["mlp"]["out"][self.focus]
        self.resid_post = tr["layers"][self.layer]["resid_post"][self.focus]
        self.curve_x = np.linspace(min(-4.0, float(np.floor(st["pre"].min()))),
                                   max(2.0, float(np.ceil(st["pre"].max()))), 121)
        self.curve_y = gelu_curve(self.curve_x)

    def gelu_key(self) -> str:
        return "gelu_few" if self.n_active < self.n / 3 else "gelu_many"

    def readout_key(self) -> str:
        return "readout_agrees" if self.readout["top"][0]["word"] in self.next_top else "readout_other"

    def story_entry(self) -> dict:
        """What the story compares between the languages: the layer, the top neuron, its readout and the guesses."""
        return {"prompt": self.prompt, "focus": self.focus, "mlp_out_norms": self.out_norms, "layer": self.layer,
                "neuron": self.top[0], "readout_word": self.readout["top"][0]["word"], "next_top": self.next_top,
                "readout_key": self.readout_key()}

    def residual_key(self) -> str:
        return "residual_big" if np.linalg.norm(self.mlp_out) > np.linalg.norm(self.resid_mid) else "residual_small"

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
                         "top": self.contexts},
            "gelu_curve": {"x": self.curve_x, "y": self.curve_y},
            "writes_sum_plus_bias": st["out"], "b_out": st["b_out"], "mlp_out": self.mlp_out,
            "readout": {"neuron": self.top[0], "top": self.readout["top"]},
            "next_top": self.next_top,
            "resid_mid": self.resid_mid, "resid_post": self.resid_post,
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
ROW_TOP, ROWS_MID, PITCH = 2.0, 0.9, 0.55
ROWS_SPAN = 4.3     # every token's view: from the first row's centre to the last's, at most (above the caption)
STRIPS_X, STRIPS_W = 0.6, 7.4   # every token's neurons: the strips' centre and width
DOWN_TOP, DOWN_XS, REST_X, EQUALS_X, OUT_X = 2.15, (-5.15, -2.85, -0.55), 1.5, 3.25, 4.55


class MlpSteps(LectureScene):
    name = "mlp_steps"
    strings = S
    beat_titles = BEATS
    TITLE_TOP, NOTE_Y = 1.8, -1.35     # room for the story line under the note

    def title_note(self) -> str:
        m = self.m
        key = "given" if m.layer_given else "chosen"
        note = self.s(key, layer=style.shown(m.layer), focus=m.tokens[m.focus], n=m.n_layer, norm=f"{m.out_norms[m.layer]:.1f}")
        if self.story:    # the default lecture: the same rule's picks in both languages
            from scenes.attention_chapter import title_part
            en, zh = self.story["en"], self.story["zh"]
            same = (en["layer"], en["neuron"]) == (zh["layer"], zh["neuron"])
            story_key = title_part(self, "mlp_story", "mlp_story_same" if same else "mlp_story_differs",
                                   "mlp_story_same if the rule picks the same layer and the same top neuron on the "
                                   "English and the Chinese default prompts, else mlp_story_differs naming both",
                                   en=[en["layer"], en["neuron"]], zh=[zh["layer"], zh["neuron"]])
            note += "\n" + self.s(story_key, en_layer=style.shown(en["layer"]), en_neuron=en["neuron"],
                                   zh_layer=style.shown(zh["layer"]), zh_neuron=zh["neuron"])
        return note

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
        words = [style.token_label(t["word"]) for t in m.readout["top"]]
        amounts = [t["logit_per_unit"] for t in m.readout["top"]]
        ys = [1.6 - r * 0.6 for r in range(len(words))]
        self.read_header = Label(self.s("readout_header", neuron=m.top[0]), font_size=style.LABEL, color=LOGIT)
        self.read_header.move_to([0, 2.6, 0])
        self.read_words = LabelColumn(words, ys, -2.2)
        unit = 3.6 / max(max(abs(a) for a in amounts), 1e-9)
        self.read_bars = BarColumn(amounts, ys, -1.9, unit, LOGIT)
        self.read_numbers = NumberColumn([style.signed(a, 2) for a in amounts], ys, 3.0, color=LOGIT)

    def build_residual(self):
        m, lang = self.m, self.lang
        xs = [-3.6, 0.0, 3.6]
        d = sum_decimals((m.resid_mid, m.mlp_out, m.resid_post), shown=6)      # one sum: one number of decimals
        # it adds up as shown; the MLP's output keeps the labels the beat before drew
        footed = footed_columns((m.resid_mid, m.mlp_out, m.resid_post), shown=6, decimals=d, keep=(1,))
        cols = [VectorColumn(v, lang=lang, shown=6, pitch=0.42, decimals=d, texts=texts)
                for v, texts in zip((m.resid_mid, m.mlp_out, m.resid_post), column_texts(footed))]
        self.record_sum("residual", "E\u2032 + MLP output = E\u2032 + MLP", footed)
        self.res_columns = VGroup(*[place_column(c, x, COLUMN_TOP) for c, x in zip(cols, xs)])
        self.res_columns[0].brackets.set_color(EMBEDDING)
        self.res_columns[1].brackets.set_color(NEURON_ACTIVE)
        self.res_columns[2].brackets.set_color(EMBEDDING_UPDATED)
        heads = [(self.s("e_prime"), EMBEDDING), (self.s("mlp_out"), NEURON_ACTIVE), (self.s("e_next"),
                                                                                       EMBEDDING_UPDATED)]
        self.res_headers = VGroup(*[self.header(t, x, c, COLUMN_TOP + 0.35) for (t, c), x in zip(heads, xs)])
        y = self.res_columns[0].brackets.get_center()[1]
        self.res_signs = VGroup(Label("+", font_size=style.HEADER).move_to([-1.8, y, 0]),
                                Label("=", font_size=style.HEADER).move_to([1.8, y, 0]))

    def build_all(self):
        m = self.m
        T = len(m.tokens)
        pitch = min(PITCH, ROWS_SPAN / max(T - 1, 1))          # MAX_TOKENS rows still clear one another
        top = min(ROW_TOP, ROWS_MID + (T - 1) * pitch / 2)     # a short prompt sits mid-stage
        ys = [top - r * pitch for r in range(T)]
        # the strips leave the chips and their indices room for the longest words (chips hold a word's whole ink)
        self.all_tokens = TokenColumn(m.tokens, list(range(T)), ys, right=STRIPS_X - STRIPS_W / 2 - 0.2)
        limit = float(np.ceil(m.all_act.max() * 10) / 10)
        self.values["neuron_colour_limit"] = limit
        self.all_strips = VGroup(*[NeuronStrip(a, m.threshold, limit, width=STRIPS_W, height=pitch * 0.6)
                                   .move_to([STRIPS_X, y, 0]) for a, y in zip(m.all_act, ys)])
        self.all_counts = VGroup(*[NumberText(str(n), style.SMALL, NEURON_ACTIVE).place(5.8, y - 0.1)
                                   for n, y in zip(m.all_active, ys)])
        self.all_header = Label(self.s("all_header", n=m.n), font_size=style.SMALL, color=MUTED)
        self.all_header.move_to([STRIPS_X, top + 0.6, 0])
        self.count_header = self.header(self.s("active_short", t=f"{m.threshold:g}"), 5.6, NEURON_ACTIVE,
                                        top + 0.45)
        # the header ends a clear gap before the counts' header (in English it is nearly as wide as strips and counts)
        self.all_header.shift(RIGHT * min(0.0, self.count_header.get_left()[0] - 0.5 - self.all_header.get_right()[0]))
        self.all_formula = self.tex("A", "=", r"\mathrm{GELU}(X W_{in} + b_{in})",
                                    colours={"A": NEURON_ACTIVE})
        self.all_formula.move_to([0.3, FORMULA_Y, 0])
        self.focus_frame = SurroundingRectangle(self.all_strips[m.focus], color=TEXT, buff=0.05)

    # --- the beats ------------------------------------------------------------------------------------------
    def beat_up(self):
        m = self.m
        self.say("up", k=K_NEURONS, focus=m.tokens[m.focus])
        p = self.up_product
        self.play(FadeIn(self.up_formula), FadeIn(p.matrix), FadeIn(p.vector), FadeIn(p.plus), FadeIn(p.bias),
                  FadeIn(p.equals), FadeIn(p.output.brackets), FadeIn(p.output.size_label), run_time=STEP)
        p.play(self, slow_rows=1)
        self.play(FadeIn(self.neuron_ids), FadeIn(self.shapes), run_time=STEP)
        self.wait(PAUSE)

    def beat_contexts(self):
        m = self.m
        self.say("contexts", neuron=m.top[0], n=m.sample_size)
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
        self.say("down", n=m.n, d=m.d)
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
        keys = {lang: e["readout_key"] for lang, e in (self.story or {}).items()}
        key = self.caption_rule("readout", "readout_langs" if len(set(keys.values())) > 1 else m.readout_key(),
                                f"the word the top neuron's row raises most is among the model's top {N_WORDS} next "
                                "words at the focus: readout_agrees, else readout_other; in the default lecture, "
                                "readout_langs when that differs between the English and the Chinese default prompts",
                                word=m.readout["top"][0]["word"], next_top=m.next_top, languages=keys)
        self.clear_stage()     # first: a caption of three lines (each language's finding) rises over the last beat
        self.say(key, neuron=m.top[0], word=style.token_label(m.readout["top"][0]["word"]),
                 next=style.token_label(m.next_top[0]), k=N_WORDS,
                 **({f"{lang}_is": self.s("is_" + k.split("_")[1]) for lang, k in keys.items()} if keys else {}))
        self.play(FadeIn(self.read_header), FadeIn(self.read_words), run_time=STEP)
        self.play(*[GrowFromEdge(b, LEFT) for b in self.read_bars.bars], FadeIn(self.read_numbers), run_time=STEP)
        self.wait(PAUSE)

    def beat_residual(self):
        m = self.m
        key = self.caption_rule("residual", m.residual_key(), "|MLP output| > |E'| at the focus: residual_big, "
                                "else residual_small", mlp_out_norm=float(np.linalg.norm(m.mlp_out)),
                                resid_mid_norm=float(np.linalg.norm(m.resid_mid)))
        self.say(key)
        self.clear_stage()
        c = self.res_columns
        self.play(FadeIn(c[0]), FadeIn(c[1]), FadeIn(self.res_headers[:2]), FadeIn(self.res_signs[0]),
                  run_time=STEP)
        self.play(FadeIn(self.res_signs[1]), TransformFromCopy(VGroup(c[0].entries, c[1].entries), c[2].entries),
                  FadeIn(c[2].brackets), FadeIn(c[2].size_label), FadeIn(self.res_headers[2]), run_time=2 * STEP)
        self.wait(PAUSE)

    def beat_all_tokens(self):
        m = self.m
        self.say("all_tokens", t=len(m.tokens), d=m.d, n=m.n)
        self.clear_stage()
        self.play(FadeIn(self.all_formula), FadeIn(self.all_tokens), FadeIn(self.all_header), run_time=STEP)
        self.play(*[FadeIn(s, shift=RIGHT * 0.2) for s in self.all_strips], FadeIn(self.all_counts), FadeIn(self.count_header),
                  run_time=STEP)
        self.play(Create(self.focus_frame), run_time=0.8)
        self.wait(PAUSE)

    def beat_summary(self):
        """Where the questions are asked: the pipeline lit at this layer's MLP, with how many of its neurons the
        focus token makes active."""
        self.say("summary")
        m = self.m
        self.show_where([f"mlp:{m.layer}"], [
            (self.s("where_at", focus=style.token_label(m.tokens[m.focus])), MUTED),
            (self.s("active_count", t=f"{m.threshold:g}", active=m.n_active, n=m.n), NEURON_ACTIVE)],
            layer=m.layer, d_mlp=m.n, active_count=m.n_active, threshold=m.threshold)
