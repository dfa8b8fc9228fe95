"""Glyph outlines kept on disk between processes: a label's text is shaped by Pango and parsed from SVG once per
machine, not once per render process.

Shaping and parsing a line of text (manim's Text: Pango writes an SVG, svgelements parses it, manim builds a path
per glyph) costs about 0.1 s, and a scene shows hundreds of lines, most of them the same from one render to the
next. manim keeps the SVG on disk, but the parse, which is most of the cost, is redone by every process. This cache
keeps what the parse gives: each glyph's points and the baseline, as a NumPy .npz (never a pickle).

Where: $GPT_LECTURE_TEXT_CACHE, else $XDG_CACHE_HOME/gpt-lecture/outlines, else ~/.cache/gpt-lecture/outlines.
Each entry is named by the sha256 of the text, its size and weight, the font and the font file that fontconfig
picks for it, and the versions of manim, ManimPango, Pango and cairo: change any of them and the old entries are
never read again. An entry is written under a temporary name and renamed into place, so a reader never sees half
a file; one that cannot be read is shaped again and replaced. Deleting the folder is always safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
import zipfile
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import numpy as np

FORMAT = "label-outlines-1"


def cache_dir() -> Path:
    """$GPT_LECTURE_TEXT_CACHE, else $XDG_CACHE_HOME/gpt-lecture/outlines, else ~/.cache/gpt-lecture/outlines."""
    from speech.synth_cache import user_cache
    return user_cache("GPT_LECTURE_TEXT_CACHE", "outlines")


@lru_cache(maxsize=None)
def shaping_environment(font: str) -> str:
    """What the outlines of a text depend on besides the text: the font file fontconfig resolves `font` to (path,
    size, modification time) and the versions of the libraries that shape and parse it. Asked once per process."""
    import manimpango
    try:
        path = subprocess.run(["fc-match", "-f", "%{file}", font], capture_output=True, text=True,
                              timeout=30).stdout.strip()
        stat = os.stat(path)
        font_file = [path, stat.st_size, stat.st_mtime_ns]
    except (OSError, subprocess.TimeoutExpired):
        font_file = ["unresolved"]
    versions = {}
    for dist in ("manim", "ManimPango", "svgelements"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return json.dumps({"font": font, "file": font_file, "pango": manimpango.pango_version(),
                       "cairo": manimpango.cairo_version(), **versions}, sort_keys=True)


def entry_path(text: str, font_size: float, weight: str, font: str) -> Path:
    payload = json.dumps([FORMAT, shaping_environment(font), text, repr(float(font_size)), weight],
                         ensure_ascii=False)
    key = hashlib.sha256(payload.encode("utf-8")).hexdigest()
    return cache_dir() / key[:2] / f"{key}.npz"


def load(path: Path) -> tuple[tuple[np.ndarray, ...], float] | None:
    """The outlines and baseline stored at `path`, or None if there is no readable entry."""
    try:
        with np.load(path, allow_pickle=False) as f:
            points, ends, baseline = f["points"], f["ends"], float(f["baseline"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if points.ndim != 2 or points.shape[1] != 3 or not ends.size or ends[-1] != len(points):
        return None
    return tuple(np.split(points, ends[:-1])), baseline


def store(path: Path, outlines: tuple[np.ndarray, ...], baseline: float) -> None:
    """Write an entry atomically (a temporary name, then a rename); a cache that cannot be written is skipped."""
    points = np.concatenate(outlines) if outlines else np.zeros((0, 3))
    ends = np.cumsum([len(o) for o in outlines], dtype=np.int64)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez_compressed(f, points=points, ends=ends, baseline=np.float64(baseline))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass
