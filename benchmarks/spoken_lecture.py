"""A rendered lecture's length and pace, measured from what the render wrote: each clip's manifest (its beats' pace
record, its narration lines with the seconds the voice took) and the clip itself (its duration, read with PyAV).
benchmarks/lecture_pace.py estimates the same figures from dry runs; this is the measurement of a real, spoken render.

    .venv/bin/python render.py --config lecture.toml --quality preview --media /tmp/lecture    # (and --lang zh)
    .venv/bin/python benchmarks/spoken_lecture.py /tmp/lecture/preview --out docs/lab/spoken_lecture.json

Per language (each clip's "params.lang"): minutes of video, minutes of speech and its share, the speaking rate while
speaking (English words a minute, Chinese Han characters a second: speech.estimate.units on each line's spoken
form), the beats whose speech is over the 80% share, the shortest hold after a build, the longest title card; per
scene its seconds. Only the clips of the recipe's scenes are counted (lecture.toml unless --recipe).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def clip_seconds(path: Path) -> float:
    import av
    with av.open(str(path)) as c:
        return float(c.duration / av.time_base)


def measure(folder: Path, recipe: Path) -> dict:
    from scenes import style
    from speech.estimate import units
    names = [s["name"] for s in tomllib.loads(recipe.read_text(encoding="utf-8"))["scene"]]
    out: dict[str, dict] = {}
    for manifest_path in sorted(folder.glob("*.mp4.json")):
        m = json.loads(manifest_path.read_text(encoding="utf-8"))
        if m.get("scene") not in names or m.get("section") is not None or m.get("clean"):
            continue
        lang = m["params"].get("lang", "en")
        lines = [c for c in m["captions"] if c.get("speech")]
        run = out.setdefault(lang, {"scenes": {}})
        run["scenes"][m["scene"]] = {
            "seconds": round(clip_seconds(folder / m["output"]), 2),
            "speech": round(sum(c["speech"]["seconds"] for c in lines), 2),
            "units": sum(units(c["spoken"], lang) for c in lines),
            "sources": sorted({c["speech"]["source"] for c in lines}),
            "beats": [{k: b[k] for k in ("section", "seconds", "speech", "share", "held", "padded")}
                      for b in m["pace"]],
        }
    for lang, run in out.items():
        missing = [n for n in names if n not in run["scenes"]]
        if missing:
            raise SystemExit(f"{folder}: no {lang} clip of {', '.join(missing)}")
        run["scenes"] = {n: run["scenes"][n] for n in names}      # in the recipe's order
        scenes = list(run["scenes"].values())
        video, speech = sum(s["seconds"] for s in scenes), sum(s["speech"] for s in scenes)
        said = sum(s["units"] for s in scenes)
        beats = [b for s in scenes for b in s["beats"]]
        content = [b for b in beats if b["section"] != "title"]
        run.update({
            "minutes": round(video / 60, 2), "speech_minutes": round(speech / 60, 2),
            "share": round(speech / video, 4),
            "rate": round(said / speech * 60, 1) if lang == "en" else round(said / speech, 2),
            "rate_unit": "words a minute" if lang == "en" else "Han characters a second",
            "beats": len(beats),
            "over_share": [f"{n}:{b['section']}" for n in names for b in run["scenes"][n]["beats"]
                           if b["section"] != "title" and b["share"] > style.SPEECH_SHARE + 1e-3],
            "shortest_hold": min((b["held"] for b in content if b.get("held") is not None), default=None),
            "longest_title": max(b["seconds"] for b in beats if b["section"] == "title"),
            "voices": sorted({v for s in scenes for v in s["sources"]}),
        })
    return out


def main(argv=None) -> int:
    from scenes.style import SPEECH_SHARE
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="the rendered clips' folder (media/preview, media/high, ...)")
    ap.add_argument("--recipe", type=Path, default=ROOT / "lecture.toml")
    ap.add_argument("--out", type=Path, help="also write the figures here (JSON), added to what it holds")
    args = ap.parse_args(argv)
    if not args.folder.is_dir():
        print(f"spoken_lecture: no such folder: {args.folder}", file=sys.stderr)
        return 2
    try:
        figures = measure(args.folder, args.recipe)
    except (OSError, ValueError, KeyError, tomllib.TOMLDecodeError) as e:    # a broken manifest, clip or recipe
        print(f"spoken_lecture: cannot measure {args.folder}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    if not figures:
        print(f"spoken_lecture: no clip of the recipe's scenes in {args.folder}", file=sys.stderr)
        return 2
    if args.out:
        old = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
        tmp = args.out.with_name(args.out.name + ".tmp")
        tmp.write_text(json.dumps({**old, **figures}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, args.out)
    try:
        for lang, run in figures.items():
            print(f"{lang}: {run['minutes']} min, speech {run['speech_minutes']} min ({run['share']:.0%}), "
                  f"{run['rate']} {run['rate_unit']} while speaking; {len(run['over_share'])} beats over "
                  f"{SPEECH_SHARE:.0%} speech; shortest hold {run['shortest_hold']} s; longest title card "
                  f"{run['longest_title']} s")
            for name, s in run["scenes"].items():
                print(f"  {name:22s} {s['seconds']:7.1f} s  speech {s['speech']:6.1f} s")
    except BrokenPipeError:     # the reader left (| head): the figures are written; nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
