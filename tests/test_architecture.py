"""The architecture scene: the logit lens against transformers' GPT-2 (hidden states and attention outputs read
by hooks), the manifest against the lens and the configs, the caption's rule recomputed, the labels against the
manifest, a bad focus as one clear line, and a key frame (the checks every scene shares: test_scenes.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from manim.utils.testing.frames_comparison import frames_comparison

from model import DEFAULT_DIR, GPT3_175B, ModelError, probabilities
from model.analysis.lens import lens_points, logit_lens
from scene_checks import manifest_of, play_until_section_ends, stop_at_beat, texts_of
from scenes import style
from scenes.architecture import Architecture, layers_drawn, pipeline_rows
from scenes.components import NumberText
from scenes.prompts import lookback_prompt

__module_test__ = "architecture"


def hf_lens(prompt_ids: list[int], position: int) -> list[np.ndarray]:
    """The logit lens written out on transformers' GPT-2: resid_pre from hidden_states, resid_mid = resid_pre +
    the attention block's output (a forward hook), resid_post = the next resid_pre; then ln_f and the tied
    lm_head."""
    import transformers
    hf = transformers.GPT2LMHeadModel.from_pretrained(DEFAULT_DIR).eval()
    attn_out = {}
    hooks = [block.attn.register_forward_hook(lambda m, i, o, l=l: attn_out.__setitem__(l, o[0]))
             for l, block in enumerate(hf.transformer.h)]
    try:
        with torch.no_grad():
            out = hf(torch.tensor([prompt_ids]), output_hidden_states=True)
            L = len(hf.transformer.h)
            pre = [out.hidden_states[l][0, position] for l in range(L)]
            # hidden_states[L] is after ln_f; the last block's output is resid_mid + its MLP, read by a hook below
            streams = [pre[0]]
            for l in range(L):
                mid = pre[l] + attn_out[l][0, position]
                post = pre[l + 1] if l + 1 < L else None
                streams += [mid, post]
            mlp_last = {}
            h = hf.transformer.h[L - 1].mlp.register_forward_hook(lambda m, i, o: mlp_last.__setitem__(0, o))
            hf(torch.tensor([prompt_ids]))
            h.remove()
            streams[-1] = streams[-2] + mlp_last[0][0, position]
            return [torch.softmax(hf.lm_head(hf.transformer.ln_f(x)).double(), -1).numpy() for x in streams]
    finally:
        for hook in hooks:
            hook.remove()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_logit_lens_is_transformers_read_after_every_block(gpt, lang):
    prompt = lookback_prompt(lang)["prompt"]
    trace = gpt.trace(prompt)
    ours = logit_lens(gpt, trace, -1)
    assert [(r["part"], r["layer"]) for r in ours] == lens_points(gpt.config.n_layer)
    theirs = hf_lens(list(trace["token_ids"]), -1)
    for r, p in zip(ours, theirs):
        np.testing.assert_allclose(r["probabilities"], p, atol=1e-5)
    # after the last block the lens is the model's own output
    np.testing.assert_allclose(ours[-1]["probabilities"], probabilities(trace["logits"][-1]), atol=1e-12)


def test_a_position_beyond_the_prompt_is_a_model_error(gpt):
    with pytest.raises(ModelError, match="no position 40"):
        logit_lens(gpt, gpt.trace("a silky orange"), 40)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_its_manifest_matches_the_lens_and_the_configs(lecture, gpt, lang):
    m = manifest_of(lecture.clips("architecture")[lang])
    v = m["values"]
    trace = gpt.trace(v["prompt"])
    assert v["token_ids"] == [int(i) for i in trace["token_ids"]] and v["focus"] == len(v["token_ids"]) - 1
    lens = logit_lens(gpt, trace, v["focus"])
    answer = int(np.argmax(trace["logits"][v["focus"]]))
    assert v["lens"]["answer_id"] == answer
    for shown, r in zip(v["lens"]["points"], lens):
        assert (shown["part"], shown["layer"]) == (r["part"], r["layer"])
        assert shown["top_id"] == int(np.argmax(r["probabilities"]))
        assert shown["p_answer"] == pytest.approx(float(r["probabilities"][answer]), abs=1e-12)
    tops = [p["top_id"] for p in v["lens"]["points"]]
    settled = min(i for i in range(len(tops)) if all(t == answer for t in tops[i:]))
    rule = v["caption_rules"]["lens"]
    assert rule["inputs"]["settled_index"] == settled
    assert rule["key"] == ("lens_embedding" if settled == 0 else "lens_forms")
    # the unembedding at the focus: x̂ = ln_f(the last block's stream), written out here; W_U = W_Eᵀ (tied), drawn
    # turned (one row per word); the logits shown are W_E x̂, the largest is the argmax of all of them
    u = v["unembedding"]
    stream = np.asarray(trace["layers"][-1]["resid_post"][v["focus"]], np.float64)
    centred = stream - stream.mean()
    x_hat = centred / np.sqrt((centred ** 2).mean() + gpt.config.layer_norm_epsilon) * gpt.p("ln_f.weight") \
        + gpt.p("ln_f.bias")
    assert u["position"] == v["focus"]
    np.testing.assert_allclose(u["x_hat"]["values"], x_hat, atol=1e-9)
    W = u["W_U_T"]
    assert W["shape"] == [gpt.config.vocab_size, gpt.config.n_embd]
    np.testing.assert_allclose(W["values"], gpt.W_E[np.ix_(W["rows"], W["cols"])], atol=1e-12)
    assert W["scale"] == pytest.approx(np.abs(gpt.W_E).max(), abs=1e-12)
    assert u["row_words"] == [gpt.tokenizer.words[i] for i in W["rows"]]
    logits = gpt.W_E @ x_hat
    n = gpt.config.vocab_size
    assert u["logits"]["size"] == n and u["logits"]["indices"] == [0, 1, 2, 3, 4, n - 1]
    np.testing.assert_allclose(u["logits"]["values"], logits[u["logits"]["indices"]], atol=1e-9)
    assert u["largest"]["id"] == int(np.argmax(logits)) == answer
    assert u["largest"]["logit"] == pytest.approx(float(logits.max()), abs=1e-9)
    c = gpt.config
    assert v["layers_drawn"] == list(range(c.n_layer)) and v["lens"]["shown_points"] == list(range(1 + 2 * c.n_layer))
    assert v["shapes"]["ours"] == {"n_layer": c.n_layer, "n_embd": c.n_embd, "n_head": c.n_head, "n_inner": c.n_inner,
                                   "vocab_size": c.vocab_size, "n_positions": c.n_positions}
    assert v["shapes"]["gpt3"] == {"n_layer": 96, "n_embd": 12288, "n_head": 96, "n_inner": 49152,
                                   "vocab_size": 50257, "n_positions": 2048}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_labels_are_the_manifests_numbers(lecture, gpt, lang):
    s = lecture.dry("architecture", lang)
    v = s.values
    # the row keeps the answer's last place before the focus in view (the lens asks for it)
    answer = v["lens"]["answer_id"]
    assert v["row"]["kept"] == [p for p in range(v["focus"]) if v["token_ids"][p] == answer][-1:]
    assert set(v["row"]["kept"]) <= set(v["row"]["positions"]) and v["focus"] in v["row"]["positions"]
    assert [c.word for c in s.row.chips] == [style.token_label(v["tokens"][p]) for p in v["row"]["positions"]]
    points = [v["lens"]["points"][i] for i in v["lens"]["shown_points"]]
    assert [n.text for n in s.lens.numbers] == [style.percent(p["p_answer"]) for p in points]
    assert [w.text for w in s.lens.labels] == [style.token_label(gpt.tokenizer.words[p["top_id"]]) for p in points]
    u, mv = v["unembedding"], s.unembed
    assert texts_of(mv.output.entries) == [style.signed(x, 1) for x in u["logits"]["values"]]
    assert texts_of(mv.vector.entries) == [style.signed(u["x_hat"]["values"][i], 1) for i in u["x_hat"]["indices"]]
    cells = [c[1].text for c in mv.matrix.cells if len(c) > 1 and isinstance(c[1], NumberText)]
    assert cells == [style.signed(x, 1) for row in u["W_U_T"]["values"] for x in row]
    assert mv.matrix.shape_label.text == f"W_U\u1d40 = W_E: {gpt.config.vocab_size} \u00d7 {gpt.config.n_embd}"
    assert [w.text for w in s.unembed_words] == [style.token_label(w) for w in u["row_words"]]
    assert [s.top_label[1].text, s.top_label[2].text] == [style.token_label(u["largest"]["word"]),
                                                          style.signed(u["largest"]["logit"], 1)]
    ours, gpt3 = v["shapes"]["ours"], v["shapes"]["gpt3"]
    keys = ("n_layer", "n_embd", "n_head", "n_inner", "vocab_size", "n_positions")
    assert [n.text for n in s.ours_column] == [f"{ours[k]:,}" for k in keys]
    assert [n.text for n in s.gpt3_column] == [f"{gpt3[k]:,}" for k in keys]
    assert GPT3_175B.n_layer == gpt3["n_layer"]


def test_a_deep_model_draws_its_first_and_last_layers_and_counts_the_rest():
    assert layers_drawn(3) == [0, 1, 2] and layers_drawn(1) == [0]
    assert layers_drawn(12) == [0, None, 11] and layers_drawn(4) == [0, None, 3]
    rows = pipeline_rows(12)
    assert [r["kind"] for r in rows] == ["embedding", "attention", "mlp", "gap", "attention", "mlp"]
    gap = rows[3]
    assert gap["layers"] == list(range(1, 11)) and gap["points"] == list(range(3, 23))
    assert [p for r in rows for p in r["points"]] == list(range(1 + 2 * 12)), "every lens point, once, in order"


def test_a_focus_beyond_the_prompt_is_one_line_and_exit_2():
    from conftest import run_render
    r = run_render("architecture", "--set", "prompt=a silky orange", "--set", "focus=9", "--dry-run")
    assert r.returncode == 2 and "focus" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_term_is_glossed_in_plain_words_where_it_first_comes(lecture, lang):
    """The pipeline beat says what an embedding, an MLP (多层感知机), a head and softmax are; the stream beat what the
    residual stream and a LayerNorm do; the shapes said are the config's (the MLP's width, the heads)."""
    s = lecture.dry("architecture", lang)
    c = s.gpt.config
    said = {k["key"]: k for k in s.captions}
    order = [k["key"] for k in s.captions if k["key"] != "title_note"]
    assert order[:5] == ["pipeline", "heads_gloss", "pipeline_out", "stream", "stream_norm"]
    pipe = said["pipeline"]["text"] + said["pipeline"]["say"]
    assert re.search({"en": r"vector.*embedding", "zh": r"向量.*嵌入"}[lang], pipe)
    assert re.search({"en": r"multilayer perceptron", "zh": r"多层感知机"}[lang], pipe)
    assert str(c.mlp_ratio * c.n_embd) in said["pipeline"]["say"] and str(c.n_embd) in said["pipeline"]["text"]
    assert str(c.n_head) in said["heads_gloss"]["text"]
    assert re.search({"en": r"mean 0 and variance 1", "zh": r"均值 0、方差 1"}[lang], said["stream_norm"]["text"])
    assert re.search({"en": r"adds its output", "zh": r"加回"}[lang], said["stream"]["text"])
    assert not any(re.search(r"\btokens?\b|词元", k["text"]) for k in s.captions), "token is glossed later"


# --- a key frame against committed control data (tests/control_data/architecture) ---------------------------
@pytest.fixture
def lens_beat(monkeypatch):
    stop_at_beat(monkeypatch, "lens", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=Architecture)
@pytest.mark.usefixtures("lens_beat")
def test_frame_lens(scene):
    play_until_section_ends(scene, Architecture.construct)
