"""Checks shared by the scene tests: run a scene without rendering and look at what is on screen per beat.

Used by every scene test; attention_checks.py adds the attention head recomputed from the raw weights.
"""

from __future__ import annotations

import json
import os

import numpy as np
from manim import MathTex, Rectangle, SingleStringMathTex, VMobject, tempconfig
from manim.utils.exceptions import EndSceneEarlyException

from scenes import style
from layout_checks import assert_layout, layout_facts
from scenes.components import AttentionGrid, Label, NumberText, TokenChip, bounds, inside_safe_area

TEXT_TYPES = (Label, NumberText, MathTex, SingleStringMathTex)


def box(m) -> tuple:
    """(left, bottom, right, top), rounded to 1e-4."""
    return tuple(np.round(bounds(m), 4))


def overlap(a, b, tol=0.02) -> bool:
    return a[0] + tol < b[2] and b[0] + tol < a[2] and a[1] + tol < b[3] and b[1] + tol < a[3]


def visible(m) -> bool:
    return isinstance(m, VMobject) and m.has_points() and (
        m.get_fill_opacity() > 0.01 or (m.stroke_width > 0 and m.get_stroke_opacity() > 0.01))


def filled(m) -> bool:
    return isinstance(m, Rectangle) and m.get_fill_opacity() > 0.01


def area(a) -> float:
    return max(0.0, a[2] - a[0]) * max(0.0, a[3] - a[1])


def intersection(a, b) -> tuple:
    return max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])


def snapshot(scene) -> dict:
    """Texts (kind, text, font size, box) and visible shapes (kind, box, filled) on screen now."""
    texts, shapes, ordered = [], [], []     # ordered: what is drawn, in drawing order (layout_checks)
    phrases, count = [], [0]                # per text: the phrase (a VGroup marked `phrase`) it is part of, or -1

    def walk(m, phrase=-1):
        if getattr(m, "phrase", False):
            count[0] += 1
            phrase = count[0]
        if isinstance(m, TEXT_TYPES):
            if any(visible(x) for x in m.get_family()):
                texts.append(m)
                phrases.append(phrase)
                ordered.append(("text", m))
            return
        if visible(m):
            shapes.append(m)
            ordered.append(("shape", m))
        elif isinstance(m, (TokenChip, AttentionGrid)) or getattr(m, "key_colours", None):
            ordered.append(("group", m))
        for sub in m.submobjects:
            walk(sub, phrase)

    for m in scene.mobjects:
        walk(m)
    return {**layout_facts(ordered), "phrases": phrases,
        "texts": [(type(t).__name__, getattr(t, "text", "") or "", t.font_size, box(t)) for t in texts],
        "shapes": [(type(s).__name__, box(s), filled(s), s.get_fill_color().to_hex() if filled(s) else None)
                   for s in shapes],
        "outside": [type(m).__name__ + ":" + str(getattr(m, "text", "")) for m in texts + shapes
                    if not inside_safe_area(m)],
    }


