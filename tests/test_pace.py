"""The lecture's pace (issue 41 rule 1, docs/teaching.md §8-§9), as mechanisms of the scene skeleton (scenes/pace.py)
checked over the default lecture in both languages:

- in every content beat speech fills at most 80%; each picture built is held silent at least 1.5 s before the next
  line; a title card lasts at most 6 s (tests/pace_checks.py, from each scene's "pace" record): on the session's dry
  runs (silent: a line's time is its reading time) and on dry runs whose lines take the time the voices would
  (speech/estimate.py: each line's seconds from its words at the voices' measured rates);
- while speaking, English at most 165 words a minute, Chinese at most 4.8 Han characters a second: the real voices
  on a sample of the lecture's lines (slow);
- where the numbers come from is said once, in the lecture's first scene; every other title card asks a question.

The random-prompt sweep (tests/test_caption_rules.py) holds every run to the same pace checks.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path

import pytest

from pace_checks import HELD, SHARE, TITLE, assert_paced, pace_problems
from scene_checks import lean, run_dry
from scenes import style
from scenes.catalog import SCENES
from scenes.pace import Pace, is_build

ROOT = Path(__file__).resolve().parent.parent
LECTURE = [s["name"] for s in tomllib.loads((ROOT / "lecture.toml").read_text(encoding="utf-8"))["scene"]]
LANGS = ("en", "zh")
RATE_LIMITS = {"en": 165.0, "zh": 4.8}       # words a minute; Han characters a second
PROVENANCE = {"en": r"(every|the) (number|shape|point)s? here (comes?|is|are) from|\bthe numbers: our|comes? from our",
              "zh": r"数字(都)?来自|形状都来自|数字来自"}


def test_the_skeleton_uses_the_documented_limits():
    assert (style.HELD_SILENCE, style.SPEECH_SHARE, style.TITLE_CARD) == (HELD, SHARE, TITLE)


# --- the mechanism, on made-up plays -----------------------------------------------------------------------------
def paced_beat(held: float = HELD, share: float = SHARE) -> list[dict]:
    """A beat as the skeleton keeps it: a 5 s line, two builds during it, the next line (5 s), the beat's end."""
    pace = Pace(held, share, TITLE)
    pace.beat_started("title", 0.0)
    pace.line_said(2.4, 2.0)
    pace.beat_ended(5.0)
    pace.beat_started("one", 5.0)
    pace.line_said(5.6, 5.0)          # said until 10.6
    pace.played(5.6, 6.8, build=True)
    pace.played(6.8, 9.8, build=True)  # built until 9.8, before the line ends: held from 10.6
    until = pace.hold_until(lead=0.6)  # the next caption's fade counts towards the silence
    pace.held(until, lead=0.6)
    pace.line_said(until + 0.6, 5.0)
    end = until + 0.6 + 5.0 + 0.3
    pad = pace.padding(end)
    pace.beat_ended(end + pad, pad)
    return pace.record()


def test_a_build_is_held_silent_and_a_beat_padded_to_its_share():
    record = paced_beat()
    beat = record[1]
    assert beat["held"] == pytest.approx(HELD) and beat["padded"] > 0
    assert beat["speech"] <= SHARE * beat["seconds"] + 1e-3
    assert_paced(record, "made-up")


def test_the_checks_fail_without_the_mechanism():
    """The same beat kept by a skeleton without the held silence or the share finds its breach named."""
    assert any("held silent 0.00 s" in p for p in pace_problems(paced_beat(held=0.0)))
    assert any("over 80%" in p for p in pace_problems(paced_beat(share=1.0)))
    record = paced_beat()
    record[0] = {**record[0], "end": 7.0, "seconds": 7.0}
    assert pace_problems(record) == ["title card: 7.00 s, over 6 s"]
    with pytest.raises(AssertionError, match="held silent"):
        assert_paced(paced_beat(held=1.0), "broken")


def test_what_counts_as_a_build():
    from manim import Circle, FadeIn, FadeOut, Transform, Wait
    from manim.animation.composition import AnimationGroup
    a, b = Circle(), Circle()
    assert is_build([FadeIn(a)]) and is_build([Transform(a, b)]) and is_build([a.animate.shift([1, 0, 0])])
    assert not is_build([Wait(1)]) and not is_build([FadeOut(a)]) and not is_build([AnimationGroup(FadeOut(a))])
    assert is_build([AnimationGroup(FadeOut(a), FadeIn(b))])


# --- the default lecture -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", LECTURE)
def test_every_beat_of_the_default_lecture_is_paced_silent(lecture, name, lang):
    """The session's dry runs (silent: each line is held for its reading time)."""
    assert_paced(lecture.dry(name, lang).pace.record(), f"{name} ({lang}, silent)")


