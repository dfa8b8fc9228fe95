"""Superposition in our own model: more words than dimensions, a polysemantic neuron, a fact spread over neurons.

    manim render -ql scenes/superposition_in_gpt.py SuperpositionInGpt
    python render.py superposition_in_gpt --lang zh

The angles between all the model's token embeddings against random directions of the same size; the MLP neuron
whose top-activating contexts end in words of the most unrelated topics (model.analysis.superposition, over the
documented sample); the fact "<first> <last> plays <sport>" read per neuron by direct logit attribution; and
what the seed draws from it. Every number comes from model.analysis; every value shown is in self.values.
"""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, RIGHT, FadeIn, GrowFromEdge, LaggedStart, VGroup, VMobject

from model import language as model_language
from model.analysis import sample_states
from model.analysis.patching import MEAN_SAMPLE
from model.analysis.superposition import (POLYSEMANTIC_TOPICS, TOP_CONTEXTS, embedding_angles,
                                          fact_neuron_shares, polysemantic_neuron)
from model.config import GPT3_175B
from scenes import style
from scenes.components import BarColumn, Label, LabelColumn, NumberColumn, NumberText
from scenes.components.superposition import AngleHistogram
from scenes.lecture import LectureScene
from scenes.params import AUTO, ParamError
from scenes.prompts import fact_prompt, join_words
from scenes.style import ANGLE_BARS, MUTED, NEURON_ACTIVE, RANDOM_ESTIMATE, SHARED, TEXT, TOPIC_COLOURS, Strings

