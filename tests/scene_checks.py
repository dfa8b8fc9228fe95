"""Checks shared by the scene tests: run a scene without rendering and look at what is on screen per beat.

Used by the attention-chapter scene tests (token_embedding, positional_encoding, add_norm).
"""

from __future__ import annotations

import json
import os

import numpy as np
from manim import MathTex, Rectangle, SingleStringMathTex, VMobject, tempconfig
from manim.utils.exceptions import EndSceneEarlyException

from scenes import style
from scenes.components import Label, NumberText, inside_safe_area

TEXT_TYPES = (Label, NumberText, MathTex, SingleStringMathTex)


def box(m) -> tuple:
    return tuple(np.round([m.get_left()[0], m.get_bottom()[1], m.get_right()[0], m.get_top()[1]], 4))


def overlap(a, b, tol=0.02) -> bool:
    return a[0] + tol < b[2] and b[0] + tol < a[2] and a[1] + tol < b[3] and b[1] + tol < a[3]


def visible(m) -> bool:
    return isinstance(m, VMobject) and m.has_points() and (
        m.get_fill_opacity() > 0.01 or (m.stroke_width > 0 and m.get_stroke_opacity() > 0.01))


def snapshot(scene) -> dict:
    """Texts (kind, text, font size, box) and visible shapes (kind, box, filled) on screen now."""
    texts, shapes = [], []

    def walk(m):
        if isinstance(m, TEXT_TYPES):
            if any(visible(x) for x in m.get_family()):
                texts.append(m)
            return
        if visible(m):
            shapes.append(m)
        for sub in m.submobjects:
            walk(sub)

    for m in scene.mobjects:
        walk(m)
    return {
        "texts": [(type(t).__name__, getattr(t, "text", "") or "", t.font_size, box(t)) for t in texts],
        "shapes": [(type(s).__name__, box(s), isinstance(s, Rectangle) and s.get_fill_opacity() > 0.01)
                   for s in shapes],
        "outside": [type(m).__name__ + ":" + str(getattr(m, "text", "")) for m in texts + shapes
                    if not inside_safe_area(m)],
    }


def run_dry(scene_cls, params: dict, tmp, section: str | None = None):
    """Play the whole scene (or up to the end of one beat) without rendering; returns the scene and its
    per-beat snapshots (taken at the end of every beat)."""

    class Snapshots(scene_cls):
        def setup(self):
            super().setup()
            self.snapshots = {}

        def beat(self, name):
            if self.beats_done:
                self.snapshots[self.section_names[self.beats_done - 1]] = snapshot(self)
            super().beat(name)

        def construct(self):
            try:
                super().construct()
            except EndSceneEarlyException:
                raise
            self.snapshots[self.section_names[-1]] = snapshot(self)

    os.environ["GPT_LECTURE_PARAMS"] = json.dumps(params)
    if section:
        os.environ["GPT_LECTURE_SECTION"] = section
    try:
        with tempconfig({"dry_run": True, "quality": "low_quality", "disable_caching": True,
                         "tex_dir": str(tmp), "text_dir": str(tmp), "media_dir": str(tmp), "verbosity": "ERROR"}):
            scene = Snapshots(skip_animations=True)
            scene.render()
    finally:
        os.environ.pop("GPT_LECTURE_PARAMS", None)
        os.environ.pop("GPT_LECTURE_SECTION", None)
    return scene


def assert_legible(shots: dict, lang: str) -> None:
    """Every beat: inside the title-safe area, text at the legibility floor, no text on text or on a bar."""
    for beat, shot in shots.items():
        assert not shot["outside"], f"{lang} {beat}: outside the title-safe area: {shot['outside']}"
        for kind, text, size, _ in shot["texts"]:
            floor = style.SMALL if kind in ("Label", "NumberText") else style.MATH_FONT_SIZE
            assert size >= floor - 1e-6, f"{lang} {beat}: {kind} {text!r} at font size {size:.1f}"
        texts = shot["texts"]
        for i, a in enumerate(texts):
            for b in texts[i + 1:]:
                assert not overlap(a[3], b[3]), f"{lang} {beat}: {a[:2]} overlaps {b[:2]}"
        bars = [s for s in shot["shapes"] if s[0] == "Rectangle" and s[2]]
        for t in texts:
            for s in bars:
                assert not overlap(t[3], s[1]), f"{lang} {beat}: {t[:2]} lies on a filled box"


def assert_same_layout(en: dict, zh: dict) -> None:
    assert list(en) == list(zh)
    for beat in en:
        assert en[beat]["shapes"] == zh[beat]["shapes"], beat
        assert len(en[beat]["texts"]) == len(zh[beat]["texts"]), beat


def texts_of(group) -> list[str]:
    return [m.text for m in group if isinstance(m, NumberText)]


def play_until_section_ends(scene, construct):
    try:
        construct(scene)
    except EndSceneEarlyException:
        pass
    scene.renderer.update_frame(scene)
