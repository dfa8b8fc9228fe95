"""Files' sha256, and a memo that remembers them by size and modification time.

Big files (a 500 MB checkpoint, a voice's tens of MB of models) are named by their content hash in every cache key;
reading them again in every render process would cost seconds. `remembered_sha256` hashes a file once and reuses
the digest while the file's size and modification time (ns) are the ones it was hashed at. The memo is one JSON
file, written to a temporary name and renamed (two processes racing write the same digests; the rename is atomic).
A memo that cannot be written (a read-only folder) only means hashing again next time. Never a pickle.

Used by model/weights.py (a checkpoint's files), speech/voices.py (the voices' models), speech/narrator.py and
pipeline/cache.py (plain `file_sha256`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

BLOCK = 1 << 20


def file_sha256(path: Path | str) -> str:
    """A file's sha256, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(BLOCK), b""):
            h.update(block)
    return h.hexdigest()


def read_memo(candidates: list[Path]) -> tuple[dict, Path | None]:
    """The first memo of `candidates` that reads as JSON, and where it was; ({}, None) if none does."""
    for candidate in candidates:
        try:
            memo = json.loads(Path(candidate).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(memo, dict):
            return memo, Path(candidate)
    return {}, None


def write_memo(memo: dict, candidates: list[Path]) -> Path | None:
    """Write `memo` atomically to the first of `candidates` that can be written; None if none can."""
    for candidate in candidates:
        candidate = Path(candidate)
        tmp = None
        try:
            candidate.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=candidate.parent, prefix=".digests.", suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                json.dump(memo, f)
            os.replace(tmp, candidate)
            return candidate
        except OSError:
            if tmp and os.path.exists(tmp):
                os.unlink(tmp)
            continue   # read-only: try the next place
    return None


def remembered_sha256(paths: dict[str, Path], candidates: list[Path]) -> dict[str, str]:
    """{key: sha256} of each file of `paths` ({key: path}), reusing the digest the memo (the first readable of
    `candidates`) holds under that key while the file's size and modification time are those it was hashed at; the
    memo is rewritten (where it was read, else the first writable candidate) only when a digest was computed."""
    memo, where = read_memo(candidates)
    out, changed = {}, False
    for key, path in paths.items():
        st = Path(path).stat()
        stamp = [st.st_size, st.st_mtime_ns]
        entry = memo.get(key)
        if isinstance(entry, list) and entry[:2] == stamp:
            out[key] = entry[2]
            continue
        out[key] = file_sha256(path)
        memo[key] = [*stamp, out[key]]
        changed = True
    if changed:
        write_memo(memo, ([where] if where else []) + list(candidates))
    return out
