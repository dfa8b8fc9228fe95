"""The full lecture: a whole recipe's clips joined in recipe order, with a container chapter at each clip.

For a recipe (lecture.toml) rendered whole, in media/<quality>/:
    lecture[-lang-zh][-clean].mp4 (+ .json manifest, tracks)   the clips joined in recipe order, container chapters

Packets are copied when the clips' streams match, else the clips are decoded and encoded again; rebuilt only when
a clip changed. Packaging: it reads clips and never changes one, and is no source of any clip (pipeline.packaging).
"""

from __future__ import annotations

import hashlib
import json
import os
from fractions import Fraction
from pathlib import Path

from .tracks import (COURSE_VERSION, PackagingError, beat_title, clip_duration, clip_identity, lecture_chapter,
                     read_manifest, write_text_atomic)


def stream_signature(stream) -> dict:
    cc = stream.codec_context
    return {"codec": cc.name, "width": cc.width, "height": cc.height, "pix_fmt": cc.pix_fmt,
            # the nominal frame rate: the average one is counted from the duration, and ManimCE's own join of
            # partial movies leaves a frame a few ticks short now and then (mlp_steps at 1080p60: 251 of 256)
            "time_base": str(stream.time_base), "rate": str(stream.base_rate), "profile": cc.profile,
            "extradata": hashlib.sha256(bytes(cc.extradata or b"")).hexdigest()}


