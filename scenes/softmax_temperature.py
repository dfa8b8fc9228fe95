"""Softmax and temperature, on the real logits of our small GPT.

    manim render -ql scenes/softmax_temperature.py SoftmaxTemperature
    python render.py softmax_temperature --lang zh --temperature 1,3,0.3,0

Every number comes from the model's trace and from model.probabilities; the
values shown are recorded at full precision in self.values (the manifest).
"""

from __future__ import annotations

import math

import numpy as np
from manim import (DOWN, LEFT, ORIGIN, RIGHT, UP, config, Create, FadeIn, FadeOut, GrowFromEdge, LaggedStart, Line, MathTex,
                   SurroundingRectangle, Transform, TransformFromCopy, TransformMatchingTex,
                   ValueTracker, VGroup, Write, smooth)

from model import probabilities, softmax_steps
from model.generate import generate
from model.language import vocabulary_of
from scenes import style
from scenes.catalog import sweep_stops
from scenes.components import (BarChart, BarScale, Label, LabelColumn, NumberColumn, NumberText, ProbabilityBars, RoundedSum, TokenRow,
                               row_positions, rule, wrap_words)
from scenes.components import math_tex as tex
from scenes.lecture import LectureScene
from scenes.params import AUTO
from scenes.prompts import language_of, own_language, uncertain_prompt
from scenes.style import LOGIT, MUTED, PROB, SHARED, TEMPERATURE, TEXT
from scenes.words import Words

WORDS = Words.beside(__file__)     # softmax_temperature.toml: the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]


# --- the numbers: read from the model, never computed here beyond display -----------
class NextToken:
    """The model's next-token logits for a prompt, and the distribution at any temperature."""

    def __init__(self, gpt, prompt: str, top_k: int):
        trace = gpt.trace(prompt)
        self.tokens, self.token_ids = list(trace["tokens"]), [int(i) for i in trace["token_ids"]]
        self.logits = np.asarray(trace["logits"][-1], dtype=np.float64)   # the model's logits, full precision
        self.words = gpt.tokenizer.words
        order = np.argsort(-self.logits, kind="stable")
        self.top, self.rest = order[:top_k], order[top_k:]

    def at(self, temperature: float) -> tuple[np.ndarray, float]:
        """(probabilities of the top words, total probability of all the others), from model.probabilities."""
        p = probabilities(self.logits, temperature)
        return p[self.top], float(p[self.rest].sum())

    def exponentials(self) -> tuple[np.ndarray, float, float]:
        """e^z for the shown words, for the others summed, and over the whole vocabulary (model.softmax_steps)."""
        steps = softmax_steps(self.logits)
        e = steps["exp"]
        return e[self.top], float(e[self.rest].sum()), steps["sum"]

    def argmax(self) -> list[int]:
        return [int(i) for i in np.flatnonzero(self.logits == self.logits.max())]


SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")   # the unit's power on a caption line (10⁵)
EXP_DECIMALS = 2   # e^z in the column's unit: two decimals (the largest reads 1.00 to 9.99)


def exp_power(largest: float) -> int:
    """The power of ten the e^z column is shown in: that of its largest entry, from 100 up (e^z of 4.88×10⁵ reads
    4.88 in units of 10⁵); smaller columns as they are."""
    return int(np.floor(np.log10(largest))) if largest >= 100 else 0


def formula(temperature: bool) -> MathTex:
    """p_i = e^{z_i} / Σ_j e^{z_j}, with /T in both exponents once temperature is on."""
    t = ["/", "T"] if temperature else []
    parts = [r"\textstyle p_i", "=", "e^{", "z_i", *t, "}", r"\big/", r"\sum_j", "e^{", "z_j", *t, "}"]
    return tex(*parts, colours={r"\textstyle p_i": PROB, "z_i": LOGIT, "z_j": LOGIT, "T": TEMPERATURE})


