"""The skeleton of every lecture scene: the model, the parameters, the beats, the captions and the manifest values.

A scene declares three things and the skeleton does the rest:

- its `strings` (a style.Strings table: every on-screen text in English and Chinese, with "title",
  "subtitle" and, if it has a closing beat, "summary"), and its `beat_titles` (style.BEAT_TITLES | a table
  section name -> a short title in English and Chinese: the beat's chapter name; the title card's beat is
  named by "title"; a beat without one fails the render at setup, MissingBeatTitle);
- its numbers: `prepare()` reads the model (never computing model maths itself), builds the pieces and
  records every number shown in `self.values` (the manifest); its "title_note" string asks the scene's question
  on the title card (`title_note()`);
- its beats: one method `beat_<section>` per section the catalog declares after "title", in order
  (`script()` may list them otherwise, e.g. one beat per temperature). `beat_summary` is the closing beat.

The skeleton plays the title card, starts each beat (a manim section), fades the title card out at the
first beat, and holds every caption on screen until it has been said: in a voiced clip (render.py sets
GPT_LECTURE_VOICE, speech/narrator.py) until its line has been spoken, from when it is fully shown, plus
SPEECH_GAP; in a silent one long enough to read it (READING_RATE: characters a second); in both, at least as long
as its caption tracks in every language need (TRACK_RATE). It also keeps the lecture's pace (scenes/pace.py): a
picture built is held silent for style.HELD_SILENCE before the next line, a content beat's lines fill at most
style.SPEECH_SHARE of it, the title card's fades are short (style.TITLE_IN). A beat's animations keep their run
times; no scene tunes a caption's hold by hand. A caption that states
a property of the numbers is chosen by a rule over them: `caption_rule()` records the rule, its inputs and
the key it chose in the manifest (values["caption_rules"]).

A scene renders with plain `manim render -ql scenes/<file>.py <Scene>` using its
declared defaults. render.py (or anyone) can choose otherwise through the
environment, read once in setup():

    GPT_LECTURE_MODEL    weights directory (default: model/weights)
    GPT_LECTURE_PARAMS   JSON object of parameters, e.g. {"lang": "zh", "top_k": 3}
    GPT_LECTURE_SECTION  render only this beat (name or 1-based number): a clip, or with -s its last frame
    GPT_LECTURE_CLEAN    "1": a clean clip for voice-over: every caption (and the title card's note) is drawn
                         fully transparent, so the timeline and the numbers stay those of the captioned clip
    GPT_LECTURE_VOICE    JSON {"cache": DIR, "recordings": DIR or null}: speak every line (speech/narrator.py);
                         unset, the clip is silent and captions are held at a reading rate
"""

from __future__ import annotations

import json
import os

from manim import DOWN, RIGHT, UP, FadeIn, FadeOut, Group, MathTex, Scene, VGroup
from manim.utils.exceptions import EndSceneEarlyException

from . import style
from .catalog import SCENES
from .components import Label, PipelineMap, caption, math_tex
from .pace import Pace, is_build, tenths_up
from .params import ParamError, SceneSpec, pick_section
from .prompts import model_words
from speech.narrator import SPEECH_GAP, Narrator

ENV_MODEL, ENV_PARAMS, ENV_SECTION = "GPT_LECTURE_MODEL", "GPT_LECTURE_PARAMS", "GPT_LECTURE_SECTION"
ENV_CLEAN = "GPT_LECTURE_CLEAN"


def load_model(directory: str | None = None):
    from model import NumpyGPT
    return NumpyGPT.load(directory or os.environ.get(ENV_MODEL) or None)


class MissingBeatTitle(LookupError):
    """A beat that its scene's beat_titles table does not name."""


def env_params() -> dict:
    raw = os.environ.get(ENV_PARAMS, "").strip()
    if not raw:
        return {}
    try:
        given = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ParamError(f"{ENV_PARAMS} is not valid JSON ({e.msg})") from None
    if not isinstance(given, dict):
        raise ParamError(f"{ENV_PARAMS} must be a JSON object of parameters")
    return given