def run_dry(scene_cls, params: dict, tmp, section: str | None = None, captions: bool = False, frames: bool = True):
    """Play the whole scene (or up to the end of one beat) without rendering; returns the scene and its
    snapshots: one at the end of every beat, keyed by the beat's name; with captions, keyed "beat:end",
    plus one after every caption, keyed "beat:caption key". With frames=False the renderer does not even draw
    the still frames manim draws between skipped animations (nothing here looks at pixels): about a sixth
    cheaper."""

    class Snapshots(scene_cls):
        def setup(self):
            super().setup()
            self.snapshots = {}

        def beat_ends(self, index):
            name = self.section_names[index]
            self.snapshots[f"{name}:end" if captions else name] = snapshot(self)

        def beat(self, name):
            if self.beats_done:
                self.beat_ends(self.beats_done - 1)
            super().beat(name)

        def say(self, key, **values):
            super().say(key, **values)
            if captions:
                self.snapshots[f"{self.section_names[self.beats_done - 1]}:{key}"] = snapshot(self)

        def construct(self):
            super().construct()
            self.beat_ends(len(self.section_names) - 1)
            self.clip_end = float(self.renderer.time)

    os.environ["GPT_LECTURE_PARAMS"] = json.dumps(params)
    if section:
        os.environ["GPT_LECTURE_SECTION"] = section
    try:
        with tempconfig({"dry_run": True, "quality": "low_quality", "disable_caching": True,
                         "tex_dir": str(tmp), "text_dir": str(tmp), "media_dir": str(tmp), "verbosity": "ERROR",
                         "progress_bar": "none"}):
            scene = Snapshots(skip_animations=True)
            if not frames:   # no still frames, and so no need to sort what moves from what stands still
                scene.renderer.update_frame = scene.renderer.save_static_frame_data = lambda *args, **kwargs: None
                scene.get_moving_and_static_mobjects = lambda animations: ([], [])
            scene.render()
    finally:
        os.environ.pop("GPT_LECTURE_PARAMS", None)
        os.environ.pop("GPT_LECTURE_SECTION", None)
    return scene


# What a scene allows on top of the common rules (assert_legible): a number in its own cell of a grid or matrix
# (text_in_cells), or, stricter, no text touching even an outlined box (unfilled_boxes).
LEGIBILITY = {
    "softmax_temperature": {"unfilled_boxes": True},
    "architecture": {"text_in_cells": True},           # the unembedding's W_E entries in their cells
    "queries_keys": {"text_in_cells": True},
    "causal_mask": {"text_in_cells": True},
    "values_update": {"text_in_cells": True},
    "multi_head": {"text_in_cells": True},
    "mlp_steps": {"text_in_cells": True},
    "mlp_fact": {"text_in_cells": True},
}


def assert_legible(shots: dict, lang: str, text_in_cells: bool = False, unfilled_boxes: bool = False) -> None:
    """Every beat: inside the title-safe area, text at the legibility floor, no text on text or on a bar, and the
    layout checks of tests/layout_checks.py (chips, points, run-together text, contrast, keys, framed lines).
    With text_in_cells, a text on filled boxes of a single colour that cover (most of) it is fine; with
    unfilled_boxes, no text may touch an outlined Rectangle either."""
    for beat, shot in shots.items():
        assert not shot["outside"], f"{lang} {beat}: outside the title-safe area: {shot['outside']}"
        for kind, text, size, _ in shot["texts"]:
            floor = style.SMALL if kind in ("Label", "NumberText") else style.MATH_FONT_SIZE
            assert size >= floor - 1e-6, f"{lang} {beat}: {kind} {text!r} at font size {size:.1f}"
        texts = shot["texts"]
        for i, a in enumerate(texts):
            for b in texts[i + 1:]:
                assert not overlap(a[3], b[3]), f"{lang} {beat}: {a[:2]} overlaps {b[:2]}"
        bars = [s for s in shot["shapes"] if s[0] == "Rectangle" and (s[2] or unfilled_boxes)]
        for t in texts:
            under = [s for s in bars if overlap(t[3], s[1])]
            # in text_in_cells mode a text may sit on filled boxes of one colour that cover it: a number in its
            # own matrix cell, or the −∞ mark across the masked cells, reads as on a plain background (the rest of
            # it, up to a fifth, is the thin gaps between cells)
            backdrop = len({s[3] for s in under}) == 1 and \
                sum(area(intersection(t[3], s[1])) for s in under) >= 0.8 * area(t[3])
            assert not under or (text_in_cells and backdrop), f"{lang} {beat}: {t[:2]} lies across a filled box"
        assert_layout(shot, f"{lang} {beat}")


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


