"""Trace analyses the scenes rely on: look-back head choice, per-head ΔE, ablation."""

import numpy as np
import pytest

from model import ModelError, NumpyGPT
from model.analysis import (ablation_effect, best_lookback_head, head_contribution, head_delta_sizes, heads_delta,
                            lookback_scores)

PROMPT = "a fluffy blue tiny fox scurried the misty forest . the fox was"


@pytest.fixture(scope="module")
def gpt():
    return NumpyGPT.load()


@pytest.fixture(scope="module")
def trace(gpt):
    return gpt.trace(PROMPT)


def test_best_lookback_head_is_the_argmax_over_every_head(gpt, trace):
    was, blue = 12, 2
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


def test_head_delta_sizes_are_the_lengths_of_each_heads_change(gpt, trace):
    """|ΔE| per head at one position, from the heads' outputs and their own rows of W_O (not head_contribution), and
    |out| of the layer's attention there; a position outside the prompt is one clear error."""
    layer, pos = 1, 12
    sizes = head_delta_sizes(gpt, trace, layer, pos)
    attn = trace["layers"][layer]["attn"]
    W_O, dh = gpt.p(f"h.{layer}.attn.c_proj.weight"), gpt.config.d_head
    by_hand = [np.linalg.norm(attn["head_out"][h][pos] @ W_O[h * dh:(h + 1) * dh]) for h in range(gpt.config.n_head)]
    np.testing.assert_allclose(sizes["delta_lengths"], by_hand, atol=1e-9)
    assert sizes["out_length"] == pytest.approx(np.linalg.norm(attn["out"][pos]), abs=1e-12)
    assert len(set(np.round(by_hand, 6))) == gpt.config.n_head      # the heads really write different amounts
    with pytest.raises(ModelError):
        head_delta_sizes(gpt, trace, layer, len(trace["tokens"]))


def test_heads_delta_adds_the_chosen_heads_changes(gpt, trace):
    """Several heads' ΔE added: with the other heads' and b_O it is the layer's attention output, entry by entry."""
    layer, pos, n = 1, 12, gpt.config.n_head
    rest = heads_delta(gpt, trace, layer, pos, range(1, n))
    first = head_contribution(gpt, trace, layer, 0)[pos]
    np.testing.assert_allclose(first + rest + gpt.p(f"h.{layer}.attn.c_proj.bias"),
                               trace["layers"][layer]["attn"]["out"][pos], atol=1e-9)
    np.testing.assert_array_equal(heads_delta(gpt, trace, layer, pos, [2]), head_contribution(gpt, trace, layer, 2)[pos])
    with pytest.raises(ModelError):
        heads_delta(gpt, trace, layer, pos, [])


def test_ablation_zeroes_exactly_one_head(gpt, trace):
    best = best_lookback_head(trace, 12, [2])          # the head chosen by the scenes' rule
    layer, head = best["layer"], best["head"]
    assert layer >= 1
    ablated = gpt.trace(PROMPT, ablate=((layer, head),))
    assert np.all(ablated["layers"][layer]["attn"]["head_out"][head] == 0)
    np.testing.assert_array_equal(ablated["layers"][layer - 1]["resid_post"], trace["layers"][layer - 1]["resid_post"])
    np.testing.assert_array_equal(gpt.trace(PROMPT)["logits"], trace["logits"])   # no state leaks
    effect = ablation_effect(gpt, trace["token_ids"], layer, head, "blue")
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


