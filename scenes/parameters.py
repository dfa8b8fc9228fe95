"""Where GPT-3's 175 B parameters are: the count built from its published shape, the split between attention and
the MLPs as proportional bars, and our model's split beside it, from its own config.

    manim render -ql scenes/parameters.py Parameters
    python render.py parameters --lang zh

Every count is model.params.parameter_split of a config (model.config.GPT3_175B, the shipped model's config):
nothing is typed in. The manifest holds the exact integers.
"""

from __future__ import annotations

from manim import DOWN, RIGHT, FadeIn, Rectangle, VGroup

from model import GPT3_175B
from model.params import parameter_split
from scenes import style
from scenes.components import CountSum, Label, StackedBar, Table
from scenes.lecture import LectureScene
from scenes.mlp_chapter import chapter_finding
from scenes.prompts import own_language
from scenes.style import MUTED, SHARED, TEXT
from scenes.words import Words

WORDS = Words.beside(__file__)     # parameters.toml: the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]
NOTES = WORDS["notes"]   # the course page's notes where the languages differ (LectureScene.languages_differ)

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

PARTS = ("embedding", "attention", "mlp", "layernorm")
FOUND_P = 0.05   # the MLP chapter's finding holds in a language when its held-out count beats shuffled labels so
COLOURS = {"embedding": style.EMBEDDING, "attention": style.QUERY, "mlp": style.NEURON_ACTIVE,
           "layernorm": style.LAYERNORM}
FRACTIONS = {"frac_1_4": 1 / 4, "frac_1_3": 1 / 3, "frac_1_2": 1 / 2, "frac_2_3": 2 / 3, "frac_3_4": 3 / 4}
STAGGER_GAP, STAGGER_DROP = 0.3, 0.42   # a segment's name closer than this to its left neighbour's drops a line
LABEL_FLOOR = 0.15   # a segment is named under its bar when it is at least this share of the total
BAR_LEFT, BAR_WIDTH = -6.0, 12.0
KEY_XS = (-5.0, -2.0, 0.6, 2.6)    # the key's swatches: fixed places, so English and Chinese share one layout


def billions(n: int) -> str:
    """An integer count in billions, one decimal (only for the spoken caption; the table shows every digit)."""
    return f"{n / 1e9:.1f} B"


def nearest_fraction(share: float) -> str:
    """The key of the simple fraction nearest to a share (the first on a tie)."""
    return min(FRACTIONS, key=lambda k: abs(FRACTIONS[k] - share))


def count(n: int) -> str:
    return f"{n:,}"


