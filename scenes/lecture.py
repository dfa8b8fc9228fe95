"""The base of every lecture scene: the model, the parameters, the beats and the manifest values.

A scene renders with plain `manim render -ql scenes/<file>.py <Scene>` using its
declared defaults. render.py (or anyone) can choose otherwise through the
environment, read once in setup():

    GPT_LECTURE_MODEL    weights directory (default: model/weights)
    GPT_LECTURE_PARAMS   JSON object of parameters, e.g. {"lang": "zh", "top_k": 3}
    GPT_LECTURE_SECTION  render only this beat (name or 1-based number): a clip, or with -s its last frame
"""

from __future__ import annotations

import json
import os

from manim import DOWN, UP, FadeIn, Scene, VGroup
from manim.utils.exceptions import EndSceneEarlyException

from . import style
from .catalog import SCENES
from .components import Label, caption
from .params import ParamError, SceneSpec, pick_section

ENV_MODEL, ENV_PARAMS, ENV_SECTION = "GPT_LECTURE_MODEL", "GPT_LECTURE_PARAMS", "GPT_LECTURE_SECTION"


def load_model(directory: str | None = None):
    from model import NumpyGPT
    return NumpyGPT.load(directory or os.environ.get(ENV_MODEL) or None)


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
    """Subclasses set `name` (their catalog entry) and write construct() as the lecture script."""

    name: str = ""

    @classmethod
    def spec(cls) -> SceneSpec:
        return SCENES[cls.name]

    def setup(self):
        self.gpt = load_model()
        self.params = self.spec().resolve(env_params(), model=self.gpt, where=f"{self.name}: ")
        self.lang = self.params.get("lang", "en")
        self.values: dict = {}          # every number on screen, at full precision, for the manifest
        self.section_names = self.spec().section_names(self.params)
        self.beats_done = 0
        self.beat_starts: list[float] = []    # scene time at the start of each beat played
        wanted = os.environ.get(ENV_SECTION, "").strip()
        self.only_section = pick_section(wanted, self.section_names) if wanted else None

    def beat(self, name: str) -> None:
        """Start the next beat: a manim section, in the order the catalog declares."""
        expected = self.section_names[self.beats_done] if self.beats_done < len(self.section_names) else None
        if name != expected:
            raise RuntimeError(f"{self.name}: beat {name!r} where the catalog declares {expected!r}")
        index = self.beats_done
        self.beats_done += 1
        self.beat_starts.append(float(self.renderer.time))
        if self.only_section is not None and index > self.only_section:
            raise EndSceneEarlyException()
        skip = self.only_section is not None and index < self.only_section
        self.next_section(name, skip_animations=skip)

    def timeline(self) -> list[dict]:
        """Where each beat starts and ends in the clip, in seconds: chapter marks for a video player. A clip of
        one beat (GPT_LECTURE_SECTION) holds that beat alone, from 0."""
        ends = self.beat_starts[1:] + [float(self.renderer.time)]
        marks = [{"section": name, "start": round(start, 3), "end": round(end, 3)}
                 for name, start, end in zip(self.section_names, self.beat_starts, ends)]
        if self.only_section is None:
            return marks
        one = marks[self.only_section]
        return [{**one, "start": 0.0, "end": round(one["end"] - one["start"], 3)}]

    def show_title(self, title: str, subtitle: str, note: str, *, top: float = 1.2, note_y: float = -1.4,
                   hold: float = 1.0) -> None:
        """The title card: title, subtitle, and a note on what the numbers are. It stays (self.title_group) until
        the next beat fades it out; `hold` is how long it is read, in seconds beyond style.PAUSE."""
        title_m = Label(title, font_size=style.TITLE).move_to(UP * top)
        subtitle_m = Label(subtitle, font_size=style.SUBTITLE, color=style.MUTED).next_to(title_m, DOWN, 0.45)
        note_m = caption(note, self.lang, y=note_y)
        self.play(FadeIn(title_m, shift=UP * 0.2), run_time=style.STEP)
        self.play(FadeIn(subtitle_m), FadeIn(note_m), run_time=style.STEP)
        self.wait(style.PAUSE + hold)
        self.title_group = VGroup(title_m, subtitle_m, note_m)

    def tear_down(self):
        if self.only_section is None and self.beats_done != len(self.section_names):
            raise RuntimeError(f"{self.name}: played {self.beats_done} of {len(self.section_names)} declared beats")
        super().tear_down()