def test_attention_lens_reads_the_stream_around_one_layers_attention(gpt, trace):
    """attention_lens: the logit lens's own points entering the layer (the previous block's) and after its attention,
    and the head's ΔE alone added in between, read the same way; the shown rows and "other" add up to 1."""
    from model.analysis import attention_lens, lens_read, logit_lens
    c, f = gpt.config, len(trace["tokens"]) - 1
    lens = logit_lens(gpt, trace, f)
    for layer in range(c.n_layer):
        for head in (0, c.n_head - 1):
            out = attention_lens(gpt, trace, layer, head, f)
            w = gpt.tokenizer.words.index(out["word"])
            assert out["word"] == gpt.tokenizer.words[int(np.argmax(trace["logits"][f]))]
            assert out["before"]["p_word"] == lens[2 * layer]["probabilities"][w]       # the block before's point
            assert out["after"]["p_word"] == lens[2 * layer + 1]["probabilities"][w]    # after this attention
            alone = trace["layers"][layer]["resid_pre"][f] + head_contribution(gpt, trace, layer, head)[f]
            assert out["head_only"]["p_word"] == lens_read(gpt, alone)[w]
            for name in ("before", "head_only", "after"):
                run = out[name]
                assert [r["p"] for r in run["top"]] == sorted((r["p"] for r in run["top"]), reverse=True)
                assert sum(r["p"] for r in run["shown"]) + run["other"] == pytest.approx(1.0, abs=1e-12)
                assert out["word"] in [r["word"] for r in run["shown"]]
    rare = attention_lens(gpt, trace, 0, 0, f, word="fox")            # a word outside the top 3 is still shown
    assert [r["word"] for r in rare["before"]["shown"]][-1] == "fox" or "fox" in [r["word"] for r in rare["before"]["top"]]
    for call in (lambda: attention_lens(gpt, trace, 0, 0, len(trace["tokens"])),
                 lambda: attention_lens(gpt, trace, 0, c.n_head, f),
                 lambda: attention_lens(gpt, trace, 0, 0, f, word="bleu")):
        with pytest.raises(ModelError):
            call()


# --- LayerNorm step by step, and word order (attention chapter: add & norm, positional encoding) ---
@pytest.mark.parametrize("where", ["h.0.ln_1", "h.0.ln_2", "h.1.ln_2", "ln_f"])
def test_layer_norm_steps_rebuild_the_traces_layer_norm(gpt, trace, where):
    from model.analysis import layer_norm_steps
    token = 12
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
    for where in ("h.9.ln_1", "h.0.ln_3", "ln_1", "h.x.ln_1"):
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


def test_one_pass_predicts_every_position_as_its_prefix_alone_does(gpt, trace):
    """next_word_predictions reads one pass; each position's prediction is what a pass over the words up to it alone
    gives (the model looks only back), the next word is the prompt's own, and the top guess is the argmax."""
    from model import probabilities
    from model.analysis import next_word_predictions
    ids = [int(i) for i in trace["token_ids"]]
    preds = next_word_predictions(gpt, trace)
    assert [r["position"] for r in preds] == list(range(len(ids)))
    for i, r in enumerate(preds):
        alone = probabilities(gpt.trace(ids[:i + 1])["logits"][-1])
        assert r["top_id"] == int(np.argmax(alone)) and r["p_top"] == pytest.approx(float(alone.max()), abs=1e-9)
        assert r["top_word"] == gpt.tokenizer.words[r["top_id"]]
        if i + 1 < len(ids):
            assert r["next_id"] == ids[i + 1] and r["next_word"] == trace["tokens"][i + 1]
            assert r["p_next"] == pytest.approx(float(alone[ids[i + 1]]), abs=1e-9)
            assert r["next_is_top"] == (ids[i + 1] == r["top_id"])
        else:
            assert r["next_word"] is None and r["p_next"] is None and r["next_is_top"] is None
    assert any(r["next_is_top"] for r in preds[:-1]) and not all(r["next_is_top"] for r in preds[:-1])


