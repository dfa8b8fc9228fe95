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
from manim import (DOWN, LEFT, RIGHT, Create, DashedLine, FadeIn, FadeOut, GrowFromEdge, GrowFromPoint, LaggedStart,
                   Rectangle, Transform, VGroup)

from model.analysis.superposition import toy_collisions
from model.superposition_record import load as load_snapshots
from scenes import style
from scenes.components import Label, NumberText
from scenes.components.sums import CountSum, RoundedPercents
from scenes.components.superposition import VectorFan
from scenes.lecture import LectureScene
from scenes.style import FEATURE_COLOURS, MUTED, SHARED, TEXT, Strings

DATA_FILES = ("model/snapshots/superposition.json",)   # read through load_snapshots: render.py keys on it

S = SHARED | Strings({
    "title": {"en": "Superposition in a toy model", "zh": "玩具模型里的叠加"},
    "subtitle": {"en": "Five features, two dimensions (Elhage et al., 2022)", "zh": "五个特征，两个维度（Elhage 等，2022）"},
    "note": {"en": "The numbers: our own recorded training runs of this toy model.",
             "zh": "数字来自我们自己记录的这个玩具模型的训练。"},
    # the definition, at the chapter's first use of the word, on the sparsest run's own arrows (a rule: pentagon)
    "define_pentagon": {
        "en": "Superposition: more features than dimensions, one direction each.\n"
              "Here 5 features share 2 dimensions, {lo}\u2013{hi}\u00b0 apart, not 90\u00b0:\n"
              "reading feature 1 also picks up part of its neighbours (dashed).",
        "zh": "叠加：特征比维度多，每个特征存放在自己的方向上。\n"
              "这里 5 个特征共用 2 个维度，相隔 {lo}\u2013{hi}\u00b0，不是 90\u00b0：\n"
              "沿特征 1 的箭头读数，也会读到相邻特征的一部分（虚线投影）。",
        "say_en": "Superposition means more features than dimensions, each stored along its own "
                  "direction. Here five features share two dimensions as a pentagon: neighbouring arrows are "
                  "{lo} to {hi} degrees apart, not ninety. So reading feature 1 along its arrow also picks up "
                  "part of its two neighbours: the dashed lines drop their tips onto feature 1's direction.",
        "say_zh": "叠加，就是特征比维度多，每个特征存放在自己的方向上。这里五个特征共用两个维度，排成五边形："
                  "相邻的箭头相隔 {lo} 到 {hi} 度，不是 90 度。所以沿特征 1 的箭头读数，也会读到两个相邻特征的"
                  "一部分：虚线把它们的箭头尖投到特征 1 的方向上。"},
    "define_plain": {
        "en": "Superposition: more features than dimensions, one direction each,\n"
              "not quite perpendicular, so reading one picks up some of the others.\n"
              "Here: the sparsest run, {k} of the 5 features with a direction.",
        "zh": "叠加：特征比维度多，每个特征存放在自己的方向上，\n"
              "这些方向并不完全垂直，所以读一个特征时也会读到一点别的特征。\n"
              "这里是最稀疏那次运行的箭头：5 个特征中有 {k} 个得到方向。"},
    "five_in_two": {"en": "{n} features, {m} dimensions", "zh": "{n} 个特征，{m} 个维度"},
    "model": {"en": "It squeezes 5 features x into 2 numbers (W x), then back (W\u1d40),\n"
                    "adds a bias b, then ReLU: every negative number becomes 0.\n"
                    "Each matters 0.9\u00d7 the one before; each is 0 with probability S.",
              "zh": "模型把 5 个特征 x 压成 2 个数（W x），再映射回去（W\u1d40），\n"
                    "加上偏置 b，再用 ReLU：把每个负数变成 0。\n"
                    "每个特征的重要性是前一个的 0.9 倍；每个特征以概率 S（稀疏度）为 0。",
              "say_en": "The model squeezes five features into two numbers, maps those two back out to five, adds "
                        "a bias, and applies ReLU, which turns every negative number into zero. On the bars: each "
                        "feature matters 0.9 times as much as the one before, and each is zero with probability S, "
                        "the sparsity.",
              "say_zh": "模型把五个特征压成两个数，再把这两个数映射回五个，加上偏置，再用 ReLU：把每个负数变成零。"
                        "柱子是重要性：每个特征是前一个的 0.9 倍；每个特征以概率 S 为零，S 就是稀疏度。"},
    "importance": {"en": "importance", "zh": "重要性"},
    "feature": {"en": "feature", "zh": "特征"},
    "shape": {"en": "n = {n} features, m = {m} dimensions, W: {m} \u00d7 {n}",
              "zh": "n = {n} 个特征，m = {m} 个维度，W：{m} \u00d7 {n}"},
    "train": {"en": "W's five columns in the plane as training runs,\n"
                    "at {k} sparsities, from the recorded checkpoints.",
              "zh": "训练过程中 W 的五列在平面上的样子，\n{k} 个稀疏度，取自记录的检查点。"},
    "sparsity": {"en": "S = {s}", "zh": "S = {s}"},
    "step": {"en": "step", "zh": "第"},
    "of_steps": {"en": "of {steps}", "zh": "步（共 {steps}）"},
    "dims_falls": {"say_en": "Under each panel, one bar per feature: how much of a dimension that feature gets. A bar "
                             "up to the top line is a whole dimension to itself; the line at 0.4 is two fifths. Each "
                             "loss is measured on its own run's inputs, and sparser inputs hold fewer features to "
                             "rebuild, so the loss falls from left to right: four different tests, not one contest.",
                   "say_zh": "每个面板下面，每个特征一根柱：它分到多少个维度。柱子顶到上面那条线，就是独占一整个维度；"
                             "0.4 那条线是五分之二。每个损失都在它自己那次运行的输入上测量，越稀疏，要还原的特征越少，"
                             "所以损失从左到右下降：这是四场不同的测试，不是一场比赛。",
                   "en": "D\u1d62: the share of a dimension feature i gets (bars; 1 = a whole one).\n"
                         "Each loss is on its own run's inputs; it falls as they get sparser.",
                   "zh": "D\u1d62：特征 i 分到的维度份额（柱；1 = 一整个维度）。\n"
                         "每个损失都在各自运行的输入上测量：越稀疏越低（不是同一场比赛）。"},
    "dims_mixed": {"say_en": "Under each panel, one bar per feature: how much of a dimension that feature gets. A bar "
                             "up to the top line is a whole dimension to itself; the line at 0.4 is two fifths. Each "
                             "loss is measured on its own run's inputs, and here it does not fall steadily with "
                             "sparsity.",
                   "say_zh": "每个面板下面，每个特征一根柱：它分到多少个维度。柱子顶到上面那条线，就是独占一整个维度；"
                             "0.4 那条线是五分之二。每个损失都在它自己那次运行的输入上测量，这里并不随稀疏度稳定下降。",
                   "en": "D\u1d62: the share of a dimension feature i gets (bars; 1 = a whole one).\n"
                         "Each loss is on its own run's inputs; here it does not fall steadily.",
                   "zh": "D\u1d62：特征 i 分到的维度份额（柱；1 = 一整个维度）。\n"
                         "每个损失都在各自运行的输入上测量：这里并不随稀疏度稳定下降。"},
    "loss": {"en": "loss", "zh": "损失"},
    "geom_orthogonal": {"en": "{k} at {a}°", "zh": "{k} 个，{a}°"},
    "geom_antipodal": {"en": "{k} in opposite pairs", "zh": "{k} 个，两两相反"},
    "geom_pentagon": {"en": "pentagon", "zh": "五边形"},
    "geom_other": {"en": "{k} represented", "zh": "表示了 {k} 个"},
    "gaps": {"en": "{lo}\u2013{hi}° apart", "zh": "相隔 {lo}\u2013{hi}°"},
    "gap": {"en": "{a}° apart", "zh": "相隔 {a}°"},
    "pentagon": {"en": "At S = {s} all five share the plane, {lo}\u2013{hi}° apart (pentagon: 72°),\n"
                       "D\u1d62 {dlo} to {dhi} (2/5 = 0.4). Dense: only the top {top} get a direction.",
                 "zh": "S = {s} 时，五个特征共享平面：相隔 {lo}\u2013{hi}°（五边形：72°），\n"
                       "D\u1d62 在 {dlo} 到 {dhi} 之间（2/5 = 0.4）。稠密时只有前 {top} 个有方向。"},
    # why sparsity allows it: a collision in the sparsest run's own data (model.analysis.superposition toy_collisions)
    "collide_over": {
        "en": "Why sparsity allows it: features {i} and {j}, {a}\u00b0 apart, on together\n"
              "in one input of S = {s}'s data. Each reads part of the other:\n"
              "{xi} comes out {oi}, {xj} comes out {oj}.",
        "zh": "稀疏为什么让叠加可行：在 S = {s} 自己的数据里，\n"
              "相隔 {a}\u00b0 的特征 {i} 和 {j} 同时出现。各自读到对方的一部分：\n"
              "{xi} 输出成 {oi}，{xj} 输出成 {oj}。",
        "say_en": "Why does sparsity allow superposition? Here is one input from the sparsest run's own data with "
                  "two features on together: features {i} and {j}, whose arrows are {a} degrees apart. The grey "
                  "bars are the input, the coloured bars what the model gives back. Each feature reads part of the "
                  "other: {xi} comes out as {oi}, and {xj} as {oj}, both too big by what the other adds, about "
                  "{gi} and {gj}.",
        "say_zh": "稀疏为什么让叠加可行？这是最稀疏那次运行自己的数据里的一个输入，有两个特征同时出现：特征 {i} 和 {j}，"
                  "它们的箭头相隔 {a} 度。灰色柱是输入，彩色柱是模型还原的输出。每个特征都读到了对方的一部分："
                  "{xi} 输出成 {oi}，{xj} 输出成 {oj}，都大了，多出的约 {gi} 和 {gj} 来自对方。"},
    "collide_mixed": {
        "en": "Why sparsity allows it: features {i} and {j}, {a}\u00b0 apart, on together\n"
              "in one input of S = {s}'s data. They interfere:\n"
              "{xi} comes out {oi}, {xj} comes out {oj}.",
        "zh": "稀疏为什么让叠加可行：在 S = {s} 自己的数据里，\n"
              "相隔 {a}\u00b0 的特征 {i} 和 {j} 同时出现。它们互相干扰：\n"
              "{xi} 输出成 {oi}，{xj} 输出成 {oj}。"},
    "collide_header": {"en": "one input of S = {s}'s data: features {i} and {j} on",
                       "zh": "S = {s} 数据中的一个输入：特征 {i} 和 {j} 同时出现"},
    "input": {"en": "input x", "zh": "输入 x"},
    "output": {"en": "output x\u2032", "zh": "输出 x\u2032"},
    "rare_pays": {
        "en": "Two or more on together: {count} of {batch} inputs, about 1 in {one_in}.\n"
              "They carry {cost} of the loss, yet on these same inputs the pentagon\n"
              "loses {times}\u00d7 less than keeping features 1, 2 exactly and dropping 3\u20135.",
        "zh": "两个以上特征同时出现：{batch} 个输入中只有 {count} 个，约 {one_in} 个里 1 个。\n"
              "它们占了损失的 {cost}；但在同样的输入上，五边形的损失只有\n"
              "精确保留特征 1、2、丢掉 3\u20135 的约 {times} 分之一。",
        "say_en": "How often does that happen? The table counts the {batch} inputs the loss was measured on, by how "
                  "many features are on: two or more in only {count} of them, about one in {one_in}. Those few "
                  "carry {cost} of the loss. Yet on these same inputs, the bars compare the pentagon with keeping "
                  "features 1 and 2 exactly and dropping 3 to 5: the pentagon loses about {times} times less. "
                  "Collisions are rare, so sharing directions pays.",
        "say_zh": "这种碰撞多常见？表格把测量损失用的 {batch} 个输入按同时出现的特征数来数：两个以上的只有 {count} 个，"
                  "约 {one_in} 个里一个。这少数几个占了损失的 {cost}。但在同样的输入上，下面的条把五边形和“精确保留"
                  "特征 1、2、丢掉 3 到 5”相比：五边形的损失只有约 {times} 分之一。碰撞很少，所以共用方向划算。"},
    "rare_costs": {
        "en": "Two or more on together: {count} of {batch} inputs, about 1 in {one_in}.\n"
              "They carry {cost} of the loss; on these same inputs keeping features 1, 2\n"
              "exactly and dropping 3\u20135 would lose less than this model.",
        "zh": "两个以上特征同时出现：{batch} 个输入中只有 {count} 个，约 {one_in} 个里 1 个。\n"
              "它们占了损失的 {cost}；在同样的输入上，精确保留特征 1、2、\n丢掉 3\u20135，损失反而比这个模型小。"},
    "rare_header": {"en": "S = {s}: the {batch} inputs its loss is measured on",
                    "zh": "S = {s}：测量损失用的 {batch} 个输入"},
    "on_title": {"en": "features on", "zh": "同时出现的特征"},
    "on_none": {"en": "none", "zh": "没有"},
    "on_one": {"en": "one", "zh": "一个"},
    "on_more": {"en": "two or more", "zh": "两个以上"},
    "row_inputs": {"en": "inputs", "zh": "输入数"},
    "row_loss": {"en": "share of the loss", "zh": "占损失"},
    "same_inputs": {"en": "loss on these same inputs", "zh": "在同样输入上的损失"},
    "bar_pentagon": {"en": "pentagon: 5 in 2 dims", "zh": "五边形：5 个共用 2 维"},
    "bar_keep_two": {"en": "keep 1, 2; drop 3\u20135", "zh": "保留 1、2，丢掉 3\u20135"},
    "no_pentagon": {"en": "At S = {s}, {k} of the five features get a direction:\n"
                          "no pentagon in this run.",
                    "zh": "S = {s} 时，五个特征中有 {k} 个得到方向：\n这次运行没有形成五边形。"},
})

