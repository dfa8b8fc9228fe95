"""How long a line takes to say, estimated from its words at the voices' measured rates: to time a spoken lecture
without synthesising it (tests/test_pace.py plays every scene with it; benchmarks/lecture_pace.py measures the
lecture's length with it). A clip rendered with a voice is always timed by the voice's own audio, never by this.

The rates (docs/lab/voice-pace.md, docs/lab/voice_pace_en.json, voice_pace_zh.json):
- English: Piper at length_scale 1.2 said the lecture's sampled lines at 159.0 words a minute while speaking,
  sentence pauses included (the words counted as benchmarks/voice_pace.py counts them: runs of letters).
- Chinese: the whole Chinese narration ran at 4.6 Han characters a second (issue 41's measurement); a Latin run
  ("GPT", "softmax") is said by Piper at its own pace (1.0: 177 words a minute), which takes about LATIN_WORD
  seconds a word with its splice.
"""

from __future__ import annotations

import re

from .narrator import Line, Narrator, line_id

ENGLISH_WPM = 159.0          # words a minute while speaking (length_scale 1.2)
CHINESE_CPS = 4.6            # Han characters a second while speaking
LATIN_WORD = 60 / 177.0      # seconds a Latin word takes inside a Chinese line (Piper at 1.0)
WORD = re.compile(r"[A-Za-z'-]+")
HAN = re.compile(r"[\u4e00-\u9fff]")


def units(text: str, lang: str) -> int:
    """What a speaking rate counts: English words (runs of letters), Chinese Han characters."""
    return len(WORD.findall(text)) if lang == "en" else len(HAN.findall(text))


def seconds(spoken: str, lang: str) -> float:
    """The estimated speech of a line's spoken form (speech.spoken.spoken), from its onset to its end."""
    if lang == "en":
        return units(spoken, "en") * 60 / ENGLISH_WPM
    return units(spoken, "zh") / CHINESE_CPS + len(WORD.findall(spoken)) * LATIN_WORD


class EstimatingNarrator(Narrator):
    """A narrator that says nothing: each line's seconds are estimated (`seconds`), its audio is empty. For timing
    dry runs; a scene takes it as its `narrator` after setup."""

    def __init__(self, scene: str, lang: str):
        super().__init__(scene, lang, cache_dir=".")

    def line(self, key: str, text: str, say: str | None = None) -> Line:
        from .spoken import spoken
        said = spoken(say if say is not None else text, self.lang)
        self.counts[key] = self.counts.get(key, 0) + 1
        made = Line(line_id(key, self.counts[key], said), said, round(seconds(said, self.lang), 3), "estimate", "",
                    "")
        self.lines.append(made)
        return made
