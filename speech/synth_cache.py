"""Content-addressed cache of synthesised narration lines: trimmed, loudness-normalised WAVs at audio.RATE."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import soundfile as sf

from . import audio
from .voices import Voice

FORMAT = "narration-line-2: trim -40dB, EBU R128 -16 LUFS, -2 dBTP, 48 kHz mono PCM_16 WAV"


def user_cache(env: str, name: str) -> Path:
    """One of the project's per-machine caches: $env, else $XDG_CACHE_HOME/gpt-lecture/name, else
    ~/.cache/gpt-lecture/name (the voices' lines here, the labels' outlines in scenes/components/outline_cache.py)."""
    if os.environ.get(env):
        return Path(os.environ[env])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "gpt-lecture" / name


def default_cache_dir() -> Path:
    """$GPT_LECTURE_VOICE_CACHE, else $XDG_CACHE_HOME/gpt-lecture/voice, else ~/.cache/gpt-lecture/voice."""
    return user_cache("GPT_LECTURE_VOICE_CACHE", "voice")


def line_key(voice: Voice, spoken: str) -> str:
    payload = json.dumps([FORMAT, voice.name, voice.digest(), spoken], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def line_audio(voice: Voice, spoken: str, cache_dir: Path) -> tuple[Path, float]:
    """The cached WAV of ``spoken`` in ``voice`` and its duration in seconds, synthesised on a miss.

    The file is written under a temporary name and os.replace'd into place, so a reader never sees a partial file
    and an interrupt leaves none. Two processes missing the same line at once both synthesise it (the voices are
    deterministic) and the second rename replaces an identical file: no lock is needed."""
    key = line_key(voice, spoken)
    path = Path(cache_dir) / key[:2] / f"{key}.wav"
    if path.exists():
        info = sf.info(str(path))
        return path, info.frames / info.samplerate
    x = voice.synthesize(spoken)
    x = audio.trim_silence(x, voice.sample_rate)
    if x.size == 0:
        raise audio.AudioError(f"{voice.name} produced silence for {spoken!r}")
    x = audio.normalise(audio.resample(x, voice.sample_rate, audio.RATE), audio.RATE)
    audio.write_wav_atomic(path, x, audio.RATE)
    return path, x.size / audio.RATE
