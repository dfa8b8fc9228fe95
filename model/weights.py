"""The weights directory, in Hugging Face GPT-2 format.

    model.safetensors   tensors named as in GPT-2 (transformer.wte.weight, transformer.h.0.attn.c_attn.weight, ...)
    config.json         accepted by transformers.GPT2Config
    tokenizer.json      a `tokenizers` tokenizer: our word-level one, or a byte-level BPE (GPT-2's; model/bpe.py);
                        a BPE checkpoint may instead carry the original release's vocab.json + merges.txt

A lecturer's own GPT2LMHeadModel checkpoint (save_pretrained with safetensors) loads the same way. No pickle
anywhere: safetensors and JSON only (a directory holding only pytorch_model.bin is refused).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load_file, save_file

from .config import GPTConfig
from .digests import remembered_sha256
from .errors import ModelError
from .bpe import BPETokenizer, is_byte_level
from .tokenizer import WordTokenizer

DEFAULT_DIR = Path(__file__).resolve().parent / "weights"
WEIGHTS_FILE = "model.safetensors"

# Buffers some GPT-2 checkpoints carry (causal-mask tables); they are not weights.
_IGNORED_SUFFIXES = (".attn.bias", ".attn.masked_bias")


def expected_shapes(c: GPTConfig) -> dict[str, tuple[int, ...]]:
    d, v = c.n_embd, c.vocab_size
    shapes = {"transformer.wte.weight": (v, d), "transformer.wpe.weight": (c.n_positions, d)}
    for i in range(c.n_layer):
        h = f"transformer.h.{i}."
        shapes.update({
            h + "ln_1.weight": (d,), h + "ln_1.bias": (d,),
            h + "attn.c_attn.weight": (d, 3 * d), h + "attn.c_attn.bias": (3 * d,),
            h + "attn.c_proj.weight": (d, d), h + "attn.c_proj.bias": (d,),
            h + "ln_2.weight": (d,), h + "ln_2.bias": (d,),
            h + "mlp.c_fc.weight": (d, c.n_inner), h + "mlp.c_fc.bias": (c.n_inner,),
            h + "mlp.c_proj.weight": (c.n_inner, d), h + "mlp.c_proj.bias": (d,),
        })
    shapes.update({"transformer.ln_f.weight": (d,), "transformer.ln_f.bias": (d,)})
    return shapes


def load_tensors(path: Path, config: GPTConfig) -> dict[str, np.ndarray]:
    """Read and validate model.safetensors against the config; names gain the `transformer.` prefix."""
    if not path.is_file():
        raise ModelError(f"missing file: {path}")
    try:
        raw = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as e:
        raise ModelError(f"{path}: not a readable safetensors file ({e})") from None
    tensors = {}
    for name, array in raw.items():
        if name.endswith(_IGNORED_SUFFIXES) or name == "lm_head.weight":
            continue  # lm_head is tied to wte
        key = name if name.startswith("transformer.") else "transformer." + name
        tensors[key] = array.astype(np.float32, copy=False)
    want = expected_shapes(config)
    missing = sorted(set(want) - set(tensors))
    if missing:
        raise ModelError(f"{path}: missing tensor(s) {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}"
                         f" for a {config.n_layer}-layer model")
    extra = sorted(set(tensors) - set(want))
    if extra:
        raise ModelError(f"{path}: unexpected tensor(s) {', '.join(extra[:3])} for the config")
    for name, shape in want.items():
        if tensors[name].shape != shape:
            raise ModelError(f"{path}: {name} has shape {tensors[name].shape}, but config.json implies {shape}")
        if not np.all(np.isfinite(tensors[name])):
            raise ModelError(f"{path}: {name} contains NaN or infinite values")
    return tensors


TOKENIZER_FILES = ("tokenizer.json", "vocab.json", "merges.txt")


def load_tokenizer(directory: Path) -> WordTokenizer | BPETokenizer:
    """Our word-level tokenizer.json, or a byte-level BPE one (tokenizer.json, or vocab.json + merges.txt)."""
    path = directory / "tokenizer.json"
    if is_byte_level(path) or (not path.is_file() and (directory / "vocab.json").is_file()):
        return BPETokenizer.load(directory)
    return WordTokenizer.load(path)


def load_dir(directory: Path | str | None = None
             ) -> tuple[GPTConfig, dict[str, np.ndarray], WordTokenizer | BPETokenizer]:
    directory = Path(directory) if directory else DEFAULT_DIR
    if not directory.is_dir():
        raise ModelError(f"missing weights directory: {directory}")
    if not (directory / WEIGHTS_FILE).is_file() and (directory / "pytorch_model.bin").is_file():
        raise ModelError(f"{directory}: only pytorch_model.bin (pickle), which is never loaded; save the model with "
                         f"save_pretrained(..., safe_serialization=True) to get {WEIGHTS_FILE}")
    config = GPTConfig.load(directory / "config.json")
    tokenizer = load_tokenizer(directory)
    if len(tokenizer) != config.vocab_size:
        what = "words" if isinstance(tokenizer, WordTokenizer) else "tokens"
        raise ModelError(f"{directory}: the tokenizer has {len(tokenizer)} {what}, "
                         f"but config.json says vocab_size {config.vocab_size} (the embedding's rows)")
    return config, load_tensors(directory / WEIGHTS_FILE, config), tokenizer


DIGEST_MEMO = ".gpt_lecture_digests.json"


def _memo_paths(directory: Path) -> list[Path]:
    """Where a checkpoint's file digests are remembered: beside the files, else (a read-only directory, such as a
    shared cache) in the user's cache ($XDG_CACHE_HOME/gpt-lecture/checkpoints)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpt-lecture" / "checkpoints"
    return [directory / DIGEST_MEMO, base / (hashlib.sha256(str(directory).encode()).hexdigest()[:16] + ".json")]


def checkpoint_digests(directory: Path | str | None = None) -> dict[str, str]:
    """sha256 of the weights, the config and the tokenizer files, each hashed once: the content hash is remembered
    with the file's size and modification time (DIGEST_MEMO beside them; model/digests.py), so a 500 MB checkpoint
    is read once, not by every render. A changed file (new size or time) is hashed again."""
    directory = (Path(directory) if directory else DEFAULT_DIR).resolve()
    files = [WEIGHTS_FILE, "config.json", *(f for f in TOKENIZER_FILES if (directory / f).is_file())]
    return remembered_sha256({name: directory / name for name in files}, _memo_paths(directory))


def weights_sha256(directory: Path | str | None = None) -> str:
    return checkpoint_digests(directory)[WEIGHTS_FILE]


def save_dir(directory: Path | str, config: GPTConfig, tensors: dict[str, np.ndarray],
             tokenizer: WordTokenizer, extra_json: dict[str, object] | None = None) -> Path:
    """Write the whole directory under a temporary name, then swap it in: never half-written."""
    directory = Path(directory).resolve()
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in tensors.items()},
                  str(tmp / WEIGHTS_FILE), metadata={"format": "pt"})
        (tmp / "config.json").write_text(json.dumps(config.to_hf(), indent=2) + "\n")
        tokenizer.save(tmp / "tokenizer.json")
        for name, obj in (extra_json or {}).items():
            (tmp / name).write_text(json.dumps(obj, indent=1) + "\n")
        for f in tmp.iterdir():
            os.chmod(f, 0o644)
        os.chmod(tmp, 0o755)
        old = None
        if directory.exists():
            old = directory.with_name(f".{directory.name}.old-{os.getpid()}")
            directory.rename(old)
        tmp.rename(directory)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory
