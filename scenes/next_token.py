"""The goal of the model: predict the next word; sample it, append it, predict again; context changes the prediction.

    manim render -ql scenes/next_token.py NextToken
    python render.py next_token --lang zh --temperature 0.5 --seed 3

Every distribution is the model's (model.generate.generate, model.probabilities); the draws are NumPy's seeded
generator's, recorded step by step in the manifest (values["steps"]): the context's token ids, the temperature,
the candidates shown with their probabilities, u and the sampled word. The context pair is chosen by the rule in
scenes/prompts.py context_pair (model.analysis.context).
"""

from __future__ import annotations

from manim import (DOWN, LEFT, RIGHT, UP, Create, FadeIn, FadeOut, LaggedStart, Line, ReplacementTransform,
                   SurroundingRectangle, Triangle, VGroup, config)

from model.generate import candidates, generate
from scenes import style
from scenes.components import Label, NumberText, ProbabilityBars, StackedBar, TokenChip, TokenRow, row_positions
from scenes.lecture import LectureScene
from scenes.params import AUTO
from scenes.prompts import context_pair, language_of, own_language, uncertain_prompt
from scenes.style import MUTED, PROB, SHARED, TEMPERATURE, TEXT
from scenes.words import Words

WORDS = Words.beside(__file__)     # next_token.toml: the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

# --- layout (scene units; the frame is 14.2 × 8, title-safe is ±6.4 × ±3.6) --------
LABEL_RIGHT, BAR_LEFT, BAR_WIDTH, PERCENT_RIGHT = -4.1, -3.9, 2.3, 0.15   # the distribution, left half
FIRST_ROW, PITCH = 1.0, 0.5
STRIP_LEFT, STRIP_WIDTH, STRIP_Y, STRIP_H = 1.0, 5.0, 0.45, 0.5              # [0, 1) as a strip, right half
CONTEXT_ROWS = (3.2, 0.2)             # the two context prompts' rows (centres): a block's bars sit nearer its own
CONTEXT_PITCH, CONTEXT_K = 0.45, 3    # row than the next block's (0.75 below the row, the next row 3.0 down)
CONTEXT_BARS = 0.75                   # their bars (top 3 and "other"): the first baseline this far under the row
CTX_LABEL_RIGHT, CTX_BAR_LEFT, CTX_BAR_WIDTH, CTX_PERCENT_RIGHT = -3.1, -2.9, 2.9, 1.75
STEP, PAUSE = style.STEP, style.PAUSE
THRESHOLD_APART = 0.9   # total variation at or above which two predictions "share almost nothing"


