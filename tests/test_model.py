"""The NumPy model against Torch (every intermediate) and against Hugging Face GPT-2 (the oracle)."""

import math

import numpy as np
import pytest
import torch

from model import ModelError, NumpyGPT, probabilities
from model.torch_gpt import TorchGPT
from model.weights import DEFAULT_DIR, load_dir

PROMPTS = [
    "michael jordan plays",
    "a fluffy blue tiny fox explored the misty forest . the fox was",
    "a scaly golden huge whale swam the ancient sea . the whale felt",
    "michael jordan , famously , plays basketball . a furry white little cat hopped the frozen meadow . the cat",
    "迈克尔乔丹打",
    "一只毛茸茸蓝色微小狐狸探索了雾蒙蒙的森林。这只狐狸是",
    "the",
]


@pytest.fixture(scope="module")
def gpt():
    return NumpyGPT.load()


@pytest.fixture(scope="module")
def torch_gpt(gpt):
    model = TorchGPT.from_tensors(gpt.config, gpt.params)
    model.eval()
    return model.double()  # the same float64 arithmetic as the NumPy trace


def flatten(tree, prefix=""):
    """{'layers.0.attn.q': array, ...} for every array in a trace."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from flatten(v, f"{prefix}{k}.")
    elif isinstance(tree, list) and tree and isinstance(tree[0], dict):
        for i, v in enumerate(tree):
            yield from flatten(v, f"{prefix}{i}.")
    else:
        yield prefix[:-1], tree


@pytest.mark.parametrize("prompt", PROMPTS)
def test_numpy_and_torch_agree_on_every_intermediate(gpt, torch_gpt, prompt):
    np_trace = gpt.trace(prompt)
    with torch.no_grad():
        t_trace = torch_gpt(torch.tensor([np_trace["token_ids"]]), trace=True)
    t_arrays = dict(flatten(t_trace))
    np_arrays = {k: v for k, v in flatten(np_trace) if k not in ("tokens", "token_ids")}
    assert set(np_arrays) == set(t_arrays)
    assert len(np_arrays) == 7 + gpt.config.n_layer * 23
    for name, expected in np_arrays.items():
        actual = t_arrays[name].numpy()[0]  # drop the batch axis
        assert actual.shape == expected.shape, name
        both_masked = np.isneginf(expected) & np.isneginf(actual)
        assert np.array_equal(np.isneginf(expected), np.isneginf(actual)), name
        np.testing.assert_allclose(np.where(both_masked, 0, actual), np.where(both_masked, 0, expected),
                                   atol=1e-5, rtol=0, err_msg=name)


@pytest.mark.parametrize("prompt", PROMPTS)
def test_transformers_gpt2_gives_the_same_logits(gpt, prompt):
    transformers = pytest.importorskip("transformers")
    hf = transformers.GPT2LMHeadModel.from_pretrained(DEFAULT_DIR)
    hf.eval()
    trace = gpt.trace(prompt)
    with torch.no_grad():
        logits = hf(torch.tensor([trace["token_ids"]])).logits[0].numpy()
    np.testing.assert_allclose(trace["logits"], logits, atol=1e-4, rtol=0)


@pytest.mark.parametrize("prompt", PROMPTS)
def test_transformers_gpt2_gives_the_same_mlp_activations(gpt, prompt):
    """Every layer's MLP pre-activation and GELU output, read from transformers' GPT-2 with forward hooks."""
    transformers = pytest.importorskip("transformers")
    hf = transformers.GPT2LMHeadModel.from_pretrained(DEFAULT_DIR)
    hf.eval()
    captured = {}
    handles = []
    for l, block in enumerate(hf.transformer.h):
        handles.append(block.mlp.c_fc.register_forward_hook(
            lambda m, i, o, l=l: captured.__setitem__(("pre", l), o[0].detach().numpy())))
        handles.append(block.mlp.act.register_forward_hook(
            lambda m, i, o, l=l: captured.__setitem__(("act", l), o[0].detach().numpy())))
        handles.append(block.mlp.register_forward_hook(
            lambda m, i, o, l=l: captured.__setitem__(("out", l), o[0].detach().numpy())))
    trace = gpt.trace(prompt)
    try:
        with torch.no_grad():
            hf(torch.tensor([trace["token_ids"]]))
    finally:
        for h in handles:
            h.remove()
    assert len(captured) == 3 * gpt.config.n_layer
    for l, layer in enumerate(trace["layers"]):
        for key in ("pre", "act", "out"):
            np.testing.assert_allclose(layer["mlp"][key], captured[key, l], atol=1e-4, rtol=0, err_msg=f"{key} {l}")


def test_the_mlp_oracle_can_fail(gpt):
    """The hook comparison is not vacuous: one changed weight moves the activations past the tolerance."""
    transformers = pytest.importorskip("transformers")
    hf = transformers.GPT2LMHeadModel.from_pretrained(DEFAULT_DIR)
    with torch.no_grad():
        hf.transformer.h[0].mlp.c_fc.bias[0] += 0.01
    captured = {}
    handle = hf.transformer.h[0].mlp.act.register_forward_hook(
        lambda m, i, o: captured.__setitem__("act", o[0].numpy()))
    trace = gpt.trace(PROMPTS[0])
    with torch.no_grad():
        hf(torch.tensor([trace["token_ids"]]))
    handle.remove()
    assert np.abs(trace["layers"][0]["mlp"]["act"] - captured["act"]).max() > 1e-4


def test_transformers_accepts_the_config_and_tokenizer():
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config.from_pretrained(DEFAULT_DIR)
    assert config.n_embd == NumpyGPT.load().config.n_embd
    tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(DEFAULT_DIR / "tokenizer.json"))
    assert tok("michael jordan plays")["input_ids"] == NumpyGPT.load().encode("michael jordan plays")
    assert tok("迈克尔乔丹打")["input_ids"] == NumpyGPT.load().encode("迈克尔 乔丹 打")   # Chinese typed without spaces


def test_attention_is_causal_and_normalised(gpt):
    trace = gpt.trace(PROMPTS[3])
    T = len(trace["tokens"])
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    for layer in trace["layers"]:
        attn = layer["attn"]
        assert np.all(np.isneginf(attn["masked"][:, future]))
        assert np.all(np.isfinite(attn["masked"][:, ~future]))
        assert np.all(attn["weights"][:, future] == 0.0)          # exactly zero, not just small
        np.testing.assert_allclose(attn["weights"].sum(-1), 1.0, atol=1e-6)
        np.testing.assert_allclose(attn["scaled"], attn["scores"] / math.sqrt(gpt.config.d_head), rtol=1e-6)
        np.testing.assert_allclose(attn["weighted_values"].sum(2), attn["head_out"], atol=1e-5)


def test_layer_norm_statistics_are_of_its_input(gpt):
    trace = gpt.trace(PROMPTS[1])
    for layer in trace["layers"]:
        x = layer["resid_pre"]
        np.testing.assert_allclose(layer["ln_1"]["mean"], x.mean(-1), atol=1e-6)
        np.testing.assert_allclose(layer["ln_1"]["var"], x.var(-1), rtol=1e-4)


def test_sinusoidal_positions_are_the_stored_table(gpt):
    from model.numpy_gpt import sinusoidal_positions
    assert gpt.config.position_encoding == "sinusoidal"
    np.testing.assert_allclose(gpt.p("wpe.weight"), sinusoidal_positions(gpt.config.n_positions, gpt.config.n_embd), atol=1e-7)
    P = gpt.p("wpe.weight")
    assert P[3, 0] == pytest.approx(math.sin(3)) and P[3, 1] == pytest.approx(math.cos(3))


# --- temperature ---------------------------------------------------------------
LOGITS = np.array([2.0, 1.0, 0.5, 2.0 - 1e-3, -3.0])


def test_temperature_one_is_softmax():
    e = np.exp(LOGITS - LOGITS.max())
    np.testing.assert_allclose(probabilities(LOGITS, 1.0), e / e.sum(), rtol=1e-12)


def test_temperature_zero_is_exactly_argmax():
    p = probabilities(LOGITS, 0)
    assert p.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert probabilities([1.0, 3.0, 3.0], 0).tolist() == [0.0, 0.5, 0.5]  # a tie shares the mass


@pytest.mark.parametrize("T", [1e-3, 1e-30, 1e-300, 5e-324])
def test_tiny_temperature_is_stable_and_tends_to_argmax(T):
    p = probabilities(LOGITS * 1000, T)
    assert np.all(np.isfinite(p))
    assert p.sum() == pytest.approx(1.0)
    assert p[0] == pytest.approx(1.0)


def test_large_temperature_flattens():
    p = probabilities(LOGITS, 1e6)
    np.testing.assert_allclose(p, 1 / len(LOGITS), rtol=1e-5)
    entropies = [-(q * np.log(q + 1e-300)).sum() for q in (probabilities(LOGITS, T) for T in (0.1, 0.5, 1, 2, 5))]
    assert entropies == sorted(entropies)


@pytest.mark.parametrize("T", [-1.0, -1e-9, float("nan"), float("inf"), "hot", None])
def test_bad_temperature_is_rejected(T):
    with pytest.raises(ModelError, match="temperature"):
        probabilities(LOGITS, T)


# --- loading ---------------------------------------------------------------------
def test_the_shipped_model_is_small_and_drawable():
    config, tensors, tokenizer = load_dir()
    assert 2 <= config.n_layer <= 4 and config.n_head == 4 and 64 <= config.n_embd <= 128
    assert config.n_positions >= 32
    assert (DEFAULT_DIR / "model.safetensors").stat().st_size < 5 * 2**20
    assert len(tokenizer) == config.vocab_size


def test_loader_reads_plain_gpt2_names(tmp_path):
    """Real GPT-2 checkpoints name tensors without the `transformer.` prefix and carry mask buffers."""
    from safetensors.numpy import save_file
    import shutil
    config, tensors, _ = load_dir()
    shutil.copytree(DEFAULT_DIR, tmp_path / "w")
    plain = {k.removeprefix("transformer."): v for k, v in tensors.items()}
    plain["h.0.attn.bias"] = np.tril(np.ones((1, 1, 4, 4), dtype=np.float32))
    save_file(plain, str(tmp_path / "w" / "model.safetensors"))
    gpt = NumpyGPT.load(tmp_path / "w")
    np.testing.assert_array_equal(gpt.trace("the")["logits"], NumpyGPT.load().trace("the")["logits"])


def test_softmax_steps_divide_out_to_the_probabilities():
    from model import softmax_steps
    steps = softmax_steps(LOGITS)
    np.testing.assert_allclose(steps["exp"], np.exp(LOGITS), rtol=1e-15)
    assert steps["sum"] == pytest.approx(np.exp(LOGITS).sum(), rel=1e-15)
    np.testing.assert_allclose(steps["probabilities"], probabilities(LOGITS, 1.0), rtol=1e-12)
    with pytest.raises(ModelError, match="overflows"):
        softmax_steps([1000.0, 0.0])


def test_named_parts_are_the_fused_tensors_sliced(gpt):
    """gpt.head(l, h) and gpt.mlp(l) reproduce the trace's per-head q/k/v/ΔE and the MLP, from named weights."""
    trace = gpt.trace("michael jordan plays")
    c = gpt.config
    for layer in range(c.n_layer):
        X = trace["layers"][layer]["ln_1"]["out"]
        attn = trace["layers"][layer]["attn"]
        total = gpt.attn_out_bias(layer).copy()
        for h in range(c.n_head):
            w = gpt.head(layer, h)
            assert w.W_Q.shape == w.W_K.shape == w.W_V.shape == (c.n_embd, c.d_head)
            assert w.W_O.shape == (c.d_head, c.n_embd) and w.b_Q.shape == (c.d_head,)
            np.testing.assert_allclose(X @ w.W_Q + w.b_Q, attn["q"][h], atol=1e-12)
            np.testing.assert_allclose(X @ w.W_K + w.b_K, attn["k"][h], atol=1e-12)
            np.testing.assert_allclose(X @ w.W_V + w.b_V, attn["v"][h], atol=1e-12)
            total = total + attn["head_out"][h] @ w.W_O
        np.testing.assert_allclose(total, attn["out"], atol=1e-10)
        m = gpt.mlp(layer)
        assert m.W_in.shape == (c.n_embd, c.n_inner) and m.W_out.shape == (c.n_inner, c.n_embd)
        mlp = trace["layers"][layer]["mlp"]
        np.testing.assert_allclose(trace["layers"][layer]["ln_2"]["out"] @ m.W_in + m.b_in, mlp["pre"], atol=1e-12)
        np.testing.assert_allclose(mlp["act"] @ m.W_out + m.b_out, mlp["out"], atol=1e-12)


@pytest.mark.parametrize("layer, head", [(-1, 0), (99, 0), (0, -1), (0, 99)])
def test_named_parts_reject_a_part_the_model_lacks(gpt, layer, head):
    with pytest.raises(ModelError, match="no (layer|head)"):
        gpt.head(layer, head)
    if head == 0:
        with pytest.raises(ModelError, match="no layer"):
            gpt.mlp(layer)
