"""The checks every scene must pass, run once for every scene in the catalog: its render in both languages (the
whole scene played through render.py to its last frame), one whole clip's timeline against its frames, the same
numbers in both languages, legibility and the title-safe area at the end of
every beat and after every caption, one layout in English and Chinese, time to read every caption, and that it
stands alone (no scene imports another; `manim render` works from any folder).

A scene's own test file checks only its numbers (manifest against the model, labels against the manifest) and
its key frames; both use the same session-wide renders and dry runs (the `lecture` fixture)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scene_checks import (LEGIBILITY, assert_complete_preview_clip, assert_legible, assert_same_layout,
                          default_prompt, has_prompt, manifest_of)
from scenes.catalog import SCENES
from scenes.params import canonical_json
from scenes.lecture import LectureScene

REPO = Path(__file__).resolve().parent.parent
NAMES = list(SCENES)
LANGS = ("en", "zh")

assert set(LEGIBILITY) <= set(NAMES)


# --- the render, both languages ------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", NAMES)
def test_renders_every_beat_at_preview_quality(lecture, name, lang):
    """Each language: the whole scene played through render.py and its last frame drawn at 854 × 480 (scene_checks.py
    render_in_both_languages says why not every frame), every declared beat in its manifest."""
    assert_complete_preview_clip(lecture.clips(name)[lang], SCENES[name], lang)


@pytest.mark.slow
def test_a_whole_clip_is_854_by_480_at_15_fps_and_its_timeline_is_its_frames(tmp_path):
    """Every frame of one scene drawn (the lecture fixture draws each scene's last frame only): the clip is
    854 × 480 at 15 fps and its manifest's beats run back to back to the clip's last frame (next_token: the
    shortest scene with a prompt)."""
    from conftest import run_render
    media = tmp_path / "media"
    r = run_render("next_token", "--quality", "preview", media=media, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert_complete_preview_clip(media / "preview" / "next_token.mp4", SCENES["next_token"], "en")


def prompt_rules(values) -> list:
    """Every prompt rule recorded in a manifest's values, at any depth (one per scene)."""
    found = []
    if isinstance(values, dict):
        if isinstance(values.get("prompt_rule"), dict):
            found.append(values["prompt_rule"])
        for k, v in values.items():
            found += prompt_rules(v) if k != "prompt_rule" else []
    elif isinstance(values, list):
        for v in values:
            found += prompt_rules(v)
    return found


@pytest.mark.parametrize("name", NAMES)
def test_each_language_renders_its_own_default_prompt(lecture, name):
    """The English lecture's default prompt comes from the English stream, the Chinese lecture's from the Chinese
    one, by the same rule (scenes/prompts.py); the manifest records the rule and its language."""
    if not has_prompt(name):
        pytest.skip(f"{name} takes no prompt")
    for lang in LANGS:
        m = manifest_of(lecture.clips(name)[lang])
        assert m["params"]["prompt"] == default_prompt(name, lang), lang
        [rule] = prompt_rules(m["values"])
        assert rule["lang"] == lang and rule["prompt"] == default_prompt(name, lang)
    assert default_prompt(name, "en") != default_prompt(name, "zh")


def numbers_of(values: dict) -> dict:
    """A manifest's values without the language a caption rule names as its own (caption_rules.*.inputs.lang)."""
    rules = {name: {**rule, "inputs": {k: x for k, x in rule["inputs"].items() if k != "lang"}}
             for name, rule in values.get("caption_rules", {}).items()}
    return {**values, "caption_rules": rules} if rules else values


@pytest.mark.parametrize("name", NAMES)
def test_both_languages_show_the_same_numbers(lecture, name):
    """With the same prompt, the language of the text changes no number (the defaults differ by language, so
    this plays both with the English default prompt given)."""
    en, zh = (lecture.dry_same_prompt(name, lang) for lang in LANGS)
    # as the manifest writes them; a caption rule that says its own language's result records which language that
    # is (parameters' summary: inputs["lang"]), a word, not a number
    assert canonical_json(numbers_of(en.values)) == canonical_json(numbers_of(zh.values))
    assert {k: v for k, v in en.params.items() if k != "lang"} == {k: v for k, v in zh.params.items() if k != "lang"}


# --- what is on screen, played without rendering -------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", NAMES)
def test_every_moment_is_legible(lecture, name, lang):
    """Inside the title-safe area, at the type floor, no text on text or across a box: at the end of every beat
    and after every caption."""
    scene = lecture.dry(name, lang)
    spec = SCENES[name]
    ends = [k for k in scene.snapshots if k.endswith(":end")]
    assert ends == [f"{s}:end" for s in spec.section_names(spec.defaults())]
    assert_legible(scene.snapshots, lang, **LEGIBILITY.get(name, {}))


@pytest.mark.parametrize("name", NAMES)
def test_english_and_chinese_share_one_layout(lecture, name):
    """Same prompt, same shapes: only the words of the captions and labels change with the language."""
    en, zh = lecture.dry_same_prompt(name, "en").snapshots, lecture.dry_same_prompt(name, "zh").snapshots
    assert list(en) == list(zh)
    assert_same_layout(en, zh)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", NAMES)
def test_every_caption_stays_long_enough_to_read(lecture, name, lang):
    """From when a caption is fully shown until it leaves (or the clip ends): at most 17 characters a second in
    English, 9 in Chinese. The title card's note counts as a caption."""
    scene = lecture.dry(name, lang)
    rate = {"en": 17.0, "zh": 9.0}[lang]
    assert LectureScene.READING_RATE[lang] == rate
    assert scene.captions and scene.captions[0]["key"] == "title_note"
    assert [c["key"] for c in scene.captions].count("title_note") == 1
    for c in scene.captions:
        left = c["left"] if c["left"] is not None else scene.clip_end
        chars = len(c["text"].replace("\n", ""))
        assert chars / (left - c["shown"]) <= rate + 1e-9, (c["beat"], c["key"], chars, left - c["shown"])
    assert scene.captions[-1]["left"] == scene.clip_end, "the last caption stays to the end"


# --- every scene stands alone ----------------------------------------------------------------------------------
def scene_modules() -> dict[str, Path]:
    """Each scene's module and the file that defines its class (SceneSpec.path: scenes/x.py, or a package's
    beats.py)."""
    return {spec.module: REPO / spec.path for spec in SCENES.values()}


def scene_files(module: str) -> list[Path]:
    """The files of a scene: its module, or every module of its package (scenes/x/*.py)."""
    package = REPO / Path(*module.split("."))
    return sorted(package.glob("*.py")) if package.is_dir() else [package.with_suffix(".py")]


def test_every_scene_is_a_module_or_a_package_with_numbers_and_beats():
    for module, path in scene_modules().items():
        assert path.is_file(), path
        if path.name == "beats.py":
            assert {p.name for p in scene_files(module)} >= {"__init__.py", "numbers.py", "beats.py"}, module
            assert (path.parent / "words.toml").is_file(), module


MAX_MODULE_LINES = 600    # the project's rule; a larger scene becomes a package (docs/adding-a-scene.md)


def test_no_module_of_scenes_is_over_600_lines():
    long = {p.relative_to(REPO).as_posix(): n for p in sorted((REPO / "scenes").rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them): {long}"


def test_no_scene_imports_another_scene():
    modules = scene_modules()
    for module in modules:
        for path in scene_files(module):
            tree = ast.parse(path.read_text())
            imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module} | \
                       {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
            others = {m for m in modules for name in imported if name == m or name.startswith(m + ".")} - {module}
            assert not others, f"{path.name} imports the scene(s) {sorted(others)}: move what they share to a chapter module"
            assert "sys.path" not in path.read_text(), f"{path.name} changes sys.path: the project is installed"


def test_every_scene_module_imports_from_another_folder(tmp_path):
    """As `manim render scenes/x.py` (or scenes/x/beats.py) loads it: by its file path, from a folder outside the
    repository."""
    code = ("import importlib.util, sys\n"
            "for path in sys.argv[1:]:\n"
            "    spec = importlib.util.spec_from_file_location('scene_file', path)\n"
            "    spec.loader.exec_module(importlib.util.module_from_spec(spec))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPT_LECTURE_") and k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-c", code, *map(str, scene_modules().values())], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name, where", [("causal_mask", "repo"), ("softmax_temperature", "elsewhere"),
                                         ("values_update", "elsewhere")])   # a scene package: its beats.py
def test_plain_manim_renders_a_scene(tmp_path, name, where):
    """`.venv/bin/manim render -ql -s scenes/<file>.py <Class>` (a package's scenes/<name>/beats.py: SceneSpec.path),
    from the repository and from another folder, with the scene's defaults (only its title beat, to keep it short)."""
    spec = SCENES[name]
    manim = Path(sys.executable).parent / "manim"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPT_LECTURE_") and k != "PYTHONPATH"}
    env["GPT_LECTURE_SECTION"] = "title"
    cwd = REPO if where == "repo" else tmp_path
    r = subprocess.run([str(manim), "render", "-ql", "-s", "--media_dir", str(tmp_path / "media"),
                        str(REPO / spec.path), spec.cls],
                       cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    [still] = (tmp_path / "media").glob(f"images/{Path(spec.path).stem}/*.png")   # manim's folder: the file's name
    from PIL import Image
    assert Image.open(still).size == (854, 480)
