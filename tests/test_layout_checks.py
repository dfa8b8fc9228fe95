"""The layout checks (tests/layout_checks.py) are real: each fails on a small scene laid out like one of issue 22's
480p faults, and passes once the same pieces are laid out apart. Cheap: a few mobjects, no model, no render."""

from __future__ import annotations

import numpy as np
import pytest
from manim import RIGHT, UP, Dot, Line, Scene, VGroup, tempconfig

from layout_checks import assert_layout
from scene_checks import snapshot
from scenes import style
from scenes.components import AttentionGrid, ColourScale, Label, NumberText, TokenChip, TokenColumn


def shot_of(*mobjects) -> dict:
    with tempconfig({"dry_run": True, "verbosity": "ERROR"}):
        scene = Scene()
        scene.add(*mobjects)
        return snapshot(scene)


def fails(*mobjects, match: str) -> None:
    with pytest.raises(AssertionError, match=match):
        assert_layout(shot_of(*mobjects), "test")


def passes(*mobjects) -> None:
    assert_layout(shot_of(*mobjects), "test")


def test_a_word_on_a_dot_fails():
    """embedding_space: "walrus" written over a creature's dot."""
    dot = Dot([0.4, 0, 0], radius=0.1, color=style.POSITIVE)
    fails(dot, Label("walrus", font_size=style.SMALL).move_to([0.5, 0, 0]), match="lies on a point")
    passes(dot, Label("walrus", font_size=style.SMALL).next_to(dot, RIGHT, buff=0.15))


def test_a_word_crossing_its_chip_fails():
    """values_update: descenders and Chinese characters across the chip's border in a tight column."""
    chip = TokenChip("silky", style.token_colour(["fluffy", "silky"], 1), font_size=style.SMALL, height=0.36, lift=None)
    fails(chip, match="crosses its chip")
    passes(TokenChip("silky", style.token_colour(["fluffy", "silky"], 1), font_size=style.SMALL, height=0.6, lift=None))


def test_the_token_column_keeps_words_inside_or_uses_tabs():
    """TokenColumn as values_update draws it: 14 Chinese rows at a 0.4 pitch, and a roomy English one."""
    words = ["一只", "丝滑", "橙色", "微小", "青蛙", "潜入", "了", "翠绿", "的", "湖泊", "。", "这只", "青蛙", "是"]
    tight = TokenColumn(words, list(range(14)), [2.6 - 0.4 * i for i in range(14)], right=-4.0)
    assert tight.tabs
    passes(tight)
    roomy = TokenColumn(["silky", "frog", "gray"], [0, 1, 2], [1.0, 0.3, -0.4], right=-4.0)
    assert not roomy.tabs
    passes(roomy)


def test_overlapping_chips_fail():
    a = TokenChip("fluffy", style.token_colour(["fluffy", "silky"], 0), font_size=style.SMALL)
    b = TokenChip("frog", style.token_colour(["fluffy", "silky"], 1), font_size=style.SMALL).next_to(a, RIGHT, buff=-0.1)
    fails(a, b, match="overlap")
    passes(a, TokenChip("frog", style.token_colour(["fluffy", "silky"], 1), font_size=style.SMALL).next_to(a, RIGHT, buff=0.1))


def test_numbers_running_together_fail():
    """token_embedding (zh): ids "316 288 317 301" 0.06 apart under narrow chips."""
    ids = [NumberText(t, style.SMALL, align="left").place(0.66 * i, 0) for i, t in enumerate(["316", "288", "317"])]
    fails(*ids, match="run together")
    passes(*[NumberText(t, style.SMALL, align="left").place(0.8 * i, 0) for i, t in enumerate(["316", "288", "317"])])


def test_two_labels_a_space_apart_fail():
    """mlp_steps' "…green active" running into "> 0.1"; summary's "12,288 dimensions" against the next column."""
    a = Label("GPT-3: 12,288 dimensions", font_size=style.SMALL)
    b = Label("random, within 1° of 90°", font_size=style.SMALL)
    fails(a, b.copy().next_to(a, RIGHT, buff=0.17), match="run together")
    passes(a, b.copy().next_to(a, RIGHT, buff=0.3))


def test_a_dark_grey_point_or_line_fails():
    """mlp_steps: GELU's inactive neurons dark grey (#3C3C3C, 1.9:1) on black."""
    fails(Dot(radius=0.05, color="#3C3C3C"), match="below 3.0:1")
    fails(Line(np.zeros(3), RIGHT, stroke_color="#3C3C3C", stroke_width=4), match="below 3.0:1")
    fails(Label("dimmed", font_size=style.SMALL).set_opacity(0.3), match="below 3.0:1")
    passes(Dot(radius=0.05, color=style.NEURON_INACTIVE), Line(np.zeros(3), RIGHT, stroke_color=style.MUTED))


def test_a_key_of_two_alike_greys_fails():
    """parameters: embedding (#BBBBBB) and LayerNorm (#9A9A9A) in one key."""
    key = VGroup(Dot(color="#BBBBBB"), Dot([1, 0, 0], color="#9A9A9A"))
    key.key_colours = ["#BBBBBB", "#9A9A9A"]
    fails(key, match="look alike")
    good = VGroup(Dot(color=style.EMBEDDING), Dot([1, 0, 0], color=style.LAYERNORM))
    good.key_colours = [style.EMBEDDING, style.LAYERNORM]
    passes(good)


def test_a_framed_query_line_without_its_position_fails():
    """queries_keys (zh): 14 queries labelled every other one, the framed query 13 unlabelled."""
    rng = np.random.default_rng(0)
    values, tokens = rng.normal(size=(14, 14)), [f"w{i}" for i in range(14)]
    scale = ColourScale.signed_for(values)
    grid = AttentionGrid(values, scale, tokens=tokens, lang="en", height=4.2)
    frame = grid.line_frame(13)
    fails(grid, frame, match="without their position")
    pinned = AttentionGrid(values, scale, tokens=tokens, lang="en", height=4.2, focus=13)
    passes(pinned, pinned.line_frame(13))
