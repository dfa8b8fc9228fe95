"""One convention for layers and heads on screen: counted from 1 ("layer 1 of 3", "head 3", "L1 MLP", "第 1 层",
"第 3 个头"), while the model, the command line (--layer 0) and the manifest (values["layer"], values["head"]) count
from 0. The conversion lives in one place, scenes.style.shown.

Every scene of the catalog plays without rendering in English and Chinese with its defaults, and a few with a
layer and head given; every text on screen (every caption, label and number, at the end of every beat and after
every caption) and every chapter name is read for a layer or a head ("layer N", "Layer N", "head N", "L N",
"MLP N", "attn N", "第 N 层", "第 N 个头", "头 N", ...), and each number is checked against the manifest's
zero-based indices:
- every layer shown is between 1 and n_layer, every head between 1 and n_head (a zero-based "layer 0" fails);
- a caption names only layers and heads the manifest records (under a key "layer" or "head", anywhere in its
  values), each shown as index + 1; where the scene is about one layer or one head (SUBJECT), exactly that one,
  or, in the default lecture, the other language's pick of the same rule that the scene names as a finding (the
  manifest's story: story_picks).
"""

from __future__ import annotations

import re

import pytest

from scene_checks import play_lean
from scenes import style
from scenes.catalog import SCENES

LANGS = ("en", "zh")

# what names a layer or a head on screen, in either language (group 1: the number as shown)
# (a number going on with a decimal point, a thousands separator or % is a measurement: "MLP 58.2%" is a share)
WHOLE = r"(\d+)(?!\d|[.,]\d|%)"
LAYER_PATTERNS = [re.compile(p.replace("N", WHOLE)) for p in (
    r"\b[Ll]ayer N", r"\bL ?N", r"\bMLP N", r"\battn N", r"第\s*N\s*层", r"注意力\s*N")]
HEAD_PATTERNS = [re.compile(p.replace("N", WHOLE)) for p in (r"\b[Hh]ead N", r"第\s*N\s*个头", r"(?<!个)头\s*N")]

# scenes about one layer (or one head): where the manifest records it; a caption may name no other
SUBJECT = {
    "summary": lambda v: {},   # one row per chapter: the context head's layer and head, the facts site's layer
    "positional_encoding": lambda v: {},    # names no layer or head (the attention chapter defines them)
    "superposition_in_gpt": lambda v: {"layer": v["neuron"]["layer"]},
    "mlp_fact": lambda v: {},   # names the lookup's layer and the two largest restored shares' layers
    "architecture": lambda v: {},
}

# layers and heads given on the command line (zero-based), besides each scene's defaults
GIVEN = [("values_update", {"layer": 0, "head": 0}), ("values_update", {"layer": 2, "head": 3}),
         ("queries_keys", {"layer": 1, "head": 2}), ("causal_mask", {"layer": 0, "head": 3}),
         ("multi_head", {"layer": 2}), ("add_norm", {"layer": 0}), ("mlp_steps", {"layer": 1})]


def subject(name: str, values: dict) -> dict:
    """The one layer / head a scene is about, zero-based, from its manifest."""
    if name in SUBJECT:
        return SUBJECT[name](values)
    return {k: values[k] for k in ("layer", "head") if isinstance(values.get(k), int)}


def story_picks(values) -> dict[str, set[int]]:
    """The layers and heads of both languages' picks that a default lecture's scene records as its story (values'
    "story" records: the attention chapter's {"chosen": {lang: [layer, head]}}, mlp_steps' {lang: {"layer": ...}})."""
    found = {"layer": set(), "head": set()}
    if isinstance(values, dict):
        for k, v in values.items():
            if k == "story" and isinstance(v, dict):
                for pick in (v.get("chosen") or {}).values():
                    found["layer"].add(pick[0])
                    found["head"].add(pick[1])
                for entry in v.values():
                    if isinstance(entry, dict) and isinstance(entry.get("layer"), int):
                        found["layer"].add(entry["layer"])
            else:
                for kind, picks in story_picks(v).items():
                    found[kind] |= picks
    elif isinstance(values, (list, tuple)):
        for v in values:
            for kind, picks in story_picks(v).items():
                found[kind] |= picks
    return found


def recorded(values, key: str) -> set[int]:
    """Every integer the manifest records under `key`, anywhere in its values (zero-based)."""
    found = set()
    if isinstance(values, dict):
        for k, v in values.items():
            if k == key and isinstance(v, int) and not isinstance(v, bool):
                found.add(v)
            else:
                found |= recorded(v, key)
    elif isinstance(values, (list, tuple)):
        for v in values:
            found |= recorded(v, key)
    return found


def named(text: str) -> dict[str, list[int]]:
    """The layers and heads a text names, as numbers shown."""
    return {"layer": [int(m.group(1)) for p in LAYER_PATTERNS for m in p.finditer(text)],
            "head": [int(m.group(1)) for p in HEAD_PATTERNS for m in p.finditer(text)]}


