"""Parameter counts by role, computed from a config (never typed in).

GPT-2's layout: per layer, W_q, W_k, W_v and W_O (d x d each, with biases), an MLP
d -> 4d -> d (with biases) and two LayerNorms; the unembedding is tied to W_E. A parameter is a learned
number: a learned position table (GPT-2, GPT-3) counts, a fixed sin/cos one (ours) does not (it is in the
detail as `position_table`, with `position_table_learned` false).
"""

from __future__ import annotations

from pathlib import Path

from .config import GPT2_SMALL, GPT3_175B, GPTConfig
from .errors import ModelError
from .weights import DEFAULT_DIR

PUBLISHED = {"gpt2-small": GPT2_SMALL, "gpt3-175b": GPT3_175B}


def parameter_split(c: GPTConfig) -> dict:
    d, L, V = c.n_embd, c.n_layer, c.vocab_size
    token_table = V * d
    position_table = c.n_positions * d
    learned_positions = position_table if c.position_encoding == "learned" else 0
    attention = L * (3 * (d * d + d)     # W_q, W_k, W_v and biases
                     + (d * d + d))      # W_O and bias
    mlp = L * ((d * c.n_inner + c.n_inner)   # up-projection W_1, b_1
               + (c.n_inner * d + d))        # down-projection W_2, b_2
    layernorm = (2 * L + 1) * 2 * d          # ln_1, ln_2 per layer, ln_f; gain and bias
    split = {
        "embedding": token_table + learned_positions,
        "attention": attention,
        "mlp": mlp,
        "unembedding": 0,                    # tied: the unembedding is W_E transposed
        "layernorm": layernorm,
    }
    total = sum(split.values())
    return {
        **split,
        "total": total,
        "fractions": {k: v / total for k, v in split.items()},
        "detail": {
            "token_embedding": token_table, "position_table": position_table,
            "position_table_learned": c.position_encoding == "learned",
            "unembedding_shares_token_embedding": True, "unembedding_matrix_size": token_table,
            "attention_per_layer": attention // L, "mlp_per_layer": mlp // L,
            "per_head_q_k_v_matrix": (d, c.d_head),
        },
        "config": c.as_dict(),
    }


def resolve(name: str) -> GPTConfig:
    """'shipped' (or a weights directory), 'gpt2-small' or 'gpt3-175b'."""
    if name in PUBLISHED:
        return PUBLISHED[name]
    if name == "shipped":
        return GPTConfig.load(DEFAULT_DIR / "config.json")
    if Path(name).is_dir():
        return GPTConfig.load(Path(name) / "config.json")
    raise ModelError(f"unknown model {name!r}: use shipped, {', '.join(PUBLISHED)}, or a weights directory")
