"""Check: every checkpoint scene at GPT-2 small's scale (124M, random-init, GPT-2's tokenizer), played without
rendering in both languages, against the legibility and layout checks the suite holds our model and the small
checkpoint to (tests/scene_checks.py assert_legible: the title-safe area, the type floor, no text on text or across
a box, the layout rules). The suite plays the scenes with the small checkpoint only (a 124M dry run of every scene
takes minutes); this is the same check at full size, run by hand after a change to a checkpoint scene.

    .venv/bin/python benchmarks/gpt2_layout.py                          # every scene, both languages
    .venv/bin/python benchmarks/gpt2_layout.py --scenes multi_head --langs en --checkpoint /tmp/gpt2-full

Prints one line per scene and language (ok, or the first fault) and exits 1 if any failed. The checkpoint is made
(seeded, as tests/gpt2_checkpoints.py makes it) when --checkpoint names no existing folder.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from gpt2_checkpoints import FULL, make_checkpoint  # noqa: E402
from scenes.catalog import CHECKPOINT_SCENES, SCENES  # noqa: E402


def checkpoint_at(path: Path | None) -> Path:
    """The checkpoint at `path`, or the 124M one made there (or in a temporary folder) with GPT-2's tokenizer."""
    if path is not None and (path / "config.json").is_file():
        return path
    path = path or Path(tempfile.mkdtemp(prefix="gpt2-layout-")) / "model"
    print(f"making the 124M checkpoint in {path} ...", flush=True)
    return make_checkpoint(path, FULL, seed=2)


def check(name: str, lang: str, cache: Path) -> str:
    """'ok' or the first fault, one line."""
    from scene_checks import LEGIBILITY, assert_legible, lean, run_dry
    spec = SCENES[name]
    cls = getattr(importlib.import_module(spec.module), spec.cls)
    try:
        scene = run_dry(lean(cls), {"lang": lang}, cache, captions=True, frames=False)
        assert_legible(scene.snapshots, lang, **LEGIBILITY.get(name, {}))
    except AssertionError as e:
        return "FAIL " + str(e).splitlines()[0][:300]
    except Exception as e:  # a scene that cannot play at this scale is a finding too
        return f"ERROR {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
    return "ok"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", default=",".join(CHECKPOINT_SCENES))
    ap.add_argument("--langs", default="en,zh")
    ap.add_argument("--checkpoint", type=Path, default=None)
    args = ap.parse_args()
    names = [n for n in args.scenes.split(",") if n]
    unknown = [n for n in names if n not in CHECKPOINT_SCENES]
    if unknown:
        print(f"gpt2_layout: not a checkpoint scene: {', '.join(unknown)}", file=sys.stderr)
        return 2
    os.environ["GPT_LECTURE_MODEL"] = str(checkpoint_at(args.checkpoint))
    failed = 0
    with tempfile.TemporaryDirectory(prefix="gpt2-layout-tex-") as cache:     # LaTeX and text, removed after
        for name in names:
            for lang in args.langs.split(","):
                t = time.perf_counter()
                result = check(name, lang, Path(cache))
                failed += result != "ok"
                print(f"{name:22s} {lang}  {time.perf_counter() - t:6.1f} s  {result}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
