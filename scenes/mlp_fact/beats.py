"""Where a fact lives, measured: "mr michael jordan , indeed , plays" → basketball (the Chinese lecture: the
same question in Chinese). Both are the usual example, Michael Jordan's sport, chosen by the rule of scenes/prompts.py
sport_fact_prompt: the example as the seeded stream (or else facts_known's template) asks it, if the model's top-1
next word is the sport; otherwise the stream's first sentence asking a person's sport, and the title card's note
says that the model does not know the example (the branch and the measurement: values["prompt_rule"]).

    manim render -ql scenes/mlp_fact/beats.py MlpFact
    python render.py mlp_fact --lang zh

Every number comes from model.analysis: causal tracing over the language's people (person_causal_trace), the
measured sport directions in the stream (stream_attribute_directions, projections, contrast_direction), the MLP
output read through the unembedding (vector_readout), each neuron's push along the sport direction
(neuron_direction_attribution, top_k_shares) and what it fires for (neuron_attribute_profile), mean-ablation over
the documented sample (mean_states, mean_ablation) and the model's own predictions for other people. Every caption
that states a property of the numbers is chosen by a recorded rule; every value on screen is in self.values.

This module is the scene: each beat's build (build_<beat>, called by prepare) sits beside its play (beat_<beat>), with
the caption rule it applies; the numbers it reads are in numbers.py, its words in words.toml.
"""

from __future__ import annotations

from pathlib import Path

from manim import DOWN, RIGHT, Create, FadeIn, LaggedStart, Line, SurroundingRectangle, VGroup

from model.language import Language
from scenes import style
from scenes.components import (BarChart, BarScale, ColourLegend, RoundedSum, Label, NumberText, Table, TokenChip,
                               TraceGrid)
from scenes.components.tracing import share_text
from scenes.lecture import LectureScene
from scenes.mlp_fact.numbers import SPREAD_KS, FactLookup, nan_none
from scenes.params import AUTO
from scenes.prompts import join_words, own_language
from scenes.style import EMBEDDING, EMBEDDING_UPDATED, LOGIT, MUTED, NEURON_ACTIVE, PROB, SHARED, TEXT
from scenes.words import Words

WORDS = Words(Path(__file__).with_name("words.toml"))   # the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]
NOTES = WORDS["notes"]   # the course page's notes where the languages differ (LectureScene.languages_differ)


def grammar(lang: str):
    """The training language's grammar of `lang` (a sport's word in that language, for a note about it)."""
    return Language().grammar(lang)

STEP, PAUSE = style.STEP, style.PAUSE


# --- layout (scene units; title-safe is ±6.4 × ±3.6; the caption sits below −2.5) --------------------------
HEADER_Y = 3.25
STAGGER_DROP = 0.25     # the tracing grid's drop when its chips take two rows (their top stays 0.25 in)
ROWS_TOP, ROW_PITCH = 2.3, 0.46


# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]