# --- layout (scene units; the frame is 14.2 × 8, title-safe is ±6.4 × ±3.6) --------
LABEL_RIGHT = -4.35          # token words, right-aligned
LOGIT_NUMBER_RIGHT = -2.75   # logit values
LOGIT_BAR = (-2.5, 1.55)     # left edge and width of the logit bars
MIDDLE_RIGHT = 1.3           # e^z, then z/T
PROB_BAR = (1.6, 3.0)        # left edge and width (= 100 %) of the probability bars
PERCENT_RIGHT = 6.2
HEADER_BASELINE = 1.95
FIRST_ROW, PITCH = 1.25, 0.54
ROWS_ROOM = 3.24             # from the first row's baseline to the sum's, less 0.12: room for top_k = 5 at PITCH
STEP, PAUSE = style.STEP, style.PAUSE
STOP_HOLD = 0.6                        # the sweep's hold at each stop, to read its bars
WRITE_TEMPERATURES = (0.1, 1.0, 3.0)   # the text it writes: a low, a medium and a high temperature
WRITE_WORDS = 20                       # words written after the prompt (fewer where the context runs out)
WRITE_TOP, WRITE_BOTTOM = 2.55, -1.75  # the three texts sit between the prompt's row and the caption
WRITE_LEFT = -6.3
WRITE_PROMPT = 3.2                     # the prompt's line, above them
WRITE_MIN_PITCH = 0.42                 # their lines at least this far apart (a line of LABEL text and a gap)


def wrap_at_most(words: list[str], width: float, most: int) -> tuple[list[str], int]:
    """words wrapped to width (wrap_words) in at most `most` lines, and how many of the words are shown: all if they
    fit, else the longest start that fits with a closing "…" (wrap_words is greedy: a start wraps as the whole does)."""
    lines = wrap_words(words, style.LABEL, width)
    if len(lines) <= most:
        return lines, len(words)
    lo, hi = 1, len(words) - 1          # the most words whose own lines fit in `most` (then room for the "…")
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(wrap_words(words[:mid], style.LABEL, width)) <= most:
            lo = mid
        else:
            hi = mid - 1
    for k in range(lo, 0, -1):
        cut = wrap_words(words[:k] + ["\u2026"], style.LABEL, width)
        if len(cut) <= most:
            return cut, k
    return [words[0]], 1


