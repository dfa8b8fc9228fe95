"""GPT-2 in Torch, used for training. Parameter names match Hugging Face GPT-2 exactly.

forward(ids, trace=True) returns the same intermediates as NumpyGPT.trace, so the
two implementations can be checked against each other entry by entry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import GPTConfig
from .numpy_gpt import sinusoidal_positions


@dataclass(frozen=True)
class Parts:
    """Which parts of the block are switched on. The defaults are GPT-2 (the shipped model); the lab
    (model/lab.py) retrains the model with one of them off. None of them changes a parameter's shape, so a
    variant keeps the standard model's parameter names (the MLP's are simply unused when mlp is off)."""
    position_table: bool = True   # add the position vectors to the token embeddings
    causal_mask: bool = True      # a query sees no later key
    scale: bool = True            # divide the scores by sqrt(d_head)
    residual: bool = True         # x + attention(x), then + MLP(...); off: each sublayer's output replaces x
    layer_norm: bool = True       # ln_1, ln_2, ln_f; off: the identity
    mlp: bool = True              # the MLP sublayer; off: the block is attention only
    gelu: bool = True             # the MLP's nonlinearity; off: the identity (the MLP is then one linear map)


STANDARD = Parts()


class Conv1D(nn.Module):
    """GPT-2's linear layer: y = x @ W + b with W stored as (in, out)."""

    def __init__(self, n_in: int, n_out: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_in, n_out) * 0.02)
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return x @ self.weight + self.bias


def layer_norm(ln: nn.LayerNorm, x, on: bool = True):
    mean = x.mean(-1)
    var = x.var(-1, unbiased=False)
    return {"mean": mean, "var": var, "out": ln(x) if on else x}


class Attention(nn.Module):
    def __init__(self, c: GPTConfig, parts: Parts = STANDARD):
        super().__init__()
        self.c, self.parts = c, parts
        self.c_attn = Conv1D(c.n_embd, 3 * c.n_embd)
        self.c_proj = Conv1D(c.n_embd, c.n_embd)

    def forward(self, X, trace: bool, causal: bool = True):
        B, T, d = X.shape
        H, dh = self.c.n_head, self.c.d_head
        Q, K, V = (M.view(B, T, H, dh).transpose(1, 2) for M in self.c_attn(X).split(d, dim=2))
        scores = Q @ K.transpose(-2, -1)
        scaled = scores / math.sqrt(dh) if self.parts.scale else scores
        if causal:
            future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=X.device), diagonal=1)
            masked = scaled.masked_fill(future, float("-inf"))
        else:
            masked = scaled
        weights = F.softmax(masked, dim=-1)
        head_out = weights @ V
        concat = head_out.transpose(1, 2).reshape(B, T, d)
        out = self.c_proj(concat)
        if not trace:
            return out, None
        return out, {"q": Q, "k": K, "v": V, "scores": scores, "scaled": scaled, "masked": masked,
                     "weights": weights, "weighted_values": weights[..., None] * V[:, :, None, :, :],
                     "head_out": head_out, "concat": concat, "out": out}


class MLP(nn.Module):
    def __init__(self, c: GPTConfig, parts: Parts = STANDARD):
        super().__init__()
        self.parts = parts
        self.c_fc = Conv1D(c.n_embd, c.n_inner)
        self.c_proj = Conv1D(c.n_inner, c.n_embd)

    def forward(self, X):
        pre = self.c_fc(X)
        act = F.gelu(pre, approximate="tanh") if self.parts.gelu else pre
        return {"pre": pre, "act": act, "out": self.c_proj(act)}