class MlpFact(LectureScene):
    name = "mlp_fact"
    strings = S
    beat_titles = BEATS
    TITLE_TOP, NOTE_Y = 1.4, -1.3

    def title_note(self) -> str:
        """The note names the prompt and the model's answer; when the default prompt's rule fell back because the
        model does not know the usual example (values["prompt_rule"]["branch"] == "fallback", decided in
        scenes/prompts.py sport_fact_prompt by the example's top-1 next word), it says so first."""
        f = self.f
        values = dict(n=f.n_layer, prompt=self.prompt_text(), answer=f.answer, p=style.percent(f.p_answer))
        if f.prompt_rule is not None and f.prompt_rule["branch"] == "fallback":
            ex = f.prompt_rule["example"]
            return self.s("note_unknown", ex=ex["prompt"], top=ex["top_word"], ex_answer=ex["answer"], **values)
        return self.s("note", **values)

    def prompt_text(self) -> str:
        """The prompt as the title card's note quotes it: on one line, or, if that line would be wider than the
        title-safe area (less a quote mark's room each side), on two lines broken between the tokens where the
        wider line is narrowest."""
        f = self.f
        room = 2 * style.safe_half_width() - 1.0
        if Label(f.prompt, font_size=style.CAPTION).width <= room:
            return f.prompt
        halves = [(join_words(f.tokens[:i], f.prompt_lang), join_words(f.tokens[i:], f.prompt_lang))
                  for i in range(1, len(f.tokens))]
        a, b = min(halves, key=lambda h: max(Label(t, font_size=style.CAPTION).width for t in h))
        return a + "\n" + b

    def comp_name(self, layer: int, component: str, short: bool = False) -> str:
        """A component in a caption ("layer 2's MLP"), or short=True in a label ("L2 MLP"); layers counted from 1."""
        key = ("mlp" if component == "mlp" else "attn") + ("_short" if short else "_n")
        return self.s(key, l=style.shown(layer))

    def prepare(self):
        default = self.params["prompt"] == AUTO
        self.f = f = FactLookup(self.gpt, self.params)
        self.params.update(prompt=f.prompt)
        self.values.update(f.record())
        # one story in two languages: the default lecture runs the same rules on the other language's default prompt
        self.story = None
        if default and own_language(self.gpt):
            other = "zh" if self.lang == "en" else "en"
            o = FactLookup(self.gpt, {**self.params, "prompt": AUTO, "lang": other}, means=f.means)
            self.story = {self.lang: f.story_entry(), other: o.story_entry()}
            self.values["story"] = {**self.story, "rule": "the scene's rules run on both languages' default prompts"}
        self.build_where()
        self.build_lookup()
        self.build_readout()
        self.build_carry()
        self.build_spread()
        self.build_and()
        self.build_and_neuron()

    # --- where: its build, then its play -----------------------------------------------------------------
    def build_where(self):
        f = self.f
        labels = [self.comp_name(l, c, short=True) for l, c in f.rows]
        half = style.safe_half_width()
        # one row of chips if the grid fits the title-safe area so, else two rows (TraceGrid's rule), a little lower
        grid = TraceGrid(f.grid, labels, f.tokens, left=0.0, top=2.25, cell_w=0.9, cell_h=0.5, max_width=2 * half)
        drop = STAGGER_DROP if grid.stagger else 0.0      # the legend and the note below go down with it
        grid.shift(DOWN * drop)
        # placed by its cells (one layout in en and zh), moved only as far as the title-safe area needs
        x = 0.5 - grid.cells.get_center()[0]
        grid.shift(RIGHT * min(max(x, -half - grid.get_left()[0]), half - grid.get_right()[0]))
        self.grid = grid
        self.largest_frames = VGroup(*[SurroundingRectangle(grid.cell(c["row"], c["position"]), color=TEXT,
                                                            buff=0.03, stroke_width=3) for c in f.largest])
        self.legend = ColourLegend(grid.scale, self.s("share_legend"), width=2.7)
        self.legend.shift([6.0 - self.legend.frame.get_right()[0], -1.5 - drop - self.legend.bar.get_center()[1], 0])
        self.trace_note = Label(self.s("trace_note", n=len(f.ct["partners"])), font_size=style.SMALL, color=MUTED)
        self.trace_note.shift([-6.1 - self.trace_note.get_left()[0], 0, 0]).on_baseline(-1.55 - drop)

    def beat_where(self):
        f = self.f
        self.say("where", answer=f.answer)
        g = self.grid
        self.play(FadeIn(g.chips), FadeIn(g.row_labels), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(c) for c in g.cells], lag_ratio=0.02), run_time=2 * STEP)
        self.play(FadeIn(g.numbers), FadeIn(self.legend), FadeIn(self.trace_note), run_time=STEP)
        a, b = f.largest
        key = self.caption_rule("largest", f.largest_key(), "the largest restored share is above 1: largest_over; at "
                                "least 0.5: largest_one, else largest_spread", largest=f.largest)
        self.say(key, a=self.comp_name(a["layer"], a["component"], short=True), ta=f.tokens[a["position"]],   # as the
                 sa=share_text(a["share"]), b=self.comp_name(b["layer"], b["component"], short=True),   # grid's rows
                 tb=f.tokens[b["position"]],
                 sb=share_text(b["share"]))
        self.play(Create(self.largest_frames), run_time=STEP)
        self.wait(PAUSE)

    # --- lookup: its build, then its play ----------------------------------------------------------------
    def build_lookup(self):
        f = self.f
        words = [style.token_label(f.g.t(s)) for s in f.sports]
        ys = [ROWS_TOP - r * ROW_PITCH for r in range(len(words))]
        colours = [TEXT if s == f.person.sport else MUTED for s in f.sports]
        before = [f.before[s] for s in f.sports]
        after = [f.after[s] for s in f.sports]
        scale = BarScale.widest(0.0, 2.9, before + after)       # one scale, the zero line at x = 0
        self.look_unit = scale.unit
        self.zero_line = Line([0, ys[-1] - 0.15, 0], [0, ys[0] + 0.4, 0], color=MUTED, stroke_width=2)
        # before + rise = after, per sport: the rise the caption says and the two numbers drawn, each at its plain
        # rounding (approx in the manifest where they miss; no sign is drawn: "before → after")
        deltas = f.deltas()
        self.look_rounded = RoundedSum([before, [deltas[s] for s in f.sports]], after, 1)
        # two charts on one scale: the words, the bars before and the numbers; the bars after, just under them
        header = self.s("lookup_header", comp=self.comp_name(f.layer, "mlp", short=True), tok=f.tokens[f.position],
                        n=f.rise["loo"]["n"] - 1)
        self.look_chart = BarChart(before, ys, scale, EMBEDDING, labels=words, label_right=-3.3, label_colours=colours,
                                   numbers=[f"{b} \u2192 {a}" for b, a in zip(self.look_rounded.labels[0],
                                                                              self.look_rounded.total_labels)],
                                   number_right=6.2, header=header, header_at=(0, HEADER_Y), header_colour=TEXT,
                                   header_size=style.LABEL, bar_height=0.14, lift=0.22, clamp=False)
        self.look_after = BarChart(after, ys, scale, EMBEDDING_UPDATED, bar_height=0.14, lift=0.05, clamp=False)
        self.look_header, self.look_words, self.bars_before, self.look_numbers = self.look_chart
        self.bars_after = self.look_after.bars
        self.rise_label = dict(zip(f.sports, self.look_rounded.labels[1]))
        self.record_sum("lookup", "before + rise = after", self.look_rounded)
        key_y = ys[-1] - 0.55
        self.look_key = VGroup(Label(self.s("before"), font_size=style.SMALL, color=EMBEDDING),
                               Label(self.s("after"), font_size=style.SMALL, color=EMBEDDING_UPDATED))
        self.look_key.arrange(RIGHT, buff=0.6)
        self.look_key.shift([0 - self.look_key.get_center()[0], 0, 0])
        for k in self.look_key:
            k.on_baseline(key_y)

    def note_difference(self, rule: str, phrase) -> None:
        """In the default lecture, where the two languages' keys of `rule` differ (values.story): both recorded as
        languages_differ[rule], with the course page's note naming each language's finding, phrase(note's language,
        finding's language, its story entry). Never said in the clip (docs/teaching.md §6)."""
        keys = {lang: e[f"{rule}_key"] for lang, e in (self.story or {}).items() if lang in ("en", "zh")}
        if len(set(keys.values())) > 1:
            fill = {lang: {x: phrase(lang, x, self.story[x]) for x in keys} for lang in keys}
            self.languages_differ(rule, f"the {rule} rule on the English and the Chinese default prompts: recorded when "
                                  "its keys differ", NOTES, f"{rule}_differs", en=keys["en"], zh=keys["zh"], fill=fill)

    def beat_lookup(self):
        f = self.f
        key, other = f.lookup_key()
        d = f.deltas()
        self.caption_rule("lookup", key, "the person's sport's projection rises most of the 8 and no other rises by "
                          "half as much: lookup_clean; rises most but another rises by at least half: lookup_most; "
                          "another rises more: lookup_not", deltas=d, sport=f.person.sport, best_other=other)
        self.note_difference("lookup", lambda lang, x, e: NOTES(
            e["lookup_key"] + "_is", lang, other=style.token_label(grammar(x).t(e["best_other"])),
            od=style.signed(e["deltas"][e["best_other"]], 1), d=style.signed(e["deltas"][e["sport"]], 1)))
        self.clear_stage()
        self.say(key, comp=self.comp_name(f.layer, "mlp"), tok=f.tokens[f.position], sport=f.answer,
                 d=self.rise_label[f.person.sport], other=f.g.t(other), od=self.rise_label[other])
        self.play(FadeIn(self.look_header), FadeIn(self.look_words), Create(self.zero_line), FadeIn(self.look_key),
                  run_time=STEP)
        self.play(*self.look_chart.grow(), run_time=STEP)
        self.play(*self.look_after.grow(), FadeIn(self.look_numbers), run_time=STEP)
        self.wait(PAUSE)

    # --- readout: its build, then its play ---------------------------------------------------------------
    def build_readout(self):
        f = self.f
        top = f.readout["top"]
        words = [style.token_label(t["word"]) for t in top]
        amounts = [t["logit"] for t in top]
        ys = [1.9 - r * 0.6 for r in range(len(words))]
        scale = BarScale.fit(-1.9, 3.6, amounts)      # the bars span x = -1.9 .. 1.7 whatever the signs
        self.read_chart = BarChart(amounts, ys, scale, LOGIT, labels=words, label_right=-2.2,
                                   numbers=[style.signed(a, 2) for a in amounts], number_right=3.0, number_colour=LOGIT,
                                   header=self.s("readout_header"), header_at=(0, 2.7), header_colour=LOGIT,
                                   header_size=style.LABEL, clamp=False)
        self.read_header, self.read_words, self.read_bars, self.read_numbers = self.read_chart
        rank = f.readout["ranks"][f.answer_id]
        self.rank_line = Label(self.s("rank_line", sport=f.answer, rank=rank, n=f.readout["n_words"],
                                      language=self.s(f"language_{f.prompt_lang}")), font_size=style.SMALL, color=MUTED)
        self.rank_line.move_to([0, 0, 0]).on_baseline(ys[-1] - 0.75)

    def beat_readout(self):
        f = self.f
        key = self.caption_rule("readout", f.readout_key(), "the word the lookup MLP's output raises most (among the "
                                "prompt language's words) is the sport: readout_sport; the sport's verb: readout_verb; "
                                "else readout_other", top=f.readout["top"][0]["word"], sport=f.answer, verb=f.verb)
        ranks = f.readout["ranks"]
        self.say(key, verb=f.verb, sport=f.answer, rank=ranks[f.answer_id], n=f.readout["n_words"],
                 language=self.s(f"language_{f.prompt_lang}"), word=f.readout["top"][0]["word"], vrank=ranks[f.verb_id])
        self.clear_stage()
        self.play(FadeIn(self.read_header), FadeIn(self.read_words), run_time=STEP)
        self.play(*self.read_chart.grow(), FadeIn(self.read_numbers), run_time=STEP)
        self.play(FadeIn(self.rank_line), run_time=STEP)
        self.wait(PAUSE)

    # --- carry: its build, then its play -----------------------------------------------------------------
    def build_carry(self):
        """The push toward the answer at the last word, part by part (direct logit attribution; the parts and the
        final LayerNorm's bias add up to the logit difference, rounded), and where the carrier's head reads."""
        f, d = self.f, self.f.path["dla"]
        L = f.n_layer
        names = [self.s("part_embedding")] + [self.comp_name(l, c, short=True) for l in range(L)
                                               for c in ("attn", "mlp")] + [self.s("part_ln_f")]
        values = [d["embeddings"]] + [d[c][l] for l in range(L) for c in ("attn", "mlp")] + [d["ln_f_bias"]]
        self.carry_rounded = RoundedSum([[v] for v in values], [d["logit_diff"]], 2)
        texts = [lab[0] for lab in self.carry_rounded.labels]
        self.carry_texts = dict(zip(["embedding"] + [f"{c}.{l}" for l in range(L) for c in ("attn", "mlp")] +
                                    ["ln_f"], texts))
        ys = [2.6 - r * 0.4 for r in range(len(values))]
        carrier = f.path["carrier"]["layer"]
        colours = [TEXT if n == 1 + 2 * carrier else MUTED for n in range(len(values))]
        self.carry_chart = BarChart(values, ys, BarScale.fit(-3.4, 3.0, values), LOGIT, labels=names, label_right=-3.6,
                                    label_colours=colours, label_size=style.SMALL, numbers=texts, number_right=0.9,
                                    number_colour=LOGIT, number_size=style.SMALL,
                                    header=self.s("carry_header", sport=f.answer, tok=f.tokens[-1]),
                                    header_at=(0, HEADER_Y), header_colour=LOGIT, header_size=style.LABEL,
                                    bar_height=0.22, lift=0.08, clamp=False)
        self.carry_header, self.carry_labels, self.carry_bars, self.carry_numbers = self.carry_chart
        y_total = ys[-1] - 0.45
        self.carry_rule = Line([-0.3, y_total + 0.32, 0], [1.0, y_total + 0.32, 0], color=MUTED, stroke_width=2)
        self.carry_total = VGroup(Label(self.s("part_total"), font_size=style.SMALL, color=TEXT),
                                  NumberText(self.carry_rounded.total_text(), style.SMALL, TEXT).place(0.9, y_total))
        self.carry_total[0].shift(RIGHT * (-3.6 - self.carry_total[0].get_right()[0])).on_baseline(y_total)
        self.record_sum("carry", "parts + final LN bias = logit difference", self.carry_rounded,
                        drawn=self.carry_total[1])
        c, t = f.path["carrier"], f.path["through_lookup"]
        attn = self.comp_name(carrier, "attn", short=True)
        texts = [self.s("head_reads", attn=attn, h=c["head"] + 1, name=f.tokens[c["reads_most"]],
                        w=style.percent(c["reads"][c["reads_most"]])),
                 self.s("without_mlp", mlp=self.comp_name(f.layer, "mlp", short=True), name=f.tokens[f.last_index],
                        before=self.carry_texts[f"attn.{carrier}"], after=style.signed(t["push_after"], 2))]
        self.carry_lines = VGroup()
        for text, y in zip(texts, (2.0, 0.75)):        # beside the chart, right of its numbers: two lines each
            block = VGroup()
            for i, line in enumerate(text.split("\n")):
                label = Label(line, font_size=style.SMALL, color=TEXT)
                # centred at x = 3.75, moved left as far as a long name needs to stay title-safe (the numbers end at 1)
                x = min(3.75, style.safe_half_width() - 0.1 - label.width / 2)
                label.shift(RIGHT * (x - label.get_center()[0])).on_baseline(y - 0.42 * i)
                block.add(label)
            self.carry_lines.add(block)

    def beat_carry(self):
        """The path's second step: the attention layer with the largest push toward the answer at the last word, where
        its head reads, and its push with the lookup MLP at the last name replaced by its mean."""
        f = self.f
        c, t = f.path["carrier"], f.path["through_lookup"]
        key = self.caption_rule("carry", f.carry_key(),
                                "the attention layer with the largest push at the last word (direct logit attribution "
                                "against the other sports): its top head reads the last name most and its push with the "
                                "lookup MLP at the last name mean-ablated is below half: carry_lookup (carry_none when "
                                "that largest push is not positive); reads the last name but keeps half or more: "
                                "carry_kept; reads another word most: carry_other",
                                reads_most=c["reads_most"], last_index=f.last_index, push_before=t["push_before"],
                                push_after=t["push_after"])
        self.note_difference("carry", lambda lang, x, e: NOTES(
            e["carry_key"] + "_is", lang, before=style.signed(e["through_lookup"]["push_before"], 2),
            after=style.signed(e["through_lookup"]["push_after"], 2)))
        carrier = c["layer"]
        self.clear_stage()
        self.say(key, tok=f.tokens[-1], attn=self.comp_name(carrier, "attn"), sport=f.answer,
                 push=self.carry_texts[f"attn.{carrier}"], total=self.carry_rounded.total_labels[0], h=c["head"] + 1,
                 name=f.tokens[c["reads_most"]], read=f.tokens[c["reads_most"]],
                 w=style.percent(c["reads"][c["reads_most"]]), mlp=self.comp_name(f.layer, "mlp"),
                 after=style.signed(t["push_after"], 2))
        self.play(FadeIn(self.carry_header), FadeIn(self.carry_labels), run_time=STEP)
        self.play(*self.carry_chart.grow(), FadeIn(self.carry_numbers), run_time=2 * STEP)
        self.play(Create(self.carry_rule), FadeIn(self.carry_total), run_time=STEP)
        self.play(FadeIn(self.carry_lines[0]), run_time=STEP)
        self.play(FadeIn(self.carry_lines[1]), run_time=STEP)
        self.wait(PAUSE)

    # --- spread: its build, then its play ----------------------------------------------------------------
    def build_spread(self):
        """The top 1, 5, 20 neurons' share of the push toward the sport (push_share: at most 100%, the line at 100%
        being every neuron that pushes toward it); the neurons pushing the other way, counted apart, in a note."""
        f, sp = self.f, self.f.spread
        ys = [1.6 - r * 0.8 for r in range(len(SPREAD_KS))]
        some = sp["n_towards"] > 0
        values = [sp["shares"][k] if some else 0.0 for k in SPREAD_KS]
        texts = [style.percent(v) if some else "\u2014" for v in values]
        self.spread_values = values
        x0, unit = -3.0, 6.0                                     # 0% .. 100% spans x = -3 .. 3
        self.spread_chart = BarChart(values, ys, BarScale(x0, unit), NEURON_ACTIVE,
                                     labels=[self.s("top_n", k=k) for k in SPREAD_KS], label_right=-3.4,
                                     numbers=texts, number_right=5.8, number_colour=NEURON_ACTIVE, bar_height=0.36,
                                     track=1.0, clamp=False)
        _, self.spread_labels, self.spread_bars, self.spread_numbers = self.spread_chart
        self.full_label = Label(self.s("towards_all", m=sp["n_towards"]) if some else self.s("towards_none"),
                                font_size=style.SMALL, color=TEXT)
        half = style.safe_half_width() - 0.2
        x = min(max(x0 + unit, -half + self.full_label.width / 2), half - self.full_label.width / 2)
        self.full_label.shift(RIGHT * (x - self.full_label.get_center()[0]))
        self.full_label.on_baseline(ys[0] + 0.85)
        # the line at 100% stops well under its label (a label wider than the space to its right is shifted over
        # it), at one height in every language
        self.full_line = Line([x0 + unit, ys[-1] - 0.3, 0], [x0 + unit, ys[0] + 0.45, 0], color=TEXT, stroke_width=2)
        self.against_note = Label(self.s("against_note", na=sp["n_against"], against=style.signed(sp["against"], 2))
                                  if sp["n_against"] else self.s("against_none"), font_size=style.SMALL, color=MUTED)
        self.against_note.move_to([0, 0, 0]).on_baseline(ys[-1] - 0.85)
        # the neurons beat, folded in (issue 41): the top neuron and what it fires for (neuron_attribute_profile)
        pr = f.profiles[0] if f.profiles else None
        self.top_neuron = Label(self.s("top_neuron", n=f.top[0], sport=f.g.t(pr["best"])) if pr else "",
                                font_size=style.SMALL, color=NEURON_ACTIVE)
        self.top_neuron.move_to([0, 0, 0]).on_baseline(ys[-1] - 1.35)

    def beat_spread(self):
        f, sp = self.f, self.f.spread
        sh = sp["shares"]
        key = self.caption_rule("spread", f.spread_key(), "the lecture's one share (push_share: a neuron's write along "
                                "the sport's direction over the summed write of every neuron writing toward it): no "
                                "neuron writes toward it: spread_none; else the top neuron gives less than half: "
                                "spread_many, else spread_one",
                                shares={str(k): nan_none(v) for k, v in sh.items()}, n_towards=sp["n_towards"],
                                n_against=sp["n_against"])
        self.say(key, p1=style.percent(sh[1]) if sp["n_towards"] else "", p5=style.percent(sh[5]) if sp["n_towards"]
                 else "", p20=style.percent(sh[20]) if sp["n_towards"] else "", sport=f.answer,
                 n=f.attribution["per_neuron"].size, m=sp["n_towards"], na=sp["n_against"],
                 against=style.signed(sp["against"], 2), fires=f.g.t(f.profiles[0]["best"]))
        self.clear_stage()
        self.play(FadeIn(self.spread_labels), FadeIn(self.spread_bars.tracks), Create(self.full_line),
                  FadeIn(self.full_label), run_time=STEP)
        self.play(*self.spread_chart.grow(), FadeIn(self.spread_numbers), run_time=2 * STEP)
        self.play(FadeIn(self.against_note), FadeIn(self.top_neuron), run_time=STEP)
        self.wait(PAUSE)

    # --- and_gate: its build, then its play --------------------------------------------------------------
    def build_and(self):
        f = self.f
        self.and_header = Label(self.s("and_header"), font_size=style.LABEL, color=TEXT).move_to([0, 2.7, 0])
        self.and_rows = VGroup()
        self.and_numbers = VGroup()
        names = [*f.tokens, *(w for v in f.variants for w in v["names"])]   # a new name, a colour of its own
        for r, v in enumerate(f.variants):
            y = 1.7 - r * 0.9
            chips = VGroup(*[TokenChip(w, colour) for w, colour in zip(v["names"], style.token_colours(v["names"], names))])
            chips.arrange(RIGHT, buff=0.15)
            chips.shift([-1.0 - chips.get_right()[0], y - chips.get_center()[1], 0])
            arrow = Label("\u2192", font_size=style.HEADER, color=MUTED)
            arrow.move_to([-0.4, y, 0])
            word = Label(v["prediction"], font_size=style.LABEL, color=TEXT)
            word.shift(RIGHT * (0.3 - word.get_left()[0])).on_baseline(y - 0.1)
            number = NumberText(style.percent(v["p"]), style.LABEL, PROB).place(4.2, y - 0.1)
            self.and_numbers.add(number)
            self.and_rows.add(VGroup(chips, arrow, word, number))

    def beat_and_gate(self):
        f = self.f
        right = f.and_right()
        key = self.caption_rule("and", "and_yes" if right == len(f.variants) and len(f.variants) == 3 else
                                "and_partly", "every variant (the person, the same last name with another first name, "
                                "the same first name with another last name) gets that person's own sport: and_yes, "
                                "else and_partly", right=right, n=len(f.variants))
        self.say(key, k=right, n=len(f.variants))
        self.clear_stage()
        self.play(FadeIn(self.and_header), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(r, shift=RIGHT * 0.2) for r in self.and_rows], lag_ratio=0.4),
                  run_time=2 * STEP)
        self.wait(PAUSE)

    # --- and_neuron: its build, then its play ------------------------------------------------------------
    def build_and_neuron(self):
        """The AND search's neuron: its input for the person and for the best pair keeping each name, split into what
        each name adds, the other words and the bias (rounded), then GELU."""
        f, a = self.f, self.f.andn
        rows = f.and_rows
        self.andn_header = Label(self.s("andn_header", n=a["neuron"], mlp=self.comp_name(f.layer, "mlp", short=True)),
                                 font_size=style.LABEL, color=TEXT).move_to([0, HEADER_Y, 0])
        keys = ("first", "last", "other", "bias")
        self.andn_rounded = RoundedSum([[r[k] for r in rows] for k in keys], [r["pre"] for r in rows], 2)
        xs = {"first": -1.95, "last": -0.55, "other": 0.85, "bias": 2.15, "input": 4.0, "gelu": 5.6}
        chip_right = -2.85                      # the pair's chips end here; they start inside the title-safe area
        head_y, ys = 2.45, [1.6 - r * 0.75 for r in range(len(rows))]
        names = [*f.tokens, *(w for row in rows for w in row["pair"])]   # a new name, a colour of its own
        pairs = []
        for row in rows:
            chips = VGroup(*[TokenChip(w, colour) for w, colour in zip(row["pair"], style.token_colours(row["pair"], names))])
            chips.arrange(RIGHT, buff=0.1).scale(0.8)
            room = chip_right + style.safe_half_width() - 0.05
            if chips.width > room:
                chips.scale_to_fit_width(room)
            pairs.append(chips)
        columns = [*self.andn_rounded.labels, self.andn_rounded.total_labels, [style.signed(r["act"], 2) for r in rows]]
        self.andn_table = Table(pairs, columns, ys, label_right=chip_right, column_rights=[xs[k] + 0.45 for k in xs],
                                column_colours=[TEXT] * 5 + [[NEURON_ACTIVE if r["act"] > a["threshold"] else MUTED
                                                              for r in rows]],
                                headers=[self.s(f"col_{k}") for k in xs], header_baseline=head_y)
        self.andn_heads, bias, total = self.andn_table.header, *self.andn_table.columns[len(keys) - 1:len(keys) + 1]
        # ≈ before a row's input where its labels do not add up to it (the header says "= input"), midway between
        # the bias column's widest label and the input column's, so it keeps clear of both at any width
        gap_left, gap_right = max(n.get_right()[0] for n in bias), min(n.get_left()[0] for n in total)
        self.andn_rows, self.andn_signs = VGroup(), []
        for r, y in enumerate(ys):
            sign = NumberText("\u2248" if self.andn_rounded.approx_rows[r] else "=", style.LABEL, TEXT)
            sign.place((gap_left + gap_right + sign.width) / 2, y)
            self.andn_signs.append(sign)
            self.andn_rows.add(VGroup(*self.andn_table.row(r), *([sign] if self.andn_rounded.approx_rows[r] else [])))
        self.record_sum("and_neuron", "first name + last name + other words + bias = input", self.andn_rounded,
                        drawn=[sign if approx else n          # ≈ drawn, or the input alone
                               for sign, approx, n in zip(self.andn_signs, self.andn_rounded.approx_rows, total)])
        self.andn_note = Label(self.s("andn_note", k=f.andn_k, m=len(a["pairs"])),
                               font_size=style.SMALL, color=MUTED)
        self.andn_note.move_to([0, 0, 0]).on_baseline(ys[-1] - 0.8)

    def beat_and_neuron(self):
        """The AND search's neuron, its input split by name (issue 32: the source's AND, as a mechanism)."""
        f, a = self.f, self.f.andn
        key = self.caption_rule("and_neuron", f.and_neuron_key(), "the neuron of the lookup MLP whose activation at the "
                                "last name for the person most exceeds every other pair of names': above the threshold "
                                "for the person and at most it for every pair keeping one name: andn_yes; not above it "
                                "for the person: andn_none; else andn_sum when both one-name pairs pass the threshold, "
                                "andn_one when one does", neuron=a["neuron"], act=a["act"], margin=a["margin"],
                                one_name=a["groups"], threshold=a["threshold"])
        rows, lab = f.and_rows, self.andn_rounded.labels
        first, last = rows[0]["pair"]
        g = a["groups"]
        one = first if g["same_first"]["act"] > a["threshold"] else last
        self.clear_stage()
        self.say(key, n=a["neuron"], first=first, last=last, act=style.signed(a["act"], 2).lstrip("+"),
                 pf=lab[0][0], pl=lab[1][0], b=lab[3][0], a1=style.signed(g["same_first"]["act"], 2).lstrip("+"),
                 a2=style.signed(g["same_last"]["act"], 2).lstrip("+"), one=one,
                 a=style.signed(max(g["same_first"]["act"], g["same_last"]["act"]), 2).lstrip("+"),
                 mlp=self.comp_name(f.layer, "mlp"))
        self.play(FadeIn(self.andn_header), FadeIn(self.andn_heads), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(r, shift=RIGHT * 0.2) for r in self.andn_rows], lag_ratio=0.4),
                  FadeIn(self.andn_note), run_time=2 * STEP)
        self.wait(PAUSE)

    # --- summary ----------------------------------------------------------------------------------------------
    def beat_summary(self):
        """The map (issue 43): every site whose mean-ablation drops P(answer) by 25 points or more (factmap.lit_sites),
        lit in the pipeline, each named beside it with its position and P(answer) without it; the caption says what
        the lit site at a name that drops it most is (conclusion_key), with what its attention reads."""
        f = self.f
        key = self.caption_rule("conclusion", f.conclusion_key(), "the lit site (mean-ablation drops P(answer) by at "
                                "least 25 points) at a name position with the largest drop: an attention output: "
                                "conclusion_attention; an MLP output: conclusion_mlp; no name site lit: "
                                "conclusion_elsewhere", lit=[x["site"] for x in f.lit], key_site=f.key_site)
        self.note_difference("conclusion", lambda lang, x, e: NOTES(
            e["conclusion_key"] + "_is", lang, **({"layer": style.shown(e["key_site"]["layer"]),
                                                   "tok": style.token_label(e["key_site"]["token"])}
                                                  if e["key_site"] else {})))
        k, r = f.key_site, f.name_reads
        self.say(key, comp=self.comp_name(k["layer"], k["component"]) if k else "",
                 name=f.tokens[k["position"]] if k else "", sport=f.answer,
                 p=style.percent(k["p_after"]) if k else "", n=len(f.lit),
                 first=f.tokens[f.first_index], w=style.percent(r["weight"]) if r else "",
                 h=r["head"] + 1 if r else "")
        lines = [(self.s("where_header", sport=f.answer, p=style.percent(f.path["p_clean"])), PROB),
                 (self.s("where_header_2"), MUTED)]
        for x in f.lit:
            lines.append((self.s("where_site", comp=self.comp_name(x["layer"], x["component"], short=True),
                                 tok=f.tokens[x["position"]], p=style.percent(x["p_after"])),
                          TEXT if x["at_name"] else MUTED))
        boxes = list(dict.fromkeys(x["site"].split("@")[0] for x in f.lit))     # none lit: the map lights nothing
        self.show_where(boxes, lines, p_clean=f.path["p_clean"], sites=f.lit, key_site=k)
        self.values["where"]["lit"] = [x["site"] for x in f.lit]     # the sites, "attention:L@P" / "mlp:L@P"
        self.values["where"]["boxes"] = self.where.lit_parts
        self.values["where"]["kinds"] = [x["site"] for x in f.kinds["sites"] if x["kind"]]
        self.wait(PAUSE)
        # a lit site away from the names that a sport needs at all (without it none comes): said, so that the map's
        # deepest drop is not read as the fact's place (kind_key; nothing said when there is none)
        kind = f.kind_key()
        if kind is not None:
            x = f.kinds["first"]
            self.say(self.caption_rule(
                "kind", kind, "a lit site away from the names whose mean-ablation drops P(any sport of the prompt's "
                "language) by at least 25 points (the lowest after, first on a tie) is named: kind_which when no lit "
                "site at a name drops it so (those sites pick which sport), else kind_only; no such site: nothing "
                "said", site=x["site"], p_any=f.kinds["p_any"], p_any_after=x["p_any_after"],
                names_pick_which=f.kinds["names_pick_which"]),
                comp=self.comp_name(x["layer"], x["component"]), tok=f.tokens[x["position"]],
                q=style.percent(x["p_any_after"]))
