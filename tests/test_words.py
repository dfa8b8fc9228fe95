"""The lecture's words are data (scenes/words.py): every caption, spoken form and beat title in a TOML file beside
its scene, none in Python; every file loads; every key a scene names exists."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from scenes.words import LANGUAGES, Strings, Words, WordsError, check_entry

SCENES = Path(__file__).resolve().parent.parent / "scenes"
# CJK ideographs (and extension A), CJK symbols and punctuation, full-width forms
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
WORDS_FILES = sorted(SCENES.rglob("*.toml"))
MODULES = sorted(p for p in SCENES.rglob("*.py") if p.name != "__init__.py")


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(SCENES.parent).with_suffix("").parts)


def test_no_chinese_in_python():
    found = [f"{p.relative_to(SCENES.parent)}:{n}" for p in MODULES
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if CJK.search(line)]
    assert not found, f"Chinese text in Python (move it to the scene's .toml): {found}"


def test_words_files_exist():
    assert len(WORDS_FILES) >= 20, WORDS_FILES


@pytest.mark.parametrize("path", WORDS_FILES, ids=lambda p: p.relative_to(SCENES).as_posix())
def test_words_file_loads(path):
    if path.name == "prompts.toml":           # scenes/prompts.py's data (prompts, the model's names), not Strings
        return
    words = Words(path)
    assert words.tables
    for table in words.tables.values():
        for key, versions in table.table.items():
            assert all(versions[lang].strip() for lang in LANGUAGES), key


def test_every_key_checked():
    """check_entry refuses what a lecturer could get wrong, with the file and key in its message."""
    with pytest.raises(WordsError, match="'k' has no zh"):
        check_entry("f.toml", "k", {"en": "x"})
    with pytest.raises(WordsError, match="unknown versions say_fr"):
        check_entry("f.toml", "k", {"en": "x", "zh": "y", "say_fr": "z"})
    with pytest.raises(WordsError, match="not text"):
        check_entry("f.toml", "k", {"en": "x", "zh": 3})
    with pytest.raises(WordsError, match=r"different placeholders by language \(en: n; zh: none\)"):
        check_entry("f.toml", "k", {"en": "{n} words", "zh": "词"})
    with pytest.raises(WordsError, match=r"say_en: n, p; say_zh: n"):
        check_entry("f.toml", "k", {"en": "{n}", "zh": "{n}", "say_en": "{n} at {p}", "say_zh": "{n}"})
    check_entry("f.toml", "k", {"en": "{n}", "zh": "{n}", "say_en": "{n} at {p}", "say_zh": "{p}: {n}"})


def test_bad_file_is_one_clear_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[captions.title]\nen = \"unterminated\n", encoding="utf-8")
    with pytest.raises(WordsError, match="bad.toml: not valid TOML"):
        Words(bad)
    with pytest.raises(WordsError, match="no such words file"):
        Words(tmp_path / "missing.toml")
    good = tmp_path / "good.toml"
    good.write_text("[captions.title]\nen = \"A\"\nzh = \"B\"\n", encoding="utf-8")
    assert Words(good)["captions"]("title", "zh") == "B"
    with pytest.raises(WordsError, match=r"no table \[beats\]"):
        Words(good)["beats"]


def _named_keys(tree: ast.AST) -> list[tuple[int, str]]:
    """The caption keys a module names as literals: self.s("k"), self.say("k"), S("k", ...), SHARED("k", ...),
    caption_rule(name, "k", ...), each branch of a conditional expression among them."""
    def literals(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.IfExp):
            return literals(node.body) + literals(node.orelse)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and isinstance(node.func.value, ast.Dict):     # {case: "k", ...}.get(case, "k_other")
            return [k for v in node.func.value.values for k in literals(v)] + \
                [k for a in node.args[1:] for k in literals(a)]
        return []

    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("self", "scene") \
                and name in ("s", "say"):
            found += [(node.lineno, k) for k in literals(node.args[0])]
        elif isinstance(f, ast.Name) and name in ("S", "SHARED", "STRINGS", "CAUSAL", "STORY", "KINDS", "LAYER_STORY"):
            found += [(node.lineno, k) for k in literals(node.args[0])]
        elif name == "caption_rule" and len(node.args) > 1:
            found += [(node.lineno, k) for k in literals(node.args[1])]
    return found


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _check_why_beat_keys(module, path: Path, named: list[tuple[int, str]]) -> None:
    """scenes/why_beats.py: each function is a scene's beat_lab (scene.s, scene.say, its caption rule's keys); the
    scene whose class plays it has every key the function names, and every function is some scene's beat."""
    from scenes.catalog import SCENES
    functions = {n.name: n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(n, ast.FunctionDef) and n.name in SCENES}
    missing, played = [], set()
    for name, node in functions.items():
        cls = getattr(importlib.import_module(SCENES[name].module), SCENES[name].cls)
        if getattr(cls, "beat_lab", None) is not getattr(module, name):
            continue
        played.add(name)
        missing += [f"{name}: line {line} {key!r}" for line, key in named
                    if node.lineno <= line <= node.end_lineno and key not in cls.strings]
    assert played == set(functions), f"why beats no scene plays: {sorted(set(functions) - played)}"
    assert not missing, f"scenes lacking keys their why beat names: {missing}"