# Each beat's short title, its chapter name (style.BEAT_TITLES: names what the beat shows, no property of the numbers).
BEATS = style.BEAT_TITLES | Strings({
    "define":    {"en": "What superposition is", "zh": "什么是叠加"},
    "model":     {"en": "The toy model", "zh": "玩具模型"},
    "train":     {"en": "Training at each sparsity", "zh": "各稀疏度下的训练"},
    "dims":      {"en": "Dimensions per feature", "zh": "每个特征占的维度"},
    "geometry":  {"en": "The geometry", "zh": "几何形状"},
    "collide":   {"en": "Two features at once", "zh": "两个特征同时出现"},
    "rare":      {"en": "How rare collisions are", "zh": "碰撞有多少"},
})

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

    def title_note(self) -> str:
        return self.s("note")     # the seeds, steps and copies are in the manifest (values["runs"], the recipe)

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
        self.imp_bars = VGroup(*[Rectangle(width=0.7, height=v * unit, stroke_width=0, fill_color=FEATURE_COLOURS[i],
                                           fill_opacity=0.9).move_to([x, base + v * unit / 2, 0])
                                 for i, (v, x) in enumerate(zip(r["importance"], xs))])
        self.imp_numbers = VGroup(*[NumberText(f"{v:.2f}", style.SMALL, FEATURE_COLOURS[i]).place(0, 0)
                                    for i, v in enumerate(r["importance"])])
        for num, bar in zip(self.imp_numbers, self.imp_bars):
            num.place(0, bar.get_top()[1] + 0.15)
            num.shift(RIGHT * (bar.get_center()[0] - num.get_center()[0]))
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
            bars = VGroup()
            for i, D in enumerate(r["dims_per_feature"]):
                h = max(D * BAR_UNIT, 1e-3)
                bars.add(Rectangle(width=0.34, height=h, stroke_width=0, fill_color=FEATURE_COLOURS[i],
                                   fill_opacity=0.9).move_to([x + (i - 2) * 0.45, BARS_BASE + h / 2, 0]))
            self.d_bars.add(bars)
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
        self.collide_bars, self.collide_numbers, self.collide_feature_names = VGroup(), VGroup(), VGroup()
        for i, (xv, ov, x) in enumerate(zip(ex["x"], ex["out"], COLLIDE_XS)):
            for value, dx, colour in ((xv, -0.3, MUTED), (ov, 0.3, FEATURE_COLOURS[i])):
                h = max(value * COLLIDE_UNIT, 1e-3)
                self.collide_bars.add(Rectangle(width=0.38, height=h, stroke_width=0, fill_color=colour,
                                                fill_opacity=0.9).move_to([x + dx, COLLIDE_BASE + h / 2, 0]))
                if value > 0:
                    num = NumberText(f"{value:.2f}", style.SMALL, colour).place(0, COLLIDE_BASE + h + 0.15)
                    num.shift(RIGHT * (x + dx - num.get_center()[0]))
                    self.collide_numbers.add(num)
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
        xs, label_x = [-0.4, 2.2, 4.8], -1.9
        ys = {"head": 2.2, "inputs": 1.6, "loss": 1.0}
        self.rare_table = VGroup()
        for key, y, colour in (("on_title", ys["head"], MUTED), ("row_inputs", ys["inputs"], MUTED),
                               ("row_loss", ys["loss"], MUTED)):
            lab = Label(self.s(key), font_size=style.SMALL, color=colour)
            lab.shift(RIGHT * (label_x - lab.get_right()[0])).on_baseline(y)
            self.rare_table.add(lab)
        for x, head, count, share in zip(xs, ("on_none", "on_one", "on_more"), counts.labels, shares.labels):
            colour = TEXT if head == "on_more" else MUTED
            h = Label(self.s(head), font_size=style.SMALL, color=colour)
            h.shift(RIGHT * (x - h.get_center()[0])).on_baseline(ys["head"])
            n = NumberText(count, style.LABEL, colour).place(0, ys["inputs"])
            n.shift(RIGHT * (x - n.get_center()[0]))
            p = NumberText(share, style.LABEL, colour).place(0, ys["loss"])
            p.shift(RIGHT * (x - p.get_center()[0]))
            self.rare_table.add(h, n, p)
        self.rare_counts, self.rare_shares = counts, shares
        # the same inputs, two losses: the pentagon's and keeping the top two exactly
        values = [c["loss"], c["keep_two_loss"]]
        left = -0.7                                    # the bars' left end; their names end left of it
        unit = 4.4 / max(values)
        self.same_title = Label(self.s("same_inputs"), font_size=style.SMALL, color=MUTED)
        self.same_title.shift(RIGHT * (left - 0.2 - self.same_title.get_right()[0])).on_baseline(0.25)
        self.same_rows = VGroup()
        for k, (key, v, colour) in enumerate((("bar_pentagon", values[0], FEATURE_COLOURS[0]),
                                              ("bar_keep_two", values[1], MUTED))):
            y = -0.35 - 0.6 * k
            name = Label(self.s(key), font_size=style.SMALL, color=TEXT)
            name.shift(RIGHT * (left - 0.2 - name.get_right()[0])).on_baseline(y)
            bar = Rectangle(width=max(v * unit, 1e-3), height=0.28, stroke_width=0, fill_color=colour,
                            fill_opacity=0.9)
            bar.move_to([left + v * unit / 2, y + 0.1, 0])
            num = NumberText(f"{v:.5f}", style.SMALL, TEXT, align="left").place(left + v * unit + 0.15, y)
            self.same_rows.add(VGroup(name, bar, num))
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
        self.play(LaggedStart(*[GrowFromEdge(b, DOWN) for b in self.imp_bars], lag_ratio=0.15),
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
        self.play(*[GrowFromEdge(b, DOWN) for bars in self.d_bars for b in bars], run_time=STEP)
        self.play(FadeIn(self.loss_rows), run_time=STEP)
        self.wait(PAUSE)

    def beat_geometry(self):
        sparse, dense = self.runs[-1], self.runs[0]
        g = self.geoms[-1]
        if g["kind"] == "pentagon":
            D = sparse["dims_per_feature"]
            key = "pentagon"
            words = dict(s=f"{sparse['sparsity']:g}", lo=f"{min(g['gaps_deg']):.0f}", hi=f"{max(g['gaps_deg']):.0f}",
                         dlo=f"{min(D):.2f}", dhi=f"{max(D):.2f}", top=len(self.geoms[0]["represented"]))
        else:
            key = "no_pentagon"
            words = dict(s=f"{sparse['sparsity']:g}", k=len(g["represented"]))
        self.caption_rule("geometry", key, "at the highest sparsity: five represented features (norm > 0.5), every "
                          "neighbour gap 72 +- 5 degrees and every D_i 0.4 +- 0.05: pentagon, else no_pentagon",
                          kinds=[x["kind"] for x in self.geoms], gaps_deg=g["gaps_deg"],
                          dims=sparse["dims_per_feature"], dense_represented=self.geoms[0]["represented"])
        self.say(key, **words)
        self.play(FadeOut(self.d_bars), FadeOut(self.d_refs), FadeOut(self.d_ref_labels), FadeOut(self.d_title),
                  FadeOut(self.loss_rows), run_time=0.6)
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
                  *[GrowFromEdge(b, DOWN) for b in self.collide_bars[0::2]], run_time=STEP)
        self.play(*[GrowFromEdge(b, DOWN) for b in self.collide_bars[1::2]], FadeIn(self.collide_numbers),
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
        self.play(FadeIn(self.same_title), *[FadeIn(row[0]) for row in self.same_rows], run_time=STEP)
        self.play(*[GrowFromEdge(row[1], LEFT) for row in self.same_rows],
                  *[FadeIn(row[2]) for row in self.same_rows], run_time=STEP)
        self.wait(PAUSE)
