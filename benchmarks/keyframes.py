"""Audit: does every beat of every rendered clip start on a key frame, and how far from its nominal time?

    python benchmarks/keyframes.py media/preview media/high [--json docs/lab/keyframes.json]

For every clip with a manifest in the folders given, and for every beat of its timeline: the frame the beat starts
on (by its nominal time, round(start * fps)), whether that frame is a key frame, and how many ticks of the stream's
time base its timestamp sits off the nominal time. The deck (course.beat_segments) takes a beat's first frame
within half a frame of its start, so an offset under half a frame is harmless and a beat that starts on no key
frame is the fault to look for. Reads files only; renders nothing (render the recipe first, at each quality).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def audit_clip(clip: Path) -> dict:
    import av
    manifest = json.loads(clip.with_name(clip.name + ".json").read_text())
    with av.open(str(clip)) as c:
        stream = c.streams.video[0]
        tb = stream.time_base
        packets = sorted((p for p in c.demux(stream) if p.dts is not None), key=lambda p: p.pts)
    fps = manifest["fps"]
    tick = 1 / (fps * tb)   # ticks per frame
    beats = []
    for beat in manifest["timeline"]:
        nominal = round(beat["start"] * fps) * tick
        first = min(packets, key=lambda p: abs(p.pts - nominal))
        beats.append({"section": beat["section"], "start": beat["start"], "key_frame": bool(first.is_keyframe),
                      "offset_ticks": int(first.pts - round(nominal)),
                      "within_half_frame": abs(first.pts - nominal) < tick / 2})
    return {"clip": clip.name, "fps": fps, "ticks_per_frame": float(tick), "frames": len(packets),
            "beats": len(beats), "not_key": [b["section"] for b in beats if not b["key_frame"]],
            "max_offset_ticks": max((abs(b["offset_ticks"]) for b in beats), default=0),
            "beyond_half_frame": [b["section"] for b in beats if not b["within_half_frame"]]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folders", nargs="+", type=Path)
    p.add_argument("--json", type=Path, help="write the audit here")
    args = p.parse_args(argv)
    report = {}
    for folder in args.folders:
        clips = sorted(c for c in folder.glob("*.mp4") if c.with_name(c.name + ".json").is_file()
                       and "timeline" in json.loads(c.with_name(c.name + ".json").read_text())
                       and "scene" in json.loads(c.with_name(c.name + ".json").read_text()))
        rows = [audit_clip(c) for c in clips]
        report[folder.name] = rows
        shifted = [r for r in rows if r["max_offset_ticks"]]
        print(f"{folder}: {len(rows)} clips, {sum(r['beats'] for r in rows)} beats; "
              f"beats on no key frame: {sum(len(r['not_key']) for r in rows)}; "
              f"clips with a beat off its nominal time: {len(shifted)} "
              f"(largest {max((r['max_offset_ticks'] for r in rows), default=0)} ticks of "
              f"{rows[0]['ticks_per_frame'] if rows else 0:g} a frame); "
              f"beyond half a frame: {sum(len(r['beyond_half_frame']) for r in rows)}")
        for r in shifted:
            print(f"  {r['clip']}: up to {r['max_offset_ticks']} ticks off")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