def _check_skeleton_keys(path: Path, named: list[tuple[int, str]]) -> None:
    """scenes/lecture.py's keys ("title", "subtitle", "summary"): every catalog scene whose class runs the skeleton's
    method that names a key (not overridden; a beat method only where the scene has that beat) has it."""
    from scenes.catalog import SCENES
    from scenes.lecture import LectureScene
    for p in MODULES:
        importlib.import_module(module_name(p))
    method_of = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef):
            for line in range(node.lineno, node.end_lineno + 1):
                method_of[line] = node.name       # the innermost function (ast.walk goes outside in)
    scenes = [c for c in _subclasses(LectureScene) if getattr(c, "name", None) in SCENES]
    assert len({c.name for c in scenes}) == len(SCENES)
    missing = []
    for c in scenes:
        sections = SCENES[c.name].sections(SCENES[c.name].defaults()) if hasattr(SCENES[c.name], "defaults") else None
        for line, key in named:
            method = method_of.get(line)
            if method is None or getattr(c, method) is not getattr(LectureScene, method):
                continue
            if method.startswith("beat_") and sections is not None and method[5:] not in sections:
                continue
            if key not in c.strings:
                missing.append(f"{c.name}: line {line} ({method}) {key!r}")
    assert not missing, f"scenes lacking keys the skeleton names: {missing}"


def in_scene_package(path: Path) -> bool:
    """A module of a scene package (scenes/<scene>/: numbers.py, beats.py, its words in words.toml)."""
    return (path.parent / "words.toml").exists()


def known_keys(module) -> set[str]:
    """The captions a module can say: its Strings tables and its classes' `strings`, not beat titles (a beat's
    title is named by its section, never by a literal in code)."""
    titles = [value.beat_titles for value in vars(module).values() if isinstance(value, type)
              and isinstance(getattr(value, "beat_titles", None), Strings)]
    known: set[str] = set()
    for value in vars(module).values():
        if isinstance(value, Strings) and not any(value is t for t in titles):
            known |= set(value.table)
        if isinstance(value, type) and isinstance(getattr(value, "strings", None), Strings):
            known |= set(value.strings.table)
    return known


@pytest.mark.parametrize("path", [p for p in MODULES if p.with_suffix(".toml").exists() or p.parent.name == "scenes"
                                  or in_scene_package(p)], ids=lambda p: p.relative_to(SCENES).with_suffix("").as_posix())
def test_every_named_key_exists(path):
    module = importlib.import_module(module_name(path))
    known = known_keys(module)
    if in_scene_package(path):       # a scene package's modules share its words (beats.py's tables)
        for other in path.parent.glob("*.py"):
            if other.name != "__init__.py":
                known |= known_keys(importlib.import_module(module_name(other)))
    named = _named_keys(ast.parse(path.read_text(encoding="utf-8")))
    if not named:
        return
    if path.name == "lecture.py":      # the skeleton: each scene that runs a skeleton method must have its keys
        _check_skeleton_keys(path, named)
        return
    if path.name == "why_beats.py":    # the why beats: each scene whose beat_lab is one of them has its keys
        _check_why_beat_keys(module, path, named)
        return
    assert known, f"{path.name} names caption keys but has no Strings table"
    missing = [f"line {n}: {k!r}" for n, k in named if k not in known]
    assert not missing, f"{path.name} names keys its words do not have: {missing}"
