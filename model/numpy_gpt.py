"""GPT-2 forward pass in NumPy, written like the equations, returning every intermediate.

Row-vector convention, as in GPT-2's code: a token's vector is a row, so Q = X @ W_q.
The scenes read numbers only from the trace this module returns. Weights are stored in
float32; our model's maths runs in float64 (numbers are rounded only for display), a checkpoint
of one's own runs in float32, as transformers runs GPT-2 (compute_dtype).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .config import GPTConfig
from .errors import ModelError
from .tokenizer import WordTokenizer
from .weights import load_dir


def sinusoidal_positions(n_positions: int, d_model: int) -> np.ndarray:
    """P[pos, 2i] = sin(pos / 10000^(2i/d)),  P[pos, 2i+1] = cos(pos / 10000^(2i/d))."""
    pos = np.arange(n_positions)[:, None]
    i = np.arange(0, d_model, 2)[None, :]
    angle = pos / 10000.0 ** (i / d_model)
    P = np.zeros((n_positions, d_model))
    P[:, 0::2] = np.sin(angle)
    P[:, 1::2] = np.cos(angle)[:, : d_model // 2]
    return P


def gelu(x):
    """GPT-2's GELU (tanh approximation, 'gelu_new'). A float32 array (a checkpoint's) is cubed as x·x·x: NumPy's
    x ** 3 goes through pow() entry by entry, 9 ms of every 32 × 3,072 call at GPT-2 small's size against 0.1 ms;
    our model's float64 keeps x ** 3, so its numbers stay bit for bit what they were."""
    cube = x * x * x if getattr(x, "dtype", None) == np.float32 else x ** 3
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * cube)))


