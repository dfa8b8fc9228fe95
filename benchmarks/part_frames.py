"""Check: does skipping the plays before a part change what a part draws? One scene is drawn twice in this process's
way (ManimCE's Cairo renderer with pipeline/cairo_paths.py, as pipeline/worker.py draws a part): once from its first
play, once with the plays before --from skipped (manim's from_animation_number, as render.py's later parts start),
both up to --play. The frames of that play and the scene's mobjects when it starts are compared; nothing is encoded,
so what differs here is drawing, not the encoder.

    .venv/bin/python benchmarks/part_frames.py --scene architecture --from 45 --play 48 --voice spoken

Prints the frames compared, the largest difference of a pixel channel in each, and whether the scene's mobjects
(their kinds and points) matched; exits 1 if anything differed. --voice spoken holds the beats for the voice's lines
(from the line cache, synthesised if absent), as the spoken lecture plays; none holds them at a reading rate.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def draw(scene_name: str, first: int, play: int) -> tuple[list, list[str]]:
    """The frames of play `play` and the scene's mobjects as it starts, drawn with the plays before `first` skipped."""
    import numpy as np
    from manim import tempconfig

    from pipeline import cairo_paths
    from scenes.catalog import SCENES
    cairo_paths.install()
    spec = SCENES[scene_name]
    cls = getattr(importlib.import_module(spec.module), spec.cls)
    frames, mobjects = [], []
    with tempfile.TemporaryDirectory(prefix="part-frames-") as tmp:
        settings = {"quality": "low_quality", "media_dir": tmp, "tex_dir": f"{tmp}/Tex", "text_dir": f"{tmp}/texts",
                    "disable_caching": True, "write_to_movie": False, "save_last_frame": False,
                    "from_animation_number": first, "upto_animation_number": play, "progress_bar": "none",
                    "verbosity": "WARNING"}
        with tempconfig(settings):
            scene = cls()
            renderer = scene.renderer
            add_frame, compile_data = renderer.add_frame, scene.compile_animation_data

            def recorded_frame(frame, num_frames=1):
                if renderer.num_plays == play:
                    frames.append(frame.copy())
                return add_frame(frame, num_frames)

            def recorded_mobjects(*args, **kwargs):
                if renderer.num_plays == play:
                    mobjects[:] = [f"{type(m).__name__}:{hashlib.sha256(np.round(m.get_all_points(), 6).tobytes()).hexdigest()[:12]}"
                                   for m in scene.mobjects]
                return compile_data(*args, **kwargs)

            renderer.add_frame, scene.compile_animation_data = recorded_frame, recorded_mobjects
            try:
                scene.render()
            except Exception as e:   # manim ends construct() after upto_animation_number its own way
                if type(e).__name__ != "EndSceneEarlyException":
                    raise
    return frames, mobjects


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default="architecture")
    ap.add_argument("--from", dest="first", type=int, default=45)
    ap.add_argument("--play", type=int, default=48)
    ap.add_argument("--voice", choices=["spoken", "none"], default="spoken")
    a = ap.parse_args()
    if a.voice == "spoken":
        from speech.synth_cache import default_cache_dir
        os.environ["GPT_LECTURE_VOICE"] = json.dumps({"cache": str(default_cache_dir()), "recordings": None})
    else:
        os.environ.pop("GPT_LECTURE_VOICE", None)
    import numpy as np
    whole, whole_mobs = draw(a.scene, 0, a.play)
    part, part_mobs = draw(a.scene, a.first, a.play)
    if len(whole) != len(part) or not whole:
        print(f"play {a.play}: {len(whole)} frames from the first play, {len(part)} from play {a.first}")
        return 1
    worst = [int(np.abs(x.astype(int) - y.astype(int)).max()) for x, y in zip(whole, part)]
    same = whole_mobs == part_mobs
    print(f"{a.scene} play {a.play} ({a.voice}): {len(whole)} frames; largest channel difference per frame {worst}; "
          f"mobjects ({len(whole_mobs)}) {'the same' if same else 'differ'} with plays 0-{a.first - 1} skipped")
    return 0 if same and max(worst) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
