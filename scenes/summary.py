"""The close: the advantages of the design, each with a number from our own model.

    manim render -ql scenes/summary.py Summary
    python render.py summary --lang zh

Global context from the attention chapter's head rule (scenes/prompts.py lookback_head), parallel processing
from the recorded benchmark (benchmarks/parallel_pass.py → docs/lab/parallel_pass.json), rich representations from
the logit lens (model.analysis.lens), scaling from GPT-3's config (model.params) and the superposition lab's
random-direction estimate (model.superposition.random_count_estimate).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from manim import RIGHT, UP, CurvedArrow, FadeIn, LaggedStart, VGroup

from model import GPT3_175B
from model.analysis.lens import logit_lens
from model.analysis.superposition import STRICT_BAND_DEG, WIDE_BAND_DEG
from model.params import parameter_split
from model.superposition import random_count_estimate
from scenes import style
from scenes.components import BarChart, BarScale, ColumnBars, Label, LabelColumn, NumberText, TokenChip
from scenes.lecture import LectureScene
from scenes.prompts import lookback_head
from scenes.style import MUTED, PROB, SHARED, TEXT
from scenes.words import Words

DATA_FILES = ("docs/lab/parallel_pass.json",)   # read here, so render.py's cache keys on it (pipeline.cache.declared_data)
PARALLEL_PASS = Path(__file__).resolve().parents[1] / DATA_FILES[0]
EPS_DEG = (STRICT_BAND_DEG, WIDE_BAND_DEG)   # the superposition chapter's two bands: 89-91 and 85-95 degrees

WORDS = Words.beside(__file__)     # summary.toml: the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

# --- layout (scene units; the frame is 14.2 × 8, title-safe is ±6.4 × ±3.6) --------
ROW_YS = (2.75, 1.5, 0.25, -1.0)       # the four advantages, top to bottom
TITLE_LEFT, VISUAL_LEFT, VISUAL_RIGHT = -6.2, 0.6, 6.2
STEP, PAUSE = style.STEP, style.PAUSE


def count_text(x: float) -> str:
    """A count for a caption: whole numbers with separators up to a million, then a×10^k as near_orthogonal labels
    the same estimate (style.scientific, two digits: one value, one label)."""
    if x < 1e6:
        return f"{round(x):,}"
    return style.scientific(x, 2)


class Summary(LectureScene):
    name = "summary"
    strings = S
    beat_titles = BEATS

    # --- the beats -------------------------------------------------------------------
    def beat_context(self):
        self.say("context", n=self.reach, w=style.percent(self.head["weight"]))
        self.reveal(0)
        self.play(FadeIn(self.chips), run_time=STEP)
        self.play(FadeIn(self.arc), FadeIn(self.arc_label), run_time=STEP)
        self.wait(PAUSE)

    def beat_parallel(self):
        p = self.parallel
        self.say(self.parallel_key, T=p["tokens"], ratio=f"{p['ratio']:.1f}")
        self.reveal(1)
        self.play(FadeIn(self.times.labels), FadeIn(self.times.bars.tracks), run_time=STEP)
        self.play(LaggedStart(*self.times.grow(), lag_ratio=0.3), FadeIn(self.times.numbers), run_time=2 * STEP)
        self.wait(PAUSE)

    def beat_representations(self):
        self.say(self.rich_key, answer=self.answer, p0=style.percent(self.p_answer[0]),
                 p1=style.percent(self.p_answer[-1]))
        self.reveal(2)
        self.play(LaggedStart(*self.lens_bars.grow(), lag_ratio=0.15),
                  FadeIn(self.lens_ends), run_time=2 * STEP)
        self.wait(PAUSE)

    def beat_scaling(self):
        self.say("scaling", d=f"{GPT3_175B.n_embd:,}", far=count_text(self.counts[-1]))
        self.reveal(3)
        self.play(FadeIn(self.scaling_table), run_time=STEP)
        self.wait(PAUSE + 1)

    def reveal(self, row: int):
        self.play(FadeIn(self.titles[row], shift=RIGHT * 0.2), FadeIn(self.details[row]), run_time=STEP)

    # --- building the pieces, from the model's numbers --------------------------------
    def prepare(self):
        gpt, words = self.gpt, self.gpt.tokenizer.words
        self.head = head = lookback_head(gpt, self.params["prompt"], lang=self.lang)
        self.params["prompt"] = head["prompt"]
        tokens = list(head["trace"]["tokens"])
        focus, key = head["focus"], head["keys"][0] if len(head["keys"]) == 1 else head["source"]
        self.reach = focus - key

        details = [self.s("d_context", l=style.shown(head["layer"]), h=style.shown(head["head"]), n=self.reach)]

        # 1. global context: the chosen head's weight from the focus to the key it reaches back to
        y = ROW_YS[0]
        self.chips = VGroup(TokenChip(style.token_label(tokens[key]), style.token_colour(tokens, key)),
                            TokenChip(style.token_label(tokens[focus]), style.token_colour(tokens, focus)))
        self.chips[0].move_to([VISUAL_LEFT + 0.9, y - 0.35, 0])
        self.chips[1].move_to([VISUAL_RIGHT - 0.9, y - 0.35, 0])
        self.arc = CurvedArrow(self.chips[1].get_top() + UP * 0.05, self.chips[0].get_top() + UP * 0.05,
                               angle=0.4, color=style.QUERY, stroke_width=3)
        self.arc_label = centred_number(style.percent(head["weight"]), self.arc.get_top() + UP * 0.2)

        # 2. parallel: the recorded benchmark: the entry measured on the prompt on screen if there is one, else the
        # one for this clip's language (measured on its default prompt, and said to be a recorded prompt's)
        records = json.loads(PARALLEL_PASS.read_text())
        # the same prompt: the same tokens (a record keeps the text as it was written, "lake ." or "lake.")
        # (the records' prompts are tokenized without the context's limit: at a checkpoint of one's own with a short
        # context and a small vocabulary one may not fit, and then it is simply not the prompt on screen)
        shown = self.gpt.encode(head["prompt"])
        self.parallel = p = next((r for r in records.values() if self.gpt.tokenizer.encode(r["prompt"]) == shown),
                                 records[self.lang])
        same = self.gpt.tokenizer.encode(p["prompt"]) == shown
        said = ("parallel_faster" if p["ratio"] > 1 else "parallel_not_faster") + ("" if same else "_recorded")
        self.parallel_key = self.caption_rule("parallel", said, "parallel_faster if one pass over all tokens took less "
                                              "time than one token at a time, else parallel_not_faster; with "
                                              "_recorded when no record was made on the prompt on screen (the "
                                              "clip's language's is shown)",
                                              ratio=p["ratio"], lang=p["lang"], same_prompt=same)
        details.append(self.s("d_parallel", runs=p["runs"], cpus=p["machine"]["cpus"]))
        ys = [ROW_YS[1] + 0.05, ROW_YS[1] - 0.5]
        times = [p["one_pass_ms"], p["token_by_token_ms"]]
        self.times = BarChart(times, ys, BarScale.fit(3.0, 1.3, times), style.LOGIT, track=max(times),
                              opacities=[0.9, 0.5], labels=[self.s("at_once"), self.s("one_by_one")], label_right=2.8,
                              label_colours=[TEXT, MUTED], label_size=style.SMALL,
                              numbers=lambda t: f"{t:.2f} ms", number_right=VISUAL_RIGHT, number_size=style.SMALL)

        # 3. rich representations: the logit lens at the focus token
        lens = logit_lens(gpt, head["trace"], focus)
        answer = int(np.argmax(lens[-1]["probabilities"]))
        self.answer = style.token_label(words[answer])
        self.p_answer = [float(r["probabilities"][answer]) for r in lens]
        same = style.percent(self.p_answer[-1]) == style.percent(self.p_answer[0])
        grows = self.p_answer[-1] > self.p_answer[0] and not same
        self.rich_key = self.caption_rule("rich", "rich_grows" if grows else "rich_same" if same else
                                          "rich_flat", "rich_grows if P(answer) after the last block exceeds it "
                                          "after the embedding and the two read differently as shown; rich_same "
                                          "if they read alike; else rich_flat",
                                          p_first=self.p_answer[0], p_last=self.p_answer[-1])
        details.append(self.s("d_rich", answer=self.answer))
        base, height, width, left, right = ROW_YS[2] - 0.45, 0.9, 0.3, 3.0, 4.7
        gap = (right - left - width) / (len(lens) - 1)
        self.lens_bars = ColumnBars(self.p_answer, [left + width / 2 + i * gap for i in range(len(lens))], base, height,
                                    PROB, width=width, floor=0.01)
        first, last = (NumberText(style.percent(v), font_size=style.SMALL, color=PROB)
                       for v in (self.p_answer[0], self.p_answer[-1]))
        first.place(left - 0.2, base)
        last.place(VISUAL_RIGHT, base + height - 0.25)
        self.lens_ends = VGroup(first, last)

        # 4. scaling: GPT-3's parameters and the room in its dimensions
        self.gpt3_params = parameter_split(GPT3_175B)["total"]
        self.counts = [random_count_estimate(GPT3_175B.n_embd, e) for e in EPS_DEG]
        details.append(self.s("d_scaling", d=f"{GPT3_175B.n_embd:,}"))
        ys = [ROW_YS[3] + 0.05, ROW_YS[3] - 0.4, ROW_YS[3] - 0.85]
        self.scaling_table = VGroup(
            LabelColumn([self.s("params_label")] + [self.s("within", lo=f"{90 - e:g}", hi=f"{90 + e:g}") for e in EPS_DEG], ys,
                        2.9, colours=[TEXT, MUTED, MUTED], font_size=style.SMALL),
            LabelColumn([f"{self.gpt3_params:,}"] + [count_text(c) for c in self.counts], ys, VISUAL_RIGHT,
                        font_size=style.SMALL))   # Labels: "10²¹" needs the font's superscripts

        self.titles = VGroup(*[self.row_title(self.s(t), y)
                               for t, y in zip(("h_context", "h_parallel", "h_rich", "h_scaling"), ROW_YS)])
        self.details = VGroup(*[self.row_detail(d, y) for d, y in zip(details, ROW_YS)])
        self.values.update({
            "prompt": head["prompt"], "tokens": tokens, "token_ids": [int(i) for i in head["trace"]["token_ids"]],
            "context": {"layer": head["layer"], "head": head["head"], "focus": focus, "key": key,
                        "tokens_back": self.reach, "weight": head["weight"], "rule": head["rule"]},
            "parallel": p,
            "representations": {"answer_id": answer, "p_answer": self.p_answer,
                                "points": [[r["part"], r["layer"]] for r in lens]},
            "scaling": {"gpt3_parameters": self.gpt3_params, "d_model": GPT3_175B.n_embd,
                        "random_directions": [{"eps_deg": e, "count": c} for e, c in zip(EPS_DEG, self.counts)]},
        })
        if head["prompt_rule"]:
            self.values["prompt_rule"] = head["prompt_rule"]

    @staticmethod
    def row_title(text: str, y: float) -> Label:
        label = Label(text)
        return label.shift(RIGHT * (TITLE_LEFT - label.get_left()[0])).on_baseline(y)

    @staticmethod
    def row_detail(text: str, y: float) -> Label:
        label = Label(text, font_size=style.SMALL, color=MUTED)
        return label.shift(RIGHT * (TITLE_LEFT - label.get_left()[0])).on_baseline(y - 0.5)


def centred_number(text: str, at, small: bool = False) -> NumberText:
    """A number centred at a point: the head's weight (in the query's colour), or a probability (small)."""
    n = NumberText(text, font_size=style.SMALL if small else style.LABEL, color=PROB if small else style.QUERY)
    return n.move_to(at)
