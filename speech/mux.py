"""The narration in the files a viewer plays: each line's audio laid on the clip's own timeline, then muxed beside
the video stream, whose packets are copied (never re-encoded).

The audio is laid from the timeline (the manifest's captions: each line's start and its normalised WAV), not from
a clip's parts, so a clip rendered on one core, on two, or in parts carries the same samples. Lines never overlap
(a line is held until it has been spoken), so laying them is placing, not mixing, and every line keeps the
loudness it was normalised to.

mp4 and mov carry AAC, webm Opus; a gif carries no sound. The joined lecture and the deck's beats take their sound
from the clips' own audio streams (clip_samples), decoded and laid at each clip's offset, so that they need no
voice cache. This module never synthesises and never draws.
"""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import numpy as np

from .audio import RATE  # noqa: E402  (48 kHz: every line is resampled to it)
FRAME = 960              # samples per encoded frame: a multiple every encoder here takes (AAC 1024 is set by it)
CODECS = {"mp4": ("aac", "128k"), "mov": ("aac", "128k"), "webm": ("libopus", "96k")}


def narration_track(captions: list[dict], duration: float) -> np.ndarray | None:
    """A clip's narration as one mono float32 array at RATE, `duration` seconds long: each line's WAV (its
    "speech" record) from its start; None when no line has audio."""
    import soundfile
    lines = [c for c in captions if c.get("speech")]
    if not lines:
        return None
    track = np.zeros(int(round(duration * RATE)), dtype=np.float32)
    for c in lines:
        samples, rate = soundfile.read(c["speech"]["audio"], dtype="float32", always_2d=False)
        if rate != RATE:
            raise ValueError(f"{c['speech']['audio']}: {rate} Hz, not {RATE}")
        at = int(round((c["start"] - c["speech"].get("lead", 0.0)) * RATE))   # the onset on the cue
        if at < 0:
            samples, at = samples[-at:], 0
        piece = samples[: max(0, len(track) - at)]
        track[at:at + len(piece)] += piece
    return track


def clip_samples(path: Path) -> np.ndarray | None:
    """The audio of a movie file, decoded to mono float32 at RATE and placed by its timestamps (an encoder's
    priming samples fall before 0 and are dropped); None if it has no audio stream."""
    import av
    with av.open(str(path)) as c:
        if not c.streams.audio:
            return None
        stream = c.streams.audio[0]
        resampler = av.AudioResampler(format="flt", layout="mono", rate=RATE)
        pieces, end = [], 0
        for frame in c.decode(stream):
            start = frame.pts * frame.time_base if frame.pts is not None else None
            for out in resampler.resample(frame):
                data = out.to_ndarray().reshape(-1)
                at = int(round(start * RATE)) if start is not None else end
                pieces.append((at, data))
                end = at + len(data)
                start = None
        for out in resampler.resample(None):
            data = out.to_ndarray().reshape(-1)
            pieces.append((end, data))
            end += len(data)
    track = np.zeros(max((at + len(d) for at, d in pieces), default=0), dtype=np.float32)
    for at, data in pieces:
        if at < 0:
            data, at = data[-at:], 0
        track[at:at + len(data)] = data
    return track


class AudioTrack:
    """A narration encoded for one output container, its packets muxed in time order with the video's."""

    def __init__(self, out, samples: np.ndarray, fmt: str):
        import av
        codec, bitrate = CODECS[fmt]
        self.stream = out.add_stream(codec, rate=RATE, layout="mono")
        self.stream.bit_rate = int(bitrate.rstrip("k")) * 1000
        self.out = out
        self.packets = []
        for i in range(0, len(samples), FRAME):
            chunk = samples[i:i + FRAME]
            if len(chunk) < FRAME:
                chunk = np.pad(chunk, (0, FRAME - len(chunk)))
            frame = av.AudioFrame.from_ndarray(chunk.reshape(1, -1).astype(np.float32), format="flt",
                                               layout="mono")
            frame.sample_rate, frame.pts, frame.time_base = RATE, i, Fraction(1, RATE)
            self.packets.extend(self.stream.encode(frame))
        self.packets.extend(self.stream.encode(None))
        self.next = 0

    def mux_until(self, seconds: float | None) -> None:
        """Mux every packet that starts before `seconds` (None: all that are left)."""
        while self.next < len(self.packets):
            packet = self.packets[self.next]
            if seconds is not None and packet.pts is not None and packet.pts * packet.time_base > seconds:
                break
            self.out.mux(packet)
            self.next += 1


def with_narration(video: Path, samples: np.ndarray, out_path: Path, options: dict | None = None) -> None:
    """`video`'s stream (packets copied) with `samples` as its sound, written to a temporary name in out_path's
    folder and renamed to out_path; `options` are the muxer's (render.py's: faststart, pipeline.encoder)."""
    import av
    fmt = out_path.suffix.lstrip(".")
    tmp = out_path.with_name(f".{out_path.stem}.{os.getpid()}.voiced{out_path.suffix}")
    try:
        with av.open(str(video)) as src, av.open(str(tmp), "w", format=fmt if fmt != "mov" else "mov",
                                                 options=options or {}) as out:
            vin = src.streams.video[0]
            vout = out.add_stream_from_template(vin)
            audio = AudioTrack(out, samples, fmt)
            for packet in src.demux(vin):
                if packet.dts is None:
                    continue
                audio.mux_until(float(packet.dts * packet.time_base))
                packet.stream = vout
                out.mux(packet)
            audio.mux_until(None)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, out_path)
