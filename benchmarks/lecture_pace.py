"""The default lecture's length and pace, from dry runs: every scene of lecture.toml played without drawing
(tests/scene_checks.py's lean dry run), silent or with each line's speech estimated from its words
(speech/estimate.py), in each language. No voice is synthesised and nothing is rendered: minutes of CPU, not hours.

    .venv/bin/python benchmarks/lecture_pace.py --langs en,zh --voice estimate --out docs/lab/lecture_pace.json

Per scene: its seconds on the nominal clock, its lines' seconds (speech, or reading time when silent), and per beat
the manifest's "pace" (scenes/pace.py): the seconds the share rule added, the shortest silent hold after a build;
and what tests/pace_checks.py finds wrong with it.
Totals per language: minutes, speech share, beats padded and the seconds added. Run on an older checkout (one
without scenes/pace.py, with speech/estimate.py copied in) it times the beats from their starts ("paced": false).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(os.environ.get("GPT_LECTURE_ROOT", Path(__file__).resolve().parent.parent))
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(Path(__file__).resolve().parent.parent)]


def scenes_of(recipe: Path) -> list[tuple[str, dict]]:
    data = tomllib.loads(recipe.read_text(encoding="utf-8"))
    return [(s["name"], {k: v for k, v in s.items() if k not in ("name", "section")}) for s in data["scene"]]


def play(name: str, params: dict, voice: str, tmp: str):
    from scene_checks import lean, run_dry
    from scenes.catalog import SCENES
    from speech.estimate import EstimatingNarrator
    spec = SCENES[name]
    cls = lean(getattr(importlib.import_module(spec.module), spec.cls))

    class Timed(cls):
        def setup(self):
            super().setup()
            if voice == "estimate":
                self.narrator = EstimatingNarrator(self.name, self.lang)

    Timed.__name__ = cls.__name__
    return run_dry(Timed, params, tmp, captions=False, frames=False)


def beats_of(scene) -> list[dict]:
    """The manifest's pace where the skeleton keeps one; else each beat's span from its start, and its lines."""
    if hasattr(scene, "pace"):
        return scene.pace.record()
    ends = scene.beat_starts[1:] + [float(scene.renderer.time)]
    out = []
    for name, a, b in zip(scene.section_names, scene.beat_starts, ends):
        said = [c["speech"]["seconds"] if "speech" in c else scene.reading_time(c["text"]) for c in scene.captions
                if c["beat"] == name]
        out.append({"section": name, "start": a, "end": b, "seconds": round(b - a, 3), "speech": round(sum(said), 3),
                    "padded": None, "held": None})
    return out


def pace_problems(beats: list[dict]) -> list[str]:
    from pace_checks import pace_problems as problems   # tests/pace_checks.py: the checks the tests make
    return problems(beats)


def measure(lang: str, voice: str, recipe: Path, tmp: str) -> dict:
    scenes, started = [], time.perf_counter()
    for name, params in scenes_of(recipe):
        scene = play(name, {**params, "lang": lang}, voice, tmp)
        beats = beats_of(scene)
        problems = pace_problems(beats) if hasattr(scene, "pace") else None
        scenes.append({"scene": name, "seconds": round(scene.clock, 2), "speech": round(sum(b["speech"] for b in beats), 2),
                       "pace_problems": problems,
                       "beats": [{k: b[k] for k in ("section", "seconds", "speech", "padded", "held")} for b in beats]})
        print(f"{lang} {voice} {name}: {scene.clock:.1f} s", file=sys.stderr, flush=True)
    total = sum(s["seconds"] for s in scenes)
    speech = sum(s["speech"] for s in scenes)
    content = [b for s in scenes for b in s["beats"] if b["section"] != "title"]
    padded = [b["padded"] for b in content if b["padded"]]
    return {"lang": lang, "voice": voice, "minutes": round(total / 60, 2), "speech_minutes": round(speech / 60, 2),
            "share": round(speech / total, 4), "beats": len(content) + len(scenes),
            "beats_over_share": sum(1 for b in content if b["speech"] > 0.8 * b["seconds"] + 1e-6),
            "beats_padded": len(padded), "padded_seconds": round(sum(padded), 1),
            "title_cards_over_6s": [s["scene"] for s in scenes if s["beats"][0]["seconds"] > 6.0 + 1e-6],
            "paced": all(b["padded"] is not None for b in content),
            "scenes_with_pace_problems": [s["scene"] for s in scenes if s["pace_problems"]],
            "dry_run_seconds": round(time.perf_counter() - started, 1), "scenes": scenes}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--langs", default="en,zh")
    ap.add_argument("--voice", choices=("estimate", "none"), default="estimate")
    ap.add_argument("--recipe", type=Path, default=ROOT / "lecture.toml")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="lecture-pace-")
    runs = [measure(lang, args.voice, args.recipe, tmp) for lang in args.langs.split(",")]
    for r in runs:
        print(f"{r['lang']} ({r['voice']}): {r['minutes']} min, speech {r['speech_minutes']} min ({r['share']:.0%}); "
              f"{r['beats_over_share']} beats over 80%; {r['beats_padded']} padded, {r['padded_seconds']} s in all; "
              f"title cards over 6 s: {len(r['title_cards_over_6s'])}; scenes breaking the pace: "
              f"{r['scenes_with_pace_problems']}")
    if args.out:
        tmp_out = args.out.with_name(f".{args.out.name}.tmp")
        tmp_out.write_text(json.dumps({"root": str(ROOT), "runs": runs}, indent=1, ensure_ascii=False) + "\n")
        os.replace(tmp_out, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
