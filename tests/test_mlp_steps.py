"""The MLP-steps scene: the prompt, layer and neurons chosen by their rules, every number against the model
(recomputed here from the MLP's weights), the labels as the rounding of those numbers, the read-out through the
unembedding, a bad layer as one clear line, and a stable key frame (the checks every scene shares:
test_scenes.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sum_checks import assert_sums_as_shown
from manim.utils.testing.frames_comparison import frames_comparison

from model import language
from model.analysis import neuron_top_contexts
from model.numpy_gpt import gelu
from scene_checks import manifest_of, play_until_section_ends, stop_at_beat
from scenes import style
from scenes.catalog import MLP_STEPS
from scenes.components import NumberText, inside_safe_area
from scenes.mlp_steps import K_NEURONS, ALL_ROWS, S, MlpAtFocus, MlpSteps
from scenes.params import ParamError
from scenes.prompts import fact_prompt

__module_test__ = "mlp_steps"
REPO = Path(__file__).resolve().parents[1]


def texts(group) -> list[str]:
    return [m.text for m in group if isinstance(m, NumberText)]


def shown(values, column) -> list[str]:
    return [style.signed(float(values[i]), 1) for i in column.indices_shown if i is not None]


def layer_norm(x, g, b, eps):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * g + b


def recompute(gpt, prompt: str, layer: int, focus: int) -> dict:
    """The MLP at the focus, written out again from its weights (independently of the trace's MLP)."""
    c = gpt.config
    tr = gpt.trace(prompt)
    E1 = np.asarray(tr["layers"][layer]["resid_mid"], np.float64)
    x = layer_norm(E1, gpt.p(f"h.{layer}.ln_2.weight"), gpt.p(f"h.{layer}.ln_2.bias"), c.layer_norm_epsilon)[focus]
    W_in, b_in = gpt.p(f"h.{layer}.mlp.c_fc.weight"), gpt.p(f"h.{layer}.mlp.c_fc.bias")
    W_out, b_out = gpt.p(f"h.{layer}.mlp.c_proj.weight"), gpt.p(f"h.{layer}.mlp.c_proj.bias")
    pre = x @ W_in + b_in
    act = 0.5 * pre * (1 + np.tanh(np.sqrt(2 / np.pi) * (pre + 0.044715 * pre ** 3)))
    out = act @ W_out + b_out
    return {"x": x, "W_in": W_in, "b_in": b_in, "pre": pre, "act": act, "W_out": W_out, "out": out,
            "E1": E1[focus], "post": E1[focus] + out}


# --- the choices and the numbers, without rendering ---------------------------------------------------------
def test_default_prompt_is_the_first_person_cut_after_the_last_name(gpt):
    for lang in ("en", "zh"):
        chosen = fact_prompt(lang)
        first, last = chosen["person"]
        assert chosen["tokens"][-2:] == [first, last]
        g = language.Language().grammar(lang)
        assert (first, last) in g.person
    m = MlpAtFocus(gpt, MLP_STEPS.defaults())
    assert m.prompt == fact_prompt("en")["prompt"] and m.focus == len(m.tokens) - 1
    norms = [np.linalg.norm(gpt.trace(m.prompt)["layers"][l]["mlp"]["out"][m.focus]) for l in range(gpt.config.n_layer)]
    assert m.layer == int(np.argmax(norms))


@pytest.mark.parametrize("params", [{}, {"layer": 0}, {"prompt": "michael jordan plays", "focus": 1, "layer": 2},
                                    {"lang": "zh"}])
def test_every_number_is_the_models(gpt, params):
    m = MlpAtFocus(gpt, {**MLP_STEPS.defaults(), **params})
    ref = recompute(gpt, m.prompt, m.layer, m.focus)
    st = m.steps
    np.testing.assert_allclose(st["x"], ref["x"], atol=1e-9)
    np.testing.assert_allclose(st["pre"], ref["pre"], atol=1e-9)
    np.testing.assert_allclose(st["act"], ref["act"], atol=1e-9)
    np.testing.assert_allclose(st["dots"], ref["x"] @ ref["W_in"], atol=1e-9)
    np.testing.assert_allclose(m.W_in_cols, ref["W_in"][:, m.top].T, atol=0)
    # the top neurons are the largest activations
    assert m.top == list(np.argsort(-ref["act"], kind="stable")[:K_NEURONS])
    # the active count, with its threshold
    assert m.n_active == int((ref["act"] > m.threshold).sum())
    # the writes add up (with b_out) to the trace's MLP output, and that to the model's own
    np.testing.assert_allclose(st["writes"], ref["act"][:, None] * ref["W_out"], atol=1e-9)
    np.testing.assert_allclose(st["out"], ref["out"], atol=1e-9)
    np.testing.assert_allclose(m.mlp_out, ref["out"], atol=1e-9)
    np.testing.assert_allclose(m.resid_post, ref["post"], atol=1e-9)
    # the GELU curve is the model's
    np.testing.assert_allclose(m.curve_y, gelu(m.curve_x), atol=0)
    # the read-out: the top neuron's row through ln_f (frozen at the real run's scale) and the unembedding
    tr = gpt.trace(m.prompt)
    scale = np.sqrt(tr["ln_f"]["var"][m.focus] + gpt.config.layer_norm_epsilon)
    row = ref["W_out"][m.top[0]]
    per_word = ((row - row.mean()) / scale * gpt.p("ln_f.weight")) @ gpt.W_E.T
    ids = m.words_of_lang
    best = sorted(ids, key=lambda i: -per_word[i])[:len(m.readout["top"])]
    assert [t["id"] for t in m.readout["top"]] == best
    for t in m.readout["top"]:
        assert t["logit_per_unit"] == pytest.approx(per_word[t["id"]], abs=1e-9)
    assert all(gpt.tokenizer.words[i] in language.vocabulary_of(m.prompt_lang) for i in ids)
    assert m.prompt_lang == ("zh" if params.get("lang") == "zh" else "en")   # the prompt's own language


def test_contexts_are_the_neurons_highest_and_distinct(gpt):
    from scenes.mlp_steps import _sample
    sample = _sample(gpt, "en")
    m = MlpAtFocus(gpt, MLP_STEPS.defaults(), sample=sample)
    acts = sample["mlp_act"][m.layer][..., m.top[0]]
    assert m.contexts[0]["activation"] == pytest.approx(float(acts.max()))
    assert len({tuple(c["context"]) for c in m.contexts}) == len(m.contexts)
    ranked = neuron_top_contexts(gpt, sample, m.layer, m.top[0], k=len(m.contexts))
    assert [c["activation"] for c in m.contexts][:1] == [ranked[0]["activation"]]
    assert all(a["activation"] >= b["activation"] for a, b in zip(m.contexts, m.contexts[1:]))


def test_every_token_view_is_the_sample_text_where_the_neuron_fires_most(gpt):
    """The every-token view's rule, decided again: of the sample's positions with ALL_ROWS tokens up to them, the
    one where the top neuron fires most; its rows are that stream's last ALL_ROWS tokens, their activations the
    model's on the whole stream (traced again here)."""
    from scenes.mlp_steps import _sample
    sample = _sample(gpt, "en")
    m = MlpAtFocus(gpt, MLP_STEPS.defaults(), sample=sample)
    acts = sample["mlp_act"][m.layer][..., m.top[0]]
    best = max(((s, t) for s in range(acts.shape[0]) for t in range(ALL_ROWS - 1, acts.shape[1])),
               key=lambda st: (acts[st], -st[0], -st[1]))
    assert (m.all_source["stream"], m.all_source["position"]) == best
    stream, pos = best
    words = sample["streams"][stream]
    assert m.all_tokens == words[pos - ALL_ROWS + 1:pos + 1] and len(m.all_tokens) == ALL_ROWS
    assert m.all_source["stream_tokens"] == len(words)
    tr = gpt.trace([gpt.tokenizer.words.index(w) for w in words])
    np.testing.assert_allclose(m.all_act, tr["layers"][m.layer]["mlp"]["act"][pos - ALL_ROWS + 1:pos + 1], atol=1e-9)
    assert m.all_active == [int((a > m.threshold).sum()) for a in m.all_act]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_whole_outputs_readout_and_the_lengths_are_the_models(gpt, lang):
    m = MlpAtFocus(gpt, {**MLP_STEPS.defaults(), "lang": lang}, light=True)
    tr = gpt.trace(m.prompt)
    ref = recompute(gpt, m.prompt, m.layer, m.focus)
    scale = np.sqrt(tr["ln_f"]["var"][m.focus] + gpt.config.layer_norm_epsilon)
    out = ref["out"]
    per_word = ((out - out.mean()) / scale * gpt.p("ln_f.weight")) @ gpt.W_E.T
    best = sorted(m.words_of_lang, key=lambda i: (-per_word[i], i))[:len(m.sum_readout["top"])]
    assert [t["id"] for t in m.sum_readout["top"]] == best
    for t in m.sum_readout["top"]:
        assert t["logit"] == pytest.approx(per_word[t["id"]], abs=1e-9)
    # the readout's rule: the neuron's word, else the whole output's, among the model's top guesses
    key = m.readout_key()
    assert (key == "readout_agrees") == (m.readout["top"][0]["word"] in m.next_top)
    if key != "readout_agrees":
        assert (key == "readout_sum") == (m.sum_readout["top"][0]["word"] in m.next_top)
    full = MlpAtFocus(gpt, {**MLP_STEPS.defaults(), "lang": lang})
    assert full.lengths["resid_mid"] == pytest.approx(float(np.linalg.norm(ref["E1"])), abs=1e-9)
    assert full.lengths["mlp_out"] == pytest.approx(float(np.linalg.norm(ref["out"])), abs=1e-9)
    assert full.lengths["resid_post"] == pytest.approx(float(np.linalg.norm(ref["post"])), abs=1e-9)


def test_bad_parameters_are_clear_errors(gpt):
    with pytest.raises(ParamError, match="layers"):
        MLP_STEPS.resolve({"layer": gpt.config.n_layer}, model=gpt)
    with pytest.raises(ParamError, match="focus: the prompt has 3 tokens"):
        MLP_STEPS.resolve({"prompt": "michael jordan plays", "focus": 5}, model=gpt)


def test_a_layer_out_of_range_is_one_line_and_exit_2(gpt):
    result = subprocess.run([sys.executable, str(REPO / "render.py"), "mlp_steps", "--set",
                             f"layer={gpt.config.n_layer}", "--quality", "preview", "--format", "png"],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "layer" in lines[0] and "Traceback" not in result.stderr, result.stderr


# --- the scene as played: labels are the rounding of the manifest's numbers ----------------------------------
@pytest.fixture(scope="module")
def played(lecture):
    return {lang: lecture.dry("mlp_steps", lang) for lang in ("en", "zh")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_labels_are_the_rounded_numbers(played, lang):
    s = played[lang]
    v = s.values
    p = s.up_product
    top = [n["neuron"] for n in v["neurons"]]
    assert texts(p.vector.entries) == shown(v["x"], p.vector)
    assert texts(p.output.entries) == shown(np.asarray(v["pre_activations"])[top], p.output)
    assert texts(p.bias.entries) == shown(np.asarray(v["b_in"])[top], p.bias)
    assert [n.text for n in s.neuron_ids] == [f"#{i}" for i in top]
    assert texts(s.ctx_numbers) == [f"{c['activation']:.2f}" for c in v["contexts"]["top"]]
    assert f"{v['active_count']}" in s.active_label.text and f"{v['threshold']:g}" in s.active_label.text
    assert f"{v['gpt3']['d_model']:,}" in s.shapes.text and f"{v['gpt3']['d_mlp']:,}" in s.shapes.text
    for col, n in zip(s.write_columns, v["neurons"]):
        assert texts(col.entries) == shown(n["write"], col)
    assert texts(s.out_column.entries) == shown(v["mlp_out"], s.out_column)
    assert texts(s.read_numbers) == [style.signed(t["logit_per_unit"], 2) for t in v["readout"]["top"]]
    assert texts(s.sum_numbers) == [style.signed(t["logit"], 1) for t in v["sum_readout"]["top"]]
    # the down-projection's headers say the column is already the product (activation × row), no "× a" to apply
    for head, n in zip(s.write_headers, v["neurons"]):
        assert head[1].text == S("times_row", lang, a=f"{n['act']:.2f}") and not head[1].text.startswith("\u00d7")
    # the lengths under the residual's columns, as the manifest records them, and as the caption says them
    assert [label.text for label in s.res_lengths] == [S("length", lang, v=f"{v['lengths'][k]:.1f}")
                                                       for k in ("resid_mid", "mlp_out", "resid_post")]
    said = {c["key"]: c for c in s.captions}
    residual = said[v["caption_rules"]["residual"]["key"]]
    assert f"{v['lengths']['mlp_out']:.1f}" in residual["text"] and f"{v['lengths']['resid_mid']:.1f}" in residual["text"]
    # the neuron's top contexts: their last words, said as words
    assert v["context_words"] == list(dict.fromkeys(c["token"] for c in v["contexts"]["top"]))[:3]
    ctx = said[v["caption_rules"]["contexts"]["key"]]          # the neuron named by its rule, or plainly not
    for w in v["context_words"]:
        assert style.token_label(w) in ctx["text"] and style.token_label(w) in ctx["say"]
    # every-token view: the drawn rows end at the sample position where the neuron fires most, said as that token's
    # number in a text of its own length (issue 43: not "a text that ends" there)
    at = v["all_tokens"]["position"] + 1
    assert str(at) in said["all_tokens"]["say"] and str(v["all_tokens"]["stream_tokens"]) in said["all_tokens"]["say"]
    # the question comes first: the title card asks how the model knows a person's sport
    assert s.title_note() == S("title_note", lang)
    # up- and down-projection named where they happen, on screen and by the voice
    term = {"en": ("up-projection", "down-projection"), "zh": ("升维", "降维")}[lang]
    assert term[0] in said["up"]["say"].lower() and term[0] in s.shapes.text.lower()
    assert term[1] in said["down"]["say"].lower() and term[1] in said["down"]["text"].lower()
    (added,) = v["sums"]                     # E′ + MLP = E″: the columns as drawn, row by row
    rows = [i for i in s.res_columns[0].indices_shown if i is not None]
    for col, key, term in zip(s.res_columns, ("resid_mid", "mlp_out", "resid_post"), added["terms"] + [added["total"]]):
        np.testing.assert_array_equal(term["values"], np.asarray(v[key])[rows])
        assert texts(col.entries) == term["labels"]
    assert texts(s.res_columns[2].entries) == shown(v["resid_post"], s.res_columns[2])    # the total: plain rounding
    assert assert_sums_as_shown(v, "mlp_steps") == 1
    assert texts(s.all_counts) == [str(n) for n in v["active_per_token"]]
    assert len(s.all_strips) == len(v["all_tokens"]["tokens"]) == ALL_ROWS     # a text long enough to see it
    # the GELU points sit at the token's real (pre-activation, activation) pairs
    g = s.gelu
    for d, x, y in zip(g.dots, v["pre_activations"], v["activations"]):
        np.testing.assert_allclose(g.axes.p2c(d.get_center())[:2], [x, y], atol=1e-6)
    assert len(g.dots) == v["d_mlp"] and int(g.active.sum()) == v["active_count"]


# --- rendering through render.py, and the manifest as proof ------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_its_manifest_matches_the_trace(lecture, gpt, lang):
    m = manifest_of(lecture.clips("mlp_steps")[lang])
    v = m["values"]
    assert (m["params"]["layer"], m["params"]["focus"]) == (v["layer"], v["focus"])
    tr = gpt.trace(v["prompt"])
    assert v["tokens"] == list(tr["tokens"]) and v["token_ids"] == list(tr["token_ids"])
    ref = recompute(gpt, v["prompt"], v["layer"], v["focus"])
    np.testing.assert_allclose(v["pre_activations"], ref["pre"], atol=1e-9)   # every neuron, not only those drawn
    np.testing.assert_allclose(v["activations"], ref["act"], atol=1e-9)
    np.testing.assert_allclose(v["writes_sum_plus_bias"], tr["layers"][v["layer"]]["mlp"]["out"][v["focus"]],
                               atol=1e-9)
    np.testing.assert_allclose(v["mlp_out"], ref["out"], atol=1e-9)
    assert v["active_count"] == int((ref["act"] > v["threshold"]).sum())
    for n in v["neurons"]:
        i = n["neuron"]
        assert n["dot"] == pytest.approx(float(ref["x"] @ ref["W_in"][:, i]), abs=1e-9)
        assert n["pre"] == pytest.approx(n["dot"] + n["bias"], abs=1e-9)
        assert n["act"] == pytest.approx(float(ref["act"][i]), abs=1e-9)
    assert v["gpt3"] == {"d_model": 12288, "d_mlp": 49152}
    assert v["lengths"]["mlp_out"] == pytest.approx(float(np.linalg.norm(ref["out"])), abs=1e-9)
    assert v["lengths"]["resid_mid"] == pytest.approx(float(np.linalg.norm(ref["E1"])), abs=1e-9)
    rows = v["all_tokens"]                              # the every-token rows: a text of ALL_ROWS from the sample
    assert len(rows["tokens"]) == len(v["all_activations"]) == ALL_ROWS
    assert rows["positions"] == list(range(rows["first"], rows["position"] + 1))
    assert v["active_per_token"] == [int((np.asarray(a) > v["threshold"]).sum()) for a in v["all_activations"]]


# --- a key frame against committed control data (tests/control_data/mlp_steps) ------------------------------
@pytest.fixture
def gelu_beat(monkeypatch):
    stop_at_beat(monkeypatch, "gelu", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=MlpSteps)
@pytest.mark.usefixtures("gelu_beat")
def test_frame_gelu(scene):
    play_until_section_ends(scene, MlpSteps.construct)


def test_components_stay_inside_the_frame(played):
    s = played["en"]
    for m in (s.up_product, s.gelu, s.write_columns, s.out_column, s.res_columns, s.all_strips, s.all_tokens):
        assert inside_safe_area(m), type(m).__name__


# --- why an MLP, and why GELU: the lab's no_mlp and linear_mlp runs (issue 45) ------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_why_beat_is_the_labs_record(played, lang):
    from scenes.components.why import count_text, loss_text
    from why_checks import assert_why_beat
    sc = played[lang]
    v = sc.values["why"]
    linear = v["others"][0]
    assert (v["variant"], v["metric"], linear["variant"]) == ("no_mlp", "held_out_loss", "linear_mlp")
    assert [f["metric"] for f in v["facts"]] == ["facts_known_en", "facts_known_zh"]
    facts = {f["metric"][-2:]: f for f in v["facts"]}[lang]
    linear_facts = {f["metric"][-2:]: f for f in linear["facts"]}[lang]
    assert v["facts_total"] == 40
    assert_why_beat(sc, [[loss_text(v["with"]), count_text(facts["with"])],
                         [loss_text(linear["without"]), count_text(linear_facts["without"])],
                         [loss_text(v["without"]), count_text(facts["without"])]],
                    [sc.s("why_full"), sc.s("why_linear"), sc.s("why_none")])
    said = [c for c in sc.captions if c["beat"] == "lab"]
    assert [c["key"] for c in said] == ["why_question", sc.values["caption_rules"]["lab"]["key"]]
    assert loss_text(v["without"]) in said[1]["text"] and loss_text(linear["without"]) in said[1]["text"]
    assert [w["metric"] for w in v["per_language"]] == ["val_loss_en", "val_loss_zh"]
    # the loss axis from the data (issue 43): from the lowest loss rounded down to 0.1 to the highest final loss
    # rounded up to 0.1, plus 0.4, its range in its title; the final losses with and without the MLP stand apart
    chart = sc.why_chart
    curves = [v, linear]
    lo = np.floor(10 * min(min(c["curve_with"] + c["curve_without"]) for c in curves)) / 10
    hi = np.ceil(10 * max(max(c["with"], c["without"]) for c in curves)) / 10 + 0.4
    assert (chart.y_min, chart.y_max) == pytest.approx((lo, hi)) and v["shown"][lang]["y_min"] == pytest.approx(lo)
    assert f"{lo:.1f}" in chart.axes[2].text and f"{hi:.1f}" in chart.axes[2].text
    assert chart.c2p(0, v["without"])[1] - chart.c2p(0, v["with"])[1] > 0.25     # scene units: visibly apart