def render_in_both_languages(tmp_path_factory, names: list[str]) -> dict:
    """Render scenes through render.py at preview quality, in both languages, each as its last frame (--format png:
    the whole scene played through render.py, every beat and caption, its manifest of every number written, and
    its last frame drawn at 854 × 480), in two recipes whose pool keeps both cores busy across the scenes;
    returns {name: {lang: path}}.

    Whole clips are drawn elsewhere: every beat and caption is played and checked for layout (test_scenes.py's dry
    runs), one whole English clip is rendered and its frames held to its timeline
    (test_scenes.py::test_a_whole_clip_is_854_by_480_at_15_fps_and_its_timeline_is_its_frames), and the packaging
    renders whole clips in both languages (test_course.py). Every English clip drawn whole here was the suite's
    longest step (about 3,200 s of render time under load): the lecture's full render is a benchmark
    (benchmarks/bench_render.py), not a test."""
    from conftest import run_render
    media = tmp_path_factory.mktemp("media")
    for lang in ("en", "zh"):
        recipe = media / f"{lang}.toml"
        recipe.write_text('[lecture]\nquality = "preview"\nformat = "png"\n' + "".join(
            f'[[scene]]\nname = "{name}"\nlang = "{lang}"\n' for name in names))
        r = run_render("--config", recipe, "--jobs", "2", media=media, timeout=300 + 300 * len(names))
        assert r.returncode == 0, r.stdout + r.stderr
    return {name: {"en": media / "preview" / f"{name}.png", "zh": media / "preview" / f"{name}-lang-zh.png"}
            for name in names}


def manifest_of(clip) -> dict:
    """The manifest render.py wrote beside a clip."""
    from pipeline.recipe import manifest_path
    return json.loads(manifest_path(clip).read_text())


def assert_complete_preview_clip(clip, spec, lang: str) -> dict:
    """A whole scene at preview quality (854 × 480, 15 fps) in `lang`, listing every declared beat, each played
    (assert_timeline_matches), made with the shipped model; or, for a still (.png, the renders of
    render_in_both_languages), its last frame at 854 × 480 with every declared beat in its manifest (a still has
    no timeline: test_a_whole_clip_... holds one whole clip's to its frames). Returns the manifest."""
    from model import weights_sha256
    m = manifest_of(clip)
    if clip.suffix == ".png":
        from PIL import Image
        with Image.open(clip) as still:
            assert still.size == (854, 480), clip.name
        assert m["format"] == "png" and m["section"] in (None, "")
    else:
        import av
        with av.open(str(clip)) as video:
            stream = video.streams.video[0]
            assert (stream.width, stream.height, stream.base_rate) == (854, 480, 15), clip.name
            # the declared rate is exact; the muxer's average over the clip may differ in the 6th digit
            assert abs(float(stream.average_rate) - 15) < 1e-3, (clip.name, stream.average_rate)
        assert_timeline_matches(clip)
    assert m["params"]["lang"] == lang and m["sections"] == spec.section_names(m["params"])
    assert m["model"]["weights_sha256"] == weights_sha256()
    return m


def assert_timeline_matches(clip) -> None:
    """The manifest's timeline: every declared beat in order, back to back from 0 to the clip's end."""
    import av
    m = manifest_of(clip)
    marks = m["timeline"]
    assert [t["section"] for t in marks] == m["sections"], clip.name
    assert marks[0]["start"] == 0.0 and all(a["end"] == b["start"] for a, b in zip(marks, marks[1:])), marks
    assert all(t["end"] > t["start"] for t in marks), marks
    with av.open(str(clip)) as video:
        duration = video.duration / 1e6
    assert abs(marks[-1]["end"] - duration) <= 2 / m["fps"] + 0.05, (clip.name, marks[-1]["end"], duration)


def has_prompt(name: str) -> bool:
    """Whether a scene takes a prompt (a scene about the models' shapes, like parameters, does not)."""
    from scenes.catalog import SCENES
    return any(p.name == "prompt" for p in SCENES[name].params)


