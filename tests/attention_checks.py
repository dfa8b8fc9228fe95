"""Helpers shared by the queries/keys and causal-mask scene tests: the head recomputed independently, and a
scene runner that records what is on screen at every caption and at the end of every beat."""

from __future__ import annotations

import json
import math
import os

import numpy as np
from manim import MathTex, SingleStringMathTex, VMobject, tempconfig

from scenes.components import Label, NumberText, inside_safe_area

TEXT_TYPES = (Label, NumberText, MathTex, SingleStringMathTex)


def recompute_head(gpt, prompt: str, layer: int, head: int) -> dict:
    """The head's q, k, scores, scaled, masked and weights, written out again from the raw weights."""
    c = gpt.config
    tr = gpt.trace(prompt)
    x = np.asarray(tr["layers"][layer]["resid_pre"], dtype=np.float64)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    x_hat = (x - mean) / np.sqrt(var + c.layer_norm_epsilon) * gpt.p(f"h.{layer}.ln_1.weight") \
        + gpt.p(f"h.{layer}.ln_1.bias")
    W, b = gpt.p(f"h.{layer}.attn.c_attn.weight"), gpt.p(f"h.{layer}.attn.c_attn.bias")
    d, dh = c.n_embd, c.d_head
    cols = slice(head * dh, (head + 1) * dh)
    W_q, W_k = W[:, :d][:, cols], W[:, d:2 * d][:, cols]
    b_q, b_k = b[:d][cols], b[d:2 * d][cols]
    Q, K = x_hat @ W_q + b_q, x_hat @ W_k + b_k
    scores = Q @ K.T
    scaled = scores / math.sqrt(dh)
    T = len(Q)
    masked = scaled.copy()
    masked[np.triu_indices(T, 1)] = -np.inf
    e = np.exp(masked - masked.max(-1, keepdims=True))
    return {"trace": tr, "x_hat": x_hat, "W_q": W_q, "W_k": W_k, "b_q": b_q, "b_k": b_k, "Q": Q, "K": K,
            "scores": scores, "scaled": scaled, "masked": masked, "weights": e / e.sum(-1, keepdims=True)}


def nan_for_none(rows) -> np.ndarray:
    """A manifest grid with null for −∞, back as numbers."""
    return np.array([[-np.inf if v is None else v for v in row] for row in rows], dtype=np.float64)


def box(m) -> tuple:
    return tuple(np.round([m.get_left()[0], m.get_bottom()[1], m.get_right()[0], m.get_top()[1]], 4))


def overlap(a, b, tol=0.02) -> bool:
    return a[0] + tol < b[2] and b[0] + tol < a[2] and a[1] + tol < b[3] and b[1] + tol < a[3]


def recording(scene_class):
    """A subclass that snapshots the screen after every caption and at the end of every beat."""

    class Recorded(scene_class):
        def setup(self):
            super().setup()
            self.snapshots = {}

        def beat(self, name):
            if self.beats_done:
                self.snapshot(self.section_names[self.beats_done - 1] + ":end")
            super().beat(name)

        def say(self, strings, key, **values):
            super().say(strings, key, **values)
            self.snapshot(f"{self.section_names[self.beats_done - 1]}:{key}")

        def construct(self):
            super().construct()
            self.snapshot(self.section_names[-1] + ":end")

        def snapshot(self, moment):
            texts, shapes = [], []

            def visible(m):
                return isinstance(m, VMobject) and m.has_points() and (
                    m.get_fill_opacity() > 0.01 or (m.stroke_width > 0 and m.get_stroke_opacity() > 0.01))

            def walk(m):
                if isinstance(m, TEXT_TYPES):
                    if any(visible(x) for x in m.get_family()):
                        texts.append(m)
                    return
                if visible(m):
                    shapes.append(m)
                for sub in m.submobjects:
                    walk(sub)

            for m in self.mobjects:
                if isinstance(m, VMobject):
                    walk(m)
            self.snapshots[moment] = {
                "texts": [(type(t).__name__, getattr(t, "text", "") or "", t.font_size, box(t)) for t in texts],
                "shapes": [(type(s).__name__, box(s)) for s in shapes],
                "outside": [type(m).__name__ + ":" + str(getattr(m, "text", "")) for m in texts + shapes
                            if not inside_safe_area(m)],
            }

    return Recorded


def run_dry(scene_class, params: dict, tmp):
    """Construct the whole scene without rendering frames; returns the scene (its values and its mobjects)."""
    os.environ["GPT_LECTURE_PARAMS"] = json.dumps(params)
    try:
        with tempconfig({"dry_run": True, "quality": "low_quality", "disable_caching": True, "tex_dir": str(tmp),
                         "text_dir": str(tmp), "media_dir": str(tmp), "verbosity": "ERROR", "progress_bar": "none"}):
            scene = recording(scene_class)(skip_animations=True)
            scene.render()
    finally:
        del os.environ["GPT_LECTURE_PARAMS"]
    return scene


def check_legible(shots: dict, lang: str, floor_label: float, floor_math: float) -> None:
    """Inside the title-safe area, at or above the type floor, and no two texts on top of each other."""
    for moment, shot in shots.items():
        assert not shot["outside"], f"{lang} {moment}: outside the title-safe area: {shot['outside']}"
        for kind, text, size, _ in shot["texts"]:
            floor = floor_label if kind in ("Label", "NumberText") else floor_math
            assert size >= floor - 1e-6, f"{lang} {moment}: {kind} {text!r} at font size {size:.1f}"
        texts = shot["texts"]
        for i, a in enumerate(texts):
            for b in texts[i + 1:]:
                assert not overlap(a[3], b[3]), f"{lang} {moment}: {a[:2]} overlaps {b[:2]}"