def layer_norm(x, gain, bias, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    out = (x - mean) / np.sqrt(var + eps) * gain + bias
    return {"mean": mean[..., 0], "var": var[..., 0], "out": out}


def softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def check_temperature(temperature) -> float:
    try:
        T = float(temperature)
    except (TypeError, ValueError):
        raise ModelError(f"temperature must be a number, got {temperature!r}") from None
    if math.isnan(T) or T < 0 or math.isinf(T):
        raise ModelError(f"temperature must be a finite number >= 0, got {temperature!r}")
    return T


def probabilities(logits, temperature: float = 1.0) -> np.ndarray:
    """softmax(logits / T) in float64. T = 0 is exactly the argmax; tiny T stays finite."""
    T = check_temperature(temperature)
    z = np.asarray(logits, dtype=np.float64)
    top = z.max(axis=-1, keepdims=True)
    if T == 0:
        is_max = (z == top).astype(np.float64)
        return is_max / is_max.sum(axis=-1, keepdims=True)
    with np.errstate(over="ignore"):  # shift first: (0 / T) stays 0, the rest go to -inf, exp -> 0
        e = np.exp((z - top) / T)
    return e / e.sum(axis=-1, keepdims=True)


def softmax_steps(logits) -> dict:
    """Softmax at T = 1 as a lecture writes it: e^z, their sum, then e^z / sum (float64, unshifted)."""
    z = np.asarray(logits, dtype=np.float64)
    if z.max() > 700:
        raise ModelError(f"a logit of {z.max():.1f} overflows e^z; show the shifted form instead")
    e = np.exp(z)
    return {"exp": e, "sum": float(e.sum()), "probabilities": e / e.sum()}


def compute_dtype(tokenizer) -> type:
    """The precision a model's maths runs in, by one rule: float64 for our model (a word-level tokenizer: the
    lecture's numbers, checked against its Torch model in float64); float32 for a checkpoint of one's own (a
    byte-level BPE tokenizer, GPT-2's kind), the precision its weights are stored in and transformers runs GPT-2 in.
    At GPT-2 small's size float64 would read its 124 M weights as 1 GB on every trace; float32 reads half that and
    uses twice the SIMD lanes (docs/model.md, "At GPT-2 small's scale"). tests/test_gpt2.py checks the float32 traces
    against transformers', every layer."""
    return np.float32 if getattr(tokenizer, "kind", "word") == "bpe" else np.float64


@dataclass(frozen=True)
class HeadWeights:
    """One attention head's own weights, sliced once from GPT-2's fused tensors (row vectors: q = x @ W_Q + b_Q).

    W_Q, W_K, W_V: d_model × d_head    (columns h·d_head … (h+1)·d_head − 1 of c_attn's q, k and v thirds)
    b_Q, b_K, b_V: d_head
    W_O:           d_head × d_model    (the head's rows of c_proj: its output's share of the layer's update)
    The layer's W_O bias (c_proj.bias, d_model) is shared by all heads, so it is not here:
    `gpt.attn_out_bias(layer)` gives it.
    """
    layer: int
    head: int
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    b_Q: np.ndarray
    b_K: np.ndarray
    b_V: np.ndarray
    W_O: np.ndarray


@dataclass(frozen=True)
class MLPWeights:
    """One layer's MLP, MLP(x) = GELU(x @ W_in + b_in) @ W_out + b_out (row vectors).

    W_in:  d_model × d_mlp   (row i of W_inᵀ, i.e. column i of W_in, is neuron i's "question")
    b_in:  d_mlp
    W_out: d_mlp × d_model   (row i is neuron i's output direction)
    b_out: d_model
    """
    layer: int
    W_in: np.ndarray
    b_in: np.ndarray
    W_out: np.ndarray
    b_out: np.ndarray


class NumpyGPT:
    def __init__(self, config: GPTConfig, params: dict[str, np.ndarray], tokenizer: WordTokenizer, dtype=None):
        """dtype: the maths' precision; None is the rule (compute_dtype). Another is for measuring only."""
        self.config, self.tokenizer = config, tokenizer
        self.dtype = dtype or compute_dtype(tokenizer)   # ours: stored float32, computed float64; a checkpoint: float32
        self.params = {k: v.astype(self.dtype) for k, v in params.items()}
        self.n_params = sum(v.size for v in params.values())

    @classmethod
    def load(cls, directory: Path | str | None = None) -> "NumpyGPT":
        return cls(*load_dir(directory))

    def p(self, name: str) -> np.ndarray:
        return self.params["transformer." + name]

    # --- named model parts (TransformerLens-style W_Q[l, h]), the only place fused tensors are sliced ---
    def _check_layer(self, layer: int) -> None:
        if not isinstance(layer, (int, np.integer)) or not 0 <= layer < self.config.n_layer:
            raise ModelError(f"no layer {layer!r}: the model has {self.config.n_layer} layers "
                             f"(0..{self.config.n_layer - 1})")

    def check_head(self, layer: int, h: int) -> None:
        """A ModelError naming the model's real ranges unless head h of `layer` exists."""
        c = self.config
        self._check_layer(layer)
        if not isinstance(h, (int, np.integer)) or not 0 <= h < c.n_head:
            raise ModelError(f"no head {layer}.{h}: the model has {c.n_layer} layers of {c.n_head} heads")

    def head(self, layer: int, h: int) -> HeadWeights:
        """Head h of `layer`: W_Q, W_K, W_V (d_model × d_head), b_Q, b_K, b_V (d_head), W_O (d_head × d_model)."""
        c = self.config
        self.check_head(layer, h)
        cols = slice(h * c.d_head, (h + 1) * c.d_head)
        W_q, W_k, W_v = np.split(self.p(f"h.{layer}.attn.c_attn.weight"), 3, axis=1)
        b_q, b_k, b_v = np.split(self.p(f"h.{layer}.attn.c_attn.bias"), 3)
        return HeadWeights(layer=int(layer), head=int(h), W_Q=W_q[:, cols], W_K=W_k[:, cols], W_V=W_v[:, cols],
                           b_Q=b_q[cols], b_K=b_k[cols], b_V=b_v[cols],
                           W_O=self.p(f"h.{layer}.attn.c_proj.weight")[cols])

    def attn_out_bias(self, layer: int) -> np.ndarray:
        """b_O of `layer` (d_model): added once to the sum of the heads' updates."""
        self._check_layer(layer)
        return self.p(f"h.{layer}.attn.c_proj.bias")

    def attn_out_weight(self, layer: int) -> np.ndarray:
        """W_O of `layer` (n_head·d_head × d_model): every head's rows, stacked in head order."""
        self._check_layer(layer)
        return self.p(f"h.{layer}.attn.c_proj.weight")

    def mlp(self, layer: int) -> MLPWeights:
        """The MLP of `layer`: W_in (d_model × d_mlp), b_in (d_mlp), W_out (d_mlp × d_model), b_out (d_model)."""
        self._check_layer(layer)
        h = f"h.{layer}.mlp."
        return MLPWeights(layer=int(layer), W_in=self.p(h + "c_fc.weight"), b_in=self.p(h + "c_fc.bias"),
                          W_out=self.p(h + "c_proj.weight"), b_out=self.p(h + "c_proj.bias"))

    @property
    def W_E(self) -> np.ndarray:
        """Token embedding (vocabulary × d_model); the unembedding is its transpose (tied)."""
        return self.p("wte.weight")

    @property
    def W_pos(self) -> np.ndarray:
        """Position table (n_positions × d_model)."""
        return self.p("wpe.weight")

    def encode(self, prompt: str) -> list[int]:
        return self.tokenizer.encode(prompt, max_len=self.config.n_positions)

    # --- the forward pass -------------------------------------------------------
    PATCH_COMPONENTS = ("resid_pre", "attn", "mlp", "resid_post")

    def trace(self, prompt: str | list[int], ablate: tuple[tuple[int, int], ...] = (),
              patch: dict | None = None, self_only: tuple[int, ...] = ()) -> dict:
        """Run the prompt and return every intermediate.

        Interventions (the rest of the model is re-run on top of them):
        - `ablate` lists (layer, head) pairs whose output is zeroed;
        - `patch` maps (layer, component, position) to a d_model vector that replaces that state as it is made:
          "resid_pre" (the stream entering the layer), "attn" (the attention layer's output, before it is added),
          "mlp" (the MLP's output, before it is added) or "resid_post" (the stream leaving the layer).
          The trace then holds the patched values.
        - `self_only` lists positions whose query, in every head of every layer, may look only at its own key (the
          mask hides every earlier token from it as well as the later ones): the model unable to look back there.
        """
        ids = self.encode(prompt) if isinstance(prompt, str) else list(prompt)
        c = self.config
        if not ids or len(ids) > c.n_positions:
            raise ModelError(f"the prompt is {len(ids)} tokens long, but the model's context is {c.n_positions} tokens")
        T = len(ids)
        patches = self._check_patch(patch or {}, T)
        if any(not isinstance(p, (int, np.integer)) or not 0 <= p < T for p in self_only):
            raise ModelError(f"self_only lists positions of the prompt, 0..{T - 1}; got {list(self_only)}")
        self_only = tuple(int(p) for p in self_only)

        token_embeddings = self.p("wte.weight")[ids]
        position_vectors = self.p("wpe.weight")[:T]
        x = token_embeddings + position_vectors
        trace = {
            "tokens": self.tokenizer.decode(ids), "token_ids": ids,
            "token_embeddings": token_embeddings, "position_vectors": position_vectors,
            "embeddings": x, "layers": [],
        }
        for i in range(c.n_layer):
            layer, x = self.block(i, x, {h for l, h in ablate if l == i}, patches.get(i), self_only)
            trace["layers"].append(layer)
        trace["ln_f"] = layer_norm(x, self.p("ln_f.weight"), self.p("ln_f.bias"), c.layer_norm_epsilon)
        trace["logits"] = trace["ln_f"]["out"] @ self.p("wte.weight").T  # unembedding, tied to W_E
        return trace

    def _check_patch(self, patch: dict, T: int) -> dict[int, dict[str, list]]:
        """{layer: {component: [(position, vector), ...]}}, every key and vector checked."""
        out: dict[int, dict[str, list]] = {}
        for key, vector in patch.items():
            if not (isinstance(key, tuple) and len(key) == 3):
                raise ModelError(f"a patch key is (layer, component, position), got {key!r}")
            layer, component, position = key
            self._check_layer(layer)
            if component not in self.PATCH_COMPONENTS:
                raise ModelError(f"no component {component!r} to patch: use one of {', '.join(self.PATCH_COMPONENTS)}")
            if not isinstance(position, (int, np.integer)) or not 0 <= position < T:
                raise ModelError(f"no position {position!r} to patch: the prompt has {T} tokens")
            v = np.asarray(vector, dtype=self.dtype)
            if v.shape != (self.config.n_embd,):
                raise ModelError(f"a patch vector has shape {v.shape}, but d_model is {self.config.n_embd}")
            out.setdefault(int(layer), {}).setdefault(component, []).append((int(position), v))
        return out

    @staticmethod
    def _patched(x, patches: dict | None, component: str):
        if not patches or component not in patches:
            return x
        x = x.copy()
        for position, v in patches[component]:
            x[position] = v
        return x

    def block(self, i: int, x, ablate: set[int] = frozenset(), patches: dict | None = None,
              self_only: tuple[int, ...] = ()):
        c, h = self.config, f"h.{i}."
        x = self._patched(x, patches, "resid_pre")
        layer = {"resid_pre": x}
        layer["ln_1"] = layer_norm(x, self.p(h + "ln_1.weight"), self.p(h + "ln_1.bias"), c.layer_norm_epsilon)
        layer["attn"] = self.attention(i, layer["ln_1"]["out"], ablate, self_only)
        layer["attn"]["out"] = self._patched(layer["attn"]["out"], patches, "attn")
        x = x + layer["attn"]["out"]
        layer["resid_mid"] = x
        layer["ln_2"] = layer_norm(x, self.p(h + "ln_2.weight"), self.p(h + "ln_2.bias"), c.layer_norm_epsilon)
        layer["mlp"] = self.feed_forward(i, layer["ln_2"]["out"])
        layer["mlp"]["out"] = self._patched(layer["mlp"]["out"], patches, "mlp")
        x = x + layer["mlp"]["out"]
        x = self._patched(x, patches, "resid_post")
        layer["resid_post"] = x
        return layer, x

    def attention(self, i: int, X, ablate: set[int] = frozenset(), self_only: tuple[int, ...] = ()):
        c, h = self.config, f"h.{i}.attn."
        T, H, dh = X.shape[0], c.n_head, c.d_head
        W_qkv, b_qkv = self.p(h + "c_attn.weight"), self.p(h + "c_attn.bias")
        W_q, W_k, W_v = np.split(W_qkv, 3, axis=1)
        b_q, b_k, b_v = np.split(b_qkv, 3)

        def heads(M):  # (T, d) -> (H, T, d_head)
            return M.reshape(T, H, dh).transpose(1, 0, 2)

        Q, K, V = heads(X @ W_q + b_q), heads(X @ W_k + b_k), heads(X @ W_v + b_v)
        scores = Q @ K.transpose(0, 2, 1)                  # (H, T_query, T_key)
        scaled = scores / math.sqrt(dh)
        future = np.triu(np.ones((T, T), dtype=bool), k=1)  # key after query
        for p in self_only:                                 # that query sees only its own key
            future[p, :p] = True
        masked = np.where(future, -np.inf, scaled)
        weights = softmax(masked, axis=-1)                  # each query's row sums to 1
        weighted_values = weights[..., None] * V[:, None, :, :]   # (H, T_query, T_key, d_head)
        head_out = weights @ V                              # = weighted_values.sum(axis=2)
        for head in ablate:
            head_out[head] = 0.0
        concat = head_out.transpose(1, 0, 2).reshape(T, c.n_embd)
        out = concat @ self.p(h + "c_proj.weight") + self.p(h + "c_proj.bias")
        return {"q": Q, "k": K, "v": V, "scores": scores, "scaled": scaled, "masked": masked,
                "weights": weights, "weighted_values": weighted_values, "head_out": head_out,
                "concat": concat, "out": out}

    def feed_forward(self, i: int, X):
        m = self.mlp(i)
        pre = X @ m.W_in + m.b_in
        act = gelu(pre)
        out = act @ m.W_out + m.b_out
        return {"pre": pre, "act": act, "out": out}

    def next_token_probabilities(self, prompt, temperature: float = 1.0) -> np.ndarray:
        return probabilities(self.trace(prompt)["logits"][-1], temperature)


def to_jsonable(obj):
    """Trace -> plain JSON: arrays become nested lists, and -inf (a masked score) becomes null."""
    if isinstance(obj, dict):
        return {k: to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "f" and not np.all(np.isfinite(obj)):
            return to_jsonable(obj.tolist())
        return obj.tolist()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, np.generic):
        return obj.item()
    return obj