class NextToken(LectureScene):
    name = "next_token"
    strings = S
    beat_titles = BEATS

    # --- the beats -------------------------------------------------------------------
    def title_note(self) -> str:
        """The lecture's one line on where the numbers come from (docs/teaching.md §8): the model, named by one rule
        (a lecturer's own checkpoint as what it is); its shape is in the manifest (values["model"])."""
        return self.s("title_note", model=self.model_words())

    def beat_task(self):
        self.say("task")
        row = self.rows[0]
        self.play(LaggedStart(*[FadeIn(c, shift=DOWN * 0.15) for c in row.chips], lag_ratio=0.2),
                  FadeIn(row.ellipsis), run_time=STEP + 0.2 * len(row.chips))
        self.play(FadeIn(row.indices), FadeIn(row.slot), run_time=STEP)
        self.wait(PAUSE)

    def beat_distribution(self):
        # our vocabulary holds both languages' words (said once, here); a checkpoint of one's own has its own
        self.say("distribution", vocab=self.vocab, k=self.k)
        bars = self.bars[0]
        self.play(FadeIn(bars.labels), FadeIn(bars.bars.tracks), run_time=STEP)
        self.play(LaggedStart(*bars.grow(), lag_ratio=0.15),
                  LaggedStart(*[FadeIn(n) for n in bars.numbers], lag_ratio=0.15), run_time=2 * STEP)
        self.wait(PAUSE)

    def beat_sample(self):
        first = self.steps[0]
        self.say(self.sample_caption, **self.sample_values(first))
        self.play(FadeIn(self.readout), FadeIn(self.strips[0]), run_time=STEP)
        self.show_draw(0, full=True)
        # the two settings under the strip, each said with its meaning where it first appears
        self.say("settings" if first["u"] is not None else "settings_argmax",
                 t=style.temperature(self.params["temperature"]), seed=self.params["seed"])
        self.wait(PAUSE)

    def beat_loop(self):
        self.say("loop", n=len(self.steps))
        for i in range(1, len(self.steps)):
            before, after = self.rows[i - 1], self.rows[i]
            old = self.consolidate(VGroup(before.ellipsis, before.chips, before.indices, self.filled[i - 1]))
            self.consolidate(self.bars[i - 1])
            self.play(ReplacementTransform(old, VGroup(after.ellipsis, after.chips, after.indices[:-1])),
                      FadeIn(VGroup(after.slot, after.indices[-1])), FadeOut(self.highlights[i - 1]),
                      ReplacementTransform(self.bars[i - 1], self.bars[i]),
                      ReplacementTransform(self.strips[i - 1], self.strips[i]), FadeOut(self.markers[i - 1]),
                      run_time=STEP)
            self.show_draw(i, full=False)
        self.wait(PAUSE)

    def beat_context(self):
        key = self.caption_rule(
            "context", "context_apart" if self.pair["total_variation"] >= THRESHOLD_APART else "context_differ",
            f"context_apart if the total variation >= {THRESHOLD_APART}, else context_differ",
            total_variation=self.pair["total_variation"], threshold=THRESHOLD_APART)
        self.clear_stage()
        self.say(key, word=self.pair_word, tv=f"{self.pair['total_variation']:.3f}")
        for row, bars, frame in zip(self.pair_rows, self.pair_bars, self.pair_frames):
            self.play(FadeIn(row), run_time=STEP)
            self.play(FadeIn(bars), Create(frame), run_time=STEP)
        self.play(FadeIn(self.tv_readout), run_time=STEP)
        self.wait(PAUSE + 1)
        self.say("context_note" if own_language(self.gpt) else "context_note_checkpoint")   # made-up facts: ours

    def beat_summary(self):
        """Where the distribution is made: the pipeline lit at its end, with the first step's most likely word."""
        self.say("summary")
        first = self.steps[0]
        top = max(first["candidates"], key=lambda c: c["probability"])
        last = first["token_ids"][-1]
        self.show_where(["unembedding"], [
            (self.s("where_after", last=style.token_label(self.gpt.tokenizer.words[last])), MUTED),
            (self.s("where_top", word=style.token_label(top["word"]), p=style.percent(top["probability"])), PROB),
            (self.s("where_vocab", n=self.vocab), MUTED)],
            last_token_id=last, top={"token_id": top["token_id"], "probability": top["probability"]})
        # the stack just drawn, said in plain words (its boxes are named in their own chapters)
        self.say("summary_stack", layers=self.gpt.config.n_layer)
        self.wait(PAUSE)

    # --- one draw: u on the strip, the word into the slot ---------------------------------
    def show_draw(self, i: int, full: bool):
        """u's marker on the strip (none at T = 0), the sampled word framed in the bars and on the strip, and the
        word into the slot."""
        run_time = STEP if full else 0.8 * STEP
        if self.steps[i]["u"] is not None:
            self.play(FadeIn(self.markers[i], shift=UP * 0.2), run_time=run_time)
        row = self.rows[i]
        self.play(Create(self.highlights[i]), FadeIn(self.filled[i]), FadeOut(row.slot),
                  row.indices[-1].animate.set_x(self.filled[i].get_center()[0]), run_time=run_time)
        if full:
            self.wait(PAUSE)

    def consolidate(self, group: VGroup) -> VGroup:
        """Put `group` on stage as one mobject, in place of whichever of its parts were faded in one by one (a
        transform of the group then moves every part once)."""
        family = set(group.get_family())
        self.remove(*[m for m in self.mobjects if m in family])
        self.add(group)
        return group

    def sample_values(self, step: dict) -> dict:
        s = step["sampled"]
        return {"u": f"{step['u']:.3f}" if step["u"] is not None else "", "word": style.token_label(s["word"]),
                "p": style.percent(s["probability"]), "k": self.k}

    # --- building the pieces, from the model's numbers --------------------------------
    def prepare(self):
        params, gpt = self.params, self.gpt
        self.values["model"] = {"n_layer": gpt.config.n_layer, "n_embd": gpt.config.n_embd,
                                "vocab_size": gpt.config.vocab_size}
        self.vocab, self.k = gpt.config.vocab_size, params["top_k"]
        prompt, prompt_rule = params["prompt"], None
        if prompt == AUTO:
            prompt_rule = uncertain_prompt(self.lang, gpt)
            prompt = self.params["prompt"] = prompt_rule["prompt"]
        self.steps = generate(gpt, prompt, params["steps"], params["temperature"], params["seed"], top_k=self.k)
        words = gpt.tokenizer.words
        first = self.steps[0]
        self.values_tokens = [words[i] for i in first["token_ids"]]
        sampled = first["sampled"]
        self.sample_caption = self.caption_rule(
            "sample", "sample_argmax" if first["u"] is None else "sample_top" if sampled["rank"] < self.k
            else "sample_other",
            "sample_argmax at T = 0 (no draw), else sample_top if the sampled word's rank is within the top k "
            "shown, else sample_other", temperature=first["temperature"], rank=sampled["rank"], top_k=self.k)

        top = config.frame_height / 2 - style.safe_half_height()
        left = config.frame_width / 2 - style.safe_half_width()
        ys = row_positions(self.k + 1, FIRST_ROW, PITCH)
        self.rows, self.bars, self.strips, self.markers, self.highlights, self.filled = [], [], [], [], [], []
        for step in self.steps:
            # room for the sampled word where the "?" slot is: the earliest words give way to "⋯" if need be
            word = style.token_label(step["sampled"]["word"])
            wider = max(0.0, TokenChip(word, TEXT).width - TokenChip.slot().width)
            row = TokenRow([style.token_label(words[i]) for i in step["token_ids"]], lang=self.lang, next_slot=True,
                           max_width=2 * style.safe_half_width() - wider)
            row.to_edge(UP, buff=top).to_edge(LEFT, buff=left)   # left-aligned: the row grows to the right
            self.rows.append(row)
            bars = ProbabilityBars([style.token_label(c["word"]) for c in step["candidates"]],
                                   [c["probability"] for c in step["candidates"]], step["other"], ys, lang=self.lang,
                                   bar_left=BAR_LEFT, bar_width=BAR_WIDTH, number_right=PERCENT_RIGHT,
                                   label_right=LABEL_RIGHT)
            self.bars.append(bars)
            self.record_sum("distribution" if not self.bars[:-1] else "loop",
                            f"step {len(self.bars)}: probabilities = 100%", bars.rounded)
            strip = self.strip(step)
            self.strips.append(strip)
            self.markers.append(self.marker(step))
            rank = step["sampled"]["rank"]
            row_parts = (VGroup(bars.labels[rank], bars.bars.tracks[rank], bars.numbers[rank]) if rank < self.k
                         else VGroup(bars.labels[-1], bars.bars.tracks[-1], bars.numbers[-1]))
            self.highlights.append(VGroup(
                SurroundingRectangle(row_parts, color=style.ACCENT, buff=0.08, corner_radius=0.06),
                SurroundingRectangle(strip.segments[min(rank, self.k)], color=style.ACCENT, buff=0.04)))
            self.filled.append(row.slot_filled(style.token_label(step["sampled"]["word"])))
        self.readout = VGroup(
            Label(self.s("temperature", t=style.temperature(params["temperature"])), color=TEMPERATURE),
            Label(self.s("temperature_note"), font_size=style.SMALL, color=MUTED),
            Label(self.s("seed", seed=params["seed"]), color=MUTED)).arrange(DOWN, buff=0.06)
        # below the strip and its u, above the caption
        self.readout.move_to([STRIP_LEFT + STRIP_WIDTH / 2, STRIP_Y - STRIP_H / 2 - 0.9, 0], aligned_edge=UP)

        self.pair = context_pair(gpt, language_of(self.values_tokens))   # from the prompt's own language
        self.pair_word = style.token_label(words[self.pair["token_ids"][0][-1]])
        self.pair_rows, self.pair_bars, self.pair_frames, pair_values = [], [], [], []
        for n, (ids, y) in enumerate(zip(self.pair["token_ids"], CONTEXT_ROWS)):
            row = TokenRow([style.token_label(words[i]) for i in ids], lang=self.lang, next_slot=True, indices=False)
            row.move_to([0, y, 0])
            shown, other = candidates(gpt, gpt.next_token_probabilities(ids), CONTEXT_K)   # at T = 1
            ys_ctx = row_positions(CONTEXT_K + 1, y - CONTEXT_BARS, CONTEXT_PITCH)
            bars = ProbabilityBars([style.token_label(c["word"]) for c in shown],
                                   [c["probability"] for c in shown], other, ys_ctx,
                                   lang=self.lang, bar_left=CTX_BAR_LEFT, bar_width=CTX_BAR_WIDTH,
                                   number_right=CTX_PERCENT_RIGHT, label_right=CTX_LABEL_RIGHT)
            self.record_sum("context", f"prompt {n + 1}: probabilities = 100%", bars.rounded)
            self.pair_rows.append(row)
            self.pair_bars.append(bars)
            self.pair_frames.append(SurroundingRectangle(row.chips[-1], color=style.ACCENT, buff=0.05,
                                                         corner_radius=0.08))
            pair_values.append({"prompt": self.pair["prompts"][n], "token_ids": ids,
                                "candidates": [{"token_id": c["token_id"], "probability": c["probability"]}
                                               for c in shown], "other": other})
        tv = self.pair["total_variation"]
        self.tv_readout = VGroup(Label(self.s("tv_label"), font_size=style.SMALL, color=MUTED),
                                 NumberText(f"{tv:.3f}", color=TEXT)).arrange(DOWN, buff=0.2)
        self.tv_readout.move_to([4.4, (CONTEXT_ROWS[0] + CONTEXT_ROWS[1]) / 2 - 0.4, 0])

        self.values.update({
            "prompt": prompt, "tokens": [words[i] for i in first["token_ids"]], "token_ids": first["token_ids"],
            "temperature": params["temperature"], "seed": params["seed"], "top_k": self.k, "vocab_size": self.vocab,
            "sampler": "numpy.random.default_rng(seed).random() per step; words end to end on [0, 1), most probable "
                       "first (lower id on a tie); T = 0 takes the most probable word and draws nothing",
            "steps": [{"token_ids": s["token_ids"], "temperature": s["temperature"],
                       "candidates": [{"token_id": c["token_id"], "probability": c["probability"]}
                                      for c in s["candidates"]],
                       "other": s["other"], "u": s["u"], "sampled": {k: s["sampled"][k] for k in
                                                                     ("token_id", "probability", "cumulative_before",
                                                                      "rank")}}
                      for s in self.steps],
            "generated_ids": [s["sampled"]["token_id"] for s in self.steps],
            "context": {"rule": self.pair["rule"], "total_variation": tv, "threshold_apart": THRESHOLD_APART,
                        "prefixes_compared": self.pair["prefixes_compared"],
                        "pairs_compared": self.pair["pairs_compared"], "prompts": pair_values},
        })
        if prompt_rule:
            self.values["prompt_rule"] = prompt_rule

    def strip(self, step: dict) -> VGroup:
        """[0, 1) as a strip: the shown candidates end to end, most probable first, then "other"; 0 and 1 marked."""
        shares = [c["probability"] for c in step["candidates"]] + [step["other"]]
        k = len(step["candidates"])          # the words yellow, every other one fainter; "other" grey, fainter still
        segments = StackedBar(shares, STRIP_LEFT, STRIP_WIDTH, STRIP_Y, [PROB] * k + [MUTED], height=STRIP_H,
                              opacities=[0.9 if n % 2 == 0 else 0.6 for n in range(k)] + [0.35], stroke_width=1.5)
        ends = VGroup(*[NumberText(t, font_size=style.SMALL, color=MUTED) for t in ("0", "1")])
        ends[0].next_to(segments, LEFT, buff=0.15)
        ends[1].next_to(segments, RIGHT, buff=0.15)
        names = VGroup()   # the drawn word above its own segment (none for "other": the caption names it), kept over
        rank = step["sampled"]["rank"]   # the strip; no other segment is named, so no name sits where u does not land
        if rank < len(step["candidates"]):
            name = Label(style.token_label(step["sampled"]["word"]), font_size=style.SMALL)
            name.next_to(segments[rank], UP, buff=0.12)
            name.shift(RIGHT * max(0.0, segments.get_left()[0] - name.get_left()[0]))
            name.shift(LEFT * max(0.0, name.get_right()[0] - segments.get_right()[0]))
            names.add(name)
        ends.add(names)
        group = VGroup(segments, ends)
        group.segments = segments
        return group

    def marker(self, step: dict) -> VGroup:
        """A triangle under the strip at u, and u's value."""
        if step["u"] is None:
            return VGroup()
        x = STRIP_LEFT + step["u"] * STRIP_WIDTH
        tip = Triangle(color=TEXT, fill_opacity=1, stroke_width=0).scale(0.12)
        tip.move_to([x, STRIP_Y - STRIP_H / 2 - 0.15, 0])
        value = Label(f"u = {step['u']:.3f}", font_size=style.SMALL)
        value.move_to([min(max(x, STRIP_LEFT + value.width / 2), STRIP_LEFT + STRIP_WIDTH - value.width / 2),
                       STRIP_Y - STRIP_H / 2 - 0.55, 0])
        line = Line([x, STRIP_Y - STRIP_H / 2, 0], [x, STRIP_Y + STRIP_H / 2, 0], stroke_color=TEXT, stroke_width=3)
        return VGroup(tip, value, line)

