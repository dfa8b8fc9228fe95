"""Every beat of every catalog scene has a short title in English and Chinese (its chapter name in the clip's chapter
track, the lecture's chapters, the course page and the deck), declared by the scene (its beat_titles table)."""

from __future__ import annotations

import importlib
import re

import pytest

from pipeline import tracks
from scenes.catalog import SCENES
from scenes.lecture import LectureScene, MissingBeatTitle
from scenes.style import LANGUAGES, Strings

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
LONGEST = {"en": 32, "zh": 20}   # characters: a title names a chapter in a menu, it is no caption

# Parameters that change a scene's beats, besides each scene's defaults.
VARIANTS = {
    "next_token": [{"steps": 1}],                                    # no "loop" beat
    "softmax_temperature": [{"temperatures": (1.0, 2.0, 0.5, 2.0, 0.0, 2.0)},   # T = 2 visited three times
                            {"temperatures": (3.0, 1.0, 0.05)}],      # a stop at 1, no introduction at 1
}


def scene_class(name: str) -> type[LectureScene]:
    return getattr(importlib.import_module(f"scenes.{name}"), SCENES[name].cls)


def cases():
    for name in SCENES:
        yield pytest.param(name, {}, id=name)
        for i, given in enumerate(VARIANTS.get(name, [])):
            yield pytest.param(name, given, id=f"{name}-{i + 1}")


@pytest.mark.parametrize("name, given", list(cases()))
def test_every_beat_has_a_short_distinct_title_in_both_languages(gpt, name, given):
    spec, cls = SCENES[name], scene_class(name)
    params = spec.resolve(given, model=gpt)
    sections = spec.section_names(params)
    titles = cls.chapter_titles(params)   # raises MissingBeatTitle for a beat without one
    assert set(titles) == set(LANGUAGES)
    for lang in LANGUAGES:
        shown = [titles[lang][s] for s in sections]
        assert list(titles[lang]) == sections
        for section, title in zip(sections, shown):
            assert title and title == title.strip() and "\n" not in title, (name, section, lang, title)
            assert len(title) <= LONGEST[lang], (name, section, lang, title)
            assert bool(CJK.search(title)) == (lang == "zh"), (name, section, lang, title)
        assert len(set(shown)) == len(shown), (name, lang, shown)   # no two chapters of a clip alike
    assert titles["en"]["title"] == cls.strings("title", "en") and titles["zh"]["title"] == cls.strings("title", "zh")


def test_the_lectures_chapters_are_all_distinct(gpt):
    """The full lecture names each beat "scene — beat": over the whole catalog no two alike, in either language."""
    for lang in LANGUAGES:
        names = []
        for name, spec in SCENES.items():
            titles = scene_class(name).chapter_titles(spec.resolve({}, model=gpt))[lang]
            manifest = {"scene": name, "titles": {lang: titles["title"]}, "beat_titles": {lang: titles}}
            names += [tracks.lecture_chapter(manifest, s, lang) for s in titles]
        assert len(set(names)) == len(names) > 100, lang


def test_a_beat_without_a_title_is_a_clear_error():
    class Untitled(scene_class("token_embedding")):
        beat_titles = Strings({k: v for k, v in scene_class("token_embedding").beat_titles.table.items()
                               if k != "lookup"})
    with pytest.raises(MissingBeatTitle, match=r"^token_embedding: beat 'lookup' has no title: add it to the scene's "
                                               r"beat_titles \(in English and Chinese\)$"):
        Untitled.chapter_titles({"prompt": "auto", "focus": "auto", "lang": "en"})


def test_a_title_without_its_translation_fails_at_import():
    with pytest.raises(ValueError, match="string 'lookup' has no zh version"):
        Strings({"lookup": {"en": "Looking up a column", "zh": ""}})


def test_every_title_in_a_table_names_a_beat(gpt):
    """No stale entry: every key of a scene's table is one of its beats (for some parameters)."""
    for name, spec in SCENES.items():
        beats = {s for given in [{}, *VARIANTS.get(name, [])] for s in spec.section_names(spec.resolve(given, model=gpt))}
        unused = set(scene_class(name).beat_titles.table) - beats - {"summary"}
        assert not unused, (name, unused)   # ("summary" is every table's, from style.BEAT_TITLES)


# --- pipeline.tracks reads them from the manifest ------------------------------------------------------------
MANIFEST = {"scene": "s", "output": "s-lang-zh.mp4", "params": {"lang": "zh"},
            "titles": {"en": "Scene", "zh": "场景"},
            "beat_titles": {"en": {"title": "Scene", "a": "First"}, "zh": {"title": "场景", "a": "第一"}},
            "timeline": [{"section": "title", "title": "场景", "start": 0.0, "end": 1.0},
                         {"section": "a", "title": "第一", "start": 1.0, "end": 2.5}],
            "captions": []}


def test_a_clips_chapter_track_is_in_its_own_language():
    assert tracks.chapter_cues(MANIFEST) == [(0.0, 1.0, "场景"), (1.0, 2.5, "第一")]
    assert tracks.chapter_cues({**MANIFEST, "params": {"lang": "en"}}) == [(0.0, 1.0, "Scene"), (1.0, 2.5, "First")]
    assert tracks.lecture_chapter(MANIFEST, "a", "zh") == "场景——第一"
    assert tracks.lecture_chapter(MANIFEST, "a", "en") == "Scene — First"
    back = tracks.parsed_vtt(tracks.track_texts(MANIFEST)["chapters.vtt"])
    assert back == [(0.0, 1.0, "场景"), (1.0, 2.5, "第一")]


def test_a_manifest_from_before_beat_titles_cannot_be_packaged():
    old = {k: v for k, v in MANIFEST.items() if k != "beat_titles"}
    with pytest.raises(tracks.PackagingError, match=r"^s-lang-zh.mp4: beat 'a' has no zh title in the manifest "
                                                    r"\(rendered before beats had titles\): render it again$"):
        tracks.track_texts(old)
