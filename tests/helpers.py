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
