"""Trace analyses the scenes rely on: look-back head choice, per-head ΔE, ablation."""

import numpy as np
import pytest

from model import ModelError, NumpyGPT
from model.analysis import ablation_effect, best_lookback_head, head_contribution, lookback_scores

PROMPT = "a fluffy blue fox roamed the misty forest . the fox was"


@pytest.fixture(scope="module")
def gpt():
    return NumpyGPT.load()


@pytest.fixture(scope="module")
def trace(gpt):
    return gpt.trace(PROMPT)


def test_best_lookback_head_is_the_argmax_over_every_head(gpt, trace):
    was, blue = 11, 2
    best = best_lookback_head(trace, was, [blue])
    brute = max(((trace["layers"][l]["attn"]["weights"][h, was, blue], l, h)
                 for l in range(gpt.config.n_layer) for h in range(gpt.config.n_head)))
    assert (best["layer"], best["head"]) == (brute[1], brute[2])
    assert best["score"] == brute[0] > 0.5   # the trained model really looks back at the colour
    assert lookback_scores(trace, was, [blue]).shape == (gpt.config.n_layer, gpt.config.n_head)


def test_head_contributions_add_up_to_the_attention_output(gpt, trace):
    for layer in range(gpt.config.n_layer):
        total = sum(head_contribution(gpt, trace, layer, h) for h in range(gpt.config.n_head))
        np.testing.assert_allclose(total + gpt.p(f"h.{layer}.attn.c_proj.bias"),
                                   trace["layers"][layer]["attn"]["out"], atol=1e-12)


def test_ablation_zeroes_exactly_one_head(gpt, trace):
    ablated = gpt.trace(PROMPT, ablate=((1, 0),))
    assert np.all(ablated["layers"][1]["attn"]["head_out"][0] == 0)
    np.testing.assert_array_equal(ablated["layers"][0]["resid_post"], trace["layers"][0]["resid_post"])
    np.testing.assert_array_equal(gpt.trace(PROMPT)["logits"], trace["logits"])   # no state leaks
    effect = ablation_effect(gpt, trace["token_ids"], 1, 0, "blue")
    assert effect["p_with_head"] > effect["p_without_head"]


@pytest.mark.parametrize("call", [
    lambda g, t: lookback_scores(t, 3, [5]),          # a key in the future
    lambda g, t: head_contribution(g, t, 9, 0),
    lambda g, t: ablation_effect(g, t["token_ids"], 0, 7, "blue"),
    lambda g, t: ablation_effect(g, t["token_ids"], 0, 0, "bleu"),
])
def test_bad_questions_are_clear_errors(gpt, trace, call):
    with pytest.raises(ModelError):
        call(gpt, trace)
