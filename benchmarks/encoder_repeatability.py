#!/usr/bin/env python3
"""Does libx264 encode the same frames to the same bytes every time? Measured on a real clip.

    python benchmarks/encoder_repeatability.py --json docs/lab/encoder_repeatability.json

Renders token_embedding at preview as render.py does (silent) unless --clip names a clip, decodes the frames
FIRST..LAST, and encodes those same RGBA frames RUNS times in this process at ManimCE's settings for a partial
movie (libx264, crf 23, yuv420p, the frames handed over as RGBA arrays). Between frames it allocates and frees
buffers of random sizes, as a render process does beside its encoder (seeded: the same churn every run), and
once more with no churn. It reports, each way, how many different files came out, how often each, and the worst
frame PSNR between the most common file and each other one (decoded, RGB). tests/helpers.py holds two renders
of one drawing to the same picture with a bound under these figures.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def render_clip(out: Path) -> Path:
    r = subprocess.run([sys.executable, str(REPO / "render.py"), "token_embedding", "--voice", "none",
                        "--jobs", "1", "--media", str(out)], cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"encoder_repeatability: the render failed: {r.stderr.strip().splitlines()[-1:]}")
    return out / "preview" / "token_embedding.mp4"


def decoded(path: Path) -> list[np.ndarray]:
    import av
    with av.open(str(path)) as c:
        return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]


def encode(frames: list[np.ndarray], path: Path, churn: np.random.Generator | None) -> str:
    """The frames encoded as ManimCE encodes a partial movie; the file's sha256."""
    import av
    held: list[bytes] = []
    container = av.open(str(path), mode="w")
    stream = container.add_stream("libx264", rate=15, options={"an": "1", "crf": "23"})
    stream.pix_fmt, stream.width, stream.height = "yuv420p", frames[0].shape[1], frames[0].shape[0]
    for rgb in frames:
        if churn is not None:
            held.append(bytes(int(churn.integers(1_000, 3_000_000))))
            if len(held) > 20:
                held.pop(int(churn.integers(len(held))))
        rgba = np.dstack([rgb, np.full(rgb.shape[:2], 255, np.uint8)])
        for packet in stream.encode(av.VideoFrame.from_ndarray(rgba, format="rgba")):
            container.mux(packet)
    for packet in stream.encode():
        container.mux(packet)
    container.close()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def psnr(x: np.ndarray, y: np.ndarray) -> float:
    mse = float(np.mean((x.astype(np.float64) - y) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


def measure(frames: list[np.ndarray], runs: int, churn: bool, work: Path) -> dict:
    rng = np.random.default_rng(0) if churn else None
    files: dict[str, Path] = {}
    counts: collections.Counter = collections.Counter()
    for i in range(runs):
        path = work / f"run{i}.mp4"
        digest = encode(frames, path, rng)
        counts[digest] += 1
        if digest not in files:
            files[digest] = path
        else:
            path.unlink()
    common = counts.most_common(1)[0][0]
    base = decoded(files[common])
    worst = {}
    for digest, path in files.items():
        if digest != common:
            other = decoded(path)
            worst[digest[:12]] = round(min(psnr(a, b) for a, b in zip(base, other)), 1)
    return {"runs": runs, "different_files": len(counts), "counts": sorted(counts.values(), reverse=True),
            "worst_psnr_db_against_the_most_common": worst}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clip", type=Path, help="a preview clip to take the frames from (default: render one)")
    ap.add_argument("--first", type=int, default=560, help="first frame (default 560: the 'vectors' beat)")
    ap.add_argument("--last", type=int, default=659, help="last frame (default 659)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json", type=Path, help="write the record here")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clip = a.clip or render_clip(Path(tmp) / "media")
        frames = decoded(clip)[a.first:a.last + 1]
        if not frames:
            sys.exit(f"encoder_repeatability: {clip} has no frames {a.first}-{a.last}")
        import av
        record = {"clip": "token_embedding preview (rendered)" if a.clip is None else str(a.clip),
                  "frames": [a.first, a.first + len(frames) - 1], "size": list(frames[0].shape[1::-1]),
                  "settings": "libx264 crf 23 yuv420p from RGBA (ManimCE's partial movies)",
                  "pyav": av.__version__, "libavcodec": ".".join(map(str, av.library_versions["libavcodec"])),
                  "cpus": os.cpu_count()}
        for churn in (False, True):
            key = "with_allocation_churn" if churn else "without_churn"
            record[key] = measure(frames, a.runs, churn, Path(tmp))
            print(key, json.dumps(record[key]))
    if a.json:
        tmp_path = a.json.with_name(a.json.name + ".tmp")
        tmp_path.write_text(json.dumps(record, indent=1) + "\n")
        tmp_path.replace(a.json)


if __name__ == "__main__":
    main()
