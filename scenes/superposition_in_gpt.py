"""Superposition in our own model: more words than dimensions, a polysemantic neuron, a fact spread over neurons.

    manim render -ql scenes/superposition_in_gpt.py SuperpositionInGpt
    python render.py superposition_in_gpt --lang zh

The angles between all the model's token embeddings against two nulls: random directions of the same size, and the
same number of directions packed as perpendicular as the lab can (the crowding n words in d dimensions force); the
MLP neuron whose top-activating contexts end in words of the most unrelated topics (model.analysis.superposition,
over the documented sample); the MLP chapter's running example (its person, scenes/prompts.py sport_fact_prompt),
"<first> <last> plays <sport>", read per neuron by direct logit attribution; and why superposition matters. Every
number comes from model.analysis; every value shown is in self.values.
"""

from __future__ import annotations

from manim import DOWN, RIGHT, DashedVMobject, FadeIn, GrowFromEdge, LaggedStart, VGroup, VMobject

from model import language as model_language
from model.analysis import sample_states
from model.analysis.patching import MEAN_SAMPLE
from model.analysis.superposition import (POLYSEMANTIC_TOPICS, TOP_CONTEXTS, embedding_angles,
                                          fact_neuron_shares, packed_angles, polysemantic_neuron)
from model.config import GPT3_175B
from scenes import style
from scenes.components import BarChart, BarScale, Label, NumberText
from scenes.components.superposition import AngleHistogram
from scenes.lecture import LectureScene
from scenes.params import AUTO, ParamError
from scenes.prompts import join_words, person_prompt
from scenes.style import ANGLE_BARS, BOUND, MUTED, NEURON_ACTIVE, RANDOM_ESTIMATE, SHARED, TEXT, TOPIC_COLOURS
from scenes.words import Words

WORDS = Words.beside(__file__)     # superposition_in_gpt.toml: the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

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

    # --- the numbers -----------------------------------------------------------------------------------------
    def prepare(self):
        gpt = self.gpt
        # the default: the MLP chapter's running example, its person (the source article's Michael Jordan)
        chosen = person_prompt(self.lang, gpt) if self.params["prompt"] == AUTO else None
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
        self.packed = packed_angles(self.emb["words"], self.emb["dim"])
        sample = sample_states(gpt, model_language.Language(), MEAN_SAMPLE["n_streams"], MEAN_SAMPLE["seed"],
                               lang=self.prompt_lang)
        self.sample_size = len(sample["streams"])
        self.poly = polysemantic_neuron(gpt, sample)
        self.fact = fact_neuron_shares(gpt, first, last, self.prompt_lang)
        self.values.update({
            "prompt": prompt, "prompt_rule": chosen, "person": [first, last], "prompt_lang": self.prompt_lang,
            "embeddings": self.emb, "packed": self.packed, "neuron": self.poly,
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
        top = max(max(e["counts"]), max(e["random_expected"]), max(self.packed["counts"]))
        self.hist = AngleHistogram(lo, hi, top, width=HIST["width"], height=HIST["height"], color=ANGLE_BARS)
        self.hist.shift([HIST["x"], HIST["y"], 0] - self.hist.axis.get_start())
        self.hist.bars.become(self.hist.bars_for(e["counts"]))
        self.values["histogram_view"] = {"lo_deg": lo, "hi_deg": hi, "full_height_count": top}
        points = [self.hist.point(k + 0.5, e["random_expected"][k] / top * HIST["height"]) for k in range(lo, hi)]
        self.random_curve = VMobject(stroke_color=RANDOM_ESTIMATE, stroke_width=4)
        self.random_curve.set_points_smoothly(points)
        packed = [self.hist.point(k + 0.5, self.packed["counts"][k] / top * HIST["height"]) for k in range(lo, hi)]
        self.packed_curve = DashedVMobject(VMobject(stroke_color=BOUND, stroke_width=4).set_points_smoothly(packed),
                                           num_dashes=60)
        self.emb_header = Label(self.s("hist_header", pairs=f"{e['pairs']:,}"), font_size=style.LABEL)
        self.emb_header.move_to([0, 3.05, 0])
        self.emb_legend = VGroup()
        for r, (key, colour) in enumerate((("ours", ANGLE_BARS), ("random", RANDOM_ESTIMATE), ("packed", BOUND))):
            y = 2.2 - r * 0.5
            mark = VMobject(stroke_color=colour, stroke_width=6).set_points_as_corners([[2.0, y + 0.12, 0],
                                                                                        [2.45, y + 0.12, 0]])
            if key == "packed":
                mark = DashedVMobject(mark, num_dashes=3)
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
        shares = [t["share"] for t in top]
        self.spread = BarChart(shares, ys, BarScale.fit(-2.1, 4.6, shares), NEURON_ACTIVE, bar_height=0.26,
                               header=self.s("spread_header", answer=f["answer"]), header_at=(0, 3.0),
                               header_colour=NEURON_ACTIVE, header_size=style.LABEL,
                               labels=[self.s("neuron_name", l=style.shown(t["layer"]), i=t["neuron"]) for t in top],
                               label_right=-2.4, label_colours=[MUTED] * len(top), label_size=style.SMALL,
                               numbers=style.percent, number_right=4.2, number_colour=NEURON_ACTIVE,
                               number_size=style.SMALL)
        self.spread_count = Label(self.s("spread_count", pos=f["positive_neurons"], all=f["neurons"]),
                                  font_size=style.SMALL, color=MUTED)
        self.spread_count.move_to([0, ys[-1] - 0.5, 0])

    # --- the beats -------------------------------------------------------------------------------------------
    def beat_embeddings(self):
        e, k = self.emb, self.packed
        ours, nulls = e["within_85_95"], (e["random_within_85_95"], k["within_85_95"])
        key = "less_random" if ours < min(nulls) - 0.02 else ("more_random" if ours > max(nulls) + 0.02
                                                             else "like_random")
        self.caption_rule("embeddings", key, "share of word pairs within 85-95 degrees against the two nulls' "
                          "(random directions; the lab's most perpendicular packing of as many directions): within "
                          "2 points of the range they span: like_random (the crowding n words in d dimensions "
                          "force); lower: less_random; higher: more_random",
                          within=ours, random=nulls[0], packed=nulls[1])
        self.say(key, n=e["words"], d=e["dim"], s=style.percent(ours), r=style.percent(nulls[0]),
                 p=style.percent(nulls[1]))
        self.play(FadeIn(self.emb_header), FadeIn(self.hist.axis), FadeIn(self.hist.ticks), run_time=STEP)
        self.play(GrowFromEdge(self.hist.bars, DOWN), FadeIn(self.emb_legend[0]), run_time=STEP)
        self.play(FadeIn(self.random_curve), FadeIn(self.emb_legend[1]), run_time=STEP)
        self.play(FadeIn(self.packed_curve), FadeIn(self.emb_legend[2]), run_time=STEP)
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
        self.play(FadeIn(self.spread.header), FadeIn(self.spread.labels), run_time=STEP)
        self.play(*self.spread.grow(), FadeIn(self.spread.numbers),
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
