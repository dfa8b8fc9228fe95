"""The close: each chapter's question answered in one line, each with a number from our own model.

    manim render -ql scenes/summary.py Summary
    python render.py summary --lang zh

Global context from the attention chapter's head rule (scenes/prompts.py lookback_head), parallel processing
from the recorded benchmark (benchmarks/parallel_pass.py → docs/lab/parallel_pass.json), where facts live from the
MLP chapter's map (scenes/mlp_chapter.chapter_finding: mlp_fact's conclusion, no new measurement), scaling from
GPT-3's config (model.params) and the superposition lab's random-direction estimate
(model.superposition.random_count_estimate).
"""

from __future__ import annotations

import json
from pathlib import Path

from manim import RIGHT, UP, CurvedArrow, FadeIn, LaggedStart, VGroup

from model import GPT3_175B
from model.analysis.superposition import STRICT_BAND_DEG, WIDE_BAND_DEG
from model.params import parameter_split
from model.superposition import random_count_estimate
from scenes import style
from scenes.components import BarChart, BarScale, Label, NumberText, Table, TokenChip
from scenes.lecture import LectureScene
from scenes.mlp_chapter import chapter_finding
from scenes.prompts import language_of, lookback_head, own_language
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
ROW_YS = (2.75, 1.5, 0.25, -1.0)       # the four answers (attention, parallel, facts, superposition), top to bottom
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

    def beat_facts(self):
        self.say(self.facts_key, **self.facts_words)
        self.reveal(2)
        if self.fact_bars is not None:
            self.play(FadeIn(self.fact_bars.labels), FadeIn(self.fact_bars.bars.tracks), run_time=STEP)
            self.play(LaggedStart(*self.fact_bars.grow(), lag_ratio=0.3), FadeIn(self.fact_bars.numbers),
                      run_time=2 * STEP)
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
        gpt = self.gpt
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

        # 3. where facts live: the MLP chapter's map (mlp_fact), its conclusion in the prompt's language (the same
        # prompt, the same numbers in both languages' clips): the lit site at a person's name whose mean-ablation
        # drops P(sport) most, with P(sport) intact and without it. A checkpoint of one's own: the chapter mapped
        # the lecture's model only, and the line says so.
        written = language_of(tokens) if own_language(gpt) else None
        self.facts = f = chapter_finding(gpt)[written] if written else None
        site = f["key_site"] if f else None
        self.facts_key = self.caption_rule(
            "facts", "facts_checkpoint" if f is None else "facts_elsewhere" if site is None else
            f"facts_{site['component']}",
            "mlp_fact's conclusion on the prompt's language's person: the lit site at a name (mean-ablation drops "
            "P(answer) by at least 25 points) with the largest drop is an attention output: facts_attn; an MLP "
            "output: facts_mlp; none at a name: facts_elsewhere; a checkpoint of one's own (not mapped): "
            "facts_checkpoint", key_site=None if site is None else site["site"], prompt_lang=written)
        self.facts_words, self.fact_bars = {}, None
        if f is None:
            details.append(self.s("d_facts_checkpoint"))
        else:
            self.facts_words = {"sport": style.token_label(f["answer"]), "n": f["lit_elsewhere"]}
            details.append(self.s("d_facts", first=style.token_label(f["names"][0]),
                                  last=style.token_label(f["names"][1])))
        if site is not None:
            comp = self.s(f"comp_{site['component']}", l=style.shown(site["layer"]))
            self.facts_words.update(comp=comp, name=style.token_label(site["token"]),
                                    p=style.percent(site["p_after"]))
            ys = [ROW_YS[2] + 0.05, ROW_YS[2] - 0.5]
            ps = [f["p_clean"], site["p_after"]]
            self.fact_bars = BarChart(ps, ys, BarScale(3.0, 1.3), PROB, track=1.0, opacities=[0.9, 0.5],
                                      labels=[self.s("intact"), self.s("without")], label_right=2.8,
                                      label_colours=[TEXT, MUTED], label_size=style.SMALL, numbers=style.percent,
                                      number_right=VISUAL_RIGHT, number_size=style.SMALL, number_colour=PROB)

        # 4. scaling: GPT-3's parameters and the room in its dimensions
        self.gpt3_params = parameter_split(GPT3_175B)["total"]
        self.counts = [random_count_estimate(GPT3_175B.n_embd, e) for e in EPS_DEG]
        details.append(self.s("d_scaling", d=f"{GPT3_175B.n_embd:,}"))
        ys = [ROW_YS[3] + 0.05, ROW_YS[3] - 0.4, ROW_YS[3] - 0.85]
        self.scaling_table = Table(   # text cells: "10²¹" needs the font's superscripts
            [self.s("params_label")] + [self.s("within", lo=f"{90 - e:g}", hi=f"{90 + e:g}") for e in EPS_DEG],
            [[f"{self.gpt3_params:,}"] + [count_text(c) for c in self.counts]], ys, label_right=2.9,
            column_rights=[VISUAL_RIGHT], label_colours=[TEXT, MUTED, MUTED], font_size=style.SMALL, text_cells=True)

        self.titles = VGroup(*[self.row_title(self.s(t), y)
                               for t, y in zip(("h_context", "h_parallel", "h_facts", "h_scaling"), ROW_YS)])
        self.details = VGroup(*[self.row_detail(d, y) for d, y in zip(details, ROW_YS)])
        self.values.update({
            "prompt": head["prompt"], "tokens": tokens, "token_ids": [int(i) for i in head["trace"]["token_ids"]],
            "context": {"layer": head["layer"], "head": head["head"], "focus": focus, "key": key,
                        "tokens_back": self.reach, "weight": head["weight"], "rule": head["rule"]},
            "parallel": p,
            "facts": None if f is None else {
                "prompt_lang": written, "prompt": f["prompt"], "names": f["names"], "answer": f["answer"],
                "p_clean": f["p_clean"], "key_site": site, "lit_elsewhere": f["lit_elsewhere"],
                "from": "mlp_fact's map (scenes/mlp_chapter.chapter_finding): no new measurement"},
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
