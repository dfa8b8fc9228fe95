"""The embedding space: the creatures' embeddings seen on two measured directions (water − land, big − small),
how well one direction separates held-out words against shuffled labels, a parallelogram with its real cosine,
and a word's nearest neighbours.

    manim render -ql scenes/embedding_space.py EmbeddingSpace
    python render.py embedding_space --lang zh

Every number comes from model.analysis.embedding (the plane, the parallelograms, the neighbours) and
model.analysis.directions.language_directions (held-out accuracy, its misses, the parallelogram, and each against its own language's shuffled labels).
"""

from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Arrow, Create, Dot, FadeIn, FadeOut, GrowArrow,
                   LaggedStart, Line, VGroup)

from model.analysis.directions import language_directions
from model.analysis.embedding import attribute_plane, class_words, nearest_words, parallelograms
from scenes import style
from scenes.components import BarChart, BarScale, Label
from scenes.lecture import LectureScene
from scenes.params import AUTO
from scenes.prompts import language_of, lookback_prompt
from scenes.style import MUTED, SHARED, TEXT
from scenes.words import Words

WORDS = Words.beside(__file__)     # embedding_space.toml: the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]
NOTES = WORDS["notes"]   # the course page's notes where the languages differ (LectureScene.languages_differ)

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

HABITAT_COLOUR = {"water": style.POSITIVE, "land": "#C8A165"}   # the classes a measured direction points between
SIZE_RADIUS = {"big": 0.1, "small": 0.06}
NULL_SHUFFLES, NULL_SEED = 100, 0

# --- layout (scene units; the frame is 14.2 × 8, title-safe is ±6.4 × ±3.6) --------
PLOT_CENTRE, PLOT_HALF = np.array([-3.25, 0.55, 0.0]), np.array([2.55, 2.6])   # the plane, left
PANEL_LABEL_RIGHT, PANEL_BAR, PANEL_NUMBER_RIGHT = 2.9, (3.05, 1.6), 6.2          # bars on the right
PANEL_TOP, PANEL_PITCH = 2.6, 0.55
PANEL_HEADER = ((PANEL_LABEL_RIGHT + PANEL_NUMBER_RIGHT) / 2 - 0.6, PANEL_TOP + 0.15)     # a panel's header's centre
LEGEND_LEFT = 0.7
NEAR = 0.3            # a word may sit at most this much further from its own point than from the nearest other
STEP, PAUSE = style.STEP, style.PAUSE


