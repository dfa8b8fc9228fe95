"""The lecture's pace (docs/teaching.md §9), kept by the scene skeleton (scenes/lecture.py) and recorded per beat.

Three rules, on the scene's nominal clock (LectureScene.clock: the sum of the plays' run times, the same in a clip
rendered in one process or in parts):

- **Held silence.** A picture that is built is held silent for at least style.HELD_SILENCE seconds before the next
  line is said: when the skeleton is about to show a new line (say) or end a beat, and a build (any play but a
  wait, a removal, the captions' own fades and the title card's) has ended since the line on screen began, it
  waits until HELD_SILENCE has passed since the later of that build's end and the line's end. Before a new line the
  caption's fade (silent, the picture unchanged) counts towards it, since the line is said once its caption is
  shown; at the end of a beat it does not (the next beat may clear the picture).
- **Speech share.** In every content beat (the title card aside) the lines fill at most style.SPEECH_SHARE of the
  beat: at its end the skeleton holds the last picture until they do.
- **Title card.** The title card (its fades in and its note, said) lasts at most style.TITLE_CARD seconds: the
  skeleton keeps its fades short (style.TITLE_IN); the note's words must be short enough (tests/test_pace.py).

A line's time is its speech in a voiced clip (the synthesised or recorded line, from its onset) and its reading
time in a silent one (LectureScene.reading_time): a silent clip keeps the same pace for its reader.

This module only keeps the books: the scene asks it how long to hold (hold_until, padding) and plays the waits.
`record()` is the manifest's "pace" (docs/rendering.md, "The manifest").
"""

from __future__ import annotations

import math

from manim import Wait
from manim.animation.composition import AnimationGroup


def is_build(animations) -> bool:
    """Whether a play draws something new: any animation but a wait or one that only takes a mobject out (FadeOut,
    Uncreate, ...), looking inside plain groups. An `.animate` builder, a transform, a growth: a build."""
    for a in animations:
        if isinstance(a, AnimationGroup):
            if is_build(a.animations):
                return True
        elif isinstance(a, Wait):
            continue
        elif callable(getattr(a, "is_remover", None)) and a.is_remover():
            continue
        else:
            return True
    return False


def tenths_up(seconds: float) -> float:
    """A hold, rounded up to 0.1 s (as every hold of the skeleton)."""
    return math.ceil(seconds * 10 - 1e-9) / 10


class Pace:
    """The books of one scene's pace: its beats, with the spans of their lines and builds on the nominal clock."""

    def __init__(self, held_silence: float, share: float, title_card: float):
        self.held_silence, self.share, self.title_card = held_silence, share, title_card
        self.beats: list[dict] = []
        self.last_build: float | None = None   # the end of the last build not yet held silent
        self.line_end: float | None = None     # when the line on screen ends being said

    @property
    def beat(self) -> dict:
        return self.beats[-1]

    def beat_started(self, section: str, clock: float) -> None:
        self.beats.append({"section": section, "start": clock, "end": None, "lines": [], "builds": [], "holds": [],
                           "padded": 0.0})
        self.last_build = None

    def line_said(self, clock: float, seconds: float) -> None:
        """A line is said from `clock`, for `seconds` (its speech, or its reading time in a silent clip)."""
        self.beat["lines"].append([clock, clock + seconds])
        self.line_end = clock + seconds

    def played(self, start: float, end: float, build: bool) -> None:
        if not build or not self.beats:
            return
        builds = self.beat["builds"]
        if builds and builds[-1][0] == start:   # the same play told twice (tests' lean play inside a play)
            builds[-1][1] = max(builds[-1][1], end)
        else:
            builds.append([start, end])
        self.last_build = end

    def quiet_from(self) -> float | None:
        """When the picture last built began to be held silent: the later of its build's end and the line's end."""
        if self.last_build is None:
            return None
        return max(self.last_build, self.line_end if self.line_end is not None else self.last_build)

    def hold_until(self, lead: float = 0.0) -> float | None:
        """The clock to hold until so that the picture built is held silent for held_silence; `lead`: silent time
        that follows before the next line is said (its caption's fade). None: nothing built to hold."""
        quiet = self.quiet_from()
        return None if quiet is None else quiet + self.held_silence - lead

    def held(self, until: float, lead: float = 0.0) -> None:
        """The picture built is held until `until` (+ `lead` of the next line's fade): recorded; the build is done."""
        quiet = self.quiet_from()
        if quiet is not None:
            self.beat["holds"].append(round(until + lead - quiet, 3))
        self.last_build = None

    def padding(self, clock: float) -> float:
        """Seconds to hold the beat's last picture so that its lines fill at most `share` of it (0 for the title
        card, which is not a content beat)."""
        if not self.beats or self.beat["section"] == "title":
            return 0.0
        speech = sum(e - s for s, e in self.beat["lines"])
        need = speech / self.share - (clock - self.beat["start"])
        return tenths_up(need) if need > 1e-9 else 0.0

    def beat_ended(self, clock: float, padded: float = 0.0) -> None:
        self.beat["end"] = clock
        self.beat["padded"] = round(padded, 3)

    def record(self, only: int | None = None) -> list[dict]:
        """Per beat played (one beat, in a one-beat clip): its section, start, end and seconds on the nominal clock;
        its lines' speech seconds and their share of it; the lines and the builds, as [start, end]; the shortest
        silent hold after a build (null: nothing built); the seconds the share rule added at its end."""
        out = []
        for i, b in enumerate(self.beats):
            if b["end"] is None or (only is not None and i != only):
                continue
            seconds = b["end"] - b["start"]
            speech = sum(e - s for s, e in b["lines"])
            out.append({"section": b["section"], "start": round(b["start"], 3), "end": round(b["end"], 3),
                        "seconds": round(seconds, 3), "speech": round(speech, 3),
                        "share": round(speech / seconds, 4) if seconds > 0 else 0.0,
                        "held": min(b["holds"]) if b["holds"] else None, "padded": b["padded"],
                        "lines": [[round(s, 3), round(e, 3)] for s, e in b["lines"]],
                        "builds": [[round(s, 3), round(e, 3)] for s, e in b["builds"]]})
        return out
