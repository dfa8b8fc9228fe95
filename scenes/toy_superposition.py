"""The toy model of superposition (Elhage et al., 2022): five features squeezed into two dimensions.

    manim render -ql scenes/toy_superposition.py ToySuperposition
    python render.py toy_superposition --lang zh

x' = ReLU(W^T W x + b), W is 2 x 5, trained by the superposition lab (Torch, fixed seed) at several sparsities.
The five columns of W move in the plane through the recorded checkpoints; then each feature's dimensionality D_i
and the loss; then the geometry at each sparsity, named by a rule over the numbers (two orthogonal features,
antipodal pairs, a pentagon). Every number is read from model/snapshots/superposition.json (`python -m model
superposition record`, checked by its content key); the scene trains nothing. Every value shown is recorded at
full precision in self.values (the manifest).
"""

from __future__ import annotations

import numpy as np
from manim import (RIGHT, Create, DashedLine, FadeIn, FadeOut, GrowFromPoint, LaggedStart,
                   Rectangle, Transform, VGroup)

from model.analysis.superposition import toy_collisions
from model.superposition_record import load as load_snapshots
from scenes import style
from scenes.components import BarChart, BarScale, ColumnBars, Label, NumberText, Table
from scenes.components.sums import CountSum, RoundedPercents
from scenes.components.superposition import VectorFan
from scenes.lecture import LectureScene
from scenes.style import FEATURE_COLOURS, MUTED, SHARED, TEXT
from scenes.words import Words

DATA_FILES = ("model/snapshots/superposition.json",)   # read through load_snapshots: render.py keys on it

WORDS = Words.beside(__file__)     # toy_superposition.toml: the captions, their spoken forms, the beat titles

S = SHARED | WORDS["captions"]

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | WORDS["beat_titles"]

PANEL_XS = (-4.35, -1.3, 1.75, 4.8)
PANEL_Y, RADIUS = 0.95, 0.95
HEADER_Y = 2.45
BARS_BASE, BAR_UNIT = -1.55, 0.8       # the D_i bars: baseline, height of D = 1
LOSS_Y = -2.05
REPRESENTED = 0.5                     # a feature is represented when its column's norm exceeds this
ORTHO_TOL, PENTAGON_TOL, D_TOL = 5.0, 5.0, 0.05
DEFINE_R = 1.4                        # the definition's fan: the length of a vector of length 1
COLLIDE_FAN = (-4.6, 0.55, 1.15)      # the collision beat's fan: centre x, y and the length of a vector of length 1
COLLIDE_BASE, COLLIDE_UNIT = -1.0, 1.45    # its bars: baseline, height of a value of 1
COLLIDE_XS = [-1.6 + 1.5 * i for i in range(5)]
STEP, PAUSE = style.STEP, style.PAUSE


def geometry(run: dict) -> dict:
    """Name the arrangement of a trained W by a rule over its numbers: the represented features (norm > 0.5),
    the angles between them, their D_i. Kinds: "orthogonal" (two, 90 +- 5 degrees apart), "antipodal" (an even
    number, in pairs 180 +- 5 degrees apart, the pairs 90 +- 5 apart), "pentagon" (five, every neighbour gap
    72 +- 5 degrees, every D_i 0.4 +- 0.05), otherwise "other"."""
    norms = np.asarray(run["norms"])
    rep = [int(i) for i in np.flatnonzero(norms > REPRESENTED)]
    angles = np.asarray(run["angles_deg"])
    polar = np.asarray(run["polar_deg"])[rep]
    order = np.argsort(polar)
    ordered = polar[order]
    gaps = np.diff(np.concatenate([ordered, ordered[:1] + 360])) if len(rep) > 1 else np.array([])
    D = np.asarray(run["dims_per_feature"])[rep]
    out = {"represented": rep, "gaps_deg": gaps.tolist(), "kind": "other"}
    if len(rep) == 2 and abs(angles[rep[0], rep[1]] - 90) <= ORTHO_TOL:
        out.update(kind="orthogonal", angle_deg=float(angles[rep[0], rep[1]]))
    elif len(rep) == 5 and np.all(np.abs(gaps - 72) <= PENTAGON_TOL) and np.all(np.abs(D - 0.4) <= D_TOL):
        out.update(kind="pentagon")
    elif len(rep) in (4, 6) and np.all(np.abs(gaps - 360 / len(rep)) <= ORTHO_TOL) and all(
            abs(max(angles[i, j] for j in rep if j != i) - 180) <= ORTHO_TOL for i in rep):
        out.update(kind="antipodal")
    return out


