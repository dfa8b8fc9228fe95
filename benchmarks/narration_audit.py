"""Audit the narration of rendered clips: each cue against its speech onset, found in the clip's decoded sound by
an energy detector (speech.audio.speech_onsets), and the loudness and true peak of every clip.

    python benchmarks/narration_audit.py media/preview [media/high ...] [--json docs/lab/narration_audit.json]

For every spoken clip with a manifest in the folders given: per line, the nearest detected onset to the cue's start
and the difference; per clip, its integrated loudness (EBU R128) and true peak; and the speaking rate of the clip's
language (English words a minute, Chinese characters a second, counted in the spoken forms over the speech's own
seconds). Reads files only; renders nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from speech import audio, mux  # noqa: E402


def audit_clip(clip: Path) -> dict | None:
    manifest = json.loads(clip.with_name(clip.name + ".json").read_text())
    if "params" not in manifest:   # the joined lecture: its clips are audited one by one
        return None
    lines = [c for c in manifest.get("captions", []) if c.get("speech")]
    if not lines:
        return None
    sound = mux.clip_samples(clip)
    onsets = audio.narration_onsets(sound, mux.RATE)
    offsets = [min((t - c["start"] for t in onsets), key=abs) for c in lines]
    lang = manifest["params"].get("lang", "en")
    seconds = sum(c["speech"]["seconds"] for c in lines)
    if lang == "zh":
        units = sum(len(re.findall(r"[\u4e00-\u9fff]", c["spoken"])) for c in lines)
        rate = {"characters_per_second": round(units / seconds, 2)}
    else:
        units = sum(len(c["spoken"].split()) for c in lines)
        rate = {"words_per_minute": round(60 * units / seconds, 1)}
    return {"clip": clip.name, "lang": lang, "fps": manifest["fps"], "lines": len(lines),
            "duration": manifest["timeline"][-1]["end"], "speech_seconds": round(seconds, 2),
            "worst_offset_ms": round(1000 * max(offsets, key=abs), 2),
            "within_a_frame_at_60": all(abs(o) <= 1 / 60 for o in offsets),
            "loudness_lufs": round(audio.loudness(sound, mux.RATE), 2),
            "true_peak_db": round(audio.true_peak_db(sound, mux.RATE), 2), **rate}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folders", nargs="+", type=Path)
    p.add_argument("--json", type=Path, help="write the audit here")
    args = p.parse_args(argv)
    report = {}
    for folder in args.folders:
        rows = [r for c in sorted(folder.glob("*.mp4")) if c.with_name(c.name + ".json").is_file()
                and (r := audit_clip(c)) is not None]
        report[folder.name] = rows
        for lang in ("en", "zh"):
            mine = [r for r in rows if r["lang"] == lang]
            if not mine:
                continue
            rate = ("words_per_minute", "words a minute") if lang == "en" else ("characters_per_second",
                                                                                 "characters a second")
            print(f"{folder} {lang}: {len(mine)} clips, {sum(r['lines'] for r in mine)} lines, "
                  f"{sum(r['duration'] for r in mine) / 60:.1f} min; worst cue-to-onset "
                  f"{max((abs(r['worst_offset_ms']) for r in mine)):.1f} ms; loudness "
                  f"{min(r['loudness_lufs'] for r in mine):.1f} to {max(r['loudness_lufs'] for r in mine):.1f} LUFS; "
                  f"highest true peak {max(r['true_peak_db'] for r in mine):.1f} dBTP; median "
                  f"{statistics.median(r[rate[0]] for r in mine)} {rate[1]}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
