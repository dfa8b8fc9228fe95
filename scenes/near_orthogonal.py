"""Almost perpendicular: how many directions fit in d dimensions, from the superposition lab's recorded runs.

    manim render -ql scenes/near_orthogonal.py NearOrthogonal
    python render.py near_orthogonal --lang zh

The exact limit (d directions at exactly 90°, and one more drawn at its best, the Welch/Levenshtein bound, in 2-D
and 3-D); the histogram of every pairwise angle of 10,000 unit vectors in 100 dimensions over the lab's
optimisation; the chance one random pair falls within 89°-91°; how many directions fit with every pair within
89°-91° as the dimension grows (measured by the lab's packing at small d, the Welch/Levenshtein ceiling, the
random-vector estimate, GPT-3's width from its config), the chapter's conclusion that this strict band is too strict,
and the random-vector estimate within 85°-95° (model.analysis.superposition.WIDE_BAND_DEG), the band the chapter
keeps from then on; and why that room grows exponentially: the Johnson-Lindenstrauss lemma in Dasgupta and Gupta's
form (N points fit into k >= 4 ln N / (eps^2/2 - eps^3/3) dimensions with every squared distance within 1 +- eps),
for the chapter's N = 10,000 and eps = 1/2, 1/4, ... while that k fits GPT-3's width, beside the worst distortion
the lab's seeded random projection of 10,000 perpendicular axes into each k made over all pairs, and its promise as
an angle (lengths distorted too: within 90 +- asin(2 eps / (1 - eps)) degrees).

Every number is read from model/snapshots/superposition.json (`python -m model superposition record`, checked by
its content key) or from the lab's packing_bounds; the scene never optimises anything. Every value shown is
recorded at full precision in self.values (the manifest).
"""

from __future__ import annotations

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Arrow, Create, DashedLine, FadeIn, GrowFromEdge, GrowFromPoint,
                   LaggedStart, Line, Transform, VGroup)

from model.config import GPT3_175B
from model.analysis.superposition import (STRICT_BAND_DEG, WIDE_BAND_DEG, jl_angle_deg, jl_eps_for_angle,
                                          random_room)
from model.superposition import jl_dimension, packing_bounds
from model.superposition_record import load as load_snapshots
from scenes import style
from scenes.components import BarChart, BarScale, Label, NumberColumn, NumberText
from scenes.components.superposition import AngleHistogram, ChanceChart, LogChart, VectorFan
from scenes.lecture import LectureScene
from scenes.style import ANGLE_BARS, BAND, BOUND, MEASURED, MUTED, RANDOM_ESTIMATE, SHARED, TEXT
from scenes.words import Words

DATA_FILES = ("model/snapshots/superposition.json",)   # read through load_snapshots: render.py keys on it

WORDS = Words.beside(__file__)     # near_orthogonal.toml: the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

HIST = dict(x=-5.6, y=-1.55, width=11.2, height=3.0)   # the histogram's axis: left end, baseline, size
INFO_Y, HEADER_Y = 2.15, 3.05
CHART = dict(x=-4.6, y=-1.05, width=6.4, height=3.65)   # clear of a three-line caption
FAN_R = 1.45
# the lemma's beat: the formula, a header row, a row per distortion (eps, the lemma's k, the bars, the worst found)
JL_FORMULA_Y, JL_HEAD_Y, JL_ROWS_TOP, JL_ROWS_BOTTOM, JL_PITCH = 2.8, 1.6, 0.8, -0.9, 0.85
JL_X = {"eps": -4.6, "angle": -2.95, "k": -1.6, "bars": -0.9, "worst": 6.2}
BAND_DEG = STRICT_BAND_DEG     # the strict band: 89-91 degrees, 90 +- 1
WIDE_DEG = WIDE_BAND_DEG       # a few degrees allowed: 85-95 degrees, the band the chapter keeps from here on
# one more direction than d, at its best (the Welch/Levenshtein bound is met): three lines 60 degrees apart in the
# plane; the four diagonals of a cube (a regular tetrahedron's directions) in 3-D
ONE_MORE_2D = np.array([[1.0, 0.5, -0.5], [0.0, np.sqrt(3) / 2, np.sqrt(3) / 2]])
ONE_MORE_3D = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], np.float64).T / np.sqrt(3)
OBLIQUE = np.array([[1.0, 0.0, -0.62], [0.0, 1.0, -0.48]])     # how the 3-D panel draws x, y, z in the plane
STEP, PAUSE = style.STEP, style.PAUSE


