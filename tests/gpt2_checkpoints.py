"""Seeded random-init GPT-2 checkpoints made with transformers (GPT2LMHeadModel(GPT2Config(...)), save_pretrained
as safetensors), with GPT-2's real tokenizer built from js-tiktoken's ranks (scripts/gpt2_tokenizer.py).

SMALL is GPT-2's vocabulary and tokenizer on a tiny body (fast tests, every scene at preview); FULL is GPT-2
small's shape (12 layers, 768, 12 heads, 1,024 positions, 50,257 tokens: 124M parameters, about 500 MB).
The benchmark (benchmarks/gpt2_scale.py) uses the same function.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

GPT2_VOCAB = 50257
SMALL = dict(n_layer=2, n_embd=64, n_head=4, n_positions=64)
FULL = dict(n_layer=12, n_embd=768, n_head=12, n_positions=1024)


def js_tiktoken_ranks() -> Path:
    from scripts.gpt2_tokenizer import DEFAULT_RANKS
    return DEFAULT_RANKS


def make_checkpoint(directory: Path, shape: dict, seed: int = 0, tokenizer_dir: Path | None = None) -> Path:
    """A random-init GPT2LMHeadModel of `shape` with GPT-2's vocabulary, saved to `directory` (safetensors) with
    GPT-2's tokenizer.json beside it."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from scripts.gpt2_tokenizer import build

    directory = Path(directory)
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=GPT2_VOCAB, n_ctx=shape["n_positions"], **shape)
    model = GPT2LMHeadModel(config).eval()
    model.save_pretrained(directory, safe_serialization=True)
    if tokenizer_dir is not None and (tokenizer_dir / "tokenizer.json").is_file():
        shutil.copy(tokenizer_dir / "tokenizer.json", directory / "tokenizer.json")
    else:
        build(js_tiktoken_ranks(), directory)
    return directory
