"""Parameter counts come from the configs' arithmetic, and agree with Hugging Face's own count."""

import pytest
import torch

from model.config import GPT2_SMALL, GPT3_175B
from model.params import parameter_split, resolve
from model.weights import load_dir


def test_gpt3_is_175_billion_with_two_thirds_in_the_mlp():
    split = parameter_split(GPT3_175B)
    assert split["total"] == pytest.approx(175e9, rel=0.01)
    assert split["mlp"] == pytest.approx(116e9, rel=0.01)
    assert split["fractions"]["mlp"] == pytest.approx(2 / 3, abs=0.01)
    assert split["detail"]["attention_per_layer"] == 4 * 12288 ** 2 + 4 * 12288


def test_gpt2_small_matches_transformers_count():
    transformers = pytest.importorskip("transformers")
    with torch.device("meta"):  # shapes only, no memory
        hf = transformers.GPT2LMHeadModel(transformers.GPT2Config())
    assert parameter_split(GPT2_SMALL)["total"] == sum(p.numel() for p in hf.parameters()) == 124_439_808


def test_shipped_model_count_matches_its_tensors():
    """Every stored tensor is a parameter except a fixed (sin/cos) position table, which is stored for
    transformers' GPT-2 layout but not learned."""
    config, tensors, _ = load_dir()
    fixed = "transformer.wpe.weight" if config.position_encoding != "learned" else None
    split = parameter_split(resolve("shipped"))
    assert split["total"] == sum(t.size for name, t in tensors.items() if name != fixed)
    assert split["detail"]["position_table"] == tensors["transformer.wpe.weight"].size
    assert split["detail"]["position_table_learned"] == (fixed is None)
