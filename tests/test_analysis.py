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


def test_head_update_is_the_residual_plus_that_heads_write(gpt, trace):
    from model.analysis import head_update
    c = gpt.config
    for layer in range(c.n_layer):
        updates = [head_update(gpt, trace, layer, h) for h in range(c.n_head)]
        before = trace["layers"][layer]["resid_pre"]
        for h, u in enumerate(updates):
            assert (u["layer"], u["head"]) == (layer, h)
            np.testing.assert_array_equal(u["before"], before)
            np.testing.assert_allclose(u["after"] - u["before"], head_contribution(gpt, trace, layer, h), atol=1e-12)
        # every head's E′ − E, plus the W_O bias, is exactly the layer's own residual step
        total = sum(u["after"] - before for u in updates) + gpt.p(f"h.{layer}.attn.c_proj.bias")
        np.testing.assert_allclose(before + total, trace["layers"][layer]["resid_mid"], atol=1e-12)
    with pytest.raises(ModelError):
        head_update(gpt, trace, 0, c.n_head)


# --- LayerNorm step by step, and word order (attention chapter: add & norm, positional encoding) ---
@pytest.mark.parametrize("where", ["h.0.ln_1", "h.0.ln_2", "h.1.ln_2", "ln_f"])
def test_layer_norm_steps_rebuild_the_traces_layer_norm(gpt, trace, where):
    from model.analysis import layer_norm_steps
    token = 11
    s = layer_norm_steps(gpt, trace, where, token)
    if where == "ln_f":
        x, ln = trace["layers"][-1]["resid_post"][token], trace["ln_f"]
    else:
        layer = trace["layers"][int(where.split(".")[1])]
        x, ln = (layer["resid_pre"] if where.endswith("ln_1") else layer["resid_mid"])[token], layer[where[-4:]]
    np.testing.assert_array_equal(s["input"], x)
    assert s["mean"] == pytest.approx(x.mean(), abs=1e-12) and s["var"] == pytest.approx(x.var(), abs=1e-12)
    np.testing.assert_allclose(s["out"], ln["out"][token], atol=1e-12)       # the trace's own LayerNorm output
    assert abs(s["normalised_mean"]) < 1e-12
    assert s["normalised_var"] == pytest.approx(s["var"] / (s["var"] + gpt.config.layer_norm_epsilon), rel=1e-9)
    assert 0.99 < s["normalised_var"] <= 1 and s["var"] != pytest.approx(1, abs=0.05)   # the step really rescales


def test_layer_norm_steps_reject_unknown_places(gpt, trace):
    from model.analysis import layer_norm_steps
    for where in ("h.2.ln_1", "h.0.ln_3", "ln_1", "h.x.ln_1"):
        with pytest.raises(ModelError):
            layer_norm_steps(gpt, trace, where, 0)
    with pytest.raises(ModelError):
        layer_norm_steps(gpt, trace, "ln_f", len(trace["tokens"]))


def test_without_positions_layer_0_cannot_see_word_order(gpt, trace):
    from model.analysis import order_sensitivity
    ids = list(trace["token_ids"])
    o = order_sensitivity(gpt, ids)
    assert o["reversed_ids"] == ids[-2::-1] + ids[-1:]
    blind, seeing = o["without_positions"], o["with_positions"]
    np.testing.assert_allclose(blind["weights"], blind["weights_reversed"], atol=1e-12)   # weights follow words
    assert blind["output_change"] < 1e-12 < 0.1 < seeing["output_change"]
    np.testing.assert_allclose(seeing["weights"], trace["layers"][0]["attn"]["weights"][o["head"], -1], atol=1e-12)
    changes = [order_sensitivity(gpt, ids, h)["with_positions"]["weight_change"] for h in range(gpt.config.n_head)]
    assert o["score"] == max(changes) == seeing["weight_change"] > 0.5
    with pytest.raises(ModelError):
        order_sensitivity(gpt, ids[:2])