class Parameters(LectureScene):
    name = "parameters"
    strings = S
    beat_titles = BEATS

    def prepare(self):
        self.ours_config = self.gpt.config
        self.g3, self.ours = parameter_split(GPT3_175B), parameter_split(self.ours_config)
        self.values.update({
            "gpt3": self.g3, "ours": self.ours, "gpt3_source": "model.config.GPT3_175B (published shape)",
            "counted_by": "model.params.parameter_split", "label_floor": LABEL_FLOOR,
        })
        self.build_table()
        self.bar_g3 = self.stacked_bar(self.g3, 2.15, "gpt3")
        self.bar_ours = self.stacked_bar(self.ours, 0.0, "ours_bar")
        self.key = VGroup()
        y = -1.55
        for part, x in zip(PARTS, KEY_XS):   # every part's colour, named (a segment too thin to name is in the key)
            swatch = Rectangle(width=0.3, height=0.3, stroke_width=0, fill_color=COLOURS[part], fill_opacity=0.9)
            swatch.move_to([x + 0.15, y + 0.12, 0])
            name = Label(self.s(part), font_size=style.SMALL, color=MUTED)
            name.shift(RIGHT * (x + 0.42 - name.get_left()[0])).on_baseline(y)
            self.key.add(VGroup(swatch, name))
        self.key.key_colours = [COLOURS[part] for part in PARTS]    # told apart (tests/layout_checks.py)

    def build_table(self):
        g = self.g3
        c = GPT3_175B
        d = g["detail"]
        rows = [
            ("embedding", self.tex(r"V d + n_{ctx} d"), g["embedding"]),
            ("attention", self.tex(rf"{c.n_layer}\,(4d^2 + 4d)"), g["attention"]),
            ("mlp", self.tex(rf"{c.n_layer}\,(8d^2 + 5d)"), g["mlp"]),
            ("layernorm", self.tex(rf"({2 * c.n_layer} + 1) \cdot 2d"), g["layernorm"]),
            ("unembedding", None, g["unembedding"]),
        ]
        self.values["table_rows"] = [{"part": k, "count": n} for k, _, n in rows] + \
            [{"part": "total", "count": g["total"]}]
        self.values["per_layer"] = {"attention": d["attention_per_layer"], "mlp": d["mlp_per_layer"]}
        ys = [2.7 - r * 0.62 for r in range(len(rows) + 1)]
        # the names and counts, the total's last; each part's formula between its name and its count
        counts = Table([self.s(key) for key, _, _ in rows] + [self.s("total")],
                       [[count(n) for _, _, n in rows] + [count(g["total"])]], ys, label_right=-2.6,
                       column_rights=[5.9], label_colours=[COLOURS.get(key, TEXT) for key, _, _ in rows] + [TEXT],
                       clamp=False)       # the formulas between its columns are not in it: it stays where built
        names, self.table_numbers = counts.labels, counts.columns[0]
        self.table = VGroup()
        for i, ((_, formula, _), y) in enumerate(zip(rows, ys)):
            parts = VGroup(names[i])
            if formula is not None:
                formula.move_to([0.0, y + 0.13, 0])
                parts.add(formula)
            else:
                tied = Label(self.s("tied"), font_size=style.LABEL, color=MUTED)
                tied.shift(RIGHT * (0.0 - tied.get_center()[0])).on_baseline(y)
                parts.add(tied)
            parts.add(self.table_numbers[i])
            self.table.add(parts)
        total = self.table_numbers[-1]
        rule = Rectangle(width=5.0, height=0.02, stroke_width=0, fill_color=MUTED, fill_opacity=1)
        rule.move_to([3.6, ys[-1] + 0.42, 0])
        self.table.add(VGroup(names[-1], total, rule))
        self.record_sum("count", "parts = total", CountSum([n for _, _, n in rows], g["total"],
                                                           [m.text for m in self.table_numbers[:-1]], total.text))

    def stacked_bar(self, split: dict, y: float, title_key: str) -> VGroup:
        """The total as one bar, its parts as segments proportional to their counts; parts at or above the floor
        named (with their share) under their segment."""
        bar = VGroup()
        segments = StackedBar([split["fractions"][part] for part in PARTS], BAR_LEFT, BAR_WIDTH, y,
                              [COLOURS[part] for part in PARTS], height=0.55)
        names = VGroup()
        for part, seg in zip(PARTS, segments):
            share = split["fractions"][part]
            if share >= LABEL_FLOOR:
                label = Label(self.s("segment", name=self.s(part), pct=style.percent(share)), font_size=style.SMALL,
                              color=COLOURS[part])
                label.shift(RIGHT * (seg.get_center()[0] - label.get_center()[0])).on_baseline(y - 0.75)
                if names and abs(names[-1].get_y() - label.get_y()) < 0.1 and \
                        label.get_left()[0] < names[-1].get_right()[0] + STAGGER_GAP:
                    label.shift(DOWN * STAGGER_DROP)   # narrow neighbours (a checkpoint's split): a line lower
                names.add(label)
        title = Label(self.s(title_key, total=count(split["total"]), model=self.model_words("subject")),
                      font_size=style.LABEL, color=TEXT)
        title.shift(RIGHT * (BAR_LEFT - title.get_left()[0])).on_baseline(y + 0.45)
        bar.add(title, segments, names)
        bar.title, bar.segments, bar.names = title, segments, names
        return bar

    # --- the beats --------------------------------------------------------------------------------------------
    def beat_count(self):
        c = GPT3_175B
        self.say("count", d=count(c.n_embd), layers=c.n_layer, vocab=count(c.vocab_size))
        self.play(FadeIn(self.table[0]), run_time=style.STEP)
        for row in self.table[1:]:
            self.play(FadeIn(row), run_time=0.8)
        self.wait(style.PAUSE)

    def play_bar(self, bar: VGroup) -> None:
        self.play(FadeIn(bar.title), run_time=style.STEP)
        self.play(*bar.segments.grow(), run_time=2 * style.STEP)
        self.play(FadeIn(bar.names), run_time=style.STEP)

    def beat_split(self):
        g = self.g3
        key = nearest_fraction(g["fractions"]["mlp"])
        self.caption_rule("split", "split", "the MLPs' share of GPT-3's total, named by the nearest of 1/4, 1/3, 1/2, "
                          "2/3, 3/4", mlp_share=g["fractions"]["mlp"], fraction=key)
        self.say("split", mlp=billions(g["mlp"]), total=billions(g["total"]), mlp_pct=style.percent(g["fractions"]["mlp"]),
                 frac=self.s(key), attn_pct=style.percent(g["fractions"]["attention"]))
        self.clear_stage()
        self.play_bar(self.bar_g3)
        self.play(FadeIn(self.key), run_time=style.STEP)
        self.wait(style.PAUSE)

    def beat_ours(self):
        o, g = self.ours, self.g3
        key = self.caption_rule("ours", "ours_less" if o["fractions"]["mlp"] < g["fractions"]["mlp"] else "ours_more",
                                "our MLPs' share below GPT-3's: ours_less (with our embedding's share), else ours_more",
                                ours=o["fractions"]["mlp"], gpt3=g["fractions"]["mlp"],
                                ours_embedding=o["fractions"]["embedding"])
        self.say(key, model=self.model_words("subject"), pct=style.percent(o["fractions"]["mlp"]),
                 total=count(o["total"]),
                 gpt3=style.percent(g["fractions"]["mlp"]), emb=style.percent(o["fractions"]["embedding"]))
        self.play_bar(self.bar_ours)
        self.wait(style.PAUSE)

    def beat_summary(self):
        both = self.ours["fractions"]["mlp"] > 0.5 and self.g3["fractions"]["mlp"] > 0.5
        ours_traced = own_language(self.gpt)   # the MLP chapter traced its fact in our model (a checkpoint: not)
        finding = chapter_finding(self.gpt) if ours_traced and both else None
        # found: held out against shuffled labels (p < FOUND_P) and lit on mlp_fact's map at a name (causal)
        found = {lang: e["p_value"] < FOUND_P and bool(e["lit_at_name"]) for lang, e in (finding or {}).items()}
        if finding is not None:
            self.values["mlp_finding"] = finding
            own, other = finding[self.lang], finding["zh" if self.lang == "en" else "en"]
            if found["en"] != found["zh"] or own["layer"] != other["layer"]:   # the course page's note, not this video
                self.languages_differ(
                    "mlp_finding", f"in each language, the lookup MLP's layer and whether it writes sports into names "
                    f"(held out in turn, p < {FOUND_P}, and its mean-ablation at a name drops P(answer) by 25 points "
                    f"or more): recorded when the two languages differ", NOTES,
                    "finding_differs", en={"layer": finding["en"]["layer"], "hits": finding["en"]["hits"],
                                           "found": found["en"]}, zh={"layer": finding["zh"]["layer"],
                                           "hits": finding["zh"]["hits"], "found": found["zh"]},
                    en_layer=style.shown(finding["en"]["layer"]), zh_layer=style.shown(finding["zh"]["layer"]),
                    en_hits=finding["en"]["hits"], zh_hits=finding["zh"]["hits"], n=finding["en"]["n"])
        key = self.caption_rule("summary", ("summary" if found[self.lang] else "summary_untraced")
                                if finding is not None else "summary_checkpoint" if both else "summary_not",
                                "the MLPs hold more than half of both models' parameters: summary when the MLP "
                                "chapter's lookup MLP writes people's sports into their names in this language "
                                f"(held out in turn, p < {FOUND_P} against shuffled labels; "
                                "model.analysis.factpath.name_enrichment) and mlp_fact's map lights it at a name "
                                "(its mean-ablation there drops P(answer) by 25 points or more; "
                                "model.analysis.factmap.lit_sites), else summary_untraced; "
                                "summary_checkpoint for a checkpoint of one's own, where the MLP chapter traced "
                                "nothing; else summary_not",
                                ours=self.ours["fractions"]["mlp"], gpt3=self.g3["fractions"]["mlp"],
                                p_values={k: e["p_value"] for k, e in (finding or {}).items()},
                                lit_at_name={k: e["lit_at_name"] for k, e in (finding or {}).items()}, lang=self.lang)
        if key == "summary":
            own = finding[self.lang]
            self.say(key, l=style.shown(own["layer"]))     # the chapter's own statistic stays in its chapter
        else:
            self.say(key)
        ours, gpt3 = self.ours["fractions"]["mlp"], self.g3["fractions"]["mlp"]
        self.show_where(["mlp:*"], [(self.s("where_share"), MUTED),
                                    (self.s("where_ours", model=self.model_words("subject"),
                                            pct=style.percent(ours)), TEXT),
                                    (self.s("where_gpt3", pct=style.percent(gpt3)), TEXT)],
                        mlp_fraction={"ours": ours, "gpt3": gpt3})
