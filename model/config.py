"""Model shapes, stored as a Hugging Face GPT2Config-compatible config.json."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import ModelError, read_json

POSITION_ENCODINGS = ("sinusoidal", "learned")


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int
    n_positions: int        # the context length
    n_embd: int             # d_model
    n_layer: int
    n_head: int
    position_encoding: str = "sinusoidal"
    layer_norm_epsilon: float = 1e-5
    mlp_ratio: int = 4

    @property
    def d_head(self) -> int:
        return self.n_embd // self.n_head

    @property
    def n_inner(self) -> int:
        return self.mlp_ratio * self.n_embd

    def __post_init__(self):
        for name in ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head", "mlp_ratio"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ModelError(f"config: {name} must be a positive integer, got {value!r}")
        if self.n_embd % self.n_head:
            raise ModelError(f"config: n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        if self.position_encoding not in POSITION_ENCODINGS:
            raise ModelError(f"config: position_encoding must be one of {POSITION_ENCODINGS}, "
                             f"got {self.position_encoding!r}")

    # --- Hugging Face GPT2Config ------------------------------------------------
    def to_hf(self) -> dict:
        return {
            "architectures": ["GPT2LMHeadModel"],
            "model_type": "gpt2",
            "vocab_size": self.vocab_size,
            "n_positions": self.n_positions,
            "n_ctx": self.n_positions,
            "n_embd": self.n_embd,
            "n_layer": self.n_layer,
            "n_head": self.n_head,
            "n_inner": self.n_inner,
            "activation_function": "gelu_new",
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0,
            "scale_attn_weights": True,
            "scale_attn_by_inverse_layer_idx": False,
            "reorder_and_upcast_attn": False,
            "tie_word_embeddings": True,
            "bos_token_id": 0, "eos_token_id": 0,
            "position_encoding": self.position_encoding,  # ours; transformers keeps it as an extra key
        }

    @classmethod
    def from_hf(cls, d: dict, where: str = "config.json") -> "GPTConfig":
        if not isinstance(d, dict):
            raise ModelError(f"{where}: expected a JSON object")
        arch, kind = d.get("architectures"), d.get("model_type", "gpt2")
        if kind != "gpt2" or (arch is not None and arch not in (["GPT2LMHeadModel"], ["GPT2Model"])):
            named = ", ".join(arch) if isinstance(arch, list) and arch else kind
            raise ModelError(f"{where}: a {named} checkpoint (model_type {kind!r}); only GPT-2 (GPT2LMHeadModel) "
                             f"is supported")
        for key, want in (("scale_attn_weights", True), ("scale_attn_by_inverse_layer_idx", False),
                          ("reorder_and_upcast_attn", False), ("add_cross_attention", False)):
            if d.get(key, want) != want:
                raise ModelError(f"{where}: {key} = {d[key]!r} is not GPT-2's attention (needs {want})")
        missing = [k for k in ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head") if k not in d]
        if missing:
            raise ModelError(f"{where}: missing key(s) {', '.join(missing)}")
        if d.get("activation_function", "gelu_new") != "gelu_new":
            raise ModelError(f"{where}: activation_function must be 'gelu_new', got {d['activation_function']!r}")
        if not d.get("tie_word_embeddings", True):
            raise ModelError(f"{where}: untied unembedding is not supported (tie_word_embeddings must be true)")
        n_embd = d["n_embd"]
        n_inner = d.get("n_inner") or 4 * n_embd
        if not isinstance(n_embd, int) or not isinstance(n_inner, int) or n_embd <= 0 or n_inner % n_embd:
            raise ModelError(f"{where}: n_inner ({n_inner!r}) must be a multiple of n_embd ({n_embd!r})")
        try:
            return cls(vocab_size=d["vocab_size"], n_positions=d["n_positions"], n_embd=n_embd,
                       n_layer=d["n_layer"], n_head=d["n_head"],
                       position_encoding=d.get("position_encoding", "learned"),
                       layer_norm_epsilon=float(d.get("layer_norm_epsilon", 1e-5)),
                       mlp_ratio=n_inner // n_embd)
        except ModelError as e:
            raise ModelError(f"{where}: {str(e).removeprefix('config: ')}") from None

    @classmethod
    def load(cls, path: Path) -> "GPTConfig":
        d = read_json(path, f"missing file: {path}")
        return cls.from_hf(d, str(path))

    def as_dict(self) -> dict:
        return asdict(self)


# Published shapes, for scale comparisons (parameter counts are computed from these).
GPT2_SMALL = GPTConfig(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12,
                       position_encoding="learned")
GPT3_175B = GPTConfig(vocab_size=50257, n_positions=2048, n_embd=12288, n_layer=96, n_head=96,
                      position_encoding="learned")