class Block(nn.Module):
    def __init__(self, c: GPTConfig, parts: Parts = STANDARD):
        super().__init__()
        self.parts = parts
        self.ln_1 = nn.LayerNorm(c.n_embd, eps=c.layer_norm_epsilon)
        self.attn = Attention(c, parts)
        self.ln_2 = nn.LayerNorm(c.n_embd, eps=c.layer_norm_epsilon)
        self.mlp = MLP(c, parts)

    def _norm(self, ln: nn.LayerNorm, x, trace: bool):
        if trace:
            return layer_norm(ln, x, self.parts.layer_norm)
        return {"out": ln(x) if self.parts.layer_norm else x}

    def forward(self, x, trace: bool, causal: bool = True):
        p = self.parts
        ln_1 = self._norm(self.ln_1, x, trace)
        attn_out, attn = self.attn(ln_1["out"], trace, causal)
        mid = x + attn_out if p.residual else attn_out
        ln_2 = self._norm(self.ln_2, mid, trace)
        if p.mlp:
            mlp = self.mlp(ln_2["out"])
            post = mid + mlp["out"] if p.residual else mlp["out"]
        else:
            mlp = {"out": torch.zeros_like(mid)}
            post = mid
        if not trace:
            return post, None
        return post, {"resid_pre": x, "ln_1": ln_1, "attn": attn, "resid_mid": mid,
                      "ln_2": ln_2, "mlp": mlp, "resid_post": post}


class TorchGPT(nn.Module):
    def __init__(self, c: GPTConfig, embedding_std: float = 0.02, parts: Parts = STANDARD):
        """parts: the lab's switches (Parts); the default is the standard model, with unchanged initialisation."""
        super().__init__()
        self.config, self.parts = c, parts
        self.transformer = nn.ModuleDict({
            "wte": nn.Embedding(c.vocab_size, c.n_embd),
            "wpe": nn.Embedding(c.n_positions, c.n_embd),
            "h": nn.ModuleList(Block(c, parts) for _ in range(c.n_layer)),
            "ln_f": nn.LayerNorm(c.n_embd, eps=c.layer_norm_epsilon),
        })
        nn.init.normal_(self.transformer.wte.weight, std=embedding_std)
        nn.init.normal_(self.transformer.wpe.weight, std=0.01)
        for block in self.transformer.h:  # GPT-2's scaled init of the residual projections
            for proj in (block.attn.c_proj, block.mlp.c_proj):
                nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * c.n_layer))
        if c.position_encoding == "sinusoidal":
            with torch.no_grad():
                self.transformer.wpe.weight.copy_(torch.from_numpy(sinusoidal_positions(c.n_positions, c.n_embd)))
            self.transformer.wpe.weight.requires_grad_(False)  # a fixed table, not learned

    def forward(self, ids, trace: bool = False, causal: bool | None = None):
        """causal None: the model's own mask (parts.causal_mask); True forces the mask on (how a model trained
        without it must be run when it writes one word at a time), False off."""
        t, p = self.transformer, self.parts
        causal = p.causal_mask if causal is None else causal
        T = ids.shape[-1]
        token_embeddings = t.wte(ids)
        position_vectors = t.wpe.weight[:T].expand_as(token_embeddings)
        if not p.position_table:
            position_vectors = torch.zeros_like(token_embeddings)
        x = embeddings = token_embeddings + position_vectors
        layers = []
        for block in t.h:
            x, layer = block(x, trace, causal)
            layers.append(layer)
        if trace:
            ln_f = layer_norm(t.ln_f, x, p.layer_norm)
        else:
            ln_f = {"out": t.ln_f(x) if p.layer_norm else x}
        logits = ln_f["out"] @ t.wte.weight.T  # unembedding, tied to W_E
        if not trace:
            return logits
        return {"token_embeddings": token_embeddings, "position_vectors": position_vectors,
                "embeddings": embeddings, "layers": layers,
                "ln_f": ln_f, "logits": logits}

    # --- Hugging Face GPT-2 tensors ---------------------------------------------
    def export_tensors(self) -> dict[str, np.ndarray]:
        return {k: v.detach().cpu().numpy().astype(np.float32) for k, v in self.state_dict().items()}

    @classmethod
    def from_tensors(cls, c: GPTConfig, tensors: dict[str, np.ndarray]) -> "TorchGPT":
        model = cls(c)
        model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in tensors.items()})
        return model