def spoken_dry(name: str, lang: str, tmp, voice_cache=None):
    """The scene with its defaults in `lang`, played dry, each line taking the time the voice would (estimated); with
    `voice_cache`, the title card's note said by the real voice (synthesised into that folder)."""
    from speech.estimate import EstimatingNarrator
    from speech.narrator import Narrator
    spec = SCENES[name]
    cls = lean(getattr(importlib.import_module(spec.module), spec.cls))

    class TitleSaid(EstimatingNarrator):
        def line(self, key, text, say=None):
            if key == "title_note" and voice_cache is not None:
                self.cache_dir = Path(voice_cache)
                return Narrator.line(self, key, text, say)
            return super().line(key, text, say)

    class Spoken(cls):
        def setup(self):
            super().setup()
            self.narrator = TitleSaid(self.name, self.lang)

    Spoken.__name__ = cls.__name__
    return run_dry(Spoken, {"lang": lang}, tmp, captions=False, frames=False)


@pytest.fixture(scope="module")
def dry_caches(tmp_path_factory):
    return tmp_path_factory.mktemp("pace-dry"), tmp_path_factory.mktemp("pace-voice")


@pytest.mark.slow
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", LECTURE)
def test_every_beat_of_the_default_lecture_is_paced_spoken(dry_caches, name, lang):
    """Each line held for the speech the voice would give it (speech/estimate.py), as a spoken render holds it; the
    title card's note said by the real voice (the card's 6 s)."""
    scene = spoken_dry(name, lang, *dry_caches)
    assert [c["speech"]["source"] for c in scene.captions] == ["voice"] + ["estimate"] * (len(scene.captions) - 1)
    assert_paced(scene.pace.record(), f"{name} ({lang}, spoken)")


@pytest.mark.slow
def test_a_scene_played_without_the_mechanism_breaks_the_pace(dry_caches, monkeypatch):
    """The checks find the breaches in a real scene whose skeleton neither holds a picture nor pads a beat."""
    monkeypatch.setattr(style, "HELD_SILENCE", 0.0)
    monkeypatch.setattr(style, "SPEECH_SHARE", 1.0)
    problems = pace_problems(spoken_dry("next_token", "en", dry_caches[0]).pace.record())
    assert any("held silent" in p for p in problems) and any("over 80%" in p for p in problems), problems


def lecture_texts(lecture, lang: str) -> dict[str, list[dict]]:
    return {name: lecture.dry(name, lang).captions for name in LECTURE}


@pytest.mark.parametrize("lang", LANGS)
def test_where_the_numbers_come_from_is_said_once_in_the_opening(lecture, lang):
    said = lecture_texts(lecture, lang)
    rx = re.compile(PROVENANCE[lang], re.IGNORECASE)
    found = [(name, c["key"]) for name, captions in said.items() for c in captions
             if rx.search(c["text"]) or rx.search(c["say"])]
    assert found == [(LECTURE[0], "title_note")], found
    first = said[LECTURE[0]][0]["text"]
    assert "GPT" in first and first.endswith(("GPT.", "GPT。")), first   # ours, named by scenes.prompts.model_words


@pytest.mark.parametrize("lang", LANGS)
def test_every_other_title_card_asks_its_question_in_one_short_line(lecture, lang):
    for name in LECTURE[1:]:
        note = lecture.dry(name, lang).captions[0]
        assert note["key"] == "title_note", name
        text = note["text"]
        assert "\n" not in text and text.endswith(("?", "？")), (name, text)
        assert (len(text.split()) <= 10) if lang == "en" else (len(re.findall(r"[\u4e00-\u9fff]", text)) <= 16), \
            (name, text)


def test_a_checkpoint_is_named_where_the_numbers_come_from():
    """A lecturer's own checkpoint is named as what it is in the opening's provenance line (scenes.prompts.model_words)."""
    import types
    from scenes.next_token import NextToken
    from scenes.prompts import MODEL_WORDS
    for lang in LANGS:
        checkpoint = MODEL_WORDS["full"]["checkpoint"][lang].format(layers=12)
        scene = types.SimpleNamespace(s=lambda key, **v: NextToken.strings(key, lang, **v),
                                      model_words=lambda form="full": checkpoint)
        assert checkpoint in NextToken.title_note(scene)


# --- the speaking rate, on the real voices -----------------------------------------------------------------------
SAMPLE_EVERY = 8          # every 8th line of the default lecture (about 20 a language)


@pytest.mark.slow
@pytest.mark.parametrize("lang", LANGS)
def test_the_voices_speak_the_lecture_within_the_rate(lecture, lang, tmp_path):
    """The real voice on a sample of the lecture's lines (their spoken forms), trimmed as the line cache trims them:
    English at most 165 words a minute, Chinese at most 4.8 Han characters a second, while speaking."""
    from speech.estimate import units
    from speech.spoken import spoken
    from speech.synth_cache import line_audio
    from speech.voices import voice
    lines = [spoken(c["say"], lang) for name in LECTURE for c in lecture.dry(name, lang).captions]
    sample = lines[::SAMPLE_EVERY]
    said = voice(lang)
    seconds = sum(line_audio(said, line, tmp_path)[1] for line in sample)
    n = sum(units(line, lang) for line in sample)
    rate = n / seconds * (60 if lang == "en" else 1)
    assert rate <= RATE_LIMITS[lang], f"{lang}: {rate:.1f} over {RATE_LIMITS[lang]} on {len(sample)} lines"
