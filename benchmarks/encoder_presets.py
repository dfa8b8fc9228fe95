#!/usr/bin/env python3
"""What libx264's preset costs and changes: CPU time, file size and fidelity of each preset on a real clip.

    python benchmarks/encoder_presets.py --scene token_embedding --quality high --json docs/lab/encoder_presets.json

Renders the scene once as render.py does but with lossless partial movies (libx264 qp 0 of the yuv420p frames
manim hands the encoder), then encodes those frames again with each preset at ManimCE's rate factor (crf 23),
each in a process of its own, and measures:

- the CPU time of encoding (the process's CPU time, less that of a process that only decodes the source);
- the file size;
- the fidelity to the source frames: PSNR of the luma and chroma planes per frame (frames equal to the
  source count as 100 dB), the mean over frames and the worst frame, and the largest difference of one pixel.

The frames are compared as the encoder receives them (yuv420p), so the colour conversion, which is the
same for every preset, is left out. --source FILE reuses a lossless clip from an earlier run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PRESETS = ["medium", "fast", "faster", "veryfast", "superfast", "ultrafast"]
CRF = "23"   # ManimCE's


def lossless_render(scene: str, quality: str, out: Path) -> dict:
    """Render the scene as render.py's render process does, with lossless partial movies; returns figures."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    import profile_render

    from pipeline import worker
    from manim.scene.scene_file_writer import SceneFileWriter
    opened = SceneFileWriter.open_partial_movie_stream

    def lossless(self, file_path=None):
        opened(self, file_path)
        self._current_encode_job.stream.codec_context.options = {"an": "1", "qp": "0", "preset": "ultrafast"}
    SceneFileWriter.open_partial_movie_stream = lossless
    with tempfile.TemporaryDirectory(prefix="encoder-presets-") as tmp:
        tmp = Path(tmp)
        spec = profile_render.job_for(scene, quality, tmp, tmp / "cache")
        t0 = time.perf_counter()
        produced, _, _ = worker.render_scene(spec, Path(spec["work"]))
        os.replace(produced, out)
        return {"render_seconds": round(time.perf_counter() - t0, 1)}


def frames(path: Path):
    import av
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            yield frame


def child(source: Path, preset: str | None, out: Path | None) -> None:
    """Decode the source and, with a preset, encode it as ManimCE's partial movies are encoded (libx264,
    yuv420p, crf 23, one frame at a time); print this process's CPU seconds."""
    import av
    with av.open(str(source)) as src:
        enc = av.open(str(out), mode="w") if preset else None
        stream = None
        if preset:
            stream = enc.add_stream("libx264", rate=src.streams.video[0].average_rate,
                                    options={"an": "1", "crf": CRF, "preset": preset})
            stream.pix_fmt = "yuv420p"
            stream.width, stream.height = src.streams.video[0].width, src.streams.video[0].height
        for frame in src.decode(video=0):
            # a frame of its own, as manim hands one to the encoder (no time base, no pts); made in the
            # decode-only process too, so its cost is subtracted
            frame = av.VideoFrame.from_ndarray(frame.to_ndarray(format="yuv420p"), format="yuv420p")
            if preset:
                for packet in stream.encode(frame):
                    enc.mux(packet)
        if preset:
            for packet in stream.encode():
                enc.mux(packet)
            enc.close()
    use = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"cpu": use.ru_utime + use.ru_stime}))


def run_child(source: Path, preset: str | None, out: Path | None) -> tuple[float, float]:
    cmd = [sys.executable, __file__, "--child", str(source)]
    if preset:
        cmd += ["--preset", preset, "--out", str(out)]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["cpu"], time.perf_counter() - t0


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 100.0 if mse == 0 else float(10 * np.log10(255.0 ** 2 / mse))


def fidelity(source: Path, encoded: Path) -> dict:
    per_frame, worst_pixel, n = [], 0, 0
    for a, b in zip(frames(source), frames(encoded), strict=True):
        pa, pb = a.to_ndarray(format="yuv420p"), b.to_ndarray(format="yuv420p")
        per_frame.append(psnr(pa, pb))
        worst_pixel = max(worst_pixel, int(np.abs(pa.astype(np.int16) - pb.astype(np.int16)).max()))
        n += 1
    p = np.array(per_frame)
    return {"frames": n, "psnr_mean_db": round(float(p.mean()), 2), "psnr_min_db": round(float(p.min()), 2),
            "psnr_median_db": round(float(np.median(p)), 2), "largest_pixel_difference": worst_pixel}


RULE = ("the preset with the least encoding CPU whose frames are at least as close to the drawn frames as medium's "
        "(mean and worst-frame PSNR) and whose file is at most twice medium's")


def choose(presets: dict) -> str:
    """RULE over the measured presets (medium, ManimCE's, among them)."""
    base = presets["medium"]
    fit = [name for name, row in presets.items()
           if row["psnr_mean_db"] >= base["psnr_mean_db"] and row["psnr_min_db"] >= base["psnr_min_db"]
           and row["bytes"] <= 2 * base["bytes"]]
    return min(fit, key=lambda name: presets[name]["encode_cpu_seconds"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scene", default="token_embedding")
    p.add_argument("--quality", default="high")
    p.add_argument("--source", type=Path, help="a lossless clip from an earlier run (skips the render)")
    p.add_argument("--presets", nargs="+", default=PRESETS)
    p.add_argument("--json", type=Path)
    p.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--preset", help=argparse.SUPPRESS)
    p.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.child, args.preset, args.out)
        return 0
    with tempfile.TemporaryDirectory(prefix="encoder-presets-") as tmp:
        tmp = Path(tmp)
        result = {"scene": args.scene, "quality": args.quality, "crf": CRF, "load_at_start": os.getloadavg()[0]}
        source = args.source
        if source is None:
            source = tmp / "lossless.mp4"
            result.update(lossless_render(args.scene, args.quality, source))
        decode_cpu, _ = run_child(source, None, None)
        result["decode_only_cpu_seconds"] = round(decode_cpu, 2)
        result["presets"] = {}
        for preset in args.presets:
            out = tmp / f"{preset}.mp4"
            cpu, wall = run_child(source, preset, out)
            row = {"encode_cpu_seconds": round(cpu - decode_cpu, 2), "wall_seconds": round(wall, 1),
                   "bytes": out.stat().st_size, **fidelity(source, out)}
            result["presets"][preset] = row
            print(preset, json.dumps(row), flush=True)
        result["load_at_end"] = os.getloadavg()[0]
    base = result["presets"].get("medium")
    if base:
        for row in result["presets"].values():
            row["cpu_ratio_to_medium"] = round(row["encode_cpu_seconds"] / base["encode_cpu_seconds"], 3)
            row["size_ratio_to_medium"] = round(row["bytes"] / base["bytes"], 3)
    if base:
        result["rule"] = RULE
        result["chosen"] = choose(result["presets"])
        print(f"chosen by the rule: {result['chosen']}")
    if args.json:
        tmp_json = args.json.with_name(f".{args.json.name}.tmp")
        tmp_json.write_text(json.dumps(result, indent=1) + "\n")
        os.replace(tmp_json, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
