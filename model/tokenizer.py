"""Word-level tokenizer in Hugging Face `tokenizers` format (tokenizer.json)."""

from __future__ import annotations

import difflib
from pathlib import Path

import re

from tokenizers import Regex, Tokenizer
from tokenizers.models import WordLevel
from tokenizers.normalizers import Lowercase
from tokenizers.pre_tokenizers import Sequence, Split, Whitespace

from .errors import ModelError
from .language import EOS


def _is_cjk(word: str) -> bool:
    return any(not c.isascii() for c in word)


def build_tokenizer(words: list[str]) -> Tokenizer:
    """Word level. Chinese is written without spaces, so the pre-tokenizer first cuts out the vocabulary's
    Chinese words, longest first (a regex alternation, each match isolated: 迈克尔乔丹打 -> 迈克尔, 乔丹, 打),
    then splits the rest on whitespace and punctuation ("fox." -> "fox", ".")."""
    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(words)}, unk_token=EOS))
    tok.normalizer = Lowercase()
    chinese = sorted((w for w in words if _is_cjk(w)), key=lambda w: (-len(w), w))
    steps = [Whitespace()]
    if chinese:
        steps.insert(0, Split(Regex("|".join(re.escape(w) for w in chinese)), behavior="isolated"))
    tok.pre_tokenizer = Sequence(steps)
    return tok


class WordTokenizer:
    """Encodes prompts; an unknown word or an over-long prompt is a clear error."""

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer
        self.vocab = tokenizer.get_vocab()
        self.words = [w for w, _ in sorted(self.vocab.items(), key=lambda kv: kv[1])]

    @classmethod
    def load(cls, path: Path) -> "WordTokenizer":
        path = Path(path)
        if not path.is_file():
            raise ModelError(f"missing file: {path}")
        try:
            return cls(Tokenizer.from_file(str(path)))
        except Exception as e:  # tokenizers raises a bare Exception on bad JSON
            raise ModelError(f"{path}: not a valid tokenizer.json ({str(e).splitlines()[0]})") from None

    def save(self, path: Path) -> None:
        self.tokenizer.save(str(path))

    def split(self, text: str) -> list[str]:
        return [w for w, _ in self.tokenizer.pre_tokenizer.pre_tokenize_str(text.lower())]

    def encode(self, text: str, max_len: int | None = None) -> list[int]:
        words = self.split(text)
        if not words:
            raise ModelError("the prompt is empty")
        for w in words:
            if w not in self.vocab or w == EOS:
                close = difflib.get_close_matches(w, [v for v in self.words if v != EOS], n=3, cutoff=0.6)
                if not close and _is_cjk(w):   # Chinese: words that share a character with it
                    close = [v for v in self.words if v != EOS and set(v) & set(w)][:3]
                hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
                raise ModelError(f"unknown word {w!r}: it is not in the model's {len(self.words)}-word vocabulary{hint}")
        if max_len is not None and len(words) > max_len:
            raise ModelError(f"the prompt is {len(words)} tokens long, but the model's context is {max_len} tokens")
        return [self.vocab[w] for w in words]

    def decode(self, ids) -> list[str]:
        return [self.words[i] for i in ids]

    def __len__(self) -> int:
        return len(self.words)