class ToySuperposition(LectureScene):
    name = "toy_superposition"
    strings = S
    beat_titles = BEATS

    # --- the numbers -----------------------------------------------------------------------------------------
    def prepare(self):
        data = load_snapshots()
        self.runs = data["toy"]["runs"]
        self.geoms = [geometry(r) for r in self.runs]
        keep = ("sparsity", "n_features", "n_hidden", "steps", "batch", "seed", "lr", "importance", "W", "b",
                "norms", "dims_per_feature", "angles_deg", "polar_deg", "neighbour_gaps_deg", "loss", "instance",
                "instance_losses")
        self.values.update({
            "source": {"file": "model/snapshots/superposition.json", "key": data["key"],
                       "recipe": data["recipe"]["toy"]},
            "runs": [{**{k: r[k] for k in keep},
                      "checkpoints": [{k: c[k] for k in ("step", "W", "b", "loss", "norms", "dims_per_feature")}
                                      for c in r["checkpoints"]],
                      "geometry": g} for r, g in zip(self.runs, self.geoms)],
            "represented_norm": REPRESENTED,
        })
        self.build_define()
        self.build_model()
        self.build_panels()
        self.build_dims()
        self.build_geometry()
        self.build_collide()
        self.build_rare()

    def build_define(self):
        """The definition's picture: the sparsest run's five columns of W, large, numbered; a dashed line along
        feature 1's direction, and a dashed drop from the tip of each feature less than 90 degrees from it onto
        that line (what reading feature 1 picks up of it)."""
        r, g = self.runs[-1], self.geoms[-1]
        W = np.asarray(r["W"], np.float64)
        n, m = r["n_features"], r["n_hidden"]
        centre = np.array([0.0, 0.75, 0.0])
        self.define_fan = VectorFan(W, FEATURE_COLOURS, radius=DEFINE_R)
        self.define_fan.shift(centre - self.define_fan.centre())
        self.define_numbers = VGroup()
        for i in range(n):
            tip = self.define_fan.tip(*W[:, i])
            out = (tip - centre) / max(np.linalg.norm(tip - centre), 1e-9)
            self.define_numbers.add(NumberText(str(i + 1), style.LABEL, FEATURE_COLOURS[i]).place(0, 0))
            self.define_numbers[-1].move_to(tip + out * 0.32)
        u = W[:, 0] / np.linalg.norm(W[:, 0])
        reach = DEFINE_R * 1.25
        self.define_axis = DashedLine(centre - reach * np.array([*u, 0]), centre + reach * np.array([*u, 0]),
                                      stroke_color=FEATURE_COLOURS[0], stroke_width=2, dash_length=0.1,
                                      stroke_opacity=0.7)
        angles = np.asarray(r["angles_deg"])
        near = [j for j in range(1, n) if angles[0, j] < 90 and r["norms"][j] > REPRESENTED]
        self.define_drops = VGroup(*[
            DashedLine(self.define_fan.tip(*W[:, j]), self.define_fan.tip(*(float(W[:, j] @ u) * u)),
                       stroke_color=FEATURE_COLOURS[j], stroke_width=2.5, dash_length=0.08) for j in near])
        self.define_header = self.header(self.s("five_in_two", n=n, m=m), 0, TEXT, 3.25)
        self.values["define"] = {"run": len(self.runs) - 1, "sparsity": r["sparsity"], "reading": 0,
                                 "dropped": near, "angles_to_reading_deg": [float(angles[0, j]) for j in near]}

    def build_model(self):
        r = self.runs[0]
        n, m = r["n_features"], r["n_hidden"]
        self.formula = self.tex(r"x'", "=", r"\mathrm{ReLU}(", r"W^\top W", "x", "+", "b", ")").move_to([0, 2.95, 0])
        self.shape = Label(self.s("shape", n=n, m=m), font_size=style.LABEL, color=MUTED).move_to([0, 2.05, 0])
        base, unit, xs = -1.05, 2.0, [-3.2 + 1.6 * i for i in range(n)]
        self.imp_bars = ColumnBars(r["importance"], xs, base, unit, FEATURE_COLOURS[:n], width=0.7, floor=0.0)
        self.imp_numbers = self.imp_bars.numbers_above([f"{v:.2f}" for v in r["importance"]], FEATURE_COLOURS[:n],
                                                       gap=0.15)
        self.imp_names = VGroup(*[NumberText(str(i + 1), style.LABEL, FEATURE_COLOURS[i]).place(0, base - 0.45)
                                  for i in range(n)])
        for name, x in zip(self.imp_names, xs):
            name.shift(RIGHT * (x - name.get_center()[0]))
        self.feature_title = Label(self.s("feature"), font_size=style.SMALL, color=MUTED)
        self.feature_title.shift(RIGHT * (-4.1 - self.feature_title.get_right()[0])).on_baseline(base - 0.45)
        self.imp_title = Label(self.s("importance"), font_size=style.SMALL, color=MUTED)
        self.imp_title.shift(RIGHT * (-4.1 - self.imp_title.get_right()[0])).on_baseline(base + 0.1)

    def build_panels(self):
        self.fans, self.panel_heads, self.step_marks = [], VGroup(), []
        for r, x in zip(self.runs, PANEL_XS):
            first = r["checkpoints"][0]["W"]
            fan = VectorFan(first, FEATURE_COLOURS, radius=RADIUS).move_to([x, PANEL_Y, 0])
            fan.shift([x, PANEL_Y, 0] - fan.centre())
            self.fans.append(fan)
            self.panel_heads.add(self.header(self.s("sparsity", s=f"{r['sparsity']:g}"), x, TEXT, HEADER_Y))
        self.checkpoint_steps = [c["step"] for c in self.runs[0]["checkpoints"]]
        if any([c["step"] for c in r["checkpoints"]] != self.checkpoint_steps for r in self.runs):
            raise ValueError("the toy runs' checkpoints differ")
        self.targets = [[fan.arrows_for(c["W"]) for c in r["checkpoints"]] for fan, r in zip(self.fans, self.runs)]
        y = 3.2
        self.step_label = Label(self.s("step"), font_size=style.SMALL, color=MUTED)
        self.step_label.shift(RIGHT * (-0.8 - self.step_label.get_right()[0])).on_baseline(y)
        self.step_number = NumberText("0", style.LABEL, TEXT, align="right").place(0.5, y)
        self.of_steps = Label(self.s("of_steps", steps=f"{self.runs[0]['steps']:,}"), font_size=style.SMALL,
                              color=MUTED)
        self.of_steps.shift(RIGHT * (0.7 - self.of_steps.get_left()[0])).on_baseline(y)
        self.step_row = VGroup(self.step_label, self.step_number, self.of_steps)

    def build_dims(self):
        self.d_bars, self.loss_rows = VGroup(), VGroup()
        for r, x in zip(self.runs, PANEL_XS):
            dims = r["dims_per_feature"]
            self.d_bars.add(ColumnBars(dims, [x + (i - 2) * 0.45 for i in range(len(dims))], BARS_BASE, BAR_UNIT,
                                       FEATURE_COLOURS[:len(dims)], width=0.34))
            label = Label(self.s("loss"), font_size=style.SMALL, color=MUTED)
            number = NumberText(f"{r['loss']:.4f}", style.SMALL, TEXT, align="left")
            label.shift(RIGHT * (x - 1.2 - label.get_left()[0])).on_baseline(LOSS_Y)
            number.place(label.get_right()[0] + 0.15, LOSS_Y)
            self.loss_rows.add(VGroup(label, number))
        left, right = PANEL_XS[0] - 1.15, PANEL_XS[-1] + 1.15
        self.d_refs = VGroup(*[DashedLine([left, BARS_BASE + v * BAR_UNIT, 0], [right, BARS_BASE + v * BAR_UNIT, 0],
                                          stroke_color=MUTED, stroke_width=1.5, dash_length=0.08) for v in (1.0, 0.4)])
        self.d_ref_labels = VGroup(
            NumberText("1", style.SMALL, MUTED).place(left - 0.1, BARS_BASE + BAR_UNIT - 0.1),
            NumberText("0.4", style.SMALL, MUTED).place(left - 0.1, BARS_BASE + 0.4 * BAR_UNIT - 0.1))
        self.d_title = Label("D\u1d62", font_size=style.LABEL, color=MUTED)
        self.d_title.shift(RIGHT * (left - 0.1 - self.d_title.get_right()[0])).on_baseline(BARS_BASE + 1.05)

    def build_geometry(self):
        self.geom_labels = VGroup()
        for g, r, x in zip(self.geoms, self.runs, PANEL_XS):
            k = len(g["represented"])
            if g["kind"] == "orthogonal":
                text = self.s("geom_orthogonal", k=k, a=f"{g['angle_deg']:.0f}")
            elif g["kind"] == "antipodal":
                text = self.s("geom_antipodal", k=k)
            elif g["kind"] == "pentagon":
                text = self.s("geom_pentagon")
            else:
                text = self.s("geom_other", k=k)
            row = VGroup(self.header(text, x, TEXT, -0.55))
            if k > 2:
                gaps = g["gaps_deg"]
                lo, hi = f"{min(gaps):.0f}", f"{max(gaps):.0f}"
                text = self.s("gaps", lo=lo, hi=hi) if lo != hi else self.s("gap", a=lo)
                row.add(self.header(text, x, MUTED, -1.05))
            self.geom_labels.add(row)

    def build_collide(self):
        """Why sparsity allows it: one input of the sparsest run's own evaluation data with two features on together
        (model.analysis.superposition.toy_collisions, by its rule), the fan with those two arrows lit, and per feature
        the input (grey) beside what the model gives back (its colour)."""
        r = self.runs[-1]
        self.collide = toy_collisions(r)
        ex = self.collide["example"]
        if ex is None:
            raise ValueError("the sparsest toy run's data has no input with two features on")
        self.values["collisions"] = self.collide
        W = np.asarray(r["W"], np.float64)
        cx, cy, radius = COLLIDE_FAN
        self.collide_fan = VectorFan(W, FEATURE_COLOURS, radius=radius)
        self.collide_fan.shift(np.array([cx, cy, 0.0]) - self.collide_fan.centre())
        for i, a in enumerate(self.collide_fan.arrows):
            if i not in ex["features"]:
                a.set_color(MUTED)          # the features that are off: grey
        self.collide_names = VGroup()
        centre = self.collide_fan.centre()
        for i in ex["features"]:
            tip = self.collide_fan.tip(*W[:, i])
            out = (tip - centre) / max(np.linalg.norm(tip - centre), 1e-9)
            self.collide_names.add(NumberText(str(i + 1), style.LABEL, FEATURE_COLOURS[i]).place(0, 0))
            self.collide_names[-1].move_to(tip + out * 0.3)
        f1, f2 = (i + 1 for i in ex["features"])
        self.collide_header = self.header(self.s("collide_header", s=f"{r['sparsity']:g}", i=f1, j=f2), 0, TEXT, 3.05)
        # each feature's input (grey) and output (its colour) side by side: bars 0, 2, 4 … the inputs
        pairs = [((xv, x - 0.3, MUTED), (ov, x + 0.3, FEATURE_COLOURS[i]))
                 for i, (xv, ov, x) in enumerate(zip(ex["x"], ex["out"], COLLIDE_XS))]
        bars = [bar for pair in pairs for bar in pair]
        self.collide_bars = ColumnBars([v for v, _, _ in bars], [bx for _, bx, _ in bars], COLLIDE_BASE, COLLIDE_UNIT,
                                       [c for _, _, c in bars], width=0.38)
        # each bar's number over it, in its colour; a bar of 0 has none
        self.collide_numbers = self.collide_bars.numbers_above([f"{v:.2f}" if v > 0 else None for v, _, _ in bars],
                                                               [c for _, _, c in bars], gap=0.15)
        self.collide_feature_names = VGroup()
        for i, x in enumerate(COLLIDE_XS):
            name = NumberText(str(i + 1), style.LABEL, FEATURE_COLOURS[i]).place(0, COLLIDE_BASE - 0.45)
            name.shift(RIGHT * (x - name.get_center()[0]))
            self.collide_feature_names.add(name)
        self.collide_legend = VGroup()
        for k, (key, colour) in enumerate((("input", MUTED), ("output", TEXT))):
            y = 2.25 - 0.5 * k
            mark = Rectangle(width=0.3, height=0.22, stroke_width=0, fill_color=colour, fill_opacity=0.9)
            mark.move_to([3.2, y + 0.1, 0])
            text = Label(self.s(key), font_size=style.SMALL, color=colour)
            text.shift(RIGHT * (3.5 - text.get_left()[0])).on_baseline(y)
            self.collide_legend.add(VGroup(mark, text))

    def build_rare(self):
        """How rare a collision is at the sparsity trained: the evaluation inputs by how many features are on (a
        count that adds up to the batch) and each kind's share of the loss (adding up to 100%); below, the loss on
        these same inputs of the pentagon and of keeping features 1 and 2 exactly and dropping the rest."""
        c, r = self.collide, self.runs[-1]
        kinds = ("0", "1", "2+")
        self.rare_header = self.header(self.s("rare_header", s=f"{r['sparsity']:g}", batch=f"{c['batch']:,}"), 0,
                                       TEXT, 3.05)
        counts = CountSum([c["inputs"][k] for k in kinds], c["batch"], [f"{c['inputs'][k]:,}" for k in kinds],
                          f"{c['batch']:,}")
        losses = [c["mean_loss"][k] * c["inputs"][k] / (c["loss"] * c["batch"]) if c["inputs"][k] else 0.0
                  for k in kinds]
        shares = RoundedPercents(losses, total=sum(losses))
        self.record_sum("rare", "inputs by features on = the batch", counts)
        self.record_sum("rare", "shares of the loss = 100%", shares)
        # a column a kind (how many features on), centred under its name; "two or more" in the text colour
        colours = [MUTED, MUTED, TEXT]
        self.rare_table = Table([self.s("row_inputs"), self.s("row_loss")], list(zip(counts.labels, shares.labels)),
                                [1.6, 1.0], label_right=-1.9, column_rights=[-0.4, 2.2, 4.8], align="centre",
                                label_colours=[MUTED, MUTED], label_size=style.SMALL, column_colours=colours,
                                headers=[self.s(k) for k in ("on_none", "on_one", "on_more")], header_baseline=2.2,
                                label_header=self.s("on_title"), header_colours=[MUTED] + colours, clamp=False)
        self.rare_counts, self.rare_shares = counts, shares
        # the same inputs, two losses: the pentagon's and keeping the top two exactly; each number after its bar
        values = [c["loss"], c["keep_two_loss"]]
        left = -0.7                                    # the bars' left end; their names end left of it
        self.same_chart = BarChart(values, [-0.35, -0.95], BarScale.fit(left, 4.4, values), [FEATURE_COLOURS[0], MUTED],
                                   labels=[self.s("bar_pentagon"), self.s("bar_keep_two")], label_right=left - 0.2,
                                   label_size=style.SMALL, numbers=lambda v: f"{v:.5f}", number_after=0.15,
                                   number_size=style.SMALL, bar_height=0.28, lift=0.1, clamp=False)
        self.same_title = Label(self.s("same_inputs"), font_size=style.SMALL, color=MUTED)   # the names' header
        self.same_title.shift(RIGHT * (left - 0.2 - self.same_title.get_right()[0])).on_baseline(0.25)
        self.values["rare_shown"] = {"inputs": counts.labels, "loss_shares": shares.labels,
                                     "same_inputs_loss": {"pentagon": values[0], "keep_two": values[1]}}

    # --- the beats -------------------------------------------------------------------------------------------
    def beat_define(self):
        g = self.geoms[-1]
        if g["kind"] == "pentagon":
            key, words = "define_pentagon", dict(lo=f"{min(g['gaps_deg']):.0f}", hi=f"{max(g['gaps_deg']):.0f}")
        else:
            key, words = "define_plain", dict(k=len(g["represented"]))
        self.caption_rule("define", key, "the sparsest run's geometry (the rule of the geometry beat) is a pentagon: "
                          "define_pentagon, with its neighbour gaps, else define_plain",
                          kind=g["kind"], gaps_deg=g["gaps_deg"], represented=g["represented"])
        self.say(key, **words)
        self.play(FadeIn(self.define_header), FadeIn(VGroup(self.define_fan.circle, self.define_fan.origin_dot)),
                  run_time=STEP)
        self.play(LaggedStart(*[GrowFromPoint(a, self.define_fan.centre()) for a in self.define_fan.arrows],
                              lag_ratio=0.2), FadeIn(self.define_numbers), run_time=2 * STEP)
        self.play(Create(self.define_axis), run_time=STEP)
        self.play(*[Create(d) for d in self.define_drops], run_time=STEP)
        self.wait(PAUSE)

    def beat_model(self):
        self.say("model")
        self.clear_stage()
        # the words first (the caption, and the features with their importance), the symbols after them
        self.play(LaggedStart(*self.imp_bars.grow(), lag_ratio=0.15),
                  FadeIn(self.imp_numbers), FadeIn(self.imp_names), FadeIn(self.imp_title), FadeIn(self.feature_title),
                  run_time=STEP)
        self.wait(PAUSE)
        self.play(FadeIn(self.shape), run_time=STEP)
        self.play(FadeIn(self.formula), run_time=STEP)
        self.wait(PAUSE)

    def beat_train(self):
        self.say("train", k=len(self.runs))
        self.clear_stage()
        self.play(FadeIn(self.panel_heads), FadeIn(self.step_row),
                  *[FadeIn(VGroup(f.circle, f.origin_dot, f.arrows)) for f in self.fans], run_time=STEP)
        self.wait(0.6)
        for k in range(1, len(self.checkpoint_steps)):
            self.step_number.set_text(f"{self.checkpoint_steps[k]:,}")
            self.play(*[Transform(f.arrows, t[k]) for f, t in zip(self.fans, self.targets)], run_time=0.45)
        self.wait(PAUSE)

    def beat_dims(self):
        losses = [r["loss"] for r in self.runs]
        falls = all(b < a for a, b in zip(losses, losses[1:]))
        key = self.caption_rule("dims", "dims_falls" if falls else "dims_mixed",
                                "the loss strictly lower at each higher sparsity: dims_falls, else dims_mixed",
                                sparsities=[r["sparsity"] for r in self.runs], losses=losses)
        self.say(key)
        self.play(FadeOut(self.step_row), run_time=0.6)
        self.play(FadeIn(self.d_refs), FadeIn(self.d_ref_labels), FadeIn(self.d_title), run_time=STEP)
        self.play(*[grow for bars in self.d_bars for grow in bars.grow()], run_time=STEP)
        self.play(FadeIn(self.loss_rows), run_time=STEP)
        self.wait(PAUSE)

    def beat_geometry(self):
        sparse, dense = self.runs[-1], self.runs[0]
        g = self.geoms[-1]
        pairs = [(r, x) for r, x in zip(self.runs[1:-1], self.geoms[1:-1]) if x["kind"] == "antipodal"]
        if g["kind"] == "pentagon":
            D = sparse["dims_per_feature"]
            key = "pentagon_pairs" if pairs else "pentagon"
            words = dict(s=f"{sparse['sparsity']:g}", lo=f"{min(g['gaps_deg']):.0f}", hi=f"{max(g['gaps_deg']):.0f}",
                         dlo=f"{min(D):.2f}", dhi=f"{max(D):.2f}", top=len(self.geoms[0]["represented"]))
            if pairs:     # the first middle run in opposite pairs, narrated between the dense and the sparsest
                words.update(s1=f"{pairs[0][0]['sparsity']:g}", k1=len(pairs[0][1]["represented"]))
        else:
            key = "no_pentagon"
            words = dict(s=f"{sparse['sparsity']:g}", k=len(g["represented"]))
        self.caption_rule("geometry", key, "at the highest sparsity: five represented features (norm > 0.5), every "
                          "neighbour gap 72 +- 5 degrees and every D_i 0.4 +- 0.05: pentagon_pairs when a run between "
                          "the densest and the sparsest is antipodal (its panel narrated too), else pentagon; "
                          "otherwise no_pentagon",
                          kinds=[x["kind"] for x in self.geoms], gaps_deg=g["gaps_deg"],
                          dims=sparse["dims_per_feature"], dense_represented=self.geoms[0]["represented"])
        # the bars and losses go first: this caption is taller than the one before
        self.play(FadeOut(self.d_bars), FadeOut(self.d_refs), FadeOut(self.d_ref_labels), FadeOut(self.d_title),
                  FadeOut(self.loss_rows), run_time=0.6)
        self.say(key, **words)
        self.play(LaggedStart(*[FadeIn(row) for row in self.geom_labels], lag_ratio=0.25), run_time=2 * STEP)
        self.wait(PAUSE)

    def beat_collide(self):
        r, ex = self.runs[-1], self.collide["example"]
        i, j = ex["features"]
        over = ex["out"][i] > ex["x"][i] and ex["out"][j] > ex["x"][j]
        key = self.caption_rule("collide", "collide_over" if over else "collide_mixed",
                                "the example (toy_collisions: the first input of the sparsest run's data with exactly "
                                "two features on, less than 90 degrees apart, else any two): both outputs above their "
                                "inputs: collide_over, else collide_mixed",
                                features=ex["features"], x=[ex["x"][i], ex["x"][j]], out=[ex["out"][i], ex["out"][j]])
        self.say(key, s=f"{r['sparsity']:g}", i=i + 1, j=j + 1, a=f"{ex['angle_deg']:.0f}", xi=f"{ex['x'][i]:.2f}",
                 oi=f"{ex['out'][i]:.2f}", xj=f"{ex['x'][j]:.2f}", oj=f"{ex['out'][j]:.2f}",
                 gi=f"{ex['from_other'][0]:.1f}", gj=f"{ex['from_other'][1]:.1f}")
        self.clear_stage()
        self.play(FadeIn(self.collide_header),
                  FadeIn(VGroup(self.collide_fan.circle, self.collide_fan.origin_dot, self.collide_fan.arrows)),
                  FadeIn(self.collide_names), run_time=STEP)
        self.play(FadeIn(self.collide_feature_names), FadeIn(self.collide_legend),
                  *self.collide_bars.grow()[0::2], run_time=STEP)
        self.play(*self.collide_bars.grow()[1::2], FadeIn(self.collide_numbers),
                  run_time=STEP)
        self.wait(PAUSE)

    def beat_rare(self):
        c = self.collide
        pays = c["loss"] < c["keep_two_loss"]
        key = self.caption_rule("rare", "rare_pays" if pays else "rare_costs",
                                "on the sparsest run's evaluation inputs, the pentagon's loss below the loss of keeping "
                                "features 1 and 2 exactly and dropping the rest: rare_pays, else rare_costs",
                                loss=c["loss"], keep_two_loss=c["keep_two_loss"], inputs=c["inputs"])
        count = c["inputs"]["2+"]
        self.say(key, count=f"{count:,}", batch=f"{c['batch']:,}",
                 one_in=f"{round(c['batch'] / count, -1):,.0f}" if count else "∞",
                 cost=self.rare_shares.labels[2], times=f"{c['keep_two_loss'] / c['loss']:.0f}")
        self.clear_stage()
        self.play(FadeIn(self.rare_header), FadeIn(self.rare_table), run_time=STEP)
        self.play(FadeIn(self.same_title), FadeIn(self.same_chart.labels), run_time=STEP)
        self.play(*self.same_chart.grow(), FadeIn(self.same_chart.numbers), run_time=STEP)
        self.wait(PAUSE)
