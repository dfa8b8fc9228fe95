"""The logit lens (nostalgebraist 2020): read the residual stream's prediction after every block.

At each point of the stream (the embeddings, then after each layer's attention and after each layer's MLP) the
vector of one position goes through the model's own final LayerNorm (with that vector's own mean and variance,
as if the model stopped there) and the unembedding, then softmax. After the last MLP this is exactly the model's
output; earlier points show the prediction forming.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..numpy_gpt import NumpyGPT, layer_norm, softmax


def lens_points(n_layer: int) -> list[tuple[str, int | None]]:
    """The stream's points in order: ("embeddings", None), then ("attn", l) and ("mlp", l) for every layer l."""
    return [("embeddings", None)] + [(part, l) for l in range(n_layer) for part in ("attn", "mlp")]


def logit_lens(gpt: NumpyGPT, trace: dict, position: int = -1) -> list[dict]:
    """One record per stream point at `position`: the point, the stream vector, and its next-word probabilities
    read through ln_f and the unembedding (every word, float64)."""
    T = len(trace["tokens"])
    if not -T <= position < T:
        raise ModelError(f"no position {position}: the prompt has {T} tokens")
    g, b, eps = gpt.p("ln_f.weight"), gpt.p("ln_f.bias"), gpt.config.layer_norm_epsilon
    out = []
    for part, layer in lens_points(gpt.config.n_layer):
        if part == "embeddings":
            x = trace["embeddings"][position]
        else:
            x = trace["layers"][layer]["resid_mid" if part == "attn" else "resid_post"][position]
        x = np.asarray(x, dtype=np.float64)
        logits = layer_norm(x[None, :], g, b, eps)["out"][0] @ gpt.W_E.T
        out.append({"part": part, "layer": layer, "stream": x, "probabilities": softmax(logits.astype(np.float64))})
    return out