S = SHARED | Strings({
    "title": {"en": "Superposition in our model", "zh": "我们模型里的叠加"},
    "subtitle": {"en": "More things to store than dimensions to store them in", "zh": "要存的东西比维度多"},
    "note": {"en": "The numbers: our trained model ({d} dimensions): its {n} word\n"
                   "embeddings, its {k} MLP neurons over {s} sample texts, one fact.",
             "zh": "数字来自我们训练的模型（{d} 维）：{n} 个词嵌入，\n{k} 个 MLP 神经元在 {s} 段样本上的激活，一个事实。"},
    "like_random": {"en": "{n} words in {d} dimensions: not all at 90°, spread around it\n"
                          "like random ones: {s} of pairs within 85\u201395°, random {r}.",
                    "zh": "{d} 维里的 {n} 个词：夹角像随机方向一样分布在 90° 附近，\n"
                          "并不都是 90°：{s} 的词对在 85\u201395° 内，随机为 {r}。",
                    "say_en": "{n} words in {d} dimensions. The bars are the angles between every pair of our word "
                              "embeddings; the curve is what random directions of the same size would give. Both "
                              "spread around ninety degrees, not all at ninety, and alike. In a band ten degrees wide, "
                              "85 to 95 degrees, wider than the last scene's 89 to 91: {s} of our pairs, against {r} "
                              "for random directions.",
                    "say_zh": "{d} 维里的 {n} 个词。柱子是我们每一对词嵌入之间的夹角，曲线是同样维数的随机方向会给出的"
                              "分布。两者都分布在 90 度附近，并不都是 90 度，而且差不多。换一个十度宽的区间，85 到 95 度，"
                              "比上一段的 89 到 91 度宽：{s} 的词对落在其中，随机方向是 {r}。"},
    "less_random": {"en": "{n} words in {d} dimensions: less perpendicular than random\n"
                          "directions ({s} of pairs within 85\u201395°, random {r}).",
                    "zh": "{d} 维里的 {n} 个词：不如随机方向垂直\n（{s} 的词对在 85\u201395° 内，随机为 {r}）。"},
    "more_random": {"en": "{n} words in {d} dimensions: more perpendicular than random\n"
                          "directions ({s} of pairs within 85\u201395°, random {r}).",
                    "zh": "{d} 维里的 {n} 个词：比随机方向更垂直\n（{s} 的词对在 85\u201395° 内，随机为 {r}）。"},
    "hist_header": {"en": "angles between all {pairs} pairs of word embeddings", "zh": "全部 {pairs} 对词嵌入之间的夹角"},
    "ours": {"en": "our model's words", "zh": "我们模型的词"},
    "random": {"en": "random directions", "zh": "随机方向"},
    "polysemantic": {"en": "Neuron {i} of layer {l}, the most mixed of all {all}: its top {n}\n"
                           "contexts end in words of {k} topics. One neuron, many features.",
                     "zh": "第 {l} 层神经元 {i}：全部 {all} 个神经元中最杂的，前 {n} 个语境\n"
                           "结尾的词分属 {k} 个主题：一个神经元，多个特征。",
                     "say_en": "We searched all {all} neurons for the one whose top {n} contexts end in words of the "
                               "most topics, because a neuron that fires for unrelated things is what superposition "
                               "looks like from inside. Neuron {i} of layer {l} wins: its top {n} contexts, listed "
                               "with their activations, end in words of {k} different topics. One neuron, many "
                               "features.",
                     "say_zh": "我们在全部 {all} 个神经元里，找前 {n} 个语境结尾的词主题最多的那一个，因为对互不相关的"
                               "东西都激活，正是从内部看到的叠加。胜出的是第 {l} 层神经元 {i}：列出的前 {n} 个语境和"
                               "它们的激活，结尾的词分属 {k} 个主题。一个神经元，多个特征。"},
    "monosemantic": {"en": "No neuron's top {n} contexts span {need} topics here;\n"
                           "the most varied, neuron {i} of layer {l}, spans {k}.",
                     "zh": "这里没有神经元的前 {n} 个语境跨越 {need} 个主题；\n最杂的第 {l} 层神经元 {i} 跨越 {k} 个。"},
    "neuron_header": {"en": "layer {l}, neuron {i}: highest activations", "zh": "第 {l} 层神经元 {i}：最高激活"},
    "topic_people": {"en": "people", "zh": "人名"},
    "topic_sports": {"en": "sports", "zh": "运动"},
    "topic_places of people": {"en": "cities, countries", "zh": "城市、国家"},
    "topic_creatures": {"en": "creatures", "zh": "动物"},
    "topic_looks": {"en": "appearance", "zh": "外观"},           # colours, textures, sizes
    "topic_habitats": {"en": "habitats", "zh": "栖息地"},
    "topic_movements": {"en": "movements", "zh": "动作"},
    "topic_function words": {"en": "function words", "zh": "功能词"},
    "spread": {"en": "\"{fact} {answer}\": no single neuron holds it.\n"
                     "Of the push towards \"{answer}\", the top neuron gives {top};\n"
                     "{half} neurons give half, {n90} give 90%.",
               "zh": "\u201c{fact}{answer}\u201d不属于单个神经元：\n"
                     "在推向\u201c{answer}\u201d的推力中，最大的神经元只占 {top}；\n"
                     "{half} 个神经元给出一半，{n90} 个给出 90%。",
               "say_en": "The fact {fact} {answer}: no single neuron holds it. Each bar is one neuron's share of "
                         "the push towards the word {answer}, out of all the neurons that push towards it. The top "
                         "neuron gives {top}; it takes {half} neurons for half of the push, and {n90} for ninety "
                         "percent.",
               "say_zh": "“{fact}{answer}”这个事实不属于单个神经元。每根柱是一个神经元在所有推向“{answer}”的推力中"
                         "所占的份额。最大的神经元只占 {top}；一半推力要 {half} 个神经元，九成要 {n90} 个。"},
    "concentrated": {"en": "\"{fact} {answer}\" rests mostly on one neuron:\n"
                           "of the push towards \"{answer}\", it gives {top};\n"
                           "{half} neurons give half, {n90} give 90%.",
                     "zh": "\u201c{fact}{answer}\u201d主要靠一个神经元：\n"
                           "在推向\u201c{answer}\u201d的推力中，它占 {top}；\n"
                           "{half} 个神经元给出一半，{n90} 个给出 90%。"},
    "spread_header": {"en": "share of the push towards \"{answer}\", per neuron", "zh": "每个神经元推向\u201c{answer}\u201d的份额"},
    "spread_count": {"en": "{pos} of {all} neurons push towards it: their pushes are 100%",
                     "zh": "{all} 个神经元中有 {pos} 个推向它：它们的推力合计 100%"},
    "neuron_name": {"en": "L{l} #{i}", "zh": "L{l} #{i}"},
    # the closing caption states what the histogram measured (a rule over the word and dimension counts)
    "summary": {"en": "{n} words share {d} dimensions: more features than dimensions.\n"
                      "{s} of their pairs lie within 85\u201395° (random directions: {r}).",
                "zh": "{n} 个词共享 {d} 个维度：特征比维度多。\n其中 {s} 的词对夹角在 85\u201395° 之内（随机方向：{r}）。"},
    "summary_reading": {"en": "Reading a model: {n} words in {d} dimensions share directions;\n"
                              "one neuron mixes {k} topics; half a fact's push takes {half} neurons.",
                        "zh": "读模型时：{d} 维里的 {n} 个词共用方向；\n"
                              "一个神经元混着 {k} 个主题；一个事实的一半推力要靠 {half} 个神经元。",
                        "say_en": "What superposition means for reading a model: with {n} words in {d} dimensions, "
                                  "features must share directions. So one neuron, like neuron {i} of layer {l}, "
                                  "mixes {k} topics; and one fact, the push towards the word {answer}, needs {half} "
                                  "neurons for half of it. The map lights the embedding and every MLP layer: no "
                                  "single neuron is the unit to read.",
                        "say_zh": "叠加对读模型意味着什么：{d} 维里有 {n} 个词，特征只能共用方向。所以一个神经元，比如"
                                  "第 {l} 层神经元 {i}，混着 {k} 个主题；一个事实，推向“{answer}”这个词的推力，一半就要"
                                  "靠 {half} 个神经元。图上亮的是嵌入和每一层多层感知机：单个神经元不是读模型的单位。"},
    "summary_fewer": {"en": "{n} words in {d} dimensions: no more features than dimensions here.\n"
                            "{s} of their pairs lie within 85\u201395° (random directions: {r}).",
                      "zh": "{d} 维里的 {n} 个词：这里特征并不比维度多。\n其中 {s} 的词对夹角在 85\u201395° 之内（随机方向：{r}）。"},
    "where_words": {"en": "{n} words, {d} dimensions", "zh": "{n} 个词，{d} 维"},   # the closing map
    "where_push": {"en": "\"{answer}\": half its push", "zh": "\u201c{answer}\u201d的一半推力"},
    "where_from": {"en": "from {half} of {all} neurons", "zh": "来自 {all} 个神经元中的 {half} 个"},
})

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | Strings({
    "embeddings":  {"en": "Our embeddings' angles", "zh": "我们嵌入向量的夹角"},
    "neuron":      {"en": "One neuron's contexts", "zh": "一个神经元的语境"},
    "spread":      {"en": "One fact's neurons", "zh": "一个事实的神经元"},
})