def test_later_weights_are_every_heads_weights_after_the_query(gpt, trace):
    """later_weights counts and reads exactly the cells after each query, in every layer and head: all 0 in a causal
    model, while the cells up to the query hold the weights (each line's sum, 1)."""
    from model.analysis import later_weights
    lw = later_weights(trace)
    L, H, T = gpt.config.n_layer, gpt.config.n_head, len(trace["tokens"])
    assert (lw["layers"], lw["heads"], lw["cells"]) == (L, H, L * H * T * (T - 1) // 2)
    assert lw["largest"] == 0.0 and lw["per_query"][:-1] == [0.0] * (T - 1) and lw["per_query"][-1] is None
    for layer in trace["layers"]:
        w = layer["attn"]["weights"]
        np.testing.assert_allclose(np.tril(w).sum(-1), 1.0, atol=1e-9)
    leaky = {"layers": [{"attn": {"weights": np.full((H, T, T), 1.0 / T)}}]}      # no mask: every later cell 1/T
    assert later_weights(leaky)["largest"] == pytest.approx(1.0 / T)


# --- interventions, attribution and directions, each against transformers' GPT-2 with forward hooks ---------
import torch  # noqa: E402

from model.language import Language  # noqa: E402
from model.weights import DEFAULT_DIR  # noqa: E402

FACT = "michael jordan , famously , plays"


@pytest.fixture(scope="module")
def hf():
    transformers = pytest.importorskip("transformers")
    model = transformers.GPT2LMHeadModel.from_pretrained(DEFAULT_DIR)
    model.eval()
    return model.double()


@pytest.fixture(scope="module")
def language():
    return Language()


def hf_run(hf, ids, patch=None, capture=False):
    """transformers' GPT-2 with forward hooks: `patch` {(layer, component, position): vector} replaces states as
    they are made (attn / mlp outputs, the block's output resid_post); returns logits and captured states."""
    patch = patch or {}
    captured = {}
    handles = []

    def hook(layer, component):
        def run(module, inputs, output):
            tensor = output[0] if isinstance(output, tuple) else output
            for (l, c, p), v in patch.items():
                if (l, c) == (layer, component):
                    tensor[0, p] = torch.as_tensor(v, dtype=tensor.dtype)
            if capture:
                captured[layer, component] = tensor[0].detach().clone().numpy()
            return output
        return run

    for l, block in enumerate(hf.transformer.h):
        handles.append(block.attn.register_forward_hook(hook(l, "attn")))
        handles.append(block.mlp.register_forward_hook(hook(l, "mlp")))
        handles.append(block.register_forward_hook(hook(l, "resid_post")))
        handles.append(block.mlp.act.register_forward_hook(
            lambda m, i, o, l=l: captured.__setitem__((l, "act"), o[0].detach().clone().numpy()) if capture else None))
    handles.append(hf.transformer.ln_f.register_forward_hook(
        lambda m, i, o: captured.__setitem__("ln_f_in", i[0][0].detach().clone().numpy()) if capture else None))
    try:
        with torch.no_grad():
            logits = hf(torch.tensor([list(ids)])).logits[0].numpy()
    finally:
        for h in handles:
            h.remove()
    return logits, captured


@pytest.mark.parametrize("component", ["attn", "mlp", "resid_post"])
def test_patching_matches_torch_hooks(gpt, hf, component):
    ids = gpt.encode(FACT)
    rng = np.random.default_rng(0)
    for layer in range(gpt.config.n_layer):
        patch = {(layer, component, 1): rng.normal(0, 1, gpt.config.n_embd)}
        ours = gpt.trace(ids, patch=patch)
        theirs, _ = hf_run(hf, ids, patch)
        np.testing.assert_allclose(ours["logits"], theirs, atol=1e-8)
        assert np.abs(ours["logits"] - gpt.trace(ids)["logits"]).max() > 1e-3     # the patch really acts
        np.testing.assert_array_equal(ours["layers"][layer]["mlp" if component == "mlp" else "attn"]["out"][1]
                                      if component != "resid_post" else ours["layers"][layer]["resid_post"][1],
                                      patch[layer, component, 1])


def test_patch_rejects_bad_keys(gpt):
    ids = gpt.encode(FACT)
    d = gpt.config.n_embd
    for patch in ({(0, "mlp", 99): np.zeros(d)}, {(9, "mlp", 0): np.zeros(d)}, {(0, "head", 0): np.zeros(d)},
                  {(0, "mlp", 0): np.zeros(d + 1)}, {(0, "mlp"): np.zeros(d)}):
        with pytest.raises(ModelError):
            gpt.trace(ids, patch=patch)


def test_causal_trace_restores_as_torch_hooks_do(gpt, hf, language):
    from model.analysis import causal_trace
    from model.analysis.patching import COMPONENTS
    clean = gpt.encode("michael jordan , famously , plays")
    other = next(p for p in language.people if p.sport != "basketball")
    corrupt = gpt.encode(f"{other.first} {other.last} , famously , plays")
    answer = gpt.tokenizer.vocab["basketball"]
    result = causal_trace(gpt, clean, corrupt, answer)
    T = len(clean)
    assert result["share"].shape == (gpt.config.n_layer, len(COMPONENTS), T)
    _, clean_states = hf_run(hf, clean, capture=True)
    for layer in range(gpt.config.n_layer):
        for ci, component in enumerate(COMPONENTS):
            for position in range(T):
                logits, _ = hf_run(hf, corrupt, {(layer, component, position): clean_states[layer, component][position]})
                e = np.exp(logits[-1] - logits[-1].max())
                assert result["p_restored"][layer, ci, position] == pytest.approx(e[answer] / e.sum(), abs=1e-6)
    # restoring the whole last-layer stream at the last position is the clean run
    assert result["share"][-1, COMPONENTS.index("resid_post"), -1] == pytest.approx(1.0, abs=1e-9)
    assert result["p_clean"] > 0.5 > result["p_corrupt"]
    with pytest.raises(ModelError):
        causal_trace(gpt, clean, clean[:-1], answer)


def test_mean_ablation_uses_the_sample_means(gpt, hf, language):
    from model.analysis import mean_ablation, mean_states, sample_states
    sample = sample_states(gpt, language, n_streams=4, seed=3)
    means = mean_states(gpt, language, n_streams=4, seed=3)
    words = {w: i for i, w in enumerate(gpt.tokenizer.words)}
    collected = []
    for s in sample["streams"]:
        _, states = hf_run(hf, [words[w] for w in s], capture=True)
        collected.append(states[0, "mlp"])
    np.testing.assert_allclose(means[0, "mlp"], np.concatenate(collected).mean(0), atol=1e-8)
    ids = gpt.encode(FACT)
    answer = gpt.tokenizer.vocab["basketball"]
    effect = mean_ablation(gpt, ids, answer, 0, "mlp", 1, means)
    logits, _ = hf_run(hf, ids, {(0, "mlp", 1): means[0, "mlp"]})
    e = np.exp(logits[-1] - logits[-1].max())
    assert effect["p_after"] == pytest.approx(e[answer] / e.sum(), abs=1e-6)
    assert effect["p_before"] != pytest.approx(effect["p_after"], abs=1e-3)


def test_direct_logit_attribution_adds_up_and_reads_torchs_states(gpt, hf, language):
    from model.analysis import direct_logit_attribution, top_neurons
    from model.analysis.circuits import sport_alternatives
    ids = gpt.encode(FACT)
    trace = gpt.trace(ids)
    answer = gpt.tokenizer.vocab["basketball"]
    alts = sport_alternatives(gpt, language, "en")
    dla = direct_logit_attribution(gpt, trace, answer, alts)
    assert dla["total"] == pytest.approx(dla["logit_diff"], abs=1e-9)
    logits, states = hf_run(hf, ids, capture=True)
    others = [a for a in alts if a != answer]
    assert dla["logit_diff"] == pytest.approx(logits[-1, answer] - logits[-1, others].mean(), abs=1e-6)
    # each component from Torch's own states, through ln_f with Torch's own final-LN input statistics
    x = states["ln_f_in"][-1]
    scale = np.sqrt(x.var() + gpt.config.layer_norm_epsilon)
    direction = gpt.W_E[answer] - gpt.W_E[others].mean(0)
    g = hf.transformer.ln_f.weight.detach().numpy()
    for l in range(gpt.config.n_layer):
        for component in ("attn", "mlp"):
            v = states[l, component][-1]
            assert dla["components"][f"{component}.{l}"] == pytest.approx(((v - v.mean()) / scale * g) @ direction,
                                                                          abs=1e-6)
        neurons = dla["neurons"][l]
        assert neurons["per_neuron"].sum() + neurons["bias"] == pytest.approx(dla["components"][f"mlp.{l}"], abs=1e-9)
        W_out = hf.transformer.h[l].mlp.c_proj.weight.detach().numpy()      # neuron i's output direction: row i
        read_out = ((W_out - W_out.mean(-1, keepdims=True)) / scale * g) @ direction
        np.testing.assert_allclose(neurons["per_neuron"], states[l, "act"][-1] * read_out, atol=1e-8)
    heads = sum(v for k, v in dla["heads"].items() if k.startswith("attn.1."))
    assert heads == pytest.approx(dla["components"]["attn.1"], abs=1e-9)
    top = top_neurons(dla, 5)
    assert [t["contribution"] for t in top] == sorted([t["contribution"] for t in top], reverse=True)
    with pytest.raises(ModelError):
        direct_logit_attribution(gpt, trace, answer, [answer])


def test_neuron_top_contexts_are_torchs_largest_activations(gpt, hf, language):
    from model.analysis import neuron_top_contexts, sample_states
    sample = sample_states(gpt, language, n_streams=6, seed=5)
    words = {w: i for i, w in enumerate(gpt.tokenizer.words)}
    acts = np.stack([hf_run(hf, [words[w] for w in s], capture=True)[1][0, "act"] for s in sample["streams"]])
    neuron = 3
    top = neuron_top_contexts(gpt, sample, 0, neuron, k=5)
    expected = np.sort(acts[..., neuron], axis=None)[::-1][:5]
    np.testing.assert_allclose([t["activation"] for t in top], expected, atol=1e-6)
    for t in top:
        assert t["context"][-1] == t["token"] == sample["streams"][t["stream"]][t["position"]]
    with pytest.raises(ModelError):
        neuron_top_contexts(gpt, sample, 0, 10_000)


def test_class_mean_probes_can_fail():
    """On planted data the held-out tests find the planted attribute; on shuffled labels they do not."""
    from model.analysis.directions import held_out_binary_accuracy, held_out_value_accuracy, parallelogram_accuracy
    rng = np.random.default_rng(0)
    a = np.repeat([0, 1], 8)
    b = np.tile(np.repeat([0, 1], 4), 2)
    X = 3 * rng.normal(size=16) + 3 * np.outer(a, rng.normal(size=16)) + 3 * np.outer(b, rng.normal(size=16)) \
        + rng.normal(0, .3, (16, 16))
    assert held_out_binary_accuracy(X, a) == 1.0
    assert parallelogram_accuracy(X, a, b, np.zeros(16))["accuracy"] == 1.0
    noise = rng.normal(size=(16, 16))
    assert held_out_binary_accuracy(noise, a) < 0.9
    labels = ["x", "y", "z", "w"] * 10
    X = np.eye(4)[["xyzw".index(v) for v in labels]] + rng.normal(0, .1, (40, 4))
    assert held_out_value_accuracy(X, labels)["accuracy"] == 1.0
    assert held_out_value_accuracy(rng.normal(size=(40, 4)), labels)["accuracy"] < 0.6


def test_stream_states_are_torchs_and_semantic_directions_use_the_embedding(gpt, hf, language):
    from model.analysis.directions import last_name_states, semantic_directions
    states = last_name_states(gpt, language, "zh")
    p = language.people[0]
    ids = gpt.encode(f"{language.grammar('zh').t(p.first)}{language.grammar('zh').t(p.last)}")
    _, torch_states = hf_run(hf, ids, capture=True)
    for l in range(gpt.config.n_layer):
        np.testing.assert_allclose(states["resid_post"][0, l], torch_states[l, "resid_post"][-1], atol=1e-8)
    np.testing.assert_allclose(gpt.W_E, hf.transformer.wte.weight.detach().numpy(), atol=1e-12)
    result = semantic_directions(gpt, n_shuffles=5, seed=1)
    assert set(result) == {"habitat", "size", "gender"}
    for r in result.values():
        assert 0 <= r["held_out_accuracy"] <= 1 and r["null"]["shuffles"] == 5


def test_swap_pairs_corrupt_the_right_names_and_change_the_sport(language):
    from model.analysis.circuits import swap_pairs, template_words
    for swap in ("both", "first", "last"):
        pairs = swap_pairs(language, swap, 3, seed=11)
        assert pairs and all(p.sport != q.sport for p, q in pairs)
        assert pairs == swap_pairs(language, swap, 3, seed=11)          # seeded
        if swap == "first":
            assert all(p.last == q.last and p.first != q.first for p, q in pairs)
        if swap == "last":
            assert all(p.first == q.first and p.last != q.last for p, q in pairs)
    assert template_words(language, "zh.filler", "michael", "jordan") == ["迈克尔", "乔丹", "，", "众所周知", "，", "打"]
    assert template_words(language, "en.of", "michael", "jordan") == ["the", "sport", "of", "michael", "jordan", "is"]


def test_noise_corruption_is_seeded_and_only_touches_the_subject(gpt, hf):
    from model.analysis import noised_ids_patch
    ids = gpt.encode(FACT)
    a = noised_ids_patch(gpt, ids, [0, 1], scale=3.0, seed=4)
    b = noised_ids_patch(gpt, ids, [0, 1], scale=3.0, seed=4)
    assert set(a) == {(0, "resid_pre", 0), (0, "resid_pre", 1)}
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    noised = gpt.trace(ids, patch=a)
    clean = gpt.trace(ids)
    np.testing.assert_array_equal(noised["layers"][0]["resid_pre"][2:], clean["layers"][0]["resid_pre"][2:])
    answer = gpt.tokenizer.vocab["basketball"]
    e = np.exp(noised["logits"][-1] - noised["logits"][-1].max())
    assert e[answer] / e.sum() < 0.5 < np.exp(clean["logits"][-1, answer] - clean["logits"][-1].max()) \
        / np.exp(clean["logits"][-1] - clean["logits"][-1].max()).sum()


def test_the_fact_scenes_tools_read_torchs_states(gpt, hf, language):
    """person_causal_trace, neuron_direction_attribution, top_k_shares, vector_readout, projections,
    contrast_direction and neuron_attribute_profile, against transformers' GPT-2 through forward hooks."""
    from model.analysis import (contrast_direction, neuron_attribute_profile, neuron_direction_attribution,
                                person_causal_trace, projections, top_k_shares, vector_readout)
    from model.numpy_gpt import probabilities
    words = ["mr", "michael", "jordan", ",", "indeed", ",", "plays"]
    vocab = gpt.tokenizer.vocab
    ids = [vocab[w] for w in words]
    trace = gpt.trace(ids)
    logits, states = hf_run(hf, ids, capture=True)
    # causal tracing: one partner and one cell, restored through Torch's hooks
    ct = person_causal_trace(gpt, language, "en", words, 1)
    partner = ct["partners"][0]
    corrupt = ids[:1] + [vocab[w] for w in partner] + ids[3:]
    answer = vocab["basketball"]
    p = lambda lg: float(probabilities(lg[-1])[answer])    # noqa: E731
    p_clean, p_corrupt = p(logits), p(hf_run(hf, corrupt)[0])
    restored = p(hf_run(hf, corrupt, patch={(0, "mlp", 2): states[0, "mlp"][2]})[0])
    assert ct["share_per_partner"][0][0, ct["components"].index("mlp"), 2] == pytest.approx(
        (restored - p_corrupt) / (p_clean - p_corrupt), abs=1e-5)
    assert all(language.person(f, l).sport != "basketball" for f, l in ct["partners"])
    # the neurons' push along a direction adds up to the MLP output along it, from Torch's activations
    rng = np.random.default_rng(0)
    direction = rng.normal(size=gpt.config.n_embd)
    push = neuron_direction_attribution(gpt, trace, 0, 2, direction)
    W_out = hf.transformer.h[0].mlp.c_proj.weight.detach().numpy()
    np.testing.assert_allclose(push["per_neuron"], states[0, "act"][2] * (W_out @ direction), atol=1e-6)
    assert push["per_neuron"].sum() + push["bias"] == pytest.approx(states[0, "mlp"][2] @ direction, abs=1e-6)
    shares = top_k_shares(push["per_neuron"], (1, 256))
    assert shares["shares"][256] == pytest.approx(1.0)
    pn = push["per_neuron"]     # the share of the push: over the neurons pushing toward it, the others apart
    assert shares["sums"][1] == pytest.approx(pn.max()) and shares["sums"][256] == pytest.approx(pn[pn > 0].sum())
    assert shares["against"] == pytest.approx(pn[pn < 0].sum()) and shares["n_against"] == int((pn < 0).sum())
    assert shares["order"][0] == int(np.argmax(push["per_neuron"]))
    # a vector read out: Torch's MLP output through ln_f (Torch's own final-LN statistics) and the unembedding
    read = vector_readout(gpt, trace, 2, trace["layers"][0]["mlp"]["out"][2], k=3, rank_of=[answer])
    x = states["ln_f_in"][2]
    v = states[0, "mlp"][2]
    g = hf.transformer.ln_f.weight.detach().numpy()
    per_word = ((v - v.mean()) / np.sqrt(x.var() + gpt.config.layer_norm_epsilon) * g) @ gpt.W_E.T
    np.testing.assert_allclose(read["per_word"], per_word, atol=1e-5)
    assert read["ranks"][answer] == int((per_word > per_word[answer]).sum()) + 1
    # directions: projections are lengths along unit vectors; the contrast is own minus the others' mean
    dirs = {"a": np.array([2.0, 0.0]), "b": np.array([0.0, 3.0]), "c": np.array([-1.0, 0.0])}
    assert projections(dirs, np.array([1.0, 1.0])) == {"a": 1.0, "b": 1.0, "c": -1.0}
    np.testing.assert_allclose(contrast_direction(dirs, "a"), [1.5, -0.5])
    with pytest.raises(ModelError):
        contrast_direction(dirs, "z")
    # what a neuron fires for: its activation at the last name of each person, from Torch
    [profile] = neuron_attribute_profile(gpt, language, "en", 0, [int(shares["order"][0])])
    acts = np.array([hf_run(hf, gpt.encode(f"{p.first} {p.last}"), capture=True)[1][0, "act"][-1, profile["neuron"]]
                     for p in language.people])
    np.testing.assert_allclose(profile["per_person"], acts, atol=1e-5)
    inside = np.array([p.sport == profile["best"] for p in language.people])
    assert profile["mean_best"] == pytest.approx(acts[inside].mean(), abs=1e-5)
    assert profile["mean_others"] == pytest.approx(acts[~inside].mean(), abs=1e-5)


def test_head_patching_scores_each_head_and_sets_by_the_drop_in_log_probability(gpt):
    from model.analysis.heads import head_patching
    from model import probabilities
    ids = gpt.encode("a silky orange tiny frog dived the verdant lake . the frog was")
    vocab = gpt.tokenizer.vocab
    corrupt = [ids[:2] + [vocab["blue"]] + ids[3:]]
    out = head_patching(gpt, ids, corrupt, vocab["orange"], sets=[((2, 2), (2, 0))])
    assert out["scores"].shape == (gpt.config.n_layer, gpt.config.n_head)
    assert out["p_clean"] == pytest.approx(probabilities(gpt.trace(ids)["logits"][-1])[vocab["orange"]])
    # every head at once from the corrupted run is the corrupted run itself, far below the clean one
    assert out["p_corrupt"] < 0.01 < out["p_clean"]
    # the best-scoring head really carries some of the answer: patching it alone lowers P(orange)
    l, h = np.unravel_index(int(out["scores"].argmax()), out["scores"].shape)
    assert out["scores"][l, h] > 0 and out["p_patched"][l, h] < out["p_clean"]
    s = out["sets"][0]
    assert s["heads"] == [[2, 2], [2, 0]] and np.isfinite(s["score"])
    with pytest.raises(ModelError):
        head_patching(gpt, ids, [ids[:-1]], vocab["orange"])


def test_the_fact_path_reads_torchs_runs(gpt, hf, language):
    """fact_path: mean-ablation cells and the path through the lookup MLP as Torch's hooks give them; the direct
    logit attribution adds up; the carrier is the attention layer with the largest push, reading where its head looks."""
    from model.analysis import mean_states
    from model.analysis.factpath import fact_path
    from model.numpy_gpt import probabilities
    words = ["mr", "michael", "jordan", ",", "indeed", ",", "plays"]
    vocab = gpt.tokenizer.vocab
    ids = [vocab[w] for w in words]
    means = mean_states(gpt, language, n_streams=20, seed=3)
    fp = fact_path(gpt, language, "en", words, 1, means, 0)
    answer = vocab["basketball"]
    p = lambda patch: float(probabilities(hf_run(hf, ids, patch=patch)[0][-1])[answer])   # noqa: E731
    assert fp["ablation"][0, 1, 2] == pytest.approx(p({(0, "mlp", 2): means[0, "mlp"]}), abs=1e-6)
    assert fp["ablation"][1, 0, 6] == pytest.approx(p({(1, "attn", 6): means[1, "attn"]}), abs=1e-6)
    assert fp["through_lookup"]["p_after"] == pytest.approx(p({(0, "mlp", 2): means[0, "mlp"]}), abs=1e-6)
    d = fp["dla"]
    assert d["embeddings"] + sum(d["attn"]) + sum(d["mlp"]) + d["ln_f_bias"] == pytest.approx(d["logit_diff"], abs=1e-6)
    c = fp["carrier"]
    assert c["layer"] == int(np.argmax(d["attn"])) and c["push"] == max(d["attn"])
    tr = gpt.trace(ids)
    np.testing.assert_allclose(c["reads"], tr["layers"][c["layer"]]["attn"]["weights"][c["head"], -1])
    assert [(s["layer"], s["component"]) for s in fp["carrier_sources"]] == \
        [(l, k) for l in range(c["layer"]) for k in ("attn", "mlp")]


def test_held_out_sport_directions_leave_the_person_out_and_beat_shuffled_labels(gpt, language):
    """The lookup beat's directions are measured without the prompt's person (built again here from the other
    people), and the leave-one-out count of people whose own sport rises most is far above its shuffled null."""
    from model.analysis.directions import last_name_states
    from model.analysis.factpath import held_out_rise
    words = ["mr", "michael", "jordan", ",", "indeed", ",", "plays"]
    person = language.person("michael", "jordan")
    trace = gpt.trace([gpt.tokenizer.vocab[w] for w in words])
    r = held_out_rise(gpt, language, "en", trace, 0, 2, person, shuffles=40)
    states = last_name_states(gpt, language, "en")
    others = [i for i, q in enumerate(language.people) if q != person]
    X = states["resid_post"][others, 0]
    labels = np.array([language.people[i].sport for i in others])
    d = X[labels == "basketball"].mean(0) - X[labels != "basketball"].mean(0)
    u = d / np.linalg.norm(d)
    assert r["before"]["basketball"] == pytest.approx(trace["layers"][0]["resid_mid"][2] @ u)
    assert r["rise"]["basketball"] == pytest.approx(trace["layers"][0]["mlp"]["out"][2] @ u)
    loo = r["loo"]
    assert loo["n"] == len(language.people) and 0 <= loo["hits"] <= loo["n"]
    assert abs(loo["null_mean"] - loo["n"] * loo["chance"]) < 3        # shuffled labels: about chance
    assert loo["hits"] > loo["null_p95"] and loo["p_value"] < 0.05      # the real labels: far above it


def test_the_and_search_is_the_largest_margin_and_its_input_splits_exactly(gpt, hf, language):
    """and_search picks the neuron whose activation for the person most exceeds every other pair's (recomputed here
    over the pairs), calls it an AND only by its rule; pre_activation_parts adds up to the neuron's input, and the
    activation matches Torch's."""
    from model.analysis.factpath import and_search, pair_words, pre_activation_parts
    from model.language import LAST_NAMES, MALE_FIRST
    words = ["mr", "michael", "jordan", ",", "indeed", ",", "plays"]
    vocab = gpt.tokenizer.vocab
    a = and_search(gpt, language, "en", words, 1, 0)
    acts = {(f, l): gpt.trace([vocab[w] for w in pair_words(words, 1, f, l)])["layers"][0]["mlp"]["act"][2]
            for f in MALE_FIRST for l in LAST_NAMES}
    me = acts["michael", "jordan"]
    rest = np.stack([v for k, v in acts.items() if k != ("michael", "jordan")])
    margin = me - rest.max(0)
    assert a["neuron"] == int(np.argmax(margin)) and a["margin"] == pytest.approx(margin.max())
    n = a["neuron"]
    one = max(v[n] for (f, l), v in acts.items() if (f == "michael") != (l == "jordan"))
    assert a["one_name_max"] == pytest.approx(one)
    assert a["is_and"] == (me[n] > a["threshold"] and one <= a["threshold"] and margin[n] > 0)
    assert len(a["null_margins"]) == len(acts) - 1
    for pair in (("michael", "jordan"), tuple(a["groups"]["same_first"]["pair"])):
        ids = [vocab[w] for w in pair_words(words, 1, *pair)]
        trace = gpt.trace(ids)
        parts = pre_activation_parts(gpt, trace, 0, 2, n, 1)
        assert parts["first"] + parts["last"] + parts["other"] + parts["bias"] == pytest.approx(parts["pre"], abs=1e-9)
        assert parts["pre"] == pytest.approx(trace["layers"][0]["mlp"]["pre"][2, n], abs=1e-12)
        _, states = hf_run(hf, ids, capture=True)
        assert parts["act"] == pytest.approx(states[0, "act"][2, n], abs=1e-6)
    with pytest.raises(ModelError):
        pre_activation_parts(gpt, gpt.trace(ids), 0, 2, 10_000, 1)
