#!/usr/bin/env python3
"""Build GPT-2's tokenizer.json (Hugging Face `tokenizers`, byte-level BPE) from the js-tiktoken npm package's
GPT-2 ranks, offline.

    python scripts/gpt2_tokenizer.py OUT_DIR [--ranks <venv>/share/js-tiktoken-1.0.21/dist/ranks/gpt2.js]

scripts/setup.sh fetches js-tiktoken with npm into the venv. The file is written under a temporary name and
renamed: OUT_DIR/tokenizer.json is never half-written. Bad input: one line, exit 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from model.bpe import read_js_tiktoken_ranks, tokenizer_from_ranks  # noqa: E402
from model.errors import ModelError  # noqa: E402

JS_TIKTOKEN_VERSION = "1.0.21"
DEFAULT_RANKS = Path(sys.prefix) / "share" / f"js-tiktoken-{JS_TIKTOKEN_VERSION}" / "dist" / "ranks" / "gpt2.js"
GPT2_VOCAB = 50257


def build(ranks_js: Path, out_dir: Path) -> Path:
    ranks, special = read_js_tiktoken_ranks(ranks_js)
    tok = tokenizer_from_ranks(ranks, special)
    if tok.get_vocab_size() != GPT2_VOCAB:
        raise ModelError(f"{ranks_js}: {tok.get_vocab_size()} tokens, but GPT-2 has {GPT2_VOCAB}")
    out_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tokenizer.", suffix=".json", dir=out_dir)
    os.close(fd)
    try:
        tok.save(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out_dir / "tokenizer.json")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out_dir / "tokenizer.json"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out_dir", type=Path)
    p.add_argument("--ranks", type=Path, default=DEFAULT_RANKS, help="js-tiktoken's dist/ranks/gpt2.js")
    args = p.parse_args(argv)
    if not args.ranks.is_file():
        print(f"gpt2_tokenizer: error: no rank file {args.ranks} (scripts/setup.sh fetches js-tiktoken with npm)",
              file=sys.stderr)
        return 2
    try:
        path = build(args.ranks, args.out_dir)
    except (ModelError, OSError) as e:
        print(f"gpt2_tokenizer: error: {e}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
