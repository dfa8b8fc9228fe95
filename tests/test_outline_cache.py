"""The glyph outlines kept on disk (scenes/components/outline_cache.py): what a later process reads is what Pango
shaped, the entry is named by everything that shapes it, and a broken entry is shaped again."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from scenes.components import outline_cache
from scenes.components import text as text_module
from scenes.style import FONT

REPO = outline_cache.Path(__file__).resolve().parents[1]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GPT_LECTURE_TEXT_CACHE", str(tmp_path / "outlines"))
    text_module._label_outlines.cache_clear()
    yield tmp_path / "outlines"
    text_module._label_outlines.cache_clear()


def shaped(text, size=24.0, weight="NORMAL"):
    """What Pango gives, with no cache at all: manim's Text, as _label_outlines builds it."""
    ref = text_module.Text("H" + text, font=FONT, font_size=size, weight=weight)
    return tuple(g.points for g in ref.submobjects[1:]), float(ref[0].get_bottom()[1])


def assert_same(a, b):
    (outlines_a, base_a), (outlines_b, base_b) = a, b
    assert base_a == base_b and len(outlines_a) == len(outlines_b)
    for x, y in zip(outlines_a, outlines_b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("text", ["Attention(Q, K, V)", "注意力：每个词看前面的词", "P = 12.5%"])
def test_a_stored_entry_is_read_back_as_pango_shaped_it(cache, text):
    first = text_module._label_outlines(text, 24.0, "NORMAL")          # shaped, then stored
    path = outline_cache.entry_path(text, 24.0, "NORMAL", FONT)
    assert path.is_file() and path.parent.parent == cache
    again = outline_cache.load(path)
    assert again is not None
    assert_same(again, first)
    assert_same(again, shaped(text))


def test_a_later_process_reads_the_entry_and_shapes_nothing(cache):
    text_module._label_outlines("the cat sat on the mat", 24.0, "NORMAL")
    probe = ("import manim, numpy as np\n"
             "from scenes.components import text\n"
             "def refuse(*a, **k): raise SystemExit('shaped again')\n"
             "text.Text = refuse\n"
             "print(text.Label('the cat sat on the mat', font_size=24.0).width)\n")
    r = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120,
                       env={**outline_cache.os.environ, "GPT_LECTURE_TEXT_CACHE": str(cache)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert float(r.stdout) == pytest.approx(text_module.Label("the cat sat on the mat", font_size=24.0).width,
                                            abs=0)


def test_an_entry_is_named_by_the_text_its_size_and_weight_and_the_font():
    names = {outline_cache.entry_path(*args) for args in [
        ("a", 24.0, "NORMAL", FONT), ("b", 24.0, "NORMAL", FONT), ("a", 24.5, "NORMAL", FONT),
        ("a", 24.0, "BOLD", FONT), ("a", 24.0, "NORMAL", "DejaVu Sans")]}
    assert len(names) == 5
    assert outline_cache.entry_path("a", 24, "NORMAL", FONT) == outline_cache.entry_path("a", 24.0, "NORMAL", FONT)
    env = outline_cache.shaping_environment(FONT)
    for part in ("manim", "ManimPango", "pango", "cairo", "NotoSansCJK"):
        assert part in env


@pytest.mark.parametrize("damage", [b"", b"not an npz", "truncated"])
def test_a_broken_entry_is_shaped_again_and_replaced(cache, damage):
    text_module._label_outlines("broken", 24.0, "NORMAL")
    path = outline_cache.entry_path("broken", 24.0, "NORMAL", FONT)
    path.write_bytes(path.read_bytes()[:40] if damage == "truncated" else damage)
    assert outline_cache.load(path) is None
    text_module._label_outlines.cache_clear()
    assert_same(text_module._label_outlines("broken", 24.0, "NORMAL"), shaped("broken"))
    assert_same(outline_cache.load(path), shaped("broken"))
    assert not list(path.parent.glob("*.tmp"))


def test_an_entry_holding_a_pickle_is_not_loaded(cache):
    path = outline_cache.entry_path("pickled", 24.0, "NORMAL", FONT)
    path.parent.mkdir(parents=True)
    np.savez(path, points=np.array([object()], dtype=object), ends=np.array([1]), baseline=np.float64(0))
    assert outline_cache.load(path) is None


def test_a_cache_that_cannot_be_written_costs_only_the_shaping(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("GPT_LECTURE_TEXT_CACHE", str(blocked / "outlines"))     # under a file: mkdir fails
    text_module._label_outlines.cache_clear()
    try:
        assert_same(text_module._label_outlines("no room", 24.0, "NORMAL"), shaped("no room"))
    finally:
        text_module._label_outlines.cache_clear()


def test_the_default_place_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("GPT_LECTURE_TEXT_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert outline_cache.cache_dir() == tmp_path / "gpt-lecture" / "outlines"
