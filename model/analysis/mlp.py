"""One token through one MLP, step by step: the up-projection per neuron, GELU, each neuron's write into the
stream, and a neuron's output row read through ln_f (frozen, as in attribution) and the unembedding.

MLP(x) = GELU(x W_in + b_in) W_out + b_out, in the model's row convention: neuron i asks its question with
column i of W_in and writes its answer along row i of W_out, weighted by its activation.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..numpy_gpt import NumpyGPT, gelu
from .attribution import _through_ln_f

ACTIVE = 0.1   # a neuron counts as active at a token when its GELU activation exceeds this


def mlp_steps(gpt: NumpyGPT, trace: dict, layer: int, position: int) -> dict:
    """The MLP of `layer` at `position`: its input (LN_2 out), every neuron's pre-activation and activation (the
    trace's), each neuron's dot product x · W_in[:, i] (pre minus b_in), each neuron's write act_i · W_out[i],
    and the sum of the writes plus b_out (equal to the trace's mlp.out)."""
    gpt._check_layer(layer)
    T = len(trace["tokens"])
    if not 0 <= position < T:
        raise ModelError(f"no position {position}: the prompt has {T} tokens (0..{T - 1})")
    m = gpt.mlp(layer)
    x = trace["layers"][layer]["ln_2"]["out"][position]
    pre = trace["layers"][layer]["mlp"]["pre"][position]
    act = trace["layers"][layer]["mlp"]["act"][position]
    writes = act[:, None] * m.W_out
    return {"x": x, "dots": x @ m.W_in, "b_in": m.b_in, "pre": pre, "act": act, "writes": writes,
            "b_out": m.b_out, "out": writes.sum(0) + m.b_out, "active": act > ACTIVE, "threshold": ACTIVE}


def gelu_curve(xs) -> np.ndarray:
    """The model's own GELU at the points xs (to draw its curve)."""
    return gelu(np.asarray(xs, dtype=np.float64))


def neuron_readout(gpt: NumpyGPT, trace: dict, layer: int, neuron: int, position: int, k: int = 5,
                   word_ids=None) -> dict:
    """Neuron `neuron`'s output row of W_out, read through ln_f (the real run's scale at `position`, frozen) and
    the unembedding: how much one unit of its activation adds to each word's logit; the k words it pushes up
    most (among `word_ids` if given, e.g. one language's words), with those amounts."""
    gpt._check_layer(layer)
    W_out = gpt.mlp(layer).W_out
    if not 0 <= neuron < W_out.shape[0]:
        raise ModelError(f"no neuron {neuron} in layer {layer}: it has {W_out.shape[0]}")
    per_word = _through_ln_f(gpt, trace, position, W_out[neuron][None], gpt.W_E.T)[0]
    ids = np.arange(per_word.size) if word_ids is None else np.asarray(sorted(word_ids), dtype=int)
    top = ids[np.argsort(-per_word[ids], kind="stable")[:k]]
    return {"per_word": per_word, "top": [{"word": gpt.tokenizer.words[int(i)], "id": int(i),
                                            "logit_per_unit": float(per_word[i])} for i in top]}


def vector_readout(gpt: NumpyGPT, trace: dict, position: int, vector, k: int = 5, word_ids=None,
                   rank_of=()) -> dict:
    """A vector written into the stream (e.g. an MLP's output), read straight through ln_f (the real run's scale at
    `position`, frozen) and the unembedding: how much it adds to each word's logit; the k words it raises most
    (among `word_ids` if given), and the rank (1 = first) of each id in `rank_of` among the same words."""
    T = len(trace["tokens"])
    if not 0 <= position < T:
        raise ModelError(f"no position {position}: the prompt has {T} tokens (0..{T - 1})")
    per_word = _through_ln_f(gpt, trace, position, np.asarray(vector, np.float64)[None], gpt.W_E.T)[0]
    ids = np.arange(per_word.size) if word_ids is None else np.asarray(sorted(word_ids), dtype=int)
    order = ids[np.argsort(-per_word[ids], kind="stable")]
    rank = {int(i): r + 1 for r, i in enumerate(order)}
    return {"per_word": per_word, "n_words": int(len(ids)),
            "top": [{"word": gpt.tokenizer.words[int(i)], "id": int(i), "logit": float(per_word[i])}
                    for i in order[:k]],
            "ranks": {int(i): rank[int(i)] for i in rank_of}}
