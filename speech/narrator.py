"""What a scene needs from the voice: for each narration line, its spoken form, its stable id, its audio and how long
it takes to say. The scene holds each line until it has been spoken (LectureScene.hold_for_reading).

A scene is voiced when render.py sets GPT_LECTURE_VOICE (a JSON object, see `Narrator.from_env`); a plain
`manim render` is silent and holds captions at a reading rate, as before.

**Line ids.** A line is named by its caption key, its occurrence when the key is said again in the same clip, and
the first 8 hex digits of the sha256 of its spoken text: `summary-3f2a9c01`, `stop-2-0b77e1d4`. The id is stable
while the words are; when the spoken text changes (a new prompt, a new number), so does the id, and a recording
made for the old words is found as stale (same key and occurrence, another hash) instead of being used.

**Recordings.** A lecturer's recording of a line lies at `<recordings>/<lang>/<scene>/<line id>.{wav,flac,mp3}`. It
is used instead of the synthetic voice: decoded, trimmed, loudness-normalised and resampled once (content-addressed
in the voice cache, like a synthesised line). It is checked first: an empty, corrupt or silent file, or one over
MAX_RECORDING_RATIO times the synthetic line's length (likely the wrong file), is refused (NarrationError, one line).

This module never draws and never schedules: it only answers "what is said, and for how long".
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from model.digests import file_sha256

ENV_VOICE = "GPT_LECTURE_VOICE"
SPEECH_GAP = 0.3          # seconds of silence after a line before the caption changes (then the caption's fade)
MAX_RECORDING_RATIO = 3.0  # a recording over 3x its line's synthetic length is refused as a likely wrong file
AUDIO_SUFFIXES = (".wav", ".flac", ".mp3")


class NarrationError(Exception):
    """A narration input that cannot be used (a bad recording, a voice not installed): one line, exit 2."""


@dataclass
class Line:
    line_id: str
    spoken: str
    seconds: float       # the speech, from its onset to its end (without SPEECH_GAP): the caption's cue
    source: str          # "voice" or "recording"
    audio: str           # the normalised WAV (content-addressed in the voice cache)
    sha256: str          # of that WAV: the audio the clip carries
    lead: float = 0.0    # seconds of the WAV before the speech's onset: laid that much before the cue starts


def text_hash(spoken: str) -> str:
    return hashlib.sha256(spoken.encode("utf-8")).hexdigest()[:8]


def line_id(key: str, occurrence: int, spoken: str) -> str:
    """The stable id of the `occurrence`-th (1-based) saying of caption `key` in a clip."""
    return f"{key}-{occurrence}-{text_hash(spoken)}" if occurrence > 1 else f"{key}-{text_hash(spoken)}"


def id_stem(line: str) -> str:
    """The part of a line id that stays when its words change: key and occurrence."""
    return line.rsplit("-", 1)[0]


def recordings_of(folder: Path) -> dict[str, Path]:
    """A scene's recordings by line id (file stem); two files for one id are refused."""
    found: dict[str, Path] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() not in AUDIO_SUFFIXES or path.name.startswith("."):
            continue
        if path.stem in found:
            raise NarrationError(f"{path}: two recordings for line {path.stem} ({found[path.stem].name} too)")
        found[path.stem] = path
    return found


RECORDING_FORMAT = "2"   # bump when the way a recording is prepared changes


def onset(path: Path) -> float:
    """Where the speech starts in a line's WAV, by the energy detector the sync is measured with
    (audio.narration_onsets): the WAV is laid so that this moment falls on the caption's cue."""
    import soundfile
    from . import audio
    samples, rate = soundfile.read(str(path), dtype="float32", always_2d=False)
    found = audio.narration_onsets(samples, rate)
    return float(found[0]) if found else 0.0


def recording_audio(path: Path, cache_dir: Path) -> tuple[Path, float]:
    """A lecturer's recording as a clip carries it: silence trimmed at both ends, loudness normalised (EBU R128,
    audio.TARGET_LUFS, true peak at most audio.TRUE_PEAK_DB), resampled to audio.RATE. Prepared once, kept by the
    digest of the file's bytes. An empty, corrupt or silent file: NarrationError."""
    from . import audio
    digest = hashlib.sha256(f"recording {RECORDING_FORMAT}\n{file_sha256(path)}".encode()).hexdigest()
    out = Path(cache_dir) / "recordings" / digest[:2] / f"{digest}.wav"
    if not out.is_file():
        try:
            samples, rate = audio.read_audio(path)
            samples = audio.trim_silence(samples, rate)
            if len(samples) == 0:
                raise audio.AudioError("silent")
            samples = audio.normalise(audio.resample(samples, rate, audio.RATE), audio.RATE)
        except audio.AudioError as e:
            raise NarrationError(f"{path}: cannot be used as a recording: {e}") from None
        audio.write_wav_atomic(out, samples, audio.RATE)
    import soundfile
    return out, soundfile.info(str(out)).duration


