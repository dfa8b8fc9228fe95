"""Shared test helpers (plain functions; fixtures live in conftest.py)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `python -m model ARGS` the way a user would, from the project root."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "model", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def assert_clean_error(result: subprocess.CompletedProcess, *needles: str) -> None:
    """Non-zero exit, one line on stderr naming the problem, no traceback, nothing on stdout."""
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert result.stdout == ""


def mp4_top_level_boxes(data: bytes) -> list[str]:
    """The types of an mp4's (ISO BMFF's) top-level boxes in file order: each box is a 32-bit big-endian size (1:
    a 64-bit size follows the type; 0: to the end of the file) and a four-letter type."""
    import struct
    boxes, at = [], 0
    while at + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        if size == 1:
            size = struct.unpack(">Q", data[at + 8:at + 16])[0]
        elif size == 0:
            size = len(data) - at
        if size < 8 or at + size > len(data):
            raise ValueError(f"a box {kind!r} of {size} bytes at {at} runs past the file's {len(data)} bytes")
        boxes.append(kind.decode("latin-1"))
        at += size
    if at != len(data):
        raise ValueError(f"{len(data) - at} bytes after the last box")
    return boxes


def assert_moov_before_mdat(data: bytes, name: str) -> None:
    """The mp4's index (moov) comes before its media data (mdat): a browser can play it from its first bytes."""
    boxes = mp4_top_level_boxes(data)
    assert "moov" in boxes and "mdat" in boxes, (name, boxes)
    assert boxes.index("moov") < boxes.index("mdat"), (name, boxes)


# --- comparing two renders of the same drawing ------------------------------------------------------------------
# libx264, as PyAV's wheels bundle it, does not always encode the same frames to the same bytes: 100 frames of
# token_embedding's "vectors" beat (480p) encoded 10 times in one process at ManimCE's settings gave one file
# without other allocations between frames and 6 different files with them, as a render process has
# (benchmarks/encoder_repeatability.py, docs/lab/encoder_repeatability.json). Plain `manim render` is no exception:
# its runs gave different clips from identical drawn frames. So two renders of one drawing are held to the same
# picture, not the same bytes: every frame identical or within SAME_PICTURE_MIN_PSNR_DB of its twin. The encoder's
# own variants measured 53.4 dB and up; a frame late is about 23 dB, a number of three digits shifted by one
# pixel 41.7 dB (test_render.py checks that the bound sees it), the same number gone 40.7 dB.
SAME_PICTURE_MIN_PSNR_DB = 45.0


def decoded_frames(path) -> list:
    """Every frame of a clip, decoded to RGB (8 bits a channel)."""
    import av
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


def psnr(x, y) -> float:
    """Peak signal-to-noise ratio of two 8-bit frames, in dB (infinite when they are the same)."""
    import numpy as np
    mse = float(np.mean((x.astype(np.float64) - y) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


def picture_differences(frames_a: list, frames_b: list) -> str:
    """'' when two clips show the same picture (the same number of frames, each identical or within
    SAME_PICTURE_MIN_PSNR_DB of its twin); else what differs, in one line."""
    import numpy as np
    if len(frames_a) != len(frames_b):
        return f"{len(frames_a)} frames against {len(frames_b)}"
    differing = [i for i, (x, y) in enumerate(zip(frames_a, frames_b)) if not np.array_equal(x, y)]
    below = [(i, psnr(frames_a[i], frames_b[i])) for i in differing]
    below = [(i, p) for i, p in below if p < SAME_PICTURE_MIN_PSNR_DB]
    if not below:
        return ""
    worst = min(below, key=lambda ip: ip[1])
    return (f"{len(below)} of {len(frames_a)} frames differ by more than the encoder does (from frame {below[0][0]}; "
            f"frame {worst[0]} at {worst[1]:.1f} dB, the bound {SAME_PICTURE_MIN_PSNR_DB} dB)")