def default_prompt(name: str, lang: str) -> str:
    """A scene's default prompt in `lang`, by its rule (scenes/prompts.py)."""
    from scenes.prompts import fact_prompt, lookback_prompt, person_prompt, sport_fact_prompt, uncertain_prompt
    rule = {"softmax_temperature": uncertain_prompt, "next_token": uncertain_prompt,
            "mlp_steps": fact_prompt, "mlp_fact": sport_fact_prompt,
            "superposition_in_gpt": person_prompt}.get(name, lookback_prompt)
    return rule(lang)["prompt"]


def stop_at_beat(monkeypatch, section: str, **params) -> None:
    """Make the next scene built in this test stop at the end of one beat, with these parameters."""
    monkeypatch.setenv("GPT_LECTURE_SECTION", section)
    monkeypatch.setenv("GPT_LECTURE_PARAMS", json.dumps(params))


def signed_ticks(limit: float, decimals: int) -> list[list[str]]:
    """A signed legend's tick labels: its two ends, with 0 between them where there is room."""
    lo, hi = style.signed(-limit, decimals), style.signed(limit, decimals)
    return [[lo, "0", hi], [lo, hi]]


def play_lean(name: str, params: dict, tmp):
    """Scene `name` played as the caption sweep plays it: lean() (whose end states tests/test_caption_rules.py holds
    to manim's own), no frames drawn, a snapshot at every beat's end and after every caption; `tmp` its tex/text
    cache."""
    import importlib
    from scenes.catalog import SCENES
    spec = SCENES[name]
    cls = getattr(importlib.import_module(spec.module), spec.cls)
    return run_dry(lean(cls), params, tmp, captions=True, frames=False)


class Lecture:
    """Every scene rendered (both languages, through render.py) and played dry (both languages, a snapshot at the
    end of every beat and after every caption), each at most once per test session, when a test first asks."""

    LANGS = ("en", "zh")

    def __init__(self, tmp_path_factory, batch: set[str] = frozenset()):
        self.tmp = tmp_path_factory
        self.batch = set(batch)    # scenes whose clips this session will check: rendered together, when first asked
        self._clips: dict[str, dict] = {}
        self._dry: dict[tuple[str, str], object] = {}
        self._caches = None     # one tex/text cache for every dry run (the same labels recur: compiled once)

    def _play_dry(self, name: str, params: dict):
        """play_lean with the session's tex/text cache."""
        if self._caches is None:
            self._caches = self.tmp.mktemp("dry-caches")
        return play_lean(name, params, self._caches)

    def clips(self, name: str) -> dict:
        """{lang: the preview clip} of the scene with its defaults."""
        if name not in self._clips:
            from scenes.catalog import SCENES
            names = [n for n in SCENES if n in self.batch and n not in self._clips] if name in self.batch else [name]
            self._clips.update(render_in_both_languages(self.tmp, names))
        return self._clips[name]

    def manifest(self, name: str, lang: str) -> dict:
        return manifest_of(self.clips(name)[lang])

    def dry_same_prompt(self, name: str, lang: str):
        """The scene in `lang` with the English default prompt given: the same numbers in either language."""
        if (name, lang, "same") not in self._dry:
            given = {"lang": lang}
            if has_prompt(name):     # a scene without a prompt shows the same numbers in both languages as it is
                given["prompt"] = default_prompt(name, "en")
            self._dry[name, lang, "same"] = self._play_dry(name, given)
        return self._dry[name, lang, "same"]

    def dry(self, name: str, lang: str):
        """The scene with its defaults in `lang`, played without rendering; .snapshots, .captions, .values."""
        if (name, lang) not in self._dry:
            self._dry[name, lang] = self._play_dry(name, {"lang": lang})
        return self._dry[name, lang]