class EmbeddingSpace(LectureScene):
    name = "embedding_space"
    strings = S
    beat_titles = BEATS

    # --- the beats -------------------------------------------------------------------
    def beat_words(self):
        self.say("words", n=len(self.plane["words"]), d=self.gpt.config.n_embd, kept=self.kept_text)
        self.play(Create(self.axes), FadeIn(self.axis_labels), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(d, scale=0.5) for d in self.dots], lag_ratio=0.06), run_time=2 * STEP)
        self.play(FadeIn(self.legend), FadeIn(self.dot_labels), run_time=STEP)
        self.wait(PAUSE)

    def beat_direction(self):
        self.say("direction_measure")
        self.play(FadeOut(self.legend), GrowArrow(self.habitat_arrow), run_time=STEP)
        self.wait(PAUSE)
        self.say(self.rules["direction"], acc=style.percent(self.held["measured"]),
                 null=style.percent(self.held["null_mean"]))
        self.show_bars(self.held_bars)
        self.wait(PAUSE)
        # the held-out figure beside the picture: what the test does that the picture cannot show
        missed = self.held["missed"]
        self.say(self.rules["picture"], missed=self.s("list_joiner").join(missed))
        if self.missed_labels:
            self.play(*[label.animate.set_color(style.ACCENT) for label in self.missed_labels], run_time=STEP)
        self.wait(PAUSE)

    def beat_parallelogram(self):
        ex = self.example
        self.say(self.rules["example"], a=ex["a"], b=ex["b"], c=ex["c"], d=ex["nearest"], group=self.example_group)
        self.play(FadeOut(self.held_bars), FadeOut(self.habitat_arrow),
                  *[label.animate.set_color(MUTED) for label in self.missed_labels],
                  FadeOut(VGroup(*[self.dot_labels[i] for i in self.example_index])), run_time=STEP)
        self.play(FadeIn(self.example_labels), GrowArrow(self.example_arrows[0]), run_time=STEP)
        self.play(GrowArrow(self.example_arrows[1]), run_time=STEP)
        self.wait(PAUSE)
        self.say(self.rules["parallelogram"], n=self.par["quadruples"], acc=style.percent(self.par["measured"]),
                 null=style.percent(self.par["null_mean"]), k=self.par["shuffles_as_good"], s=NULL_SHUFFLES)
        self.show_bars(self.par_bars)
        self.wait(PAUSE)
        # what the finding means (docs/teaching.md §5): roughly, not exactly; or, for a language at chance, not reliably
        self.say("lesson_often" if self.rules["parallelogram"] == "parallelogram_often" else "lesson_chance")
        self.wait(PAUSE)

    def beat_neighbours(self):
        self.say("neighbours", word=self.word, d=self.gpt.config.n_embd, k=self.neighbour_creatures,
                 n=len(self.neighbours))
        # the names give way to the rings round the word's neighbours (the word named by its ring)
        self.play(FadeOut(VGroup(self.par_bars, self.example_labels, self.example_arrows)),
                  FadeOut(VGroup(*[label for i, label in enumerate(self.dot_labels) if i not in self.example_index])),
                  run_time=STEP)
        chart = self.neighbour_chart
        self.play(FadeIn(chart.header), FadeIn(chart.labels), run_time=STEP)
        self.play(LaggedStart(*chart.grow(), lag_ratio=0.15), FadeIn(chart.numbers),
                  *[Create(r) for r in self.neighbour_rings], run_time=2 * STEP)
        self.wait(PAUSE)

    def beat_summary(self):
        """Where the directions live: the pipeline lit at the embedding, with the held-out accuracy and chance's."""
        self.say("summary")
        self.show_where(["embedding"], [
            (self.s("held_out"), style.MUTED),
            (self.s("where_measured", acc=style.percent(self.held["measured"])), style.TEXT),
            (self.s("where_shuffled", null=style.percent(self.held["null_mean"])), style.MUTED)],
            held_out={"measured": self.held["measured"], "null_mean": self.held["null_mean"]})

    def show_bars(self, chart):
        self.play(FadeIn(chart.header), FadeIn(chart.labels), FadeIn(chart.bars.tracks), run_time=STEP)
        self.play(LaggedStart(*chart.grow(), lag_ratio=0.2), FadeIn(chart.numbers),
                  run_time=STEP)

    # --- building the pieces, from the model's numbers --------------------------------
    def prepare(self):
        gpt = self.gpt
        prompt = self.params["prompt"]
        if prompt == AUTO:
            rule = lookback_prompt(self.lang)
            prompt = self.params["prompt"] = rule["prompt"]
            self.values["prompt_rule"] = rule
        self.token_ids = [int(i) for i in gpt.encode(prompt)]
        self.tokens = list(gpt.tokenizer.decode(self.token_ids))
        words_lang = language_of(self.tokens)        # the words shown are the prompt's language's
        creatures = class_words("habitat", words_lang)
        in_prompt = [t for t in self.tokens if t in creatures]
        self.word = in_prompt[0] if in_prompt else self.tokens[-1]
        word_rule = "the prompt's first creature" if in_prompt else "the prompt's last word (it names no creature)"

        self.plane = plane = attribute_plane(gpt, words_lang)
        self.kept_text = style.percent(plane["variance_kept"])
        coords = plane["coords"]
        scale = float(min(PLOT_HALF[0] / np.abs(coords[:, 0]).max(), PLOT_HALF[1] / np.abs(coords[:, 1]).max())) * 0.9
        self.at = lambda i: PLOT_CENTRE + np.array([coords[i, 0] * scale, coords[i, 1] * scale, 0])
        index = {w: i for i, w in enumerate(plane["words"])}
        habitat, size = plane["labels"]["habitat"], plane["labels"]["size"]
        self.dots = VGroup(*[Dot(self.at(i), radius=SIZE_RADIUS[size[i]], color=HABITAT_COLOUR[habitat[i]])
                             for i in range(len(plane["words"]))])
        x_half, y_half = PLOT_HALF
        self.axes = VGroup(Line(PLOT_CENTRE + [-x_half, 0, 0], PLOT_CENTRE + [x_half, 0, 0]),
                           Line(PLOT_CENTRE + [0, -y_half, 0], PLOT_CENTRE + [0, y_half, 0])).set_stroke(MUTED, 1.5)
        ends = [("water", RIGHT, HABITAT_COLOUR["water"]), ("land", LEFT, HABITAT_COLOUR["land"]),
                ("big", UP, MUTED), ("small", DOWN, MUTED)]
        self.axis_labels = VGroup()
        for key, side, colour in ends:
            label = Label(self.s(key), font_size=style.SMALL, color=colour)
            tip = PLOT_CENTRE + side * (x_half if side[0] else y_half)
            if side[0]:   # at the horizontal axis's ends, just under the line
                label.move_to(tip + DOWN * 0.28 + side * (-label.width / 2))
            else:         # at the vertical axis's ends, beside it
                label.move_to(tip + RIGHT * (label.width / 2 + 0.15) + side * (-0.12))
            self.axis_labels.add(label)
        self.dot_labels = VGroup()   # every creature named beside its dot
        for i, w in enumerate(plane["words"]):
            self.dot_labels.add(self.word_label(w, self.at(i), [*self.dot_labels]).set_color(MUTED))
        self.legend = VGroup()   # rows on fixed baselines: the same shapes in either language
        rows = [(HABITAT_COLOUR["water"], self.s("water")), (HABITAT_COLOUR["land"], self.s("land")),
                (None, self.s("legend_size")), (None, self.s("kept", kept=self.kept_text))]
        for n, (colour, text) in enumerate(rows):
            y = PANEL_TOP - PANEL_PITCH * (n + 1)
            label = Label(text, font_size=style.SMALL, color=TEXT if colour else MUTED)
            label.shift(RIGHT * (LEGEND_LEFT + 0.3 - label.get_left()[0])).on_baseline(y)
            self.legend.add(label)
            if colour:
                self.legend.add(Dot([LEGEND_LEFT + 0.08, y + 0.12, 0], radius=0.08, color=colour))
        self.legend.key_colours = list(HABITAT_COLOUR.values())      # told apart (tests/layout_checks.py)

        # one direction, held out, against shuffled labels (directions.language_directions)
        # each language's words alone, against shuffles of its own labels (language_directions)
        own = language_directions(gpt, words_lang, "habitat", n_shuffles=NULL_SHUFFLES, seed=NULL_SEED)
        # the other language's words, judged the same way: the course page's note says so where they differ
        self.words_lang, self.other_lang = words_lang, "zh" if words_lang == "en" else "en"
        self.other = language_directions(gpt, self.other_lang, "habitat", n_shuffles=NULL_SHUFFLES, seed=NULL_SEED)
        self.held = {"measured": own["held_out"], "null_mean": own["null"]["held_out_mean"],
                     "null_p95": own["null"]["held_out_p95"], "p_value": own["null"]["held_out_p_value"],
                     "missed": own["held_out_missed"], "words": own["words"]}
        water_mean = coords[[i for i, v in enumerate(habitat) if v == "water"]].mean(0)
        land_mean = coords[[i for i, v in enumerate(habitat) if v == "land"]].mean(0)
        self.habitat_arrow = Arrow(PLOT_CENTRE + np.array([*land_mean * scale, 0]),
                                   PLOT_CENTRE + np.array([*water_mean * scale, 0]), buff=0,
                                   color=HABITAT_COLOUR["water"], stroke_width=5)
        self.held_bars = self.bar_group(self.s("held_out"), [self.held["measured"], self.held["null_mean"]])
        # a creature the held-out test misses: its name lit where it stands (a ring would cover the name)
        self.missed_labels = [self.dot_labels[index[w]] for w in self.held["missed"]]

        # a parallelogram in the prompt's language, and the test over both languages
        # the example by a rule blind to the results: it starts at the prompt's creature (parallelograms' rule)
        par_lang = parallelograms(gpt, words_lang, "habitat", "size", start=self.word if in_prompt else None)
        self.example = ex = par_lang["example"]
        cell = {"habitat": creatures[ex["b"]]["habitat"], "size": creatures[ex["c"]]["size"]}
        self.example_group = self.s(f"group_{cell['size']}_{cell['habitat']}")   # the group a hit must land in
        self.par = {"measured": own["parallelogram"], "quadruples": own["parallelogram_quadruples"],
                    "null_mean": own["null"]["parallelogram_mean"], "null_p95": own["null"]["parallelogram_p95"],
                    "p_value": own["null"]["parallelogram_p_value"], "lang": words_lang,
                    # how many of the shuffles hit as often as the real labels (said: "k of 100 shuffles")
                    "shuffles_as_good": int(round(own["null"]["parallelogram_p_value"] * NULL_SHUFFLES)),
                    "in_language": par_lang["accuracy"], "in_language_quadruples": par_lang["quadruples"],
                    "example_rule": par_lang["example_rule"], "example_group": cell}
        # the other language's example, by the same rule from its default prompt's creature (the course page's note)
        other_words = class_words("habitat", self.other_lang)
        other_start = next((t for t in gpt.tokenizer.decode([int(i) for i in gpt.encode(
            lookback_prompt(self.other_lang)["prompt"])]) if t in other_words), None)
        other_ex = parallelograms(gpt, self.other_lang, "habitat", "size", start=other_start)["example"]
        a, b, c, d = self.example_index = [index[ex[k]] for k in ("a", "b", "c", "nearest")]
        self.example_arrows = VGroup(
            Arrow(self.at(a), self.at(b), buff=0.12, color=style.ACCENT, stroke_width=3),
            Arrow(self.at(c), self.at(d), buff=0.12, color=style.ACCENT, stroke_width=3))
        self.example_labels = VGroup()
        others = [label for i, label in enumerate(self.dot_labels) if i not in (a, b, c, d)]
        for i in (a, b, c, d):
            self.example_labels.add(self.word_label(plane["words"][i], self.at(i), [*others, *self.example_labels],
                                                    arrows=self.example_arrows))
        self.par_bars = self.bar_group(self.s("parallelogram"), [self.par["measured"], self.par["null_mean"]])

        # the word's nearest neighbours over all 64 numbers
        word_id = gpt.tokenizer.vocab[self.word]
        self.neighbours = nearest_words(gpt, word_id, 5)
        self.neighbour_creatures = sum(n["word"] in creatures for n in self.neighbours)
        ys = [PANEL_TOP - PANEL_PITCH * (i + 1) for i in range(len(self.neighbours))]
        self.neighbour_chart = BarChart(
            [max(n["cosine"], 0.0) for n in self.neighbours], ys, BarScale(PANEL_BAR[0], PANEL_BAR[1]),
            style.EMBEDDING_UPDATED, track=1.0, header=self.s("nearest_to", word=self.word), header_at=PANEL_HEADER,
            labels=[n["word"] for n in self.neighbours], label_right=PANEL_LABEL_RIGHT,
            label_colours=[TEXT if n["word"] in creatures else MUTED for n in self.neighbours],
            label_size=style.SMALL, numbers=[style.signed(n["cosine"]) for n in self.neighbours],
            number_right=PANEL_NUMBER_RIGHT, number_size=style.SMALL)
        self.neighbour_rings = VGroup(*[
            Dot(self.at(index[n["word"]]), radius=0.16, fill_opacity=0, stroke_width=2, stroke_color=style.ACCENT)
            for n in self.neighbours if n["word"] in index] +
            ([Dot(self.at(index[self.word]), radius=0.2, fill_opacity=0, stroke_width=3, stroke_color=style.ACCENT),
              self.word_label(self.word, self.at(index[self.word]), [], rings=[
                  (self.at(index[n["word"]]), 0.16) for n in self.neighbours if n["word"] in index] +
                  [(self.at(index[self.word]), 0.2)])]
             if self.word in index else []))


        verdict = {lang: "often" if d["parallelogram"] > d["null"]["parallelogram_p95"] else "chance"
                   for lang, d in ((words_lang, own), (self.other_lang, self.other))}
        seen = {lang: "missed" if d["held_out_missed"] else "all"
                for lang, d in ((words_lang, own), (self.other_lang, self.other))}
        # where the other language's words give another result, the course page's note says so (never this video)
        if len(set(verdict.values())) > 1:
            acc = {words_lang: own["parallelogram"], self.other_lang: self.other["parallelogram"]}
            beats = next(lang for lang, v in verdict.items() if v == "often")
            fails = next(lang for lang, v in verdict.items() if v == "chance")
            self.languages_differ(
                "parallelogram", "in each language, the parallelogram test beats its own shuffled labels' 95th "
                "percentile or not: recorded when the two languages disagree", NOTES, "parallelogram_differs",
                en=verdict["en"], zh=verdict["zh"], beats_acc=style.percent(acc[beats]),
                fails_acc=style.percent(acc[fails]),
                fill={lang: {"beats": NOTES(f"lang_{beats}", lang), "fails": NOTES(f"lang_{fails}", lang)}
                      for lang in ("en", "zh")})
        hits = {words_lang: "hit" if ex["hit"] else "miss", self.other_lang: "hit" if other_ex["hit"] else "miss"}
        if len(set(hits.values())) > 1:
            hit_lang = next(lang for lang, v in hits.items() if v == "hit")
            miss_lang = next(lang for lang, v in hits.items() if v == "miss")
            shown = {words_lang: ex, self.other_lang: other_ex}
            self.languages_differ(
                "example", "in each language, the example quadruple (parallelograms' rule, from the default prompt's "
                "creature) lands in the group asked for or not: recorded when the two languages disagree", NOTES,
                "example_differs", en=shown["en"], zh=shown["zh"],
                fill={lang: {"hit_lang": NOTES(f"lang_{hit_lang}", lang), "miss_lang": NOTES(f"lang_{miss_lang}", lang)}
                      for lang in ("en", "zh")})
        if len(set(seen.values())) > 1:
            miss = next(lang for lang, v in seen.items() if v == "missed")
            clean = next(lang for lang, v in seen.items() if v == "all")
            words = (own if miss == words_lang else self.other)["held_out_missed"]
            self.languages_differ(
                "picture", "in each language, the held-out test puts a creature on the wrong side or not: recorded "
                "when the two languages disagree", NOTES, "picture_differs",
                en=(own if words_lang == "en" else self.other)["held_out_missed"],
                zh=(own if words_lang == "zh" else self.other)["held_out_missed"],
                fill={lang: {"missed": NOTES("list_joiner", lang).join(words), "miss_lang": NOTES(f"lang_{miss}", lang),
                             "all_lang": NOTES(f"lang_{clean}", lang)} for lang in ("en", "zh")})
        self.rules = {
            "direction": self.caption_rule(
                "direction", "direction_separates" if self.held["measured"] > self.held["null_p95"]
                else "direction_no_better", "direction_separates if the held-out accuracy exceeds the shuffled "
                "labels' 95th percentile, else direction_no_better", **self.held),
            "example": self.caption_rule(
                "example", "example_hit" if ex["hit"] else "example_miss",
                "example_hit if the shown quadruple's nearest word is in the cell the parallelogram asks for (b's "
                "habitat, c's size); the quadruple by parallelograms' rule: " + par_lang["example_rule"],
                hit=ex["hit"], a=ex["a"], b=ex["b"], c=ex["c"], nearest=ex["nearest"]),
            "parallelogram": self.caption_rule(
                "parallelogram", f"parallelogram_{verdict[words_lang]}", "parallelogram_often if the accuracy of the "
                "words' language exceeds its own shuffled labels' 95th percentile, else parallelogram_chance (the "
                "percentile is never said: the caption says how many shuffles hit as often)",
                measured=self.par["measured"], null_p95=self.par["null_p95"], lang=words_lang,
                shuffles_as_good=self.par["shuffles_as_good"]),
            "picture": self.caption_rule(
                "picture", f"picture_{seen[words_lang]}", "picture_missed (named) if the held-out test of the words' "
                "language puts any creature on the wrong side, else picture_all",
                missed=self.held["missed"], lang=words_lang),
        }
        self.values.update({
            "prompt": self.params["prompt"], "tokens": self.tokens, "token_ids": self.token_ids,
            "word": self.word, "word_rule": word_rule, "words_lang": words_lang,
            "plane": {"words": plane["words"], "token_ids": plane["token_ids"], "labels": plane["labels"],
                      "axes": ["habitat: water − land", "size: big − small, perpendicular to habitat"],
                      "coords": plane["coords"].tolist(), "variance_kept": plane["variance_kept"],
                      "directions_cosine": plane["directions_cosine"]},
            "held_out": {**self.held, "shuffles": NULL_SHUFFLES, "seed": NULL_SEED},
            "parallelogram": {**self.par, "example": ex, "shuffles": NULL_SHUFFLES, "seed": NULL_SEED},
            "neighbours": self.neighbours, "neighbour_creatures": self.neighbour_creatures,
        })

    def bar_group(self, title: str, values: list[float]) -> BarChart:
        """A header and two bars: the measured figure and the shuffled labels' mean."""
        ys = [PANEL_TOP - PANEL_PITCH * (i + 1) for i in range(2)]
        return BarChart(values, ys, BarScale(PANEL_BAR[0], PANEL_BAR[1]), style.EMBEDDING_UPDATED, track=1.0,
                        opacities=[0.9, 0.45], header=title, header_at=PANEL_HEADER,
                        labels=[self.s("measured"), self.s("shuffled")], label_right=PANEL_LABEL_RIGHT,
                        label_colours=[TEXT, MUTED], label_size=style.SMALL, numbers=style.percent,
                        number_right=PANEL_NUMBER_RIGHT, number_size=style.SMALL)

    def word_label(self, word: str, at: np.ndarray, placed: list, rings: list = (), arrows=()) -> Label:
        """A word beside its point: the first place, away from the plot's centre first, then the other side, above,
        below, a little further each round, where it touches no dot or ring, no axis label and no word already placed,
        lies across no axis, and is no further from its own point than from any other (by NEAR): an axis gives way
        before nearness where no place keeps both (tests/layout_checks.py checks that none is left on a dot)."""
        label = Label(word, font_size=style.SMALL)
        out = RIGHT if at[0] >= PLOT_CENTRE[0] else LEFT
        w, h = label.width / 2, label.height / 2
        spots = [spot for reach in (0.18, 0.35, 0.55, 0.8, 1.05) for spot in (
            out * (w + reach) + UP * 0.05, out * (w + reach) + UP * (h + reach), out * (w + reach) + DOWN * (h + reach),
            UP * (h + reach), DOWN * (h + reach), -out * (w + reach) + UP * 0.05,
            -out * (w + reach) + UP * (h + reach), -out * (w + reach) + DOWN * (h + reach))]
        circles = [(d.get_center(), d.width / 2) for d in self.dots] + [(np.asarray(c), r) for c, r in rings]
        for arrow in arrows:      # an arrow on screen with the words: points along it, as small circles
            start, end = arrow.get_start(), arrow.get_end()
            circles += [(start + (end - start) * t, 0.06) for t in np.linspace(0, 1, 24)]
        boxes = [m for m in [*self.axis_labels, *placed]]

        def clear(spot, axes: bool = True, near: bool = True) -> bool:
            x0, x1, y0, y1 = at[0] + spot[0] - w - 0.05, at[0] + spot[0] + w + 0.05, at[1] + spot[1] - h - 0.05, \
                at[1] + spot[1] + h + 0.05
            if near:      # unambiguous: the word's centre no further from its own point than from any other, + NEAR
                centre = np.asarray(at[:2]) + np.asarray(spot[:2])
                if np.linalg.norm(np.asarray(spot[:2])) > min(np.linalg.norm(centre - d.get_center()[:2])
                                                              for d in self.dots) + NEAR:
                    return False
            if not (-style.safe_half_width() <= x0 and x1 <= style.safe_half_width() and
                    PLOT_CENTRE[1] - PLOT_HALF[1] - 0.1 <= y0 and y1 <= style.safe_half_height()):
                return False            # inside the title-safe area, above the caption
            cx, cy = PLOT_CENTRE[0], PLOT_CENTRE[1]      # the two axes: a word lies across one only when no
            if axes and ((x0 < cx < x1 and y0 < cy + PLOT_HALF[1] and cy - PLOT_HALF[1] < y1) or
                         (y0 < cy < y1 and x0 < cx + PLOT_HALF[0] and cx - PLOT_HALF[0] < x1)):
                return False                             # other place is free
            for c, r in circles:
                nx, ny = min(max(c[0], x0), x1), min(max(c[1], y0), y1)
                if (c[0] - nx) ** 2 + (c[1] - ny) ** 2 < r ** 2:
                    return False
            return all(x1 + 0.25 < m.get_left()[0] or m.get_right()[0] < x0 - 0.25 or y1 < m.get_bottom()[1] or
                       m.get_top()[1] < y0 for m in boxes)

        # the first free place, in this order of what may give way: nothing; the axes; nearness; both
        for rules in ({}, {"axes": False}, {"near": False}, {"axes": False, "near": False}):
            found = next((spot for spot in spots if clear(spot, **rules)), None)
            if found is not None:
                return label.move_to(at + found)
        return label.move_to(at + spots[0])
