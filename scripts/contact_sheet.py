#!/usr/bin/env python3
"""Contact sheets for looking at a rendered lecture beat by beat: for every clip of a media folder, the last frame of
each beat (the picture a viewer reads before the next beat starts), English and Chinese side by side.

    .venv/bin/python scripts/contact_sheet.py media/preview /tmp/sheets          # every clip that has both languages
    .venv/bin/python scripts/contact_sheet.py media/preview /tmp/sheets --scene mlp_fact

Writes OUT/<scene>-<nn>-<section>.png (the English frame left, the Chinese right, each at the clip's own size) and
prints one line per sheet. The beats come from each clip's manifest (`timeline`); the frame is the last one
decoded before the beat's end. Reads the clips with PyAV; writes nothing beside them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import av
from PIL import Image


def beat_ends(manifest: Path) -> list[tuple[str, float]]:
    data = json.loads(manifest.read_text())
    return [(b["section"], float(b["end"])) for b in data.get("timeline", [])]


def frames_before(clip: Path, times: list[float]) -> list[Image.Image]:
    """For each time (ascending), the last frame whose timestamp is before it."""
    out: list[Image.Image] = []
    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        pending = list(times)
        last = None
        for frame in container.decode(stream):
            t = float(frame.pts * stream.time_base)
            while pending and t >= pending[0] - 1e-3:
                out.append(last.to_image() if last is not None else frame.to_image())
                pending.pop(0)
            last = frame
            if not pending:
                break
        while pending:
            out.append(last.to_image())
            pending.pop(0)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("media", type=Path, help="a quality folder, e.g. media/preview")
    p.add_argument("out", type=Path)
    p.add_argument("--scene", action="append", help="only these scenes (repeatable)")
    args = p.parse_args(argv)
    if not args.media.is_dir():
        print(f"contact_sheet.py: {args.media}: no such folder", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    made = 0
    for en in sorted(args.media.glob("*.mp4")):
        stem = en.stem
        if "-" in stem or stem == "lecture":
            continue   # a variant (language, parameters, clean) or the joined lecture
        if args.scene and stem not in args.scene:
            continue
        zh = en.with_name(f"{stem}-lang-zh.mp4")
        if not zh.is_file() or not en.with_name(en.name + ".json").is_file() or not zh.with_name(zh.name + ".json").is_file():
            continue
        beats_en, beats_zh = beat_ends(en.with_name(en.name + ".json")), beat_ends(zh.with_name(zh.name + ".json"))
        sections = [s for s, _ in beats_en]
        if sections != [s for s, _ in beats_zh]:
            print(f"{stem}: the languages' beats differ: {sections} / {[s for s, _ in beats_zh]}", file=sys.stderr)
        left = frames_before(en, [t for _, t in beats_en])
        right = frames_before(zh, [t for _, t in beats_zh])
        for i, (section, a, b) in enumerate(zip(sections, left, right)):
            sheet = Image.new("RGB", (a.width + b.width + 8, max(a.height, b.height)), (80, 80, 80))
            sheet.paste(a, (0, 0))
            sheet.paste(b, (a.width + 8, 0))
            path = args.out / f"{stem}-{i:02d}-{section}.png"
            sheet.save(path)
            made += 1
            print(path)
    if not made:
        print(f"contact_sheet.py: no clip in {args.media} has both languages and manifests", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