class LectureScene(Scene):
    """Subclasses set `name` (their catalog entry) and `strings`, and write prepare(), title_note() and their
    beats (see the module's docstring)."""

    name: str = ""
    strings: style.Strings = style.SHARED
    beat_titles: style.Strings = style.BEAT_TITLES   # section name -> the beat's short title (its chapter name)
    READING_RATE = {"en": 17.0, "zh": 9.0}   # characters a second: the reading speeds of professional subtitles
    TRACK_RATE = {"en": 20.0, "zh": 10.0}    # the fastest a caption track's cue may read (pipeline/tracks.py)
    CAPTION_FADE = 0.6                       # seconds: one caption out, the next in
    TITLE_FADE = 0.8                         # seconds: the title card out, at the first beat
    TITLE_TOP, NOTE_Y = 1.2, -1.4            # the title card: the title's centre, the note's centre

    @classmethod
    def spec(cls) -> SceneSpec:
        return SCENES[cls.name]

    @classmethod
    def beat_title(cls, section: str, lang: str, params: dict) -> str:
        """A beat's short title in `lang` (its chapter name): the scene's title for the title card, else its entry in
        beat_titles. A scene whose section names come from its parameters (one beat per temperature) overrides
        this for those."""
        if section == "title":
            return cls.strings("title", lang)
        if section not in cls.beat_titles.table:
            raise MissingBeatTitle(f"{cls.name}: beat {section!r} has no title: add it to the scene's beat_titles "
                                   f"(in English and Chinese)")
        return cls.beat_titles(section, lang)

    @classmethod
    def chapter_titles(cls, params: dict) -> dict[str, dict[str, str]]:
        """{lang: {section: title}}: every beat these parameters give, titled in every language."""
        sections = cls.spec().section_names(params)
        return {lang: {s: cls.beat_title(s, lang, params) for s in sections} for lang in style.LANGUAGES}

    def setup(self):
        self.gpt = load_model()
        self.params = self.spec().resolve(env_params(), model=self.gpt, where=f"{self.name}: ")
        self.lang = self.params.get("lang", "en")
        self.values: dict = {}          # every number on screen, at full precision, for the manifest
        self.section_names = self.spec().section_names(self.params)
        self.chapter_names = self.chapter_titles(self.params)   # {lang: {section: title}}: the manifest's beat_titles
        self.beats_done = 0
        self.clock = 0.0   # the nominal run time of every play so far (see play)
        self.pace = Pace(style.HELD_SILENCE, style.SPEECH_SHARE, style.TITLE_CARD)   # scenes/pace.py: the manifest's "pace"
        self.skeleton_playing = False   # a play of the skeleton's own (a caption's fade, the title card): not a build
        self.beat_starts: list[float] = []    # scene time at the start of each beat played
        self.captions: list[dict] = []        # every caption shown: key, text, when fully shown, when it left
        #                                       (scene time, and the number of plays done then: shown_play, left_play)
        self.clean = os.environ.get(ENV_CLEAN, "").strip() == "1"   # captions drawn transparent (voice-over)
        self.narrator = Narrator.from_env(self.name, self.lang)      # None: silent, held at a reading rate
        self.current_caption = None
        self.title_group, self.title_up = None, False
        wanted = os.environ.get(ENV_SECTION, "").strip()
        self.only_section = pick_section(wanted, self.section_names) if wanted else None

    # --- what a scene declares ---------------------------------------------------------------------------
    def prepare(self) -> None:
        """Read the model, build the pieces, record every number shown in self.values."""
        raise NotImplementedError

    def title_note(self) -> str:
        """The title card's note (a caption, held like one): the scene's question, its string "title_note", in a
        short line (docs/teaching.md §1, §8; the card lasts at most style.TITLE_CARD). Where the numbers come from
        is said once, in the lecture's first scene (next_token); the details are in the manifest."""
        return self.s("title_note")

    def title_line(self) -> str:
        """The title note as shown and said: title_note() without blank lines at its ends."""
        return self.title_note().strip()

    def script(self) -> list[tuple[str, callable]]:
        """The beats after the title card, in the catalog's order: (section name, the method that plays it)."""
        return [(name, getattr(self, f"beat_{name}")) for name in self.section_names[1:]]

    # --- the lecture script -------------------------------------------------------------------------------
    def construct(self):
        self.beat("title")
        self.prepare()
        self.show_title(self.title_line())
        for name, play in self.script():
            self.beat(name)
            if self.title_up:
                self.caption_left()   # the title card's note leaves with the card
                self.skeleton_play(FadeOut(self.title_group), run_time=self.TITLE_FADE)
                self.title_up = False
            play()
        self.hold_for_reading()
        self.end_beat()
        self.caption_left()
        self.check_recordings(complete=self.only_section is None)

    def beat(self, name: str) -> None:
        """Start the next beat: a manim section, in the order the catalog declares. The caption on screen is
        held until it has been read first, so the pause belongs to the beat it was said in."""
        expected = self.section_names[self.beats_done] if self.beats_done < len(self.section_names) else None
        if name != expected:
            raise RuntimeError(f"{self.name}: beat {name!r} where the catalog declares {expected!r}")
        self.hold_for_reading()
        if self.beats_done:
            self.end_beat()
        index = self.beats_done
        self.beats_done += 1
        self.beat_starts.append(float(self.renderer.time))
        self.pace.beat_started(name, self.clock)
        if self.only_section is not None and index > self.only_section:
            self.check_recordings(complete=False)
            raise EndSceneEarlyException()
        skip = self.only_section is not None and index < self.only_section
        self.next_section(name, skip_animations=skip)

    def end_beat(self) -> None:
        """The beat's lines have been said and its last picture held: hold it longer if its lines would fill more than
        style.SPEECH_SHARE of it (scenes/pace.py)."""
        pad = self.pace.padding(self.clock)
        if pad:
            self.wait(pad)
        self.pace.beat_ended(self.clock, pad)

    def check_recordings(self, complete: bool) -> None:
        """The lecturer's recordings for this scene all match a line (speech/narrator.py)."""
        if self.narrator is not None and self.narrator.recordings:
            self.narrator.check_recordings({"title_note", *self.strings.table}, complete)

    def beat_summary(self) -> None:
        """The closing beat: the scene's "summary" caption, held until it is read. A scene's own closing beat draws
        its one idea anew: say its caption, then show_where()."""
        self.say("summary")

    def show_where(self, lit: list[str], lines: list[tuple[str, object]], **numbers) -> None:
        """The closing beat's picture: the model's pipeline, lit at the parts this scene is about (`lit`, see
        components.PipelineMap), with `lines` (text, colour) beside them: the scene's numbers, each read from the
        model. `numbers` (full precision) and the parts lit go into values["where"]."""
        self.where = PipelineMap(self.gpt.config.n_layer, lit=lit, lines=lines, lang=self.lang)
        self.values["where"] = {**self.where.record(), **numbers}
        self.clear_stage()
        self.where.play_in(self)

    def timeline(self) -> list[dict]:
        """Where each beat starts and ends in the clip, in seconds, with its title in the scene's language: chapter
        marks for a video player. A clip of one beat (GPT_LECTURE_SECTION) holds that beat alone, from 0."""
        ends = self.beat_starts[1:] + [float(self.renderer.time)]
        marks = [{"section": name, "title": self.chapter_names[self.lang][name], "start": round(start, 3),
                  "end": round(end, 3)}
                 for name, start, end in zip(self.section_names, self.beat_starts, ends)]
        if self.only_section is None:
            return marks
        one = marks[self.only_section]
        return [{**one, "start": 0.0, "end": round(one["end"] - one["start"], 3)}]

    # --- text ---------------------------------------------------------------------------------------------
    def s(self, key: str, **values) -> str:
        """The scene's string `key` in the scene's language."""
        return self.strings(key, self.lang, **values)

    def model_words(self, form: str = "full", **values) -> str:
        """The model whose numbers are shown, named in the scene's language by one rule (scenes.prompts.model_words):
        ours in the lecture's words, a checkpoint of one's own from its config."""
        return model_words(self.gpt, self.lang, form, **values)

    def say(self, key: str, **values) -> None:
        """Replace the caption with the string `key`, once the one on screen has been read."""
        new = self.hidden_if_clean(caption(self.s(key, **values), self.lang))
        old = self.current_caption
        self.hold_for_reading(lead=self.CAPTION_FADE)
        self.caption_left()
        self.skeleton_play(*([FadeOut(old)] if old is not None else []), FadeIn(new), run_time=self.CAPTION_FADE)
        self.current_caption = new
        self.caption_shown(key, new.text, say=self.words_for_the_ear(key, values))
        self.captions[-1]["values"] = values   # to say the same key in the other language (render.py's tracks)

    def words_for_the_ear(self, key: str, values: dict) -> str:
        """What the voice reads for caption `key` (speech.spoken.announced): the caption's template, or its spoken
        version where the table has one ("say_en", "say_zh": a formula said by what it means), filled in with every
        quoted token announced as a word."""
        from speech.spoken import announced
        versions = self.strings.table[key]
        return announced(versions.get(f"say_{self.lang}", versions[self.lang]), values, self.lang)

    def caption_rule(self, name: str, key: str, rule: str, **inputs) -> str:
        """Record which caption a rule over the numbers chose (`key`), the rule in words, and its inputs, in
        values["caption_rules"][name]; returns the key, to say it."""
        self.values.setdefault("caption_rules", {})[name] = {"rule": rule, "inputs": inputs, "key": key}
        return key

    def record_sum(self, beat: str, what: str, rounded, drawn=None) -> None:
        """A sum drawn in `beat` (components.sums: RoundedSum, RoundedPercents, CountSum), recorded in values["sums"]
        with its true values, its labels as drawn and whether they add up ("approx"); `what` names it as shown
        ("E + ΔE = E′"). `drawn`: what writes its relation on screen, the sign between its columns (= or ≈) or its
        total under a rule ("≈ 100.0%"), one mobject for the whole sum or a list, one per row (a table's totals):
        their texts go into the entry's "drawn" (tests/sum_checks.py holds ≈ there to "approx")."""
        from scenes.components.sums import drawn_text
        entry = rounded.record(beat, what)
        if drawn is not None:
            entry["drawn"] = [drawn_text(m) for m in (drawn if isinstance(drawn, (list, tuple)) else [drawn])]
        self.values.setdefault("sums", []).append(entry)

    def reading_time(self, text: str) -> float:
        """Seconds a caption needs on screen: its characters (line breaks aside) at the language's rate."""
        return len(text.replace("\n", "")) / self.READING_RATE[self.lang]

    def hold_time(self, caption_entry: dict) -> float:
        """Seconds a caption stays once fully shown: its speech and SPEECH_GAP in a voiced clip, else the time to
        read it; and at least as long as its caption tracks need (tracks_time)."""
        if "speech" in caption_entry:
            own = caption_entry["speech"]["seconds"] + SPEECH_GAP
        else:
            own = self.reading_time(caption_entry["text"])
        return max(own, self.tracks_time(caption_entry))

    def tracks_time(self, caption_entry: dict) -> float:
        """Seconds the line needs in the clip's caption tracks: render.py writes every language's track on the clip's
        times (pipeline/tracks.py), and a cue may read at most TRACK_RATE, however fast the voice speaks. The other
        languages' lines are the same key and values in that language (the title card's note: title_note() in
        it), as the manifest records them."""
        need = 0.0
        for lang in style.LANGUAGES:
            if lang == self.lang:
                text = caption_entry["text"]
            elif caption_entry["key"] == "title_note":
                own, self.lang = self.lang, lang
                try:
                    text = self.title_line()
                finally:
                    self.lang = own
            else:
                text = self.strings(caption_entry["key"], lang, **caption_entry.get("values", {}))
            need = max(need, len(text.replace("\n", "")) / self.TRACK_RATE[lang])
        return need

    def caption_shown(self, key: str, text: str, say: str | None = None) -> None:
        """A caption is fully on screen: in a voiced clip its line is said from now (synthesised first, or the
        lecturer's recording). `say`: the words for the ear (words_for_the_ear), where they are not the text."""
        entry = {"beat": self.section_names[max(self.beats_done - 1, 0)], "key": key, "text": text,
                 "say": say if say is not None else text,
                 "shown": float(self.renderer.time), "shown_clock": self.clock, "left": None,
                 "shown_play": self.renderer.num_plays, "left_play": None}
        if self.narrator is not None:
            entry["speech"] = vars(self.narrator.line(key, text, entry["say"]))
        self.captions.append(entry)
        self.pace.line_said(self.clock, entry["speech"]["seconds"] if "speech" in entry else self.reading_time(text))

    def caption_left(self) -> None:
        if self.captions and self.captions[-1]["left"] is None:
            self.captions[-1]["left"] = float(self.renderer.time)
            self.captions[-1]["left_play"] = self.renderer.num_plays

    def hidden_if_clean(self, mobject):
        """A caption as drawn: in a clean clip (GPT_LECTURE_CLEAN) fully transparent, same place and timing."""
        return mobject.set_opacity(0) if self.clean else mobject

    def play(self, *args, **kwargs) -> None:
        """manim's play (every wait too), counted on the scene's nominal clock: the sum of the plays' run times.
        A process that draws a play advances renderer.time by whole frames and one that skips it (a later part of
        a clip split across processes) by its run time; holds are decided on this clock, so both make the same
        plays, and the parts of a split clip fit together."""
        super().play(*args, **kwargs)
        self.advance(self.duration, args)

    def advance(self, duration: float, animations) -> None:
        """A play of `duration` seconds is done: the nominal clock moves on, and the pace's books (scenes/pace.py)
        note a build (tests/scene_checks.py's lean play calls this too)."""
        start = self.clock
        self.clock += duration
        self.pace.played(start, self.clock, build=not self.skeleton_playing and is_build(animations))

    def skeleton_play(self, *animations, run_time: float) -> None:
        """A play of the skeleton's own (a caption's fade, the title card's): it builds no picture to hold."""
        self.skeleton_playing = True
        try:
            self.play(*animations, run_time=run_time)
        finally:
            self.skeleton_playing = False

    def hold_for_reading(self, lead: float = 0.0) -> None:
        """Wait (rounded up to 0.1 s) until the caption on screen has been up long enough to be said or read, and a
        picture built since has been held silent for style.HELD_SILENCE (scenes/pace.py); `lead`: the silent fade
        before the next line is said, counted towards that."""
        until = self.clock
        if self.captions and self.captions[-1]["left"] is None:
            last = self.captions[-1]
            until = max(until, last["shown_clock"] + self.hold_time(last))
        silence = self.pace.hold_until(lead)
        if silence is not None:
            until = max(until, silence)
        if until - self.clock > 1e-9:
            self.wait(tenths_up(until - self.clock))
        if silence is not None:
            self.pace.held(self.clock, lead)

    @staticmethod
    def tex(*parts: str, colours: dict | None = None) -> MathTex:
        """A formula in the maths size, split into parts; parts named in `colours` take their colour."""
        return math_tex(*parts, colours=colours)

    @staticmethod
    def header(text: str, x: float, colour, baseline: float) -> Label:
        """A column header: small text centred on x, on a baseline."""
        label = Label(text, font_size=style.SMALL, color=colour)
        return label.shift(RIGHT * (x - label.get_center()[0])).on_baseline(baseline)

    @staticmethod
    def formula_line(chip, formula, at) -> VGroup:
        """A token's chip, then its formula, centred on `at`: the line that names what a product computes."""
        return VGroup(chip, formula).arrange(RIGHT, buff=0.35).move_to(at)

    # --- the stage ------------------------------------------------------------------------------------------
    def show_title(self, note: str) -> None:
        """The title card: the scene's title and subtitle, and its note (the scene's question), each fading in for
        style.TITLE_IN. It stays (self.title_group: title, subtitle, note) until the first beat fades it out; the
        note is held like a caption. The card lasts at most style.TITLE_CARD when the note is short enough
        (tests/test_pace.py)."""
        title_m = Label(self.s("title"), font_size=style.TITLE).move_to(UP * self.TITLE_TOP)
        subtitle_m = Label(self.s("subtitle"), font_size=style.SUBTITLE, color=style.MUTED).next_to(title_m, DOWN,
                                                                                                    0.45)
        note_m = self.hidden_if_clean(caption(note, self.lang, y=self.NOTE_Y))
        self.skeleton_play(FadeIn(title_m, shift=UP * 0.2), run_time=style.TITLE_IN)
        self.skeleton_play(FadeIn(subtitle_m), FadeIn(note_m), run_time=style.TITLE_IN)
        self.caption_shown("title_note", note)
        self.wait(style.PAUSE)
        self.title_group, self.title_up = VGroup(title_m, subtitle_m, note_m), True

    def clear_stage(self) -> None:
        """Fade out everything but the caption."""
        self.play(FadeOut(Group(*[m for m in self.mobjects if m is not self.current_caption])), run_time=0.8)

    def tear_down(self):
        if self.only_section is None and self.beats_done != len(self.section_names):
            raise RuntimeError(f"{self.name}: played {self.beats_done} of {len(self.section_names)} declared beats")
        super().tear_down()