def fmt_int(n: int) -> str:
    return f"{int(n):,}"


def rough(x: float) -> str:
    """An estimate, to two significant digits, with thousands separators."""
    if x < 100:
        return f"{x:.0f}"
    digits = int(np.floor(np.log10(x))) - 1
    return f"{int(round(x, -digits)):,}"


class NearOrthogonal(LectureScene):
    name = "near_orthogonal"
    strings = S
    beat_titles = BEATS

    # --- the numbers -----------------------------------------------------------------------------------------
    def prepare(self):
        self.data = load_snapshots()
        p, band = self.data["pack"], self.data["band"]
        snaps = p["snapshots"]
        self.exact_bounds = {"2d": packing_bounds(3, 2), "3d": packing_bounds(4, 3)}
        first, last = snaps[0], snaps[-1]
        self.reached_deg = max(90 - last["min_deg"], last["max_deg"] - 90)
        self.values.update({
            "source": {"file": "model/snapshots/superposition.json", "key": self.data["key"],
                       "recipe": self.data["recipe"]},
            "exact": {"2d": {"dim": 2, "directions": 3, **self.exact_bounds["2d"]},
                      "3d": {"dim": 3, "directions": 4, **self.exact_bounds["3d"]}},
            "one_more": {"2d": ONE_MORE_2D.T.tolist(), "3d": ONE_MORE_3D.T.tolist(),
                         "rule": "one more direction than d, drawn where the Welch/Levenshtein bound is met: three "
                                 "lines 60 degrees apart in 2-D, a cube's four diagonals in 3-D"},
            "pack": {k: p[k] for k in ("n_vectors", "dim", "steps", "seed", "lr", "margin_cos")},
            "pairs": last["pairs"],
            "snapshots": [{k: s[k] for k in ("step", "counts", "min_deg", "max_deg", "within_89_91")} for s in snaps],
            "bounds": p["bounds"], "reached_deg": self.reached_deg,
            "band": band,
            "jl": self.data["jl"],
        })
        self.build_exact()
        self.build_histogram()
        self.build_pair()
        self.build_where()
        self.build_lemma()

    def build_exact(self):
        b2, b3 = (self.exact_bounds[k]["band_deg"] for k in ("2d", "3d"))
        self.fan2 = VectorFan(np.eye(2), [TEXT, TEXT], radius=FAN_R).move_to([-3.4, 0.2, 0])
        c = self.fan2.centre()
        size = 0.25
        self.right_angle = VGroup(Line(c + [size, 0, 0], c + [size, size, 0], stroke_color=MUTED, stroke_width=2),
                                  Line(c + [0, size, 0], c + [size, size, 0], stroke_color=MUTED, stroke_width=2))
        o3 = np.array([3.4, -0.4, 0])

        def arrows3(vectors, colours):
            return VGroup(*[Arrow(o3, o3 + FAN_R * np.array([*(OBLIQUE @ v), 0]), buff=0, color=c, stroke_width=5,
                                  tip_length=0.18, max_tip_length_to_length_ratio=0.18)
                            for v, c in zip(vectors, colours)])
        self.fan3 = arrows3(np.eye(3), [TEXT] * 3)
        # one more: the d arrows move to the best arrangement of d + 1, and the extra one (in the bound's colour) grows
        self.more2 = VGroup(*[self.fan2.arrows_for(ONE_MORE_2D[:, [i]])[0] for i in range(3)])
        self.more2[2].set_color(BOUND)
        self.more3 = arrows3(ONE_MORE_3D.T, [TEXT] * 3 + [BOUND])
        self.o2, self.o3 = c, o3
        self.panel_heads = VGroup(self.header(self.s("panel_2d"), -3.4, TEXT, 2.45),
                                  self.header(self.s("panel_3d"), 3.4, TEXT, 2.45))
        self.one_more = VGroup(self.header(self.s("one_more", b=f"{b2:.1f}"), -3.4, BOUND, -1.95),
                               self.header(self.s("one_more", b=f"{b3:.1f}"), 3.4, BOUND, -1.95))

    def build_histogram(self):
        snaps = self.data["pack"]["snapshots"]
        lo = int(min(s["min_deg"] for s in snaps) // 5 * 5)
        hi = int(180 - lo)
        lo, hi = min(lo, 180 - hi), max(hi, 180 - lo)
        top = max(max(s["counts"]) for s in snaps)
        self.hist = AngleHistogram(lo, hi, top, width=HIST["width"], height=HIST["height"], color=ANGLE_BARS)
        self.hist.shift([HIST["x"], HIST["y"], 0] - self.hist.axis.get_start())
        self.values["histogram_view"] = {"lo_deg": lo, "hi_deg": hi, "full_height_count": top}
        self.step_bars = [self.hist.bars_for(s["counts"]) for s in snaps]
        self.hist.bars.become(self.step_bars[0])
        pairs = snaps[0]["pairs"]
        self.hist_header = Label(self.s("hist_header", pairs=fmt_int(pairs)), font_size=style.LABEL, color=TEXT)
        self.hist_header.move_to([0, HEADER_Y, 0])
        # the info row: step, closest pair, share within 89-91
        y = INFO_Y
        self.step_label = Label(self.s("step"), font_size=style.SMALL, color=MUTED)
        self.step_label.shift(RIGHT * (-5.6 - self.step_label.get_left()[0])).on_baseline(y)
        self.step_number = NumberText("0", style.LABEL, TEXT, align="left").place(
            self.step_label.get_right()[0] + 0.15, y)
        self.of_steps = Label(self.s("of_steps", steps=len(snaps) - 1), font_size=style.SMALL, color=MUTED)
        self.of_steps.shift(RIGHT * (self.step_label.get_right()[0] + 0.75 - self.of_steps.get_left()[0])) \
            .on_baseline(y)
        self.within_label = Label(self.s("within"), font_size=style.SMALL, color=BAND)
        self.within_label.shift(RIGHT * (-0.9 - self.within_label.get_left()[0])).on_baseline(y)
        self.within_number = NumberText(self.share(snaps[0]), style.LABEL, BAND, align="left").place(
            self.within_label.get_right()[0] + 0.2, y)
        self.closest_label = Label(self.s("closest"), font_size=style.SMALL, color=MEASURED)
        self.closest_number = NumberText(f"{snaps[0]['min_deg']:.1f}°", style.LABEL, MEASURED, align="right") \
            .place(5.6, y)
        self.closest_label.shift(RIGHT * (4.05 - self.closest_label.get_right()[0])).on_baseline(y)
        self.info = VGroup(self.step_label, self.step_number, self.of_steps, self.within_label, self.within_number,
                           self.closest_label, self.closest_number)
        self.closest_marks = [self.closest_mark(s["min_deg"]) for s in snaps]
        self.closest_marker = self.closest_marks[0].copy()

    @staticmethod
    def share(snapshot) -> str:
        return f"{100 * snapshot['within_89_91']:.1f}%"

    def closest_mark(self, degrees: float) -> Line:
        return Line(self.hist.point(degrees, 0.0), self.hist.point(degrees, 0.9), stroke_color=MEASURED,
                    stroke_width=5)

    def build_pair(self):
        """One pair at a time: the exact chance that two random unit vectors in d dimensions fall within 90 +- 1
        degrees (1 - the lab's random_pair_outside, recorded along the band chart's dimensions up to GPT-3's width),
        on the band chart's x axis; our packing run's own share at its random start (every one of its pairs) beside
        the curve at d = 100, and GPT-3's width marked."""
        band, p = self.data["band"], self.data["pack"]
        # d = 2 is left out: the lab's integral is NaN there (its density (1 - t^2)^(-1/2) is infinite at the ends)
        curve = sorted((c for c in band["curve"] if np.isfinite(c["random_pair_outside"])), key=lambda c: c["dim"])
        chart = ChanceChart((0, 5), width=CHART["width"], height=CHART["height"])
        chart.shift([CHART["x"], CHART["y"], 0] - chart.axes[0].get_start())
        self.pair_chart = chart
        dims = [c["dim"] for c in curve]
        inside = [1 - c["random_pair_outside"] for c in curve]
        self.pair_curve = chart.curve(dims, inside, RANDOM_ESTIMATE)
        at = {c["dim"]: 1 - c["random_pair_outside"] for c in curve}
        d0, g = p["dim"], band["gpt3"]
        start = p["snapshots"][0]["within_89_91"]
        pg = 1 - g["random_pair_outside"]
        self.pair_dot = chart.dot(d0, at[d0], RANDOM_ESTIMATE, radius=0.08)
        self.pair_ours = chart.dot(d0, start, MEASURED, radius=0.08).shift(RIGHT * 0.2)
        self.pair_gpt3_line = chart.vertical(g["dim"], MUTED)
        self.pair_gpt3_dot = chart.dot(g["dim"], pg, RANDOM_ESTIMATE, radius=0.09)
        gp = chart.c2p(g["dim"], pg)
        self.pair_gpt3_value = NumberText(style.percent(pg), style.SMALL, RANDOM_ESTIMATE, align="right") \
            .place(gp[0] - 0.18, gp[1] + 0.15)
        dp = chart.c2p(d0, at[d0])
        self.pair_d0_value = NumberText(style.percent(at[d0]), style.SMALL, RANDOM_ESTIMATE, align="right") \
            .place(dp[0] - 0.18, dp[1] + 0.12)
        self.pair_gpt3_label = Label(self.s("gpt3") + " " + fmt_int(g["dim"]), font_size=style.SMALL, color=MUTED)
        self.pair_gpt3_label.shift(RIGHT * (chart.c2p(g["dim"], 0)[0] + 0.12 - self.pair_gpt3_label.get_left()[0])) \
            .on_baseline(chart.c2p(10, 0.45)[1])
        self.pair_y = Label(self.s("pair_y"), font_size=style.SMALL, color=MUTED)
        self.pair_y.shift(RIGHT * (CHART["x"] - 0.6 - self.pair_y.get_left()[0])).on_baseline(3.2)
        self.pair_x = Label(self.s("x_axis"), font_size=style.SMALL, color=MUTED)
        self.pair_x.shift(RIGHT * (CHART["x"] + CHART["width"] + 0.25 - self.pair_x.get_left()[0])) \
            .on_baseline(CHART["y"] - 0.05)
        self.pair_legend = VGroup()
        x0 = 2.2                        # right of the chart, inside the title-safe area
        for r, (key, colour, kind, extra) in enumerate((("pair_curve", RANDOM_ESTIMATE, "line", ""),
                                                        ("pair_ours", MEASURED, "dot", ""))):
            y = 2.3 - r * 0.6
            mark = Line([x0, y + 0.12, 0], [x0 + 0.45, y + 0.12, 0], stroke_color=colour, stroke_width=4) \
                if kind == "line" else chart.dot(10, 0.5, colour).move_to([x0 + 0.22, y + 0.12, 0])
            text = Label(self.s(key) + extra, font_size=style.SMALL, color=colour)
            text.shift(RIGHT * (x0 + 0.6 - text.get_left()[0])).on_baseline(y)
            self.pair_legend.add(VGroup(mark, text))
        self.values["pair"] = {"band_deg": BAND_DEG, "dims": dims, "within": inside, "dim": d0,
                               "within_at_dim": at[d0], "run_within_at_start": start, "gpt3_dim": g["dim"],
                               "gpt3_within": pg,
                               "rule": "1 - random_pair_outside(d, 1 degree): the exact chance a random pair is inside"}

    def build_where(self):
        band = self.data["band"]
        chart = LogChart((0, 5), (0, 8), width=CHART["width"], height=CHART["height"])
        chart.shift([CHART["x"], CHART["y"], 0] - chart.axes[0].get_start())
        self.chart = chart
        curve = band["curve"]
        dims = [c["dim"] for c in curve]
        self.exact_line = chart.curve(dims, dims, TEXT, stroke_width=3)
        bounded = [c for c in curve if c["bound_count"] is not None]
        self.bound_curve = chart.curve([c["dim"] for c in bounded], [c["bound_count"] for c in bounded], BOUND)
        self.random_curve = chart.curve(dims, [c["random_estimate"] for c in curve], RANDOM_ESTIMATE)
        # the wide band's random-vector estimate, on the chart's widths up to the first one past the chart's top
        top = 10.0 ** chart.y1
        wide_dims, wide = [], []
        for d in dims:
            wide_dims.append(d)
            wide.append(random_room([d], WIDE_DEG)[0])
            if wide[-1] > top:
                break
        self.wide_curve = chart.curve(wide_dims, wide, RANDOM_ESTIMATE, dashed=True)
        g = band["gpt3"]
        wide_gpt3 = random_room([g["dim"]], WIDE_DEG)[0]
        self.wide = {"deg": WIDE_DEG, "dims": wide_dims, "random_estimate": wide, "gpt3_dim": g["dim"],
                     "gpt3_random_estimate": wide_gpt3, "chart_top": top,
                     "rule": "model.analysis.superposition.random_room at 90 +- 5 degrees, at the chart's widths up "
                             "to the first past its top, and at GPT-3's width"}
        self.values["wide"] = self.wide
        gx = chart.c2p(g["dim"], top)     # at GPT-3's width, an arrow up off the chart's top, its value right of it
        self.wide_arrow = Arrow(gx + DOWN * 0.35, gx + UP * 0.45, buff=0, color=RANDOM_ESTIMATE, stroke_width=4,
                                tip_length=0.16, max_tip_length_to_length_ratio=0.3)
        self.wide_value = Label(self.s("off_chart", r5=style.scientific(wide_gpt3, 2)), font_size=style.SMALL,
                                color=RANDOM_ESTIMATE)
        self.wide_value.shift(RIGHT * (gx[0] + 0.2 - self.wide_value.get_left()[0])).on_baseline(gx[1] + 0.06)
        self.measured_dots = VGroup(*[chart.dot(m["dim"], m["count"], MEASURED) for m in band["measured"]])
        g = band["gpt3"]
        self.gpt3_line = chart.vertical(g["dim"], MUTED)
        self.gpt3_dot = chart.dot(g["dim"], g["random_estimate"], RANDOM_ESTIMATE, radius=0.09)
        self.gpt3_label = Label(self.s("gpt3"), font_size=style.SMALL, color=MUTED)   # its width: the x axis' 10^4
        self.gpt3_label.shift(RIGHT * (chart.c2p(g["dim"], 1)[0] - 0.12 - self.gpt3_label.get_right()[0])) \
            .on_baseline(chart.c2p(10, 10 ** 1.1)[1])     # left of its line, between the random curves and d
        gp = chart.c2p(g["dim"], g["random_estimate"])
        self.gpt3_value = NumberText(f"\u2248 {rough(g['random_estimate'])}", style.SMALL, RANDOM_ESTIMATE,
                                     align="left").place(gp[0] + 0.18, gp[1] + 0.1)
        self.y_title = Label(self.s("y_axis"), font_size=style.SMALL, color=MUTED)
        self.y_title.shift(RIGHT * (CHART["x"] - 0.6 - self.y_title.get_left()[0])).on_baseline(3.2)
        self.x_title = Label(self.s("x_axis"), font_size=style.SMALL, color=MUTED)
        self.x_title.shift(RIGHT * (CHART["x"] + CHART["width"] + 0.25 - self.x_title.get_left()[0])) \
            .on_baseline(CHART["y"] - 0.05)
        entries = [("legend_exact", TEXT, "line"), ("legend_bound", BOUND, "line"),
                   ("legend_random", RANDOM_ESTIMATE, "line"), ("legend_measured", MEASURED, "dot"),
                   ("legend_wide", RANDOM_ESTIMATE, "dashed")]
        self.legend = VGroup()
        x0 = 2.8
        for r, (key, colour, kind) in enumerate(entries):
            y = 2.2 - r * 0.55
            if kind == "dot":
                mark = chart.dot(10, 1, colour).move_to([x0 + 0.22, y + 0.12, 0])
            elif kind == "dashed":
                mark = DashedLine([x0, y + 0.12, 0], [x0 + 0.45, y + 0.12, 0], stroke_color=colour, stroke_width=4,
                                  dash_length=0.08)
            else:
                mark = Line([x0, y + 0.12, 0], [x0 + 0.45, y + 0.12, 0], stroke_color=colour, stroke_width=4)
            text = Label(self.s(key), font_size=style.SMALL, color=colour)
            text.shift(RIGHT * (x0 + 0.6 - text.get_left()[0])).on_baseline(y)
            self.legend.add(VGroup(mark, text))

    def build_lemma(self):
        """The lemma's formula, and a row per distortion eps of the record: eps, the lemma's k, and on one scale the
        allowance eps (a faint bar ending in a tick) beside the worst distortion the lab's projection made."""
        j = self.data["jl"]
        rows = j["rows"]
        self.jl_formula = self.tex(r"k \ge", r"\frac{4 \ln N}{\varepsilon^2/2 - \varepsilon^3/3}")
        self.jl_formula.move_to([-0.9, JL_FORMULA_Y, 0])
        self.jl_source = Label(self.s("jl_source"), font_size=style.SMALL, color=MUTED)
        self.jl_source.shift(RIGHT * (self.jl_formula.get_right()[0] + 0.5 - self.jl_source.get_left()[0]))
        self.jl_source.shift(UP * (self.jl_formula.get_center()[1] - self.jl_source.get_center()[1]))
        pitch = min(JL_PITCH, (JL_ROWS_TOP - JL_ROWS_BOTTOM) / max(len(rows) - 1, 1))
        ys = [JL_ROWS_TOP - r * pitch for r in range(len(rows))]
        x = JL_X
        self.jl_heads = VGroup(self.header(self.s("col_eps"), x["eps"] - 0.5, BOUND, JL_HEAD_Y),
                               self.header(self.s("col_k"), x["k"] - 0.6, TEXT, JL_HEAD_Y),
                               self.header(self.s("col_worst"), (x["bars"] + x["worst"]) / 2, MEASURED, JL_HEAD_Y))
        eps = [r["eps"] for r in rows]
        worst = [r["projection"]["worst_distortion"] for r in rows]
        self.jl_eps = NumberColumn([f"{e:g}" for e in eps], ys, x["eps"], color=BOUND)
        self.jl_k = NumberColumn([fmt_int(r["dim"]) for r in rows], ys, x["k"], color=TEXT)
        # the allowed and the found bars on one scale, room left for the numbers right of the bars
        scale = BarScale.fit(x["bars"], x["worst"] - 1.4 - x["bars"], eps + worst)
        self.jl_allow = BarChart(eps, ys, scale, BOUND, bar_height=0.36, opacities=[0.35] * len(rows))
        self.jl_ticks = VGroup(*[Line([x["bars"] + e * scale.unit, c - 0.24, 0],
                                      [x["bars"] + e * scale.unit, c + 0.24, 0], stroke_color=BOUND, stroke_width=4)
                                 for e, c in zip(eps, self.jl_allow.bars.centres)])
        self.jl_found = BarChart(worst, ys, scale, MEASURED, bar_height=0.16, numbers=lambda w: f"{w:.3f}",
                                 number_right=x["worst"], number_colour=MEASURED)
        self.jl_worst = self.jl_found.numbers
        # each eps as an angle: how far from 90 degrees the lemma lets a perpendicular pair end up (lengths distorted
        # too: asin(2 eps / (1 - eps)); 90 when that says nothing)
        angles = [jl_angle_deg(e) for e in eps]
        self.jl_angles = NumberColumn([f"\u00b1{a:.1f}\u00b0" for a in angles], ys, x["angle"], color=BOUND,
                                      font_size=style.SMALL)
        band_eps = jl_eps_for_angle(WIDE_DEG)
        self.jl_band = {"deg": WIDE_DEG, "eps": band_eps, "dim": jl_dimension(j["n_points"], band_eps),
                        "gpt3_dim": GPT3_175B.n_embd,
                        "rule": "the eps whose guaranteed angle asin(2 eps / (1 - eps)) is the wide band's 5 degrees, "
                                "and the lemma's k for the chapter's N at it"}
        self.jl_points = Label(self.s("jl_points", n=fmt_int(j["n_points"])), font_size=style.SMALL, color=MUTED)
        self.jl_points.move_to([0, 0, 0]).on_baseline(ys[-1] - 0.62)
        self.values["jl_shown"] = {"eps": eps, "dims": [r["dim"] for r in rows], "worst_distortion": worst,
                                   "pairs": rows[0]["projection"]["pairs"], "n_points": j["n_points"],
                                   "tenfold": {"eps": rows[-1]["eps"], "dims": rows[-1]["tenfold_dims"]},
                                   "angle_deg": angles, "band": self.jl_band}

    # --- the beats -------------------------------------------------------------------------------------------
    def beat_exact(self):
        b2, b3 = (self.exact_bounds[k]["band_deg"] for k in ("2d", "3d"))
        self.say("exact", b2=f"{b2:.1f}", b3=f"{b3:.1f}")
        self.play(FadeIn(self.panel_heads), FadeIn(self.fan2.circle), FadeIn(self.fan2.origin_dot), run_time=STEP)
        self.play(*[GrowFromEdge(a, LEFT) if i == 0 else GrowFromEdge(a, DOWN)
                    for i, a in enumerate(self.fan2.arrows)], Create(self.right_angle), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(a) for a in self.fan3], lag_ratio=0.3), run_time=STEP)
        self.wait(PAUSE)
        # one more, drawn: the d arrows turn to the best arrangement of d + 1 as the extra arrow grows
        self.play(*[Transform(a, t) for a, t in zip(self.fan2.arrows, self.more2)], GrowFromPoint(self.more2[2], self.o2),
                  *[Transform(a, t) for a, t in zip(self.fan3, self.more3)], GrowFromPoint(self.more3[3], self.o3),
                  self.right_angle.animate.set_opacity(0), run_time=2 * STEP)
        self.play(FadeIn(self.one_more), run_time=STEP)
        self.wait(PAUSE)

    def beat_histogram(self):
        p = self.data["pack"]
        snaps = p["snapshots"]
        self.say("histogram", n=fmt_int(p["n_vectors"]), d=p["dim"], pairs=fmt_int(snaps[0]["pairs"]))
        self.clear_stage()
        self.play(FadeIn(self.hist.axis), FadeIn(self.hist.ticks), FadeIn(self.hist_header), run_time=STEP)
        self.play(GrowFromEdge(self.hist.bars, DOWN), FadeIn(self.info), FadeIn(self.closest_marker), run_time=STEP)
        self.wait(PAUSE)
        for k, s in enumerate(snaps[1:], start=1):
            self.step_number.set_text(str(s["step"]))
            self.within_number.set_text(self.share(s))
            self.closest_number.set_text(f"{s['min_deg']:.1f}°")
            self.play(Transform(self.hist.bars, self.step_bars[k]),
                      Transform(self.closest_marker, self.closest_marks[k]), run_time=0.35)
        first, last = snaps[0], snaps[-1]
        change = last["within_89_91"] - first["within_89_91"]
        rises = last["min_deg"] > first["min_deg"]
        key = "no_gain" if not rises else ("narrows" if change >= 0.01 else "tails")
        self.caption_rule("histogram", key, "closest pair not higher at the end than at the start: no_gain; else "
                          "the share within 89-91 degrees grows by at least 1 percentage point: narrows; else tails",
                          first_min_deg=first["min_deg"], last_min_deg=last["min_deg"],
                          first_within=first["within_89_91"], last_within=last["within_89_91"])
        self.say(key, a=f"{first['min_deg']:.1f}", b=f"{last['min_deg']:.1f}", p0=self.share(first),
                 p1=self.share(last))
        self.wait(PAUSE)

    def beat_pair(self):
        self.clear_stage()     # the histogram goes first: this caption is taller than the one before
        v = self.values["pair"]
        grows = all(b > a for a, b in zip(v["within"], v["within"][1:]))
        key = self.caption_rule("pair", "pair_grows" if grows else "pair_mixed",
                                "the chance a random pair falls within 89-91 degrees strictly higher at every larger "
                                "dimension of the chart: pair_grows, else pair_mixed", dims=v["dims"],
                                within=v["within"])
        self.say(key, p100=style.percent(v["within_at_dim"]), h=style.percent(v["run_within_at_start"]),
                 pg=style.percent(v["gpt3_within"]), g=fmt_int(v["gpt3_dim"]))
        self.play(Create(self.pair_chart.axes), FadeIn(self.pair_chart.ticks), FadeIn(self.pair_y),
                  FadeIn(self.pair_x), run_time=STEP)
        self.play(Create(self.pair_curve), FadeIn(self.pair_legend[0]), run_time=STEP)
        self.play(FadeIn(self.pair_dot), FadeIn(self.pair_d0_value), FadeIn(self.pair_ours),
                  FadeIn(self.pair_legend[1]), run_time=STEP)
        self.play(Create(self.pair_gpt3_line), FadeIn(self.pair_gpt3_label), FadeIn(self.pair_gpt3_dot),
                  FadeIn(self.pair_gpt3_value), run_time=STEP)
        self.wait(PAUSE)

    def beat_where(self):
        band = self.data["band"]
        g = band["gpt3"]
        key = "where_slow" if g["random_estimate"] < g["dim"] else "where_fast"
        self.caption_rule("where", key, "random-vector estimate within 89-91 degrees at GPT-3's width below its number "
                          "of dimensions: where_slow, else where_fast", random_estimate=g["random_estimate"],
                          dim=g["dim"])
        self.say(key, r=rough(g["random_estimate"]), g=fmt_int(g["dim"]))
        self.clear_stage()
        self.play(Create(self.chart.axes), FadeIn(self.chart.ticks), FadeIn(self.y_title), FadeIn(self.x_title),
                  run_time=STEP)
        self.play(Create(self.exact_line), FadeIn(self.legend[0]), run_time=STEP)
        self.play(LaggedStart(*[FadeIn(d, scale=0.5) for d in self.measured_dots], lag_ratio=0.2),
                  FadeIn(self.legend[3]), run_time=STEP)
        self.play(Create(self.bound_curve), FadeIn(self.legend[1]), run_time=STEP)
        self.play(Create(self.random_curve), FadeIn(self.legend[2]), run_time=STEP)
        self.play(Create(self.gpt3_line), FadeIn(self.gpt3_label), FadeIn(self.gpt3_dot), FadeIn(self.gpt3_value),
                  run_time=STEP)
        self.wait(PAUSE)
        w = self.wide
        key = self.caption_rule("room", "room_explodes" if w["gpt3_random_estimate"] > w["gpt3_dim"] else "room_small",
                                "random-vector estimate within 85-95 degrees at GPT-3's width above its number of "
                                "dimensions: room_explodes, else room_small",
                                random_estimate=w["gpt3_random_estimate"], dim=w["gpt3_dim"])
        self.say(key, r5=style.scientific(w["gpt3_random_estimate"], 2), g=fmt_int(w["gpt3_dim"]))
        self.play(Create(self.wide_curve), FadeIn(self.legend[4]), run_time=2 * STEP)
        self.play(GrowFromEdge(self.wide_arrow, DOWN), FadeIn(self.wide_value), run_time=STEP)
        self.wait(PAUSE)

    def beat_lemma(self):
        j = self.data["jl"]
        rows = j["rows"]
        self.clear_stage()     # the chart goes first: the lemma's caption is taller than the one before
        worst = [r["projection"]["worst_distortion"] for r in rows]
        key = self.caption_rule("lemma", "lemma_near" if all(w <= 1.05 * r["eps"] for w, r in zip(worst, rows))
                                else "lemma_far", "the worst distortion of the random projection into the lemma's k "
                                "at most 1.05 eps in every row (at or near eps): lemma_near, else lemma_far",
                                eps=[r["eps"] for r in rows], worst=worst)
        self.say(key, n=fmt_int(j["n_points"]))
        self.play(FadeIn(self.jl_formula), FadeIn(self.jl_source), run_time=STEP)
        self.play(FadeIn(self.jl_heads[:2]), FadeIn(self.jl_eps), FadeIn(self.jl_k), run_time=STEP)
        self.play(*self.jl_allow.grow(), Create(self.jl_ticks), run_time=STEP)
        self.play(FadeIn(self.jl_heads[2]), FadeIn(self.jl_points), run_time=STEP)
        self.play(*self.jl_found.grow(), FadeIn(self.jl_worst), run_time=STEP)
        self.wait(PAUSE)
        last = rows[-1]
        band = self.jl_band
        key = self.caption_rule("angle", "angle_beyond" if band["dim"] > band["gpt3_dim"] else "angle_within",
                                "the lemma's k for the chapter's N at the eps whose guaranteed angle is 85-95 degrees "
                                "(sin 5 degrees = 2 eps / (1 - eps)) above GPT-3's width: angle_beyond, else "
                                "angle_within", eps=band["eps"], dim=band["dim"], gpt3_dim=band["gpt3_dim"])
        self.say(key, e=f"{last['eps']:g}", a=f"{jl_angle_deg(last['eps']):.1f}", n=fmt_int(j["n_points"]),
                 k5=fmt_int(band["dim"]), g=fmt_int(band["gpt3_dim"]))
        self.play(FadeIn(self.jl_angles), run_time=STEP)
        self.wait(PAUSE)