def check_texts(name: str, values: dict, captions: list[str], labels: list[str], n_layer: int, n_head: int) -> int:
    """Check every caption and label against the manifest (module docstring); returns how many numbers it read."""
    limits = {"layer": n_layer, "head": n_head}
    one = subject(name, values)
    read = 0
    for text in captions + labels:
        for kind, numbers in named(text).items():
            for n in numbers:
                read += 1
                assert 1 <= n <= limits[kind], \
                    f"{name}: {text!r} names {kind} {n}: on screen {kind}s count from 1 to {limits[kind]} (style.shown)"
    for text in captions:
        for kind, numbers in named(text).items():
            # the convention, written out here (not style.shown): the zero-based index plus one
            allowed = {i + 1 for i in ({one[kind]} | story_picks(values)[kind] if kind in one else
                                       recorded(values, kind))}
            for n in numbers:
                assert n in allowed, (f"{name}: caption {text!r} names {kind} {n}, but the manifest's {kind} is "
                                      f"{sorted(i - 1 for i in allowed)} (zero-based), shown as {sorted(allowed)}")
    return read


def texts_on_screen(scene) -> tuple[list[str], list[str]]:
    """(every caption said, the title card's note included; every other text on screen at any snapshot)."""
    captions = [c["text"] for c in scene.captions]
    lines = {line for c in captions for line in c.split("\n")}
    labels = {t[1] for shot in scene.snapshots.values() for t in shot["texts"] if t[1] and t[1] not in lines}
    return captions, sorted(labels)


def cases():
    for name in SCENES:
        for lang in LANGS:
            yield pytest.param(name, {"lang": lang}, id=f"{name}-{lang}")
    for name, given in GIVEN:
        for lang in LANGS:
            yield pytest.param(name, {**given, "lang": lang},
                               id=f"{name}-{lang}-" + "-".join(f"{k}{v}" for k, v in given.items()))


@pytest.fixture(scope="module")
def caches(tmp_path_factory):
    """One tex/text cache for this file's dry runs (the same labels recur: compiled once)."""
    return tmp_path_factory.mktemp("layer-convention")


@pytest.mark.parametrize("name, params", list(cases()))
def test_layers_and_heads_on_screen_count_from_one(gpt, lecture, caches, name, params):
    # the defaults: the session's own dry run of the scene (scene_checks.Lecture, shared with test_scenes.py)
    scene = lecture.dry(name, params["lang"]) if set(params) == {"lang"} else play_lean(name, params, caches)
    captions, labels = texts_on_screen(scene)
    c = gpt.config
    check_texts(name, scene.values, captions, labels, c.n_layer, c.n_head)
    chapters = [t for lang in LANGS for t in scene.chapter_names[lang].values()]
    check_texts(name, scene.values, [], chapters, c.n_layer, c.n_head)
    for key in ("layer", "head"):
        if key in params:   # the manifest keeps the index given, zero-based; the screen names it counted from 1
            assert scene.values[key] == params[key], (name, key, scene.values[key])
            assert any(params[key] + 1 in named(t)[key] for t in captions + labels), \
                f"{name}: the {key} given ({params[key]}, zero-based) is never named on screen as {params[key] + 1}"


def test_the_check_reads_both_languages():
    assert named("Layer 2, head 4 of our small GPT") == {"layer": [2], "head": [4]}
    assert named("我们训练的小型 GPT 的第 2 层第 4 个头") == {"layer": [2], "head": [4]}
    assert named("L3 MLP · 头 1：16") == {"layer": [3], "head": [1]}
    assert named("每层每个头 1024 个分数，共 3 层") == {"layer": [], "head": []}   # counts, not names
    assert named("GPT-3 has 96 layers of 96 heads") == {"layer": [], "head": []}
    assert named("MLP 58.2%, attention 30.1%, MLP 4,743,168") == {"layer": [], "head": []}   # not layers


@pytest.mark.slow
def test_a_zero_based_layer_on_screen_fails(gpt, tmp_path, monkeypatch):
    """Were a scene to show the index itself, the check fails: on the first layer, and on any layer in a caption."""
    with pytest.raises(AssertionError, match="count from 1"):
        check_texts("values_update", {"layer": 0, "head": 2}, ["Layer 0, head 3"], [], 3, 4)
    with pytest.raises(AssertionError, match="zero-based"):
        check_texts("values_update", {"layer": 1, "head": 2}, ["Layer 1, head 3"], [], 3, 4)
    with pytest.raises(AssertionError, match="zero-based"):
        check_texts("values_update", {"layer": 1, "head": 2}, ["第 2 层第 2 个头"], [], 3, 4)
    monkeypatch.setattr(style, "shown", lambda index: int(index))   # every scene showing the index as it is
    scene = play_lean("values_update", {"lang": "zh", "layer": 1, "head": 2}, tmp_path)
    captions, labels = texts_on_screen(scene)
    with pytest.raises(AssertionError):
        check_texts("values_update", scene.values, captions, labels, gpt.config.n_layer, gpt.config.n_head)
