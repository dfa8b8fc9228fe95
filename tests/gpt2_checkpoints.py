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


# A lecturer's own checkpoint (issue 44): another shape than GPT-2's, and a byte-level BPE trained on a few sentences
# of long words, so that whole long words ("␣internationalization") are single tokens that captions and labels name.
OWN = dict(n_layer=3, n_embd=96, n_head=6, n_positions=64)
OWN_SENTENCES = [
    "Alice saw a red fox. The fox was quick, and the fox was clever.",
    "The weather today is extraordinarily unpredictable and uncharacteristically warm.",
    "Michael Jordan plays the sport of basketball; his attention to fundamentals was legendary.",
    "She sat on the river bank. She put her money in the bank.",
    "Internationalization and counterrevolutionary misunderstandings complicate telecommunications.",
    "Incomprehensibilities notwithstanding, the representational characteristics were overwhelmingly straightforward.",
    "猫是红的。猫是今天天气很好。乔丹在河边的银行的。",
]


def make_own_checkpoint(directory: Path, shape: dict = OWN, seed: int = 3, sentences=OWN_SENTENCES) -> Path:
    """A random-init GPT2LMHeadModel of `shape` with its own byte-level BPE (a `tokenizers` BpeTrainer on `sentences`,
    repeated until every word is merged whole), its vocabulary as large as the tokenizer's, saved as a lecturer
    would: safetensors, config.json and tokenizer.json."""
    import torch
    from tokenizers import Tokenizer, decoders, pre_tokenizers
    from tokenizers.models import BPE
    from tokenizers.trainers import BpeTrainer
    from transformers import GPT2Config, GPT2LMHeadModel

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = BpeTrainer(vocab_size=2000, min_frequency=1, special_tokens=["<|endoftext|>"],
                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(list(sentences) * 4, trainer=trainer)
    tok.save(str(directory / "tokenizer.json"))
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=tok.get_vocab_size(), n_ctx=shape["n_positions"], bos_token_id=0, eos_token_id=0,
                        **shape)
    GPT2LMHeadModel(config).eval().save_pretrained(directory, safe_serialization=True)
    return directory