def lean(scene_cls):
    """The scene class with a cheaper play() for dry runs: an animation that only brings a mobject in (FadeIn,
    Create, Write, the Grow family) or takes it out (FadeOut) is applied by its end state, the mobject added or
    removed, as manim's own skipping ends it; every other animation (transforms, .animate, waits) plays through
    manim. Nothing is drawn in a dry run, so only the end state counts: run_dry(lean(cls), ...) must leave the
    same mobjects in the same places as run_dry(cls, ...) (tests/test_caption_rules.py checks this on the
    default prompts). The scene clock (renderer.time) and the skeleton's nominal clock advance as in a real play."""
    from manim import Create, DrawBorderThenFill, FadeIn, FadeOut, GrowFromCenter, GrowFromEdge, GrowFromPoint, Write
    from manim.animation.composition import AnimationGroup, LaggedStart

    introducers = (FadeIn, Create, Write, DrawBorderThenFill, GrowFromCenter, GrowFromEdge, GrowFromPoint)

    def flat(animations):
        for a in animations:
            if type(a) in (AnimationGroup, LaggedStart):     # plain groups only: TransformMatchingTex is a group
                if not a.animations:                         # with its own clean-up, so it plays through manim
                    raise ValueError(f"Trying to play {a} without animations (manim refuses it too)")
                yield from flat(a.animations)
            else:
                yield a

    class Lean(scene_cls):
        def play(self, *args, **kwargs):
            animations = self.compile_animations(*args, **kwargs)
            start, duration = float(self.renderer.time), self.get_run_time(animations)
            clock = self.clock   # the skeleton's nominal clock (LectureScene.play), advanced as a real play does
            self.add_mobjects_from_animations(animations)      # as manim's play starts
            rest, removed = [], []
            for a in flat(animations):
                if isinstance(a, FadeOut):
                    removed.append(a.mobject)                   # as manim's play ends: the remover's clean-up
                elif isinstance(a, introducers) and a.is_introducer() and not a.is_remover():
                    self.add(a.mobject)                         # as manim's play starts: the introducer's set-up
                else:
                    rest.append(a)
            if rest:
                super().play(*rest)
            else:
                self.update_mobjects(duration)
            self.remove(*removed)
            self.renderer.time = start + duration
            self.clock = clock
            self.advance(duration, animations)   # the skeleton's clock and pace, as a real play moves them

    Lean.__name__ = scene_cls.__name__
    return Lean


# --- parameter counts, written out again from a config's shape (against model.params) ---------------------------
def parameter_counts(c) -> dict:
    """GPT-2's layout: the token table and, when learned, the position table (a fixed sin/cos one holds no
    parameters); per layer W_q, W_k, W_v, W_O with biases, an MLP d -> n_inner -> d with biases and two LayerNorms
    (gain and bias); ln_f; the unembedding tied to W_E (no parameters of its own)."""
    d, L = c.n_embd, c.n_layer
    rows = c.vocab_size + (c.n_positions if c.position_encoding == "learned" else 0)
    return {"embedding": rows * d, "attention": 4 * L * d * (d + 1),
            "mlp": L * (d * c.n_inner * 2 + c.n_inner + d), "layernorm": 2 * d * (2 * L + 1), "unembedding": 0}


def play_at_checkpoint(name: str, lang: str, checkpoint, cache, monkeypatch):
    """Scene `name` played dry (lean, no frames) in `lang` at another checkpoint (GPT_LECTURE_MODEL = checkpoint):
    every beat the catalog names for it, the title note first, and legible. Returns the scene (.gpt, .captions,
    .values, .snapshots) for the caller's own checks."""
    import importlib
    from scenes.catalog import SCENES
    spec = SCENES[name]
    monkeypatch.setenv("GPT_LECTURE_MODEL", str(checkpoint))
    cls = getattr(importlib.import_module(f"scenes.{name}"), spec.cls)
    scene = run_dry(lean(cls), {"lang": lang}, cache, frames=False)
    assert list(scene.snapshots) == spec.section_names(spec.resolve({"lang": lang}, {}, model=scene.gpt))
    assert scene.captions[0]["key"] == "title_note"
    assert_legible(scene.snapshots, lang, **LEGIBILITY.get(name, {}))
    return scene
