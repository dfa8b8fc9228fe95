"""Byte-level BPE tokenizers (GPT-2's kind), read with Hugging Face `tokenizers`, and shown honestly on screen.

    BPETokenizer.load(directory)   tokenizer.json (a `tokenizers` BPE model with a ByteLevel pre-tokenizer),
                                   or vocab.json + merges.txt (the original GPT-2 release's two files)
    tokenizer_from_ranks(ranks)    a tokenizer.json from tiktoken-style ranks (bytes in rank order), as
                                   scripts/gpt2_tokenizer.py builds GPT-2's from the js-tiktoken npm package

A token is a run of bytes. On screen (`display`) every space is drawn as "␣" (U+2423, in the lecture's font),
bytes that do not form valid UTF-8 in the token (half of a Chinese character, a piece of an emoji) and control
bytes (newline, tab) as <0xNN>; the rest is the text the bytes spell.
"""

from __future__ import annotations

import codecs
import json
import unicodedata
from pathlib import Path

from tokenizers import Tokenizer, decoders, pre_tokenizers, processors
from tokenizers.models import BPE

from .errors import ModelError

SPACE_MARK = "\u2423"          # ␣: a space, drawn
END_OF_TEXT = "<|endoftext|>"


def byte_alphabet() -> dict[int, str]:
    """GPT-2's printable stand-in for every byte: bytes that are printable Latin-1 stand for themselves, the others
    (controls, space, soft hyphen ...) take the code points from U+0100 up, in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(0x100 + extra)
            extra += 1
    return table


BYTE_TO_CHAR = byte_alphabet()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def _escape_bytes(error: UnicodeDecodeError):
    bad = error.object[error.start:error.end]
    return "".join(f"<0x{b:02X}>" for b in bad), error.end


codecs.register_error("gpt_lecture_hex", _escape_bytes)


def display(raw: bytes) -> str:
    """A token's bytes as drawn: spaces as ␣, invalid UTF-8 and control bytes as <0xNN>, the rest as text."""
    text = raw.decode("utf-8", errors="gpt_lecture_hex")
    out = []
    for ch in text:
        if ch == " ":
            out.append(SPACE_MARK)
        elif unicodedata.category(ch) == "Cc":
            out.append("".join(f"<0x{b:02X}>" for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    return "".join(out)


def token_bytes(piece: str) -> bytes:
    """A byte-level vocabulary entry (GPT-2's printable stand-ins) back to its bytes."""
    try:
        return bytes(CHAR_TO_BYTE[c] for c in piece)
    except KeyError:
        raise ModelError(f"token {piece!r} is not byte-level (a character outside GPT-2's byte alphabet)") from None


def _merge_pair(token: bytes, rank: int, ranks: dict[bytes, int]) -> tuple[bytes, bytes]:
    """The two pieces BPE joins to make `token`: byte pair encoding of its bytes with only the merges ranked before
    it ends in exactly two parts (tiktoken's ranks are merge priorities)."""
    parts = [bytes([b]) for b in token]
    while len(parts) > 2:
        best, at = None, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < rank and (best is None or r < best):
                best, at = r, i
        if best is None:
            break
        parts[at:at + 2] = [parts[at] + parts[at + 1]]
    if len(parts) != 2:
        raise ModelError(f"rank {rank}: token {token!r} is not a merge of two earlier tokens")
    return parts[0], parts[1]


def tokenizer_from_ranks(ranks: list[bytes], special: dict[str, int] | None = None,
                         pattern_is_gpt2: bool = True) -> Tokenizer:
    """A `tokenizers` byte-level BPE tokenizer from ranked byte strings (rank = id = merge priority).

    The single bytes come first in any tiktoken rank list; every longer token is the merge of the two pieces found
    by `_merge_pair`. The pre-tokenizer is GPT-2's regex (ByteLevel, no prefix space); special tokens are added."""
    if not pattern_is_gpt2:
        raise ModelError("only GPT-2's split pattern is supported")
    index = {}
    for i, t in enumerate(ranks):
        if not isinstance(t, bytes) or not t:
            raise ModelError(f"rank {i}: expected a non-empty byte string")
        if t in index:
            raise ModelError(f"rank {i}: token {t!r} repeats rank {index[t]}")
        index[t] = i
    missing = [b for b in range(256) if bytes([b]) not in index]
    if missing:
        raise ModelError(f"the ranks lack the single byte 0x{missing[0]:02X}: not a byte-level vocabulary")
    vocab = {"".join(BYTE_TO_CHAR[b] for b in t): i for t, i in index.items()}
    merges = []
    for t, i in sorted(index.items(), key=lambda kv: kv[1]):
        if len(t) > 1:
            a, b = _merge_pair(t, i, index)
            merges.append(("".join(BYTE_TO_CHAR[x] for x in a), "".join(BYTE_TO_CHAR[x] for x in b)))
    tok = Tokenizer(BPE(vocab=vocab, merges=merges, fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    for name, i in (special or {}).items():
        if i != tok.get_vocab_size():
            raise ModelError(f"special token {name!r} has id {i}, but the next free id is {tok.get_vocab_size()}")
        tok.add_special_tokens([name])
    return tok


def is_byte_level(tokenizer_json: Path) -> bool:
    """Whether a tokenizer.json holds a BPE model (GPT-2's kind) rather than our word-level one."""
    try:
        model = json.loads(Path(tokenizer_json).read_text(encoding="utf-8")).get("model", {})
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(model, dict) and model.get("type") == "BPE"


class BPETokenizer:
    """GPT-2-style tokenizer: any text encodes (bytes never go unknown); tokens are shown by `display`.

    `words[i]` is token i as drawn on screen and `pieces[i]` its bytes; `vocab` maps the tokenizer's own
    vocabulary strings (byte-level stand-ins) to ids."""

    kind = "bpe"

    def __init__(self, tokenizer: Tokenizer, where: str = "tokenizer"):
        self.tokenizer = tokenizer
        self.vocab = tokenizer.get_vocab(with_added_tokens=True)
        n = len(self.vocab)
        if sorted(self.vocab.values()) != list(range(n)):
            raise ModelError(f"{where}: token ids are not 0..{n - 1} without gaps")
        special = {t.content for t in tokenizer.get_added_tokens_decoder().values()}
        self.pieces: list[bytes] = [b""] * n
        self.words: list[str] = [""] * n
        for piece, i in self.vocab.items():
            if piece in special:
                self.pieces[i], self.words[i] = piece.encode(), piece
            else:
                self.pieces[i] = token_bytes(piece)
                self.words[i] = display(self.pieces[i])

    @classmethod
    def load(cls, directory: Path) -> "BPETokenizer":
        """tokenizer.json if there is one, else vocab.json + merges.txt."""
        directory = Path(directory)
        path = directory / "tokenizer.json"
        if path.is_file():
            try:
                tok = Tokenizer.from_file(str(path))
            except Exception as e:  # tokenizers raises a bare Exception on bad JSON
                raise ModelError(f"{path}: not a valid tokenizer.json ({str(e).splitlines()[0]})") from None
            if not isinstance(tok.pre_tokenizer, pre_tokenizers.ByteLevel):
                raise ModelError(f"{path}: a BPE tokenizer without GPT-2's ByteLevel pre-tokenizer is not supported")
            return cls(tok, str(path))
        vocab, merges = directory / "vocab.json", directory / "merges.txt"
        for f in (vocab, merges):
            if not f.is_file():
                raise ModelError(f"missing file: {directory / 'tokenizer.json'} (or {vocab.name} + {merges.name})")
        try:
            tok = Tokenizer(BPE.from_file(str(vocab), str(merges)))
        except Exception as e:
            raise ModelError(f"{vocab} + {merges}: not a readable BPE vocabulary ({str(e).splitlines()[0]})") from None
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        tok.decoder = decoders.ByteLevel()
        if END_OF_TEXT in tok.get_vocab():
            tok.add_special_tokens([END_OF_TEXT])
        return cls(tok, str(vocab))

    def save(self, path: Path) -> None:
        self.tokenizer.save(str(path))

    def encode(self, text: str, max_len: int | None = None) -> list[int]:
        if not text:
            raise ModelError("the prompt is empty")
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        if not ids:
            raise ModelError("the prompt is empty")
        if max_len is not None and len(ids) > max_len:
            raise ModelError(f"the prompt is {len(ids)} tokens long, but the model's context is {max_len} tokens")
        return ids

    def decode(self, ids) -> list[str]:
        return [self.words[i] for i in ids]

    def pre_tokens(self, text: str) -> list[str]:
        """The words the ByteLevel pre-tokenizer cuts the text into before BPE merges within each (a word with its
        leading space, a run of digits, punctuation): every one becomes one token or more."""
        return [piece for piece, _ in self.tokenizer.pre_tokenizer.pre_tokenize_str(text)]

    def text(self, ids) -> str:
        """The text the ids spell (bytes joined, then decoded; invalid UTF-8 shown as <0xNN>)."""
        return b"".join(self.pieces[i] for i in ids).decode("utf-8", errors="gpt_lecture_hex")

    def __len__(self) -> int:
        return len(self.words)


def read_js_tiktoken_ranks(path: Path) -> tuple[list[bytes], dict[str, int]]:
    """The ranks and special tokens of a js-tiktoken rank module (dist/ranks/<name>.js): `export default {...}`
    whose bpe_ranks holds lines "! <first rank> <base64 token> <base64 token> ...", ranks counting up from it."""
    import base64
    import binascii

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8").strip()
        body = json.loads(text.removeprefix("export default").strip().rstrip(";"))
        lines = [line for line in body["bpe_ranks"].split("\n") if line]
        special = dict(body.get("special_tokens", {}))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ModelError(f"{path}: not a js-tiktoken rank module ({type(e).__name__})") from None
    by_rank: dict[int, bytes] = {}
    try:
        for line in lines:
            _, first, *tokens = line.split(" ")
            for i, token in enumerate(tokens):
                by_rank[int(first) + i] = base64.b64decode(token, validate=True)
    except (ValueError, binascii.Error) as e:
        raise ModelError(f"{path}: a bad rank line ({e})") from None
    if sorted(by_rank) != list(range(len(by_rank))):
        raise ModelError(f"{path}: the ranks are not 0..{len(by_rank) - 1} without gaps")
    return [by_rank[i] for i in range(len(by_rank))], special