def lecture_stale(output: Path, record: dict) -> bool:
    try:
        old = json.loads(output.with_name(output.name + ".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    return not output.is_file() or old.get("inputs") != record["inputs"] or old.get("version") != COURSE_VERSION


def build_lecture(clips: list[Path], output: Path, lang: str) -> tuple[str, dict]:
    """Join the clips in order into `output` with a chapter mark at each clip; its manifest lists each clip's
    offset and the beats, captions and chapters of the whole. Rebuilt only when a clip changed: the status
    ("built", "re-encoded", "up to date") and the manifest."""
    manifests = [read_manifest(c) for c in clips]
    record = {"version": COURSE_VERSION, "output": output.name, "lang": lang,
              "inputs": [clip_identity(c, m) for c, m in zip(clips, manifests)]}
    offsets, t = [], 0.0
    for m in manifests:
        offsets.append(round(t, 3))
        t += clip_duration(m)
    record["duration"] = round(t, 3)
    record["clips"] = [{"scene": m["scene"], "output": c.name, "title": beat_title(m, "title", lang),
                        "offset": o, "duration": clip_duration(m)} for c, m, o in zip(clips, manifests, offsets)]
    record["timeline"] = [{"scene": m["scene"], "section": b["section"], "start": round(o + b["start"], 3),
                           "end": round(o + b["end"], 3), "title": lecture_chapter(m, b["section"], lang)}
                          for m, o in zip(manifests, offsets) for b in m["timeline"]]
    record["captions"] = [{**c, "scene": m["scene"], "start": round(o + c["start"], 3), "end": round(o + c["end"], 3)}
                          for m, o in zip(manifests, offsets) for c in m.get("captions", [])]
    if not lecture_stale(output, record):
        return "up to date", json.loads(output.with_name(output.name + ".json").read_text(encoding="utf-8"))
    status = join_clips(clips, output, [(r["offset"], r["offset"] + r["duration"], r["title"])
                                        for r in record["clips"]], lecture_sound(clips, offsets, t))
    record["joined"] = status
    write_text_atomic(output.with_name(output.name + ".json"), json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return status, record


def lecture_sound(clips: list[Path], offsets: list[float], duration: float):
    """The lecture's narration: each clip's own sound, decoded, at the clip's offset (None if no clip has sound).
    Laid from the clips rather than their lines, so the lecture needs no voice cache."""
    from speech import mux
    sounds = [mux.clip_samples(c) for c in clips]
    if all(s is None for s in sounds):
        return None
    import numpy as np
    track = np.zeros(int(round(duration * mux.RATE)), dtype=np.float32)
    for offset, sound in zip(offsets, sounds):
        if sound is not None:
            at = int(round(offset * mux.RATE))
            piece = sound[: max(0, len(track) - at)]
            track[at:at + len(piece)] = piece
    return track


def join_clips(clips: list[Path], output: Path, chapters: list[tuple[float, float, str]], sound=None) -> str:
    """Concatenate the clips' video streams (as ffmpeg's concat demuxer does: packets copied, timestamps shifted
    by the length of the clips before) when their stream parameters match, else decode and re-encode; write
    container chapters, and the sound (samples at speech.mux.RATE, see lecture_sound) if there is one, its packets
    in time order with the video's. Written to a temporary name and renamed."""
    import av
    tmp = output.with_name(f".{output.stem}.{os.getpid()}.tmp{output.suffix}")
    inputs = [av.open(str(c)) for c in clips]
    try:
        streams = []
        for c, container in zip(clips, inputs):
            if not container.streams.video:
                raise PackagingError(f"{c.name}: no video stream")
            streams.append(container.streams.video[0])
        signatures = [stream_signature(s) for s in streams]
        same = all(s == signatures[0] for s in signatures)
        from .encoder import muxer_options
        with av.open(str(tmp), "w", format=output.suffix.lstrip(".").replace("mkv", "matroska"),
                     options=muxer_options(output)) as out:
            if same:
                copy_packets(inputs, streams, out, sound)
            else:
                reencode(inputs, streams, out, sound)
            tb = Fraction(1, 1000)
            out.set_chapters([{"id": i, "start": round(a * 1000), "end": round(b * 1000), "time_base": tb,
                               "metadata": {"title": title}} for i, (a, b, title) in enumerate(chapters, 1)])
    except BaseException:   # Ctrl-C too: nothing half-written left behind
        tmp.unlink(missing_ok=True)
        raise
    finally:
        for container in inputs:
            container.close()
    os.replace(tmp, output)
    return "joined without re-encoding" if same else \
        f"re-encoded: the clips' streams differ ({describe_difference(signatures)})"


def describe_difference(signatures: list[dict]) -> str:
    first = signatures[0]
    keys = sorted({k for s in signatures[1:] for k, v in s.items() if first.get(k) != v})
    return ", ".join(keys)


def sound_track(out, sound):
    """The lecture's sound as an output stream (after the video's), or None."""
    if sound is None:
        return None
    from speech.mux import AudioTrack
    return AudioTrack(out, sound, Path(out.name).suffix.lstrip(".") or "mp4")


def copy_packets(inputs, streams, out, sound=None) -> None:
    ostream = out.add_stream_from_template(streams[0])
    audio = sound_track(out, sound)
    offset = 0   # in the first stream's time base (every stream has the same one)
    for container, stream in zip(inputs, streams):
        end = 0
        for packet in container.demux(stream):
            if packet.dts is None:   # the demuxer's flush packet
                continue
            end = max(end, packet.pts + (packet.duration or 0))
            packet.pts += offset
            packet.dts += offset
            packet.stream = ostream
            if audio is not None:
                audio.mux_until(float(packet.dts * packet.time_base))
            out.mux(packet)
        offset += end
    if audio is not None:
        audio.mux_until(None)


def reencode(inputs, streams, out, sound=None) -> None:
    first = streams[0]
    ostream = out.add_stream("libx264", rate=first.average_rate)
    ostream.width, ostream.height = first.codec_context.width, first.codec_context.height
    ostream.pix_fmt = "yuv420p"
    audio = sound_track(out, sound)
    tick = 1 / Fraction(first.average_rate)
    ostream.codec_context.time_base = tick
    n = 0

    def mux(packets) -> None:
        for packet in packets:
            if audio is not None and packet.dts is not None:
                audio.mux_until(float(packet.dts * packet.time_base))
            out.mux(packet)
    for container, stream in zip(inputs, streams):
        for frame in container.decode(stream):
            frame = frame.reformat(width=ostream.width, height=ostream.height, format="yuv420p")
            frame.pts, frame.time_base = n, tick   # one frame after another, at the first clip's rate
            n += 1
            mux(ostream.encode(frame))
    mux(ostream.encode(None))
    if audio is not None:
        audio.mux_until(None)
