"""Audio helpers for narration: reading, trimming, resampling, EBU R128 loudness, onsets, atomic WAV writes.

Loudness is measured with pyloudnorm (ITU-R BS.1770-4 / EBU R128); resampling is scipy's polyphase
``resample_poly``; files are read with soundfile (libsndfile) and, for what libsndfile cannot read, PyAV (FFmpeg).
"""

from __future__ import annotations

import os
import tempfile
from fractions import Fraction
from pathlib import Path

import numpy as np

TARGET_LUFS = -16.0
# -2 dBTP, not R128's -1: the lines are coded (AAC, Opus) after they are laid, and the codec's peaks overshoot the
# PCM's by up to about 1 dB (measured: a line at -1.05 dBTP reached +0.01 dBTP in AAC).
TRUE_PEAK_DB = -2.0
RATE = 48000
# Where normalised narration starts: the first 4 ms frame louder than this (25 dB under the target loudness). An
# absolute level, so that a line's onset is found at the same moment in its own WAV (where the narrator lays it on
# the cue) and in a clip's decoded sound (where the audit and the tests measure it), whatever else the clip holds.
NARRATION_ONSET_DBFS = TARGET_LUFS - 25


class AudioError(Exception):
    """An audio file or signal that cannot be used; the message is one line."""


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def read_audio(path) -> tuple[np.ndarray, int]:
    """Mono float32 samples and the sample rate of a WAV/FLAC (soundfile) or MP3 (PyAV) file."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise AudioError(f"{path}: cannot read ({_one_line(exc.strerror or exc)})") from None
    if size == 0:
        raise AudioError(f"{path}: empty file")
    x = rate = None
    first_error = ""
    if path.suffix.lower() != ".mp3":
        import soundfile as sf
        try:
            data, rate = sf.read(str(path), dtype="float32", always_2d=True)
            x = data.mean(axis=1, dtype=np.float32)
        except Exception as exc:  # libsndfile's errors (LibsndfileError, RuntimeError, TypeError ...)
            first_error = _one_line(exc)
    if x is None:
        try:
            x, rate = _read_with_av(path)
        except Exception as exc:
            reason = first_error or _one_line(exc)
            raise AudioError(f"{path}: not a readable audio file ({reason})") from None
    if x.size == 0:
        raise AudioError(f"{path}: no audio samples")
    if not np.all(np.isfinite(x)):
        raise AudioError(f"{path}: audio samples are not finite numbers")
    return np.ascontiguousarray(x, dtype=np.float32), int(rate)


def _read_with_av(path: Path) -> tuple[np.ndarray, int]:
    import av
    with av.open(str(path)) as container:
        if not container.streams.audio:
            raise AudioError("no audio stream")
        stream = container.streams.audio[0]
        rate = stream.rate or stream.codec_context.sample_rate
        # planar float, channels kept: averaged below as for soundfile (FFmpeg's own downmix adds 3 dB)
        resampler = av.AudioResampler(format="fltp", rate=rate)
        parts = []
        for frame in container.decode(stream):
            for out in resampler.resample(frame):
                parts.append(out.to_ndarray().mean(axis=0))
        for out in resampler.resample(None):
            parts.append(out.to_ndarray().mean(axis=0))
    x = np.concatenate(parts) if parts else np.zeros(0, np.float32)
    return x.astype(np.float32, copy=False), int(rate)


def _frame_db(x: np.ndarray, rate: int, frame_s: float, hop_s: float) -> tuple[np.ndarray, int]:
    """RMS level in dB of overlapping frames, and the hop in samples."""
    frame = max(1, int(round(frame_s * rate)))
    hop = max(1, int(round(hop_s * rate)))
    if x.size < frame:
        x = np.pad(x, (0, frame - x.size))
    windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), frame)[::hop]
    rms = np.sqrt(np.mean(windows * windows, axis=1))
    return 20 * np.log10(np.maximum(rms, 1e-12)), hop


def trim_silence(x: np.ndarray, rate: int, threshold_db: float = -40.0, pad_s: float = 0.02) -> np.ndarray:
    """Cut silence at both ends: frames quieter than ``threshold_db`` below the loudest frame are silence.
    Keeps ``pad_s`` of margin; an all-silent signal gives an empty array."""
    x = np.asarray(x, dtype=np.float32)
    if x.size == 0:
        return x
    db, hop = _frame_db(x, rate, 0.02, 0.005)
    if db.max() <= -100:
        return x[:0]
    active = np.flatnonzero(db > db.max() + threshold_db)
    frame = int(round(0.02 * rate))
    pad = int(round(pad_s * rate))
    start = max(0, active[0] * hop - pad)
    end = min(x.size, active[-1] * hop + frame + pad)
    return x[start:end]


def resample(x: np.ndarray, rate_from: int, rate_to: int) -> np.ndarray:
    """Polyphase resampling (scipy.signal.resample_poly, Kaiser window)."""
    from scipy.signal import resample_poly
    x = np.asarray(x, dtype=np.float32)
    if rate_from == rate_to:
        return x.copy()
    ratio = Fraction(int(rate_to), int(rate_from))
    return resample_poly(x, ratio.numerator, ratio.denominator).astype(np.float32)


def loudness(x: np.ndarray, rate: int) -> float:
    """EBU R128 integrated loudness in LUFS (pyloudnorm); -inf for silence. Signals under the 400 ms gating
    block are padded with silence to one block."""
    import pyloudnorm
    x = np.asarray(x, dtype=np.float64)
    block = int(np.ceil(0.4 * rate)) + 1
    if x.size < block:
        x = np.pad(x, (0, block - x.size))
    return float(pyloudnorm.Meter(rate).integrated_loudness(x))


def true_peak_db(x: np.ndarray, rate: int) -> float:
    """True peak in dBTP: the peak of the signal oversampled 4 times (BS.1770-4, Annex 2)."""
    from scipy.signal import resample_poly
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return float("-inf")
    peak = float(np.max(np.abs(resample_poly(x, 4, 1)))) if x.size > 1 else float(abs(x[0]))
    return 20 * np.log10(peak) if peak > 0 else float("-inf")


def _limit(x: np.ndarray, rate: int, ceiling_db: float) -> np.ndarray:
    """Gain reduction so that the 4x-oversampled peak stays under the ceiling: the per-sample gain that each
    sample needs, spread by a 5 ms minimum filter and smoothed by a moving average no wider than it (so the smoothed
    gain never exceeds what any sample needs)."""
    from scipy.ndimage import minimum_filter1d, uniform_filter1d
    from scipy.signal import resample_poly
    ceiling = 10 ** (ceiling_db / 20)
    env = np.abs(resample_poly(x.astype(np.float64), 4, 1)).reshape(-1, 4).max(axis=1)[: x.size]
    need = np.minimum(1.0, ceiling / np.maximum(env, 1e-12))
    if need.min() >= 1.0:
        return x
    width = max(3, int(0.005 * rate) | 1)
    gain = uniform_filter1d(minimum_filter1d(need, width), width, mode="nearest")
    gain = np.minimum(gain, need)  # already so by construction; guards rounding
    return (x * gain).astype(np.float32)


def normalise(x: np.ndarray, rate: int) -> np.ndarray:
    """EBU R128 integrated loudness to TARGET_LUFS, then true peak at most TRUE_PEAK_DB (a peak limiter, not a
    gain cut, so the loudness stays on target). Raises AudioError for silence."""
    x = np.asarray(x, dtype=np.float32)
    margin = 0.1  # dB of headroom under the ceiling, for the residual of the 4x estimate
    for _ in range(4):
        level = loudness(x, rate)
        if not np.isfinite(level):
            raise AudioError("cannot normalise silence (no gated loudness)")
        x = (x * 10 ** ((TARGET_LUFS - level) / 20)).astype(np.float32)
        x = _limit(x, rate, TRUE_PEAK_DB - margin)
        if abs(loudness(x, rate) - TARGET_LUFS) < 0.1:
            break
    peak = true_peak_db(x, rate)
    if peak > TRUE_PEAK_DB - 0.05:
        x = (x * 10 ** ((TRUE_PEAK_DB - 0.05 - peak) / 20)).astype(np.float32)
    return x


def speech_onsets(x: np.ndarray, rate: int, min_gap: float = 0.25, threshold_db: float = -35.0,
                  frame_s: float = 0.004, hop_s: float = 0.001, level_dbfs: float | None = None) -> list[float]:
    """Start times (s) of speech after at least ``min_gap`` seconds of silence (or at the start of the file).
    A frame is speech when its RMS is above ``level_dbfs`` or, without it, within ``threshold_db`` of the loudest
    frame."""
    x = np.asarray(x, dtype=np.float32)
    if x.size == 0:
        return []
    db, hop = _frame_db(x, rate, frame_s, hop_s)
    level_db = level_dbfs if level_dbfs is not None else db.max() + threshold_db
    active = db > level_db
    onsets = []
    last_active_end = None
    for i in np.flatnonzero(active):
        t = i * hop / rate
        if last_active_end is None or t - last_active_end >= min_gap:
            onsets.append(t)
        last_active_end = (i * hop + frame_s * rate) / rate
    # A frame turns active as soon as the onset enters its window: move to the first loud sample in it.
    frame = int(round(frame_s * rate))
    level = 10 ** (level_db / 20)
    refined = []
    for t in onsets:
        start = int(round(t * rate))
        loud = np.flatnonzero(np.abs(x[start:start + frame]) > level)
        refined.append((start + (loud[0] if loud.size else 0)) / rate)
    return refined


def narration_onsets(x: np.ndarray, rate: int, min_gap: float = 0.5) -> list[float]:
    """Onsets of loudness-normalised narration (a line's WAV or a clip's sound): speech_onsets at the absolute level
    NARRATION_ONSET_DBFS, after at least ``min_gap`` s of silence (a pause inside a line is shorter)."""
    return speech_onsets(x, rate, min_gap=min_gap, level_dbfs=NARRATION_ONSET_DBFS)


def write_atomic(path, write) -> Path:
    """Write a file under a temporary name in the same folder (`write(binary file)`), then os.replace it into place;
    the temporary file is removed on any error or interrupt (KeyboardInterrupt included)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def write_text_atomic(path, text: str, only_if_changed: bool = False) -> bool:
    """Write UTF-8 text atomically (write_atomic); with only_if_changed, a file that already holds `text` is left as
    it is (a rerun leaves every file, and its time, as it was). Returns whether it wrote."""
    path = Path(path)
    if only_if_changed:
        try:
            if path.read_text(encoding="utf-8") == text:
                return False
        except (OSError, UnicodeDecodeError):
            pass
    write_atomic(path, lambda fh: fh.write(text.encode("utf-8")))
    return True


def write_wav_atomic(path, x: np.ndarray, rate: int, subtype: str = "PCM_16") -> None:
    """Write a WAV atomically (write_atomic)."""
    import soundfile as sf
    write_atomic(path, lambda fh: sf.write(fh, np.asarray(x, dtype=np.float32), rate, format="WAV", subtype=subtype))