class SoftmaxTemperature(LectureScene):
    name = "softmax_temperature"
    strings = S
    beat_titles = BEATS

    # --- the beats -------------------------------------------------------------------
    def beat_prompt(self):
        self.say("prompt")
        row = self.tokens
        self.play(LaggedStart(*[FadeIn(c, shift=DOWN * 0.15) for c in row.chips], lag_ratio=0.25),
                  FadeIn(row.ellipsis), run_time=STEP + 0.3 * len(row.chips))
        self.play(FadeIn(row.indices), FadeIn(row.slot), run_time=STEP)
        self.wait(PAUSE)

    def beat_logits(self):
        self.say("logits", vocab=self.vocab)
        self.play(FadeIn(self.logit_header), FadeIn(self.labels), run_time=STEP)
        self.play(Create(self.zero_line), LaggedStart(*self.logits.grow(), lag_ratio=0.15),
                  LaggedStart(*[FadeIn(n) for n in self.logit_numbers], lag_ratio=0.15), run_time=2 * STEP)
        self.play(FadeIn(self.more_words), run_time=STEP)
        self.wait(PAUSE + 1)

    def beat_exp(self):
        # the column's unit (exp_power) is said with it; every logit shown here may be positive already, so the
        # caption does not claim to show e^z making a score positive
        if self.exp_power:
            self.say("exp_unit", power=self.exp_power, sup=str(self.exp_power).translate(SUPERSCRIPT))
        else:
            self.say("exp")
        self.play(FadeIn(self.exp_header, shift=DOWN * 0.1), run_time=STEP)
        self.play(LaggedStart(*[TransformFromCopy(z, e) for z, e in zip(self.logit_numbers, self.exp_numbers)],
                              lag_ratio=0.2), run_time=2 * STEP)
        self.play(FadeIn(self.exp_numbers[-1]), run_time=STEP)
        self.wait(PAUSE + 1)

    def beat_sum(self):
        self.say("sum", vocab=self.vocab, k=len(self.next.top))
        self.play(Create(self.sum_rule), FadeIn(self.sum_label), run_time=STEP)
        self.play(LaggedStart(*[Transform(e.copy(), self.exp_sum.copy(), remover=True) for e in self.exp_numbers],
                              lag_ratio=0.12), run_time=2 * STEP)
        self.add(self.exp_sum)
        self.wait(PAUSE + 1)

    def beat_divide(self):
        self.say("divide")
        self.play(Write(self.formula), run_time=2 * STEP)
        bars = self.prob_bars
        self.play(FadeIn(bars.bars.tracks), LaggedStart(*[GrowFromEdge(b, LEFT) for b in bars.bars.bars],
                                                        lag_ratio=0.15),
                  LaggedStart(*[TransformFromCopy(e, p) for e, p in zip(self.exp_numbers, bars.numbers)],
                              lag_ratio=0.15), run_time=2.5 * STEP)
        self.play(Create(self.prob_rule), FadeIn(self.prob_total), run_time=STEP)
        self.wait(PAUSE + 1.5)

    def beat_temperature(self):
        self.say("temperature")
        self.play(FadeOut(VGroup(self.exp_header, self.exp_numbers, self.exp_sum, self.sum_rule, self.sum_label,
                                 self.prob_rule, self.prob_total)), run_time=STEP)
        self.play(TransformMatchingTex(self.formula, self.t_formula), FadeIn(self.scaled_header), run_time=2 * STEP)
        self.play(LaggedStart(*[TransformFromCopy(z, s) for z, s in zip(self.logit_numbers, self.scaled_numbers)],
                              lag_ratio=0.15), FadeIn(self.readout), run_time=2 * STEP)
        self.add_temperature_updaters()
        self.wait(PAUSE + 1)

    def beat_sweep(self):
        """The sweep, one beat: T moves through the stops in the order given, each held a moment. Before the first
        stop above 1 the hot line is said (of the hottest stop), before the first below 1 the cold line (of the
        coldest); stops at 1 alone are said neutral."""
        stops = sweep_stops(self.params["temperatures"])
        hot, cold = [t for t in stops if t > 1], [t for t in stops if t < 1]
        lines = {}
        if hot:
            lines["hot"] = max(hot)
        if cold:
            lines["cold"] = min(cold)
        if not lines:
            self.say_stop("sweep", 1.0)
        for t in stops:
            side = "hot" if t > 1 else "cold" if t < 1 else None
            if side in lines:
                self.say_stop(f"sweep {side}", lines.pop(side))
            self.sweep_to(t)
        self.wait(PAUSE + 1)

    def say_stop(self, name: str, t: float):
        """One line of the sweep, said of stop t by the rule (sweep_caption); the top word's probability as its bar
        will show it (its plain rounding)."""
        p, other = self.next.at(t)
        p1, other1 = self.next.at(1.0)
        self.say(self.sweep_caption(name, t), t=f"{t:g}", n=len(self.next.argmax()),
                 word=style.token_label(self.next.words[int(self.next.top[0])]),
                 p=self.prob_bars.percents(list(p) + [other]).labels[0],
                 p1=self.prob_bars.percents(list(p1) + [other1]).labels[0])

    def sweep_to(self, t: float):
        if t == 0:  # z/0 has no value: the column steps back, and only the order of the logits matters
            self.play(FadeOut(self.scaled_numbers), self.scaled_header.animate.set_opacity(0.5), run_time=STEP)
        elif self.at_zero:
            self.leave_argmax()
        self.play(self.T.animate(rate_func=smooth).set_value(t), run_time=self.sweep_time(t))
        self.record(t)
        if t == 0:
            self.show_argmax()
        self.wait(STOP_HOLD)

    def sweep_caption(self, name: str, t: float) -> str:
        """A line of the sweep, by a rule over the probabilities shown at its stop t (the hottest stop for the hot
        line, the coldest for the cold one): the top word's probability at t against at T = 1, and how many words
        share the largest logit."""
        nt = self.next
        top_at_t, top_at_1 = float(nt.at(t)[0][0]), float(nt.at(1.0)[0][0])
        tied = len(nt.argmax())
        if t == 0:
            key = "zero" if tied == 1 else "zero_tie"
        elif t == 1:
            key = "neutral"
        elif (t > 1 and top_at_t < top_at_1) or (t < 1 and top_at_t > top_at_1):
            key = "hotter" if t > 1 else "colder" if tied == 1 else "colder_tie"
        else:
            key = "unchanged"
        return self.caption_rule(
            name, key,
            "said of the hottest stop above 1 (sweep hot) or the coldest below 1 (sweep cold), or T = 1 where the "
            "sweep has no other stop (sweep): T = 0: zero (one largest logit) or zero_tie; T = 1: neutral; T > 1: "
            "hotter if the top word's probability is lower than at T = 1; T < 1: colder if it is higher "
            "(colder_tie if words tie for the largest logit); else unchanged", T=t, top_probability=top_at_t,
            top_probability_at_1=top_at_1, words_with_the_largest_logit=tied)

    def beat_write(self):
        """The text it writes: WRITE_WORDS words after the same prompt at a low, a medium and a high temperature,
        one seed for all three (model.generate); what the texts are like is said by a rule over them: how many words
        of the other language each holds (our model's two languages), else how many different words."""
        w = self.written
        lo, mid, hi = (f"{e['T']:g}" for e in w["samples"])
        d_lo, d_mid, d_hi = (e["distinct"] for e in w["samples"])
        self.clear_stage()
        self.say("write_seed", n=w["steps"], lo=lo, mid=mid, hi=hi)
        self.play(FadeIn(self.write_prompt), FadeIn(self.write_seed), run_time=STEP)
        for block in self.write_blocks:
            self.play(FadeIn(block[0]), run_time=0.6 * STEP)
            self.play(LaggedStart(*[FadeIn(line) for line in block[1]], lag_ratio=0.4), run_time=STEP)
        self.wait(PAUSE + 0.5)
        if "other_lang" in w:
            m_lo, m_mid, m_hi = (e["other_words"] for e in w["samples"])
            key = self.caption_rule(
                "write", "write_mixes" if m_lo == m_mid == 0 < m_hi else "write_mixes_more" if m_lo < m_hi
                else "write_alike_mix", "write_mixes if the texts at the low and the medium T hold no word of the "
                "other language and the text at the highest T does; else write_mixes_more if the highest T's text "
                "holds more of them than the lowest T's; else write_alike_mix", temperatures=[e["T"] for e in
                w["samples"]], other_words=[m_lo, m_mid, m_hi], lang=w["lang"], words=w["steps"], seed=w["seed"])
            names = {k: self.s(f"lang_{w[k]}") for k in ("lang", "other_lang")}
            self.say(key, n=w["steps"], lo=lo, mid=mid, hi=hi, m_lo=m_lo, m_mid=m_mid, m_hi=m_hi,
                     own=names["lang"], other=names["other_lang"])
        else:   # a checkpoint of one's own: its words have no language of ours to count
            key = self.caption_rule(
                "write", "write_wanders" if d_lo < d_hi else "write_alike",
                "write_wanders if the text at the lowest T has fewer different words than the text at the highest "
                "T, else write_alike", temperatures=[e["T"] for e in w["samples"]], distinct=[d_lo, d_mid, d_hi],
                words=w["steps"], seed=w["seed"])
            self.say(key, n=w["steps"], lo=lo, mid=mid, hi=hi, d_lo=d_lo, d_mid=d_mid, d_hi=d_hi)
        self.play(*[FadeIn(block[2]) for block in self.write_blocks], run_time=STEP)
        self.wait(PAUSE + 1)

    def prepare_write(self, prompt: str):
        """The three texts, from model.generate: the same prompt and seed at each of WRITE_TEMPERATURES."""
        ids = self.next.token_ids
        steps = max(1, min(WRITE_WORDS, self.gpt.config.n_positions - len(ids) + 1))
        seed = self.params["seed"]
        samples = []
        for t in WRITE_TEMPERATURES:
            records = generate(self.gpt, ids, steps, t, seed, top_k=1)
            written = [r["sampled"]["token_id"] for r in records]
            samples.append({"T": t, "generated_ids": written, "u": [r["u"] for r in records],
                            "words": [self.next.words[i] for i in written], "distinct": len(set(written))})
        self.written = {"seed": seed, "steps": steps, "prompt_ids": ids, "samples": samples,
                        "rule": "model.generate.generate(prompt, steps, T, seed) at each T; distinct: how many "
                                "different token ids the written words hold"}
        if own_language(self.gpt):   # our model's two languages: the words of each text not of the prompt's language
            lang = language_of(self.next.tokens)
            other = "zh" if lang == "en" else "en"
            theirs = set(vocabulary_of(other))
            for e in samples:
                e["other_words"] = sum(word in theirs for word in e["words"])
            self.written.update(lang=lang, other_lang=other)
            self.written["rule"] += (f"; other_words: how many written words are words of {other} "
                                     "(model.language.vocabulary_of), the prompt being in " + lang)
        self.values["write"] = self.written
        # the picture: per temperature a header (T, its count of different words, in muted) and the text, wrapped
        # each text gets an equal share of the lines that fit at WRITE_MIN_PITCH (below the headers); a text longer
        # than its share (a checkpoint's BPE pieces) shows its first words and ends in "…" (values: shown_words)
        blocks = []
        width = 2 * abs(WRITE_LEFT)
        room = WRITE_TOP - WRITE_BOTTOM - 0.25 * (len(samples) - 1)
        share = max(1, (int(room / WRITE_MIN_PITCH + 1e-9) + 1 - len(samples)) // len(samples))
        for e in samples:
            header = Label(self.s("write_header", t=f"{e['T']:g}"), color=TEMPERATURE)
            count = Label(self.s("write_count_other", m=e["other_words"], n=steps,
                                 other=self.s(f"lang_{self.written['other_lang']}")) if "other_words" in e
                          else self.s("write_count", d=e["distinct"], n=steps), font_size=style.SMALL, color=MUTED)
            text, e["shown_words"] = wrap_at_most(["…"] + [style.token_label(x) for x in e["words"]], width, share)
            e["shown_words"] -= 1      # the leading "…" (the prompt before) is no written word
            blocks.append(VGroup(header, VGroup(*[Label(line) for line in text]), count))
        self.written["lines_per_text"] = share
        self.written["rule"] += ("; each text wrapped to the width, in at most lines_per_text lines (an equal share "
                                 f"of the lines {WRITE_MIN_PITCH} apart that fit); a longer text shows its first "
                                 "shown_words words and a closing …")
        n_lines = sum(1 + len(b[1]) for b in blocks)
        pitch = min(0.5, room / max(n_lines - 1, 1))
        y = WRITE_TOP
        for header, lines, count in blocks:
            header.on_baseline(y).shift(RIGHT * (WRITE_LEFT - header.get_left()[0]))
            count.on_baseline(y).next_to(header, RIGHT, buff=0.35).align_to(header, DOWN)
            for line in lines:
                y -= pitch
                line.on_baseline(y).shift(RIGHT * (WRITE_LEFT - line.get_left()[0]))
            y -= pitch + 0.25
        self.write_blocks = blocks
        self.write_seed = Label(self.s("write_seed_label", seed=seed), font_size=style.SMALL, color=MUTED)
        self.write_seed.on_baseline(WRITE_PROMPT).shift(RIGHT * (-WRITE_LEFT - self.write_seed.get_right()[0]))
        prompt_line = wrap_words([style.token_label(t) for t in self.next.tokens] + ["…"], style.LABEL,
                                 self.write_seed.get_left()[0] - 0.4 - WRITE_LEFT)
        self.write_prompt = Label(prompt_line[0] if len(prompt_line) == 1 else "… " + prompt_line[-1])
        self.write_prompt.on_baseline(WRITE_PROMPT).shift(RIGHT * (WRITE_LEFT - self.write_prompt.get_left()[0]))

    def beat_summary(self):
        """Where temperature acts: the pipeline lit at its softmax, with the top word's probability at every T shown
        (as recorded at the stops), hottest first."""
        self.say("summary")
        nt = self.next
        stops = sorted({e["T"]: e["probabilities"][0] for e in self.values["temperatures"]}.items(), reverse=True)
        self.show_where(["unembedding"], [
            (self.s("where_header", word=style.token_label(nt.words[nt.top[0]])), PROB),
            *[(self.s("where_stop", t=f"{t:g}", p=style.percent(p)), TEXT) for t, p in stops]],
            token_id=int(nt.top[0]), stops=[{"T": t, "probability": p} for t, p in stops])

    # --- building the pieces, from the model's numbers --------------------------------
    def prepare(self):
        params, shape = self.params, self.gpt.config
        self.values["model"] = {"n_layer": shape.n_layer, "n_embd": shape.n_embd, "vocab_size": shape.vocab_size}
        self.prompt_rule = None
        prompt = params["prompt"]
        if prompt == AUTO:
            self.prompt_rule = uncertain_prompt(self.lang, self.gpt)
            prompt = self.params["prompt"] = self.prompt_rule["prompt"]
        self.next = nt = NextToken(self.gpt, prompt, params["top_k"])
        self.vocab = self.gpt.config.vocab_size
        k = len(nt.top)
        words = [style.token_label(nt.words[i]) for i in nt.top]
        pitch = min(PITCH, ROWS_ROOM / (k + 1))          # the sum's line stays above the caption for any top_k
        ys = row_positions(k + 1, FIRST_ROW, pitch)
        self.rows_y, sum_y = ys, ys[-1] - pitch - 0.12

        self.tokens = TokenRow(nt.tokens, lang=self.lang, next_slot=True,    # room for the argmax word at T = 0
                               slot_word=style.token_label(nt.words[nt.argmax()[0]]))
        self.tokens.move_to(ORIGIN).to_edge(UP, buff=config.frame_height / 2 - style.safe_half_height())
        self.labels = LabelColumn(words + [S("other", self.lang)], ys, LABEL_RIGHT,
                                  colours=[TEXT] * k + [MUTED])

        z = nt.logits[nt.top]
        left, width = LOGIT_BAR
        self.logits = BarChart(z, ys[:k], BarScale.fit(left, width, z), LOGIT, numbers=style.signed,
                               number_right=LOGIT_NUMBER_RIGHT, number_colour=LOGIT)
        x0 = self.logits.bar_scale.x0
        self.zero_line = Line([x0, ys[0] + 0.45, 0], [x0, ys[k - 1] - 0.2, 0], stroke_color=MUTED, stroke_width=2)
        self.logit_numbers = self.logits.numbers
        n_rest = len(nt.rest)
        self.more_words = Label(S("n_more_words", self.lang, n=n_rest) if n_rest < 10_000
                                else S("n_more", self.lang, n=f"{n_rest:,}"), color=MUTED)
        self.more_words.shift(RIGHT * (LOGIT_NUMBER_RIGHT - 1.3 - self.more_words.get_left()[0])).on_baseline(ys[k])
        word, symbol = Label(S("logit", self.lang), color=LOGIT).on_baseline(HEADER_BASELINE), tex("z_i", colours={"z_i": LOGIT})
        symbol.next_to(word, RIGHT, buff=0.2).align_to(word, DOWN).shift(DOWN * 0.1)
        self.logit_header = VGroup(word, symbol)
        self.logit_header.shift(RIGHT * ((LOGIT_NUMBER_RIGHT - 1.3 + left + width) / 2 - self.logit_header.get_center()[0]))

        exps, exp_other, exp_total = nt.exponentials()
        # one unit for the whole column (e^z / 10^power): the terms and the sum at one precision, each at its plain
        # rounding; "Σ ≈" where the terms' labels do not add up to the sum's
        self.exp_power = exp_power(max([*exps, exp_other]))
        unit = 10.0 ** self.exp_power
        per = [r"\,/\,10^{" + str(self.exp_power) + "}"] if self.exp_power else []
        self.exp_rounded = RoundedSum([[v / unit] for v in exps] + [[exp_other / unit]], [exp_total / unit],
                                    EXP_DECIMALS, sign=False, unit=unit)
        self.exp_header = self.header_tex(["e^{", "z_i", "}", *per])
        self.exp_numbers = NumberColumn([labels[0] for labels in self.exp_rounded.labels], ys, MIDDLE_RIGHT)
        self.exp_numbers[-1].set_color(MUTED)
        self.sum_rule = rule(MIDDLE_RIGHT - 2.0, MIDDLE_RIGHT, ys[k] - 0.2)
        self.exp_sum = NumberText(self.exp_rounded.total_labels[0]).place(MIDDLE_RIGHT, sum_y)
        relation = r"\approx" if self.exp_rounded.approx else "="
        sigma = tex(r"\textstyle\sum_{j=1}^{" + str(self.vocab) + "}", "e^{", "z_j", "}", *per, relation,
                    colours={"z_j": LOGIT})
        sigma.next_to(self.exp_sum, LEFT, buff=0.2)
        sigma.shift(UP * (self.exp_sum.baseline() - sigma[-1].get_bottom()[1] - 0.07))  # "=" (≈) on the baseline
        self.sum_label = sigma

        p, other = nt.at(1.0)
        self.prob_bars = ProbabilityBars(words, p, other, ys, lang=self.lang, bar_left=PROB_BAR[0],
                                         bar_width=PROB_BAR[1], number_right=PERCENT_RIGHT)
        self.prob_rule = rule(PERCENT_RIGHT - 1.3, PERCENT_RIGHT, ys[k] - 0.2)
        self.prob_total = NumberText(self.prob_bars.rounded.total_text(), color=PROB).place(PERCENT_RIGHT, sum_y)
        self.formula = formula(False).move_to([(PROB_BAR[0] + PERCENT_RIGHT) / 2, HEADER_BASELINE + 0.12, 0])
        self.t_formula = formula(True).move_to(self.formula)

        self.T = ValueTracker(1.0)
        self.scaled_header = self.header_tex(["z_i", "/", "T"])
        self.scaled_numbers = NumberColumn([style.signed(v) for v in z], ys[:k], MIDDLE_RIGHT, color=LOGIT)
        t_is = tex("T", "=", colours={"T": TEMPERATURE})
        self.t_value = NumberText(style.temperature(1.0), color=TEMPERATURE, align="left")
        self.t_value.place(MIDDLE_RIGHT - 1.0, sum_y)
        t_is.next_to(self.t_value, LEFT, buff=0.18).align_to(self.t_value, DOWN)
        self.readout = VGroup(t_is, self.t_value)
        self.at_zero, self.highlight = False, None

        self.values.update({
            "prompt": prompt, "tokens": nt.tokens, "token_ids": nt.token_ids,
            "positions": list(range(len(nt.tokens))), "vocab_size": self.vocab,
            "candidates": [{"word": nt.words[i], "token_id": int(i), "logit": float(nt.logits[i])} for i in nt.top],
            "other": {"words": len(nt.rest), "exp_sum": exp_other},
            "softmax_steps": {"temperature": 1.0, "exp": [float(v) for v in exps], "exp_other": exp_other,
                              "exp_sum": exp_total, "probabilities": [float(v) for v in p], "other": other,
                              "probability_total": float(p.sum()) + other},
            "temperatures": [],
        })
        if self.prompt_rule:
            self.values["prompt_rule"] = self.prompt_rule
        self.record_sum("sum", f"e^z / 10^{self.exp_power}: terms = sum", self.exp_rounded,   # in its unit
                        drawn=self.sum_label[-1])
        self.values["softmax_steps"]["exp_power"] = self.exp_power
        self.record_sum("divide", "probabilities = 100%", self.prob_bars.rounded, drawn=self.prob_total)
        self.prepare_write(prompt)

    def header_tex(self, parts) -> MathTex:
        m = tex(*parts, colours={"z_i": LOGIT, "T": TEMPERATURE})
        return m.move_to([MIDDLE_RIGHT - 0.75, HEADER_BASELINE + 0.12, 0])

    # --- temperature ---------------------------------------------------------------------
    def add_temperature_updaters(self):
        nt = self.next
        z = nt.logits[nt.top]

        def update(_):
            t = self.T.get_value()
            p, other = nt.at(t)
            self.prob_bars.set_probabilities(p, other)
            self.t_value.set_text(style.temperature(t))
            if t > 0:
                self.scaled_numbers.set_texts([style.signed(v / t) for v in z])

        self.readout.add_updater(update)
        self.record(1.0)

    def record(self, t: float):
        """The numbers on screen at a sweep stop, as the manifest's proof."""
        nt = self.next
        p, other = nt.at(t)
        entry = {"T": float(t), "probabilities": [float(v) for v in p], "other": float(other)}
        # the column on screen is a whole distribution: its percentages, each at its plain rounding
        self.record_sum(self.section_names[self.beats_done - 1], f"probabilities at T = {t:g}",
                        self.prob_bars.percents(list(p) + [other]))
        if t > 0:
            entry["logits_over_T"] = [float(v) for v in nt.logits[nt.top] / t]
        else:
            entry["argmax"] = [nt.words[i] for i in nt.argmax()]
        self.values["temperatures"].append(entry)

    def sweep_time(self, t: float) -> float:
        start = self.T.get_value()
        if t == 0 or start == 0:
            return 2.5
        return 1.5 + 1.2 * abs(math.log(t / start))

    def show_argmax(self):
        nt = self.next
        winners = [r for r, i in enumerate(nt.top) if i in nt.argmax()]
        rows = VGroup(*[VGroup(self.labels[r], self.prob_bars.bars.tracks[r], self.prob_bars.numbers[r])
                        for r in winners])
        self.highlight = SurroundingRectangle(rows, color=style.ACCENT, buff=0.1, corner_radius=0.08)
        animations = [Create(self.highlight)]
        if len(nt.argmax()) == 1:
            self.predicted = self.tokens.slot_filled(style.token_label(nt.words[nt.argmax()[0]]))
            index = self.tokens.indices[-1]
            animations += [FadeOut(self.tokens.slot), FadeIn(self.predicted),
                           index.animate.set_x(self.predicted.get_center()[0])]
        self.play(*animations, run_time=STEP)
        self.at_zero = True

    def leave_argmax(self):
        animations = [FadeOut(self.highlight), FadeIn(self.scaled_numbers),
                      self.scaled_header.animate.set_opacity(1)]
        if getattr(self, "predicted", None) is not None:
            animations += [FadeOut(self.predicted), FadeIn(self.tokens.slot),
                           self.tokens.indices[-1].animate.set_x(self.tokens.slot.get_center()[0])]
            self.predicted = None
        self.play(*animations, run_time=STEP)
        self.at_zero = False
