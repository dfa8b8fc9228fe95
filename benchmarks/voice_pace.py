"""The narration's speaking rate while speaking, measured on real synthesis of the lecture's own lines (issue 41 rule 1:
English at most 165 words a minute, Chinese at most 4.8 Chinese characters a second).

    .venv/bin/python render.py narration export --config lecture.toml --lang en --narration /tmp/narr
    .venv/bin/python benchmarks/voice_pace.py /tmp/narr/en/script.csv --scales 1.0,1.12 --out docs/lab/voice_pace_en.json
    .venv/bin/python benchmarks/voice_pace.py /tmp/narr/zh/script.csv --out docs/lab/voice_pace_zh.json

Each line of the script (every `--every`-th) is synthesised afresh, not from the line cache: English by Piper at each
length_scale of `--scales`, Chinese by the Chinese voice as it is. A line's seconds are its audio trimmed as the line
cache trims it (audio.trim_silence: the speech from its onset to its end, the pauses between its sentences
included), which is what a clip holds the line for, before SPEECH_GAP. The rate is words (English: runs of letters,
as bench_voices and narration_audit count them) or Han characters (Chinese) over those seconds: over all the lines,
and per line and per scene (the spread).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from speech import audio, voices  # noqa: E402

LIMITS = {"en": 165.0, "zh": 4.8}          # words a minute; Han characters a second


def units(text: str, lang: str) -> int:
    return len(re.findall(r"[A-Za-z'-]+", text)) if lang == "en" else len(re.findall(r"[\u4e00-\u9fff]", text))


def rate(n: float, seconds: float, lang: str) -> float:
    return n / seconds * 60 if lang == "en" else n / seconds


def measure(rows: list[dict], lang: str, voice) -> dict:
    started, per_line = time.perf_counter(), []
    for row in rows:
        x = audio.trim_silence(voice.synthesize(row["spoken"]), voice.sample_rate)
        seconds = x.size / voice.sample_rate
        per_line.append({"scene": row["scene"], "line_id": row["line_id"], "units": units(row["spoken"], lang),
                         "seconds": round(seconds, 3)})
    total_units = sum(r["units"] for r in per_line)
    total_seconds = sum(r["seconds"] for r in per_line)
    by_scene: dict[str, list] = {}
    for r in per_line:
        by_scene.setdefault(r["scene"], []).append(r)
    scene_rates = {s: round(rate(sum(r["units"] for r in rs), sum(r["seconds"] for r in rs), lang), 2)
                   for s, rs in by_scene.items()}
    line_rates = sorted(rate(r["units"], r["seconds"], lang) for r in per_line if r["units"])
    limit = LIMITS[lang]
    return {
        "voice": voice.name, "length_scale": getattr(voice, "length_scale", None),
        "lines": len(per_line), "units": total_units, "speech_seconds": round(total_seconds, 2),
        "rate": round(rate(total_units, total_seconds, lang), 2),
        "line_rate": {"median": round(statistics.median(line_rates), 2),
                      "p90": round(line_rates[int(0.9 * (len(line_rates) - 1))], 2),
                      "max": round(line_rates[-1], 2),
                      "over_limit": sum(r > limit for r in line_rates)},
        "scene_rate": {"min": min(scene_rates.values()), "max": max(scene_rates.values()),
                       "over_limit": sorted(s for s, v in scene_rates.items() if v > limit), "by_scene": scene_rates},
        "synthesis_seconds": round(time.perf_counter() - started, 1),
        "per_line": per_line,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("script", type=Path, help="a narration script.csv (render.py narration export)")
    p.add_argument("--scales", default="1.0", help="English: piper length_scale values, comma-separated")
    p.add_argument("--every", type=int, default=1, help="take every n-th line")
    p.add_argument("--out", type=Path, required=True, help="the JSON to write")
    args = p.parse_args()
    try:
        with open(args.script, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        scales = [float(s) for s in args.scales.split(",")]
    except (OSError, ValueError, csv.Error) as exc:
        print(f"voice_pace.py: error: {exc}", file=sys.stderr)
        return 2
    if not rows or "spoken" not in rows[0] or args.every < 1:
        print(f"voice_pace.py: error: {args.script} holds no narration lines (or --every < 1)", file=sys.stderr)
        return 2
    lang = "zh" if re.search(r"[\u4e00-\u9fff]", "".join(r["spoken"] for r in rows)) else "en"
    rows = rows[::args.every]
    runs = []
    for v in ([voices.PiperVoice(s) for s in scales] if lang == "en" else [voices.voice("zh")]):
        runs.append(r := measure(rows, lang, v))
        print(f"{r['voice']} length_scale {r['length_scale']}: {r['lines']} lines, {r['rate']} "
              f"{'words a minute' if lang == 'en' else 'characters a second'} while speaking; per line median "
              f"{r['line_rate']['median']}, max {r['line_rate']['max']}; per scene {r['scene_rate']['min']}-"
              f"{r['scene_rate']['max']} ({r['synthesis_seconds']} s)", flush=True)
    result = {"what": "speaking rate while speaking, on real synthesis of the lecture's lines (benchmarks/voice_pace.py)",
              "script": str(args.script), "lang": lang, "limit": LIMITS[lang], "every": args.every,
              "load_average": [round(x, 2) for x in os.getloadavg()], "runs": runs}
    tmp = args.out.with_name(f".{args.out.name}.{os.getpid()}.tmp")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, args.out)
    finally:
        tmp.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