HIST = dict(x=-5.6, y=-1.5, width=11.2, height=2.9)
N_ROWS = TOP_CONTEXTS   # contexts shown: all the rule looked at
N_BARS = 10             # neurons shown in the spread
STEP, PAUSE = style.STEP, style.PAUSE


def prompt_language(tokens: list[str]) -> str:
    return "en" if tokens and tokens[0] in model_language.vocabulary_of("en") else "zh"


class SuperpositionInGpt(LectureScene):
    name = "superposition_in_gpt"
    strings = S
    beat_titles = BEATS

    def title_note(self) -> str:
        c = self.gpt.config
        return self.s("note", d=c.n_embd, n=self.emb["words"], k=c.n_layer * c.n_inner, s=self.sample_size)

    # --- the numbers -----------------------------------------------------------------------------------------
    def prepare(self):
        gpt = self.gpt
        chosen = fact_prompt(self.lang) if self.params["prompt"] == AUTO else None
        prompt = chosen["prompt"] if chosen else self.params["prompt"]
        tokens = [gpt.tokenizer.words[i] for i in gpt.encode(prompt)]
        self.prompt_lang = prompt_language(tokens)
        if len(tokens) < 2:
            raise ParamError("prompt: it must end with a person's first and last name")
        first, last = tokens[-2:]
        g = model_language.Language().grammar(self.prompt_lang)
        if (first, last) not in g.person:
            raise ParamError(f"prompt: it must end with a person's first and last name, got {first!r} {last!r}")
        self.params["prompt"] = prompt
        self.emb = embedding_angles(gpt)
        sample = sample_states(gpt, model_language.Language(), MEAN_SAMPLE["n_streams"], MEAN_SAMPLE["seed"],
                               lang=self.prompt_lang)
        self.sample_size = len(sample["streams"])
        self.poly = polysemantic_neuron(gpt, sample)
        self.fact = fact_neuron_shares(gpt, first, last, self.prompt_lang)
        self.values.update({
            "prompt": prompt, "prompt_rule": chosen, "person": [first, last], "prompt_lang": self.prompt_lang,
            "embeddings": self.emb, "neuron": self.poly,
            "sample": {**MEAN_SAMPLE, "lang": self.prompt_lang}, "fact": self.fact,
            "gpt3": {"d_model": GPT3_175B.n_embd},
        })
        self.build_embeddings()
        self.build_neuron()
        self.build_spread()

    def build_embeddings(self):
        e = self.emb
        lo = int(min(45, e["min_deg"] // 5 * 5))
        hi = 180 - lo
        top = max(max(e["counts"]), max(e["random_expected"]))
        self.hist = AngleHistogram(lo, hi, top, width=HIST["width"], height=HIST["height"], color=ANGLE_BARS)
        self.hist.shift([HIST["x"], HIST["y"], 0] - self.hist.axis.get_start())
        self.hist.bars.become(self.hist.bars_for(e["counts"]))
        self.values["histogram_view"] = {"lo_deg": lo, "hi_deg": hi, "full_height_count": top}
        points = [self.hist.point(k + 0.5, e["random_expected"][k] / top * HIST["height"]) for k in range(lo, hi)]
        self.random_curve = VMobject(stroke_color=RANDOM_ESTIMATE, stroke_width=4)
        self.random_curve.set_points_smoothly(points)
        self.emb_header = Label(self.s("hist_header", pairs=f"{e['pairs']:,}"), font_size=style.LABEL)
        self.emb_header.move_to([0, 3.05, 0])
        self.emb_legend = VGroup()
        for r, (key, colour) in enumerate((("ours", ANGLE_BARS), ("random", RANDOM_ESTIMATE))):
            y = 2.2 - r * 0.5
            mark = VMobject(stroke_color=colour, stroke_width=6).set_points_as_corners([[2.0, y + 0.12, 0],
                                                                                        [2.45, y + 0.12, 0]])
            text = Label(self.s(key), font_size=style.SMALL, color=colour)
            text.shift(RIGHT * (2.6 - text.get_left()[0])).on_baseline(y)
            self.emb_legend.add(VGroup(mark, text))

    def build_neuron(self):
        p = self.poly
        self.ctx_header = Label(self.s("neuron_header", l=style.shown(p["layer"]), i=p["neuron"]), font_size=style.LABEL,
                                color=NEURON_ACTIVE)
        self.ctx_header.move_to([0, 2.95, 0])
        join_ = " " if self.prompt_lang == "en" else ""
        self.ctx_rows, self.ctx_topics, self.ctx_numbers = VGroup(), VGroup(), VGroup()
        for r, c in enumerate(p["contexts"][:N_ROWS]):
            y = 2.05 - r * 0.55
            before = join_.join(style.token_label(w) for w in c["context"][-4:-1])
            row = VGroup()
            if before:
                row.add(Label(before + join_, font_size=style.LABEL, color=MUTED))
            row.add(Label(style.token_label(c["token"]), font_size=style.LABEL, color=TEXT))
            row.arrange(RIGHT, buff=0.12 if self.prompt_lang == "en" else 0.05, aligned_edge=DOWN)
            row.shift([0.6 - row.get_right()[0], 0, 0])
            for part in row:
                part.on_baseline(y)
            row.phrase = True          # its parts are one line of text, in two colours (tests/layout_checks.py)
            self.ctx_rows.add(row)
            topic = Label(self.s("topic_" + c["topic"]), font_size=style.SMALL, color=TOPIC_COLOURS[c["topic"]])
            topic.shift(RIGHT * (1.0 - topic.get_left()[0])).on_baseline(y)
            self.ctx_topics.add(topic)
            self.ctx_numbers.add(NumberText(f"{c['activation']:.2f}", style.LABEL, NEURON_ACTIVE).place(5.9, y))

    def build_spread(self):
        f = self.fact
        top = f["top"][:N_BARS]
        ys = [2.3 - r * 0.36 for r in range(len(top))]
        self.spread_header = Label(self.s("spread_header", answer=f["answer"]), font_size=style.LABEL,
                                   color=NEURON_ACTIVE)
        self.spread_header.move_to([0, 3.0, 0])
        self.spread_names = LabelColumn([self.s("neuron_name", l=style.shown(t["layer"]), i=t["neuron"]) for t in top], ys,
                                        -2.4, colours=[MUTED] * len(top), font_size=style.SMALL)
        unit = 4.6 / max(t["share"] for t in top)
        self.spread_bars = BarColumn([t["share"] for t in top], ys, -2.1, unit, NEURON_ACTIVE, height=0.26)
        self.spread_numbers = NumberColumn([style.percent(t["share"]) for t in top], ys, 4.2, color=NEURON_ACTIVE,
                                           font_size=style.SMALL)
        self.spread_count = Label(self.s("spread_count", pos=f["positive_neurons"], all=f["neurons"]),
                                  font_size=style.SMALL, color=MUTED)
        self.spread_count.move_to([0, ys[-1] - 0.5, 0])

    # --- the beats -------------------------------------------------------------------------------------------
    def beat_embeddings(self):
        e = self.emb
        diff = e["within_85_95"] - e["random_within_85_95"]
        key = "like_random" if abs(diff) < 0.02 else ("less_random" if diff < 0 else "more_random")
        self.caption_rule("embeddings", key, "share of word pairs within 85-95 degrees minus random's: within 2 "
                          "points: like_random; lower: less_random; higher: more_random",
                          within=e["within_85_95"], random=e["random_within_85_95"])
        self.say(key, n=e["words"], d=e["dim"], s=style.percent(e["within_85_95"]),
                 r=style.percent(e["random_within_85_95"]))
        self.play(FadeIn(self.emb_header), FadeIn(self.hist.axis), FadeIn(self.hist.ticks), run_time=STEP)
        self.play(GrowFromEdge(self.hist.bars, DOWN), FadeIn(self.emb_legend[0]), run_time=STEP)
        self.play(FadeIn(self.random_curve), FadeIn(self.emb_legend[1]), run_time=STEP)
        self.wait(PAUSE)

    def beat_neuron(self):
        p = self.poly
        key = "polysemantic" if p["polysemantic"] else "monosemantic"
        self.caption_rule("neuron", key, p["rule"], topics=p["topics"], layer=p["layer"], neuron=p["neuron"])
        self.say(key, i=p["neuron"], l=style.shown(p["layer"]), n=TOP_CONTEXTS, k=len(p["topics"]), need=POLYSEMANTIC_TOPICS,
                 all=p["neurons_searched"])
        self.clear_stage()
        self.play(FadeIn(self.ctx_header), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(VGroup(r, t, n), shift=RIGHT * 0.2)
                                for r, t, n in zip(self.ctx_rows, self.ctx_topics, self.ctx_numbers)],
                              lag_ratio=0.2), run_time=2 * STEP)
        self.wait(PAUSE)

    def beat_spread(self):
        self.clear_stage()     # the contexts go first: this caption is taller than the one before
        f = self.fact
        top = f["top"][0]["share"]
        key = "spread" if top < 0.5 else "concentrated"
        self.caption_rule("spread", key, "the largest neuron's share of the push below one half: spread, else "
                          "concentrated", top_share=top, for_half=f["for_half"], for_90=f["for_90"])
        self.say(key, fact=join_words(f["words"], self.prompt_lang), answer=f["answer"], top=style.percent(top),
                 half=f["for_half"], n90=f["for_90"])
        self.play(FadeIn(self.spread_header), FadeIn(self.spread_names), run_time=STEP)
        self.play(*[GrowFromEdge(b, LEFT) for b in self.spread_bars.bars], FadeIn(self.spread_numbers),
                  run_time=STEP)
        self.play(FadeIn(self.spread_count), run_time=STEP)
        self.wait(PAUSE)

    def beat_summary(self):
        e = self.emb
        f, p = self.fact, self.poly
        more = e["words"] > e["dim"]
        reading = more and p["polysemantic"] and f["top"][0]["share"] < 0.5
        key = self.caption_rule("summary", "summary_reading" if reading else ("summary" if more else "summary_fewer"),
                                "more word embeddings than dimensions, the neuron beat's neuron polysemantic and the "
                                "fact's largest neuron share below one half: summary_reading; else more word "
                                "embeddings than dimensions: summary; else summary_fewer",
                                words=e["words"], dim=e["dim"], polysemantic=p["polysemantic"],
                                top_share=f["top"][0]["share"])
        self.say(key, n=e["words"], d=e["dim"], s=style.percent(e["within_85_95"]),
                 r=style.percent(e["random_within_85_95"]), i=p["neuron"], l=style.shown(p["layer"]),
                 k=len(p["topics"]), half=f["for_half"], answer=f["answer"])
        self.show_where(["embedding", "mlp:*"], [
            (self.s("where_words", n=e["words"], d=e["dim"]), TEXT),
            (self.s("where_push", answer=f["answer"]), TEXT),
            (self.s("where_from", half=f["for_half"], all=f["neurons"]), MUTED)],
            words=e["words"], dim=e["dim"], for_half=f["for_half"], neurons=f["neurons"])