class Narrator:
    """The lines of one clip, in the order they are said."""

    def __init__(self, scene: str, lang: str, cache_dir: Path, recordings: Path | None = None):
        self.scene, self.lang, self.cache_dir = scene, lang, Path(cache_dir)
        self.recordings_dir = recordings / lang / scene if recordings else None
        self.recordings = recordings_of(self.recordings_dir) if recordings else {}
        self.used_recordings: set[str] = set()
        self.counts: dict[str, int] = {}
        self.lines: list[Line] = []
        self._voice = None
        self.voice_digest: str | None = None

    @classmethod
    def from_env(cls, scene: str, lang: str) -> Narrator | None:
        """The narrator render.py asked for in GPT_LECTURE_VOICE: {"cache": DIR, "recordings": DIR or null}; None
        (a silent clip, captions held at a reading rate) when it is unset or empty."""
        raw = os.environ.get(ENV_VOICE, "").strip()
        if not raw:
            return None
        given = json.loads(raw)
        recordings = given.get("recordings")
        narrator = cls(scene, lang, Path(given["cache"]), Path(recordings) if recordings else None)
        narrator.voice_digest = given.get("digest")   # render.py hashed the voice's models already
        return narrator

    @property
    def voice(self):
        if self._voice is None:
            from .voices import voice
            self._voice = voice(self.lang, self.voice_digest)
        return self._voice

    def line(self, key: str, text: str, say: str | None = None) -> Line:
        """The next line said: `text` is the caption as shown, filled in; `say` the words for the ear where they differ
        (its quoted tokens announced, a formula said by what it means: speech.spoken.announced), else the text."""
        from .spoken import spoken
        from .synth_cache import line_audio
        said = spoken(say if say is not None else text, self.lang)
        self.counts[key] = self.counts.get(key, 0) + 1
        ident = line_id(key, self.counts[key], said)
        audio, seconds = line_audio(self.voice, said, self.cache_dir)
        source = "voice"
        recording = self.recordings.get(ident)
        if recording is not None:
            audio, recorded = recording_audio(recording, self.cache_dir)
            if recorded > MAX_RECORDING_RATIO * seconds:
                raise NarrationError(f"{recording}: {recorded:.1f} s, over {MAX_RECORDING_RATIO:g} times the "
                                     f"line's {seconds:.1f} s: is it the right file? (\"{said}\")")
            seconds, source = recorded, "recording"
            self.used_recordings.add(ident)
        lead = onset(Path(audio))
        made = Line(ident, said, round(seconds - lead, 3), source, str(audio), file_sha256(Path(audio)),
                    round(lead, 4))
        self.lines.append(made)
        return made

    def unused_recordings(self) -> tuple[list[str], list[str]]:
        """(stale, unknown): recordings whose key and occurrence match a line said but whose words have changed
        since they were recorded, and recordings that match no line of this clip at all."""
        said = {id_stem(line.line_id) for line in self.lines}
        stale, unknown = [], []
        for ident in sorted(set(self.recordings) - self.used_recordings):
            (stale if id_stem(ident) in said else unknown).append(ident)
        return stale, unknown

    def check_recordings(self, keys, complete: bool = True) -> None:
        """After the clip's last line: a recording that matches no line is refused, naming it (NarrationError).
        `keys` are every caption key the scene has: a recording whose key is not one of them (a wrong name,
        another scene's line) is refused in any clip; one whose key is the scene's but that no line of the clip
        matched, only in a clip of the whole scene (complete), since a clip of one beat says only its own lines."""
        _, unknown = self.unused_recordings()
        wrong = [ident for ident in unknown if complete or ident.split("-")[0] not in keys]
        if wrong:
            path = next(p for p in self.recordings.values() if p.stem == wrong[0])
            raise NarrationError(f"{path}: no line {wrong[0]} in {self.scene} ({self.lang}): "
                                 f"`render.py narration export` lists the line ids")

    def record(self) -> list[dict]:
        return [asdict(line) for line in self.lines]
