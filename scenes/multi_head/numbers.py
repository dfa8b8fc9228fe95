"""multi_head's numbers: every head of one layer at the token in focus (LayerHeads), read from the trace, the weights
(model.analysis: what each head writes, its ΔE, their lengths) and the configs (our model's and GPT-3's parameter
split), with the rule that says a head parks (PARK_RULE) and the manifest's record. The scene: beats.py.
"""

from __future__ import annotations

import numpy as np

from model import GPT3_175B
from model.analysis import head_contribution, head_delta_sizes, head_write_sizes
from model.params import parameter_split
from scenes.params import AUTO
from scenes.prompts import lookback_head

PARK_RULE = ("a head parks when the key it weights most writes less than the median key would: |v_k W_O| (the "
             "head's value at that key through its own rows of W_O, model.analysis.head_write_sizes) below the "
             "median over the keys 0 .. focus")


class LayerHeads:
    """Every head of one layer at the token in focus: patterns, where each looks most, outputs, concat, W_O."""

    def __init__(self, gpt, params: dict):
        choice = lookback_head(gpt, params["prompt"], params["focus"], params["layer"], AUTO,
                               lang=params.get("lang", "en"))
        self.choice, self.trace = choice, choice["trace"]
        self.prompt, self.focus, self.layer = choice["prompt"], choice["focus"], choice["layer"]
        c = gpt.config
        self.config, self.n_head, self.dh, self.d = c, c.n_head, c.d_head, c.n_embd
        tr, L, f = self.trace, self.layer, self.focus
        self.tokens, self.token_ids = list(tr["tokens"]), [int(i) for i in tr["token_ids"]]
        attn = tr["layers"][L]["attn"]
        self.patterns = attn["weights"]                                  # (heads, query, key)
        row = attn["weights"][:, f, : f + 1]
        self.top_keys = [int(np.argmax(r)) for r in row]                 # where each head looks most
        self.top_weights = [float(r.max()) for r in row]
        self.head_out = attn["head_out"][:, f]                           # (heads, d_head)
        self.concat = attn["concat"][f]
        self.W_O = gpt.attn_out_weight(L)
        self.b_O = gpt.attn_out_bias(L)
        self.out = attn["out"][f]
        # what each head could write at the focus, key by key (|v_j W_O|), and whether the key it looks at most
        # writes less than the median key: it parks there (PARK_RULE)
        self.write_sizes = [head_write_sizes(gpt, tr, L, h, f) for h in range(self.n_head)]
        self.parked = [bool(sizes[k] < np.median(sizes)) for sizes, k in zip(self.write_sizes, self.top_keys)]
        # each head's ΔE at the focus: its output through its own rows of W_O (gpt.head(layer, h).W_O)
        self.head_deltas = np.array([head_contribution(gpt, tr, L, h)[f] for h in range(self.n_head)])
        self.sizes = head_delta_sizes(gpt, tr, L, f)                     # |ΔE| of each head, |out| (the answer)
        self.ours, self.gpt3 = parameter_split(c), parameter_split(GPT3_175B)

    def scale_figures(self) -> dict:
        """Both models' figures, from their configs: ours from the weights' config, GPT-3 from its published one."""
        def figures(cfg, split):
            return {"n_layer": cfg.n_layer, "n_head": cfg.n_head, "heads": cfg.n_layer * cfg.n_head,
                    "d_model": cfg.n_embd, "d_head": cfg.d_head, "context": cfg.n_positions,
                    "grid_cells": cfg.n_positions ** 2, "attention_parameters": split["attention"],
                    "total_parameters": split["total"]}
        return {"ours": figures(self.config, self.ours), "gpt3": figures(GPT3_175B, self.gpt3),
                "gpt3_source": "model.config.GPT3_175B (published shape), counted by model.params.parameter_split"}

    def record(self) -> dict:
        ch = self.choice
        return {
            "prompt": self.prompt, "tokens": self.tokens, "token_ids": self.token_ids, "focus": self.focus,
            "layer": self.layer, "n_head": self.n_head, "d_head": self.dh, "d_model": self.d,
            "choice": {"rule": ch["rule"], "score": ch["score"], "head": ch["head"], "keys": ch["keys"],
                       "given": ch["given"], "prompt_rule": ch["prompt_rule"], "all_scores": ch["all_scores"],
                       "weight": ch["weight"], "causal": ch["causal"], "story": ch["story"]},
            "patterns": self.patterns, "every_layer_patterns": [l["attn"]["weights"] for l in self.trace["layers"]],
            "top_keys": self.top_keys, "top_weights": self.top_weights,
            "head_out": self.head_out, "concat": self.concat, "W_O": self.W_O, "b_O": self.b_O, "out": self.out,
            "write_sizes": [w.tolist() for w in self.write_sizes], "parked": self.parked, "park_rule": PARK_RULE,
            "head_deltas": self.head_deltas, "delta_lengths": self.sizes["delta_lengths"],
            "out_length": self.sizes["out_length"],
            "scale": self.scale_figures(),
        }
