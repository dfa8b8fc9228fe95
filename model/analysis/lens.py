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
    out = []
    for part, layer in lens_points(gpt.config.n_layer):
        if part == "embeddings":
            x = trace["embeddings"][position]
        else:
            x = trace["layers"][layer]["resid_mid" if part == "attn" else "resid_post"][position]
        x = np.asarray(x, dtype=np.float64)
        out.append({"part": part, "layer": layer, "stream": x, "probabilities": lens_read(gpt, x)})
    return out


def lens_read(gpt: NumpyGPT, x: np.ndarray) -> np.ndarray:
    """One stream vector read as if the model stopped there: ln_f (its own mean and variance), the unembedding,
    softmax (float64): every word's next-word probability."""
    g, b, eps = gpt.p("ln_f.weight"), gpt.p("ln_f.bias"), gpt.config.layer_norm_epsilon
    x = np.asarray(x, dtype=np.float64)
    logits = layer_norm(x[None, :], g, b, eps)["out"][0] @ gpt.W_E.T
    return softmax(logits.astype(np.float64))


def attention_lens(gpt: NumpyGPT, trace: dict, layer: int, head: int, position: int, word: str | None = None,
                   k: int = 3) -> dict:
    """What one layer's attention wrote into the vector at `position`, read by the logit lens: the stream entering
    the layer (resid_pre), that stream plus one head's own write alone (its ΔE, heads.head_contribution: E + ΔE),
    and the stream after the layer's whole attention (resid_mid: every head and the W_O bias).
    `word`: the word followed (None: the model's own next word at `position`, from the trace's logits).
    Per point: P(word), the top k words (word, P; the lower id on a tie), the "shown" rows (those k, then the word
    itself if it is not among them) and "other", the true total of the rest."""
    from .heads import head_contribution, next_word_rows
    T = len(trace["tokens"])
    if not 0 <= position < T:
        raise ModelError(f"no position {position}: the prompt has {T} tokens")
    delta = head_contribution(gpt, trace, layer, head)[position]     # checks layer and head
    words = gpt.tokenizer.words
    if word is None:
        word = words[int(np.argmax(trace["logits"][position]))]
    if word not in words:
        raise ModelError(f"unknown word {word!r}")
    w = words.index(word)
    before = np.asarray(trace["layers"][layer]["resid_pre"][position], dtype=np.float64)
    points = {"before": before, "head_only": before + delta,
              "after": np.asarray(trace["layers"][layer]["resid_mid"][position], dtype=np.float64)}
    out = {"word": word, "layer": layer, "head": head, "position": position,
           "rule": "the logit lens (ln_f, unembedding, softmax) of the stream at the position entering the layer, "
                   "plus the head's own ΔE alone, and after the layer's attention"}
    for name, x in points.items():
        out[name] = next_word_rows(gpt, lens_read(gpt, x), w, k)
    return out
