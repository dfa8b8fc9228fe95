"""The values-and-ΔE scene: the head chosen by computation, every number against the model (recomputed here from
the head's weights where it is cheap), the labels as the rounding of those numbers, the measured ablation, and a
stable key frame (the checks every scene shares: test_scenes.py)."""

from __future__ import annotations


import numpy as np
import pytest

from sum_checks import assert_sums_as_shown
from manim.utils.testing.frames_comparison import frames_comparison

from model import probabilities
from model.analysis import best_lookback_head
from scene_checks import manifest_of, play_until_section_ends, stop_at_beat
from scenes import style
from scenes.catalog import VALUES_UPDATE
from scenes.components import NumberText, inside_safe_area
from scenes.params import ParamError
from scenes.prompts import lookback_prompt
from scenes.values_update import ValuesUpdate
from scenes.values_update.numbers import MAX_KEYS, HeadAtFocus

__module_test__ = "values_update"


def texts(group) -> list[str]:
    return [m.text for m in group if isinstance(m, NumberText)]


def shown(values, column) -> list[str]:
    """The labels a VectorColumn should show: its real entries at the shown indices, rounded for display."""
    return [style.signed(float(values[i]), 1) for i in column.indices_shown if i is not None]


def layer_norm(x, g, b, eps):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * g + b


def recompute(gpt, prompt: str, layer: int, head: int, focus: int) -> dict:
    """The head at the focus, written out again from its weights (independently of the trace)."""
    c = gpt.config
    tr = gpt.trace(prompt)
    x = np.asarray(tr["layers"][layer]["resid_pre"], dtype=np.float64)
    x_hat = layer_norm(x, gpt.p(f"h.{layer}.ln_1.weight"), gpt.p(f"h.{layer}.ln_1.bias"), c.layer_norm_epsilon)
    hw = gpt.head(layer, head)
    Q, K, V = x_hat @ hw.W_Q + hw.b_Q, x_hat @ hw.W_K + hw.b_K, x_hat @ hw.W_V + hw.b_V
    s = Q[focus] @ K[: focus + 1].T / np.sqrt(c.d_head)
    w = np.exp(s - s.max())
    w /= w.sum()
    out = w @ V[: focus + 1]
    delta = out @ hw.W_O
    return {"x_hat": x_hat, "W_v": hw.W_V, "b_v": hw.b_V, "V": V[: focus + 1], "weights": w,
            "weighted": w[:, None] * V[: focus + 1], "head_out": out, "W_O_rows": hw.W_O, "delta": delta,
            "E": x[focus], "E_new": x[focus] + delta}


# --- the choice and the numbers, without rendering ----------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_default_head_is_the_one_that_carries_the_adjective(gpt, lang):
    h = HeadAtFocus(gpt, {**VALUES_UPDATE.defaults(), "lang": lang})
    chosen = lookback_prompt(lang)
    assert (h.prompt, h.focus) == (chosen["prompt"], chosen["focus_index"])
    from attention_checks import causal_head_scores
    brute = causal_head_scores(gpt, lang)
    assert [h.layer, h.head] == brute["best"]
    assert h.choice["score"] == pytest.approx(brute["scores"].max(), abs=1e-9) and h.choice["score"] > 0.5
    weight = best_lookback_head(gpt.trace(h.prompt), h.focus, [chosen["adjective_index"]])["all_scores"]
    assert h.choice["weight"] == pytest.approx(weight[h.layer, h.head], abs=1e-12) and h.choice["weight"] > 0.5
    assert h.source == chosen["adjective_index"], "the chosen head's focus looks at the adjective most"
    assert h.next_word == chosen["adjective"], "the model's next word is the adjective the focus recalls"


@pytest.mark.parametrize("params", [
    {},
    {"focus": 3},                                                              # the noun and its adjectives
    {"prompt": "a fluffy blue fox roamed the misty forest . the fox was", "layer": 0, "head": 2, "focus": 10},
    {"prompt": "michael jordan plays"},
])
def test_every_number_is_the_models(gpt, params):
    h = HeadAtFocus(gpt, {**VALUES_UPDATE.defaults(), **params})
    ref = recompute(gpt, h.prompt, h.layer, h.head, h.focus)
    tr = gpt.trace(h.prompt)
    attn = tr["layers"][h.layer]["attn"]
    np.testing.assert_allclose(h.normalised, ref["x_hat"], atol=1e-9)
    for name in ("W_v", "b_v", "W_O_rows"):
        np.testing.assert_array_equal(getattr(h, name), ref[name])
    np.testing.assert_allclose(h.v, ref["V"], atol=1e-9)
    np.testing.assert_allclose(h.weights, ref["weights"], atol=1e-9)
    np.testing.assert_allclose(h.weighted, ref["weighted"], atol=1e-9)
    np.testing.assert_allclose(h.head_out, ref["head_out"], atol=1e-9)
    np.testing.assert_allclose(h.delta, ref["delta"], atol=1e-9)
    np.testing.assert_allclose(h.E, ref["E"], atol=0)
    np.testing.assert_allclose(h.E_new, ref["E_new"], atol=1e-9)
    np.testing.assert_array_equal(h.pattern, attn["weights"][h.head])
    assert h.source == int(np.argmax(attn["weights"][h.head, h.focus, : h.focus + 1]))
    assert abs(h.weights.sum() - 1) < 1e-12 and np.all(h.weights >= 0)
    word = gpt.tokenizer.words[int(np.argmax(probabilities(tr["logits"][h.focus])))]
    assert h.next_word == word


def key_value_by_hand(gpt, ids, focus: int, layer: int, head: int, lang: str) -> dict:
    """The key/value swap written out again: the answer word (the next word, an earlier word of a group) swapped for
    each other word of its group in this head's key alone, then its value alone, at that position; the head's output
    at the focus recomputed (softmax of q·k/√d_head over keys 0..focus, times the values) through its rows of W_O in
    place of its own; P(answer) averaged over the swaps."""
    from attention_checks import swap_test_by_hand
    ref = swap_test_by_hand(gpt, ids, focus, layer, lang)
    ids = list(ids)[: focus + 1]
    a, answer = ref["position"], gpt.tokenizer.vocab[ref["answer"]]
    from model import language as lg
    g = lg.Language().grammar(lang)
    group = next([g.t(w) for w in ws] for ws in (lg.COLOURS, lg.TEXTURES) if ref["answer"] in [g.t(w) for w in ws])
    tr = gpt.trace(ids)
    at = tr["layers"][layer]["attn"]
    hw = gpt.head(layer, head)
    q, K, V = at["q"][head][focus], np.array(at["k"][head][: focus + 1]), np.array(at["v"][head][: focus + 1])
    base = np.asarray(at["out"][focus]) - np.asarray(at["head_out"][head][focus]) @ hw.W_O
    out = {"key": [], "value": []}
    for w in group:
        if w == ref["answer"]:
            continue
        other = gpt.trace(ids[:a] + [gpt.tokenizer.vocab[w]] + ids[a + 1:])["layers"][layer]["attn"]
        for part in ("key", "value"):
            K2, V2 = K.copy(), V.copy()
            (K2 if part == "key" else V2)[a] = other["k" if part == "key" else "v"][head][a]
            sc = K2 @ q / np.sqrt(len(q))
            wt = np.exp(sc - sc.max())
            wt /= wt.sum()
            run = gpt.trace(ids, patch={(layer, "attn", focus): base + (wt @ V2) @ hw.W_O})
            out[part].append(probabilities(run["logits"][focus])[answer])
    return {"p_clean": float(probabilities(tr["logits"][focus])[answer]), "key": float(np.mean(out["key"])),
            "value": float(np.mean(out["value"]))}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_value_carries_which_colour(gpt, lang):
    """The one intervention (values_update's ablation beat), recomputed here: the colour swapped in the chosen head's
    key only, then its value only. English: the key alone leaves P("orange") at 99.9% (under a point: the key says
    "a colour"), the value alone takes it to 56.8%: kv_key_blind. Chinese: 66.1% against 39.2%: kv_value_more."""
    h = HeadAtFocus(gpt, {**VALUES_UPDATE.defaults(), "lang": lang})
    ref = key_value_by_hand(gpt, h.token_ids, h.focus, h.layer, h.head, lang)
    assert h.kv["p_clean"] == pytest.approx(ref["p_clean"], abs=1e-9)
    assert h.kv["key_only"]["p"] == pytest.approx(ref["key"], abs=1e-6)
    assert h.kv["value_only"]["p"] == pytest.approx(ref["value"], abs=1e-6)
    key_move, value_move = abs(ref["p_clean"] - ref["key"]), abs(ref["p_clean"] - ref["value"])
    expected = ("kv_key_blind" if 100 * key_move < 1 <= 100 * value_move else
                "kv_value_more" if value_move > key_move else "kv_key_more")
    assert h.effect() == expected == {"en": "kv_key_blind", "zh": "kv_value_more"}[lang]


def test_no_swap_no_key_value_test(gpt):
    h = HeadAtFocus(gpt, {**VALUES_UPDATE.defaults(), "prompt": "michael jordan plays"})
    assert h.kv is None and h.effect() == "kv_unmeasured"


def test_bad_focus_is_a_clear_error(gpt):
    with pytest.raises(ParamError, match="focus: the prompt has 3 tokens"):
        HeadAtFocus(gpt, {**VALUES_UPDATE.defaults(), "prompt": "michael jordan plays", "focus": 5})
    long = "a fluffy blue fox roamed the misty forest . the fox was blue . the fox"
    with pytest.raises(ParamError, match=f"at most {MAX_KEYS}"):
        HeadAtFocus(gpt, {**VALUES_UPDATE.defaults(), "prompt": long})
    with pytest.raises(ParamError, match="heads"):
        VALUES_UPDATE.resolve({"head": gpt.config.n_head}, model=gpt)


# --- the scene as played: labels are the rounding of the manifest's numbers ----------------------------------
@pytest.fixture(scope="module")
def played(lecture):
    return {lang: lecture.dry("values_update", lang) for lang in ("en", "zh")}


def test_labels_are_the_rounded_numbers(played):
    s = played["en"]
    v = s.values
    src = v["source"]["position"]
    product = v["value_product"]
    vp = s.value_product
    assert texts(vp.output.entries) == shown(product["V"], vp.output)
    assert texts(vp.vector.entries) == shown(product["normalised_E"], vp.vector)
    assert texts(vp.bias.entries) == shown(product["b_v"], vp.bias)
    W_vT = np.asarray(product["W_v"]).T
    cells = [c for c in vp.matrix.cells if len(c) == 2]
    expected = [style.signed(W_vT[i, j], 1) for i in vp.matrix.rows_shown if i is not None
                for j in vp.matrix.cols_shown if j is not None]
    assert [c[1].text for c in cells] == expected
    np.testing.assert_array_equal(product["V"], v["V"][src])
    weights_sum, update_sum = [m for m in v["sums"] if m["beat"] in ("weights", "update")]   # the weights' 100%,
    assert [m["beat"] for m in v["sums"]].count("question") == 2      # E + ΔE = E′, and the question's two columns
    assert assert_sums_as_shown(v, "values_update") == 4
    assert [t["values"] for t in weights_sum["terms"]] == [[w] for w in v["weights"]]
    assert texts(s.weight_numbers) == [t["labels"][0] for t in weights_sum["terms"]]     # weights as %, adding up
    assert texts(s.weight_numbers)[v["source"]["position"]] == style.percent(v["source"]["weight"])   # as quoted
    np.testing.assert_array_equal(s.grid.values, v["pattern"])   # the grid the weights are lifted from
    assert s.weight_total.text == weights_sum["total"]["labels"][0] == "100.0%"
    for product in (s.value_product, s.delta_product):       # every weight matrix has its legend, on its own scale
        assert product.legend.colour_scale is product.matrix.colour_scale and product.legend.colour_scale.kind == "signed"
    assert s.magnitudes.kind == "signed"                      # V and the head's output drawn signed, as Q and K
    assert texts(s.out_column.entries) == shown(v["head_out"], s.out_column)
    dp = s.delta_product
    assert texts(dp.vector.entries) == shown(v["head_out"], dp.vector)
    rows = [i for i in s.E_column.indices_shown if i is not None]
    for term, values in zip(update_sum["terms"] + [update_sum["total"]], (v["E"], v["delta_E"], v["E_new"])):
        np.testing.assert_array_equal(term["values"], [values[i] for i in rows])
    assert [texts(c.entries) for c in (s.E_column, s.delta_column, s.E_new_column)] == \
        [t["labels"] for t in update_sum["terms"]] + [update_sum["total"]["labels"]]
    assert texts(s.E_new_column.entries) == shown(v["E_new"], s.E_new_column)   # the total: its plain rounding
    kv = v["key_value"]
    assert texts(s.effect_bars.numbers) == [style.percent(p) for p in
                                            (kv["p_clean"], kv["key_only"]["p"], kv["value_only"]["p"])]
    assert s.pull_label.text.endswith(style.percent(v["source"]["weight"]))
    limit = v["magnitude_scale_limit"]
    ticks = texts(s.legend.ticks)                             # the signed ends (a "0" between, where it fits)
    assert ticks[0] == style.signed(-limit, 1) and ticks[-1] == style.signed(limit, 1) and ticks[1:-1] in ([], ["0"])
    assert limit == pytest.approx(max(np.abs(v["V"]).max(), np.abs(v["head_out"]).max()), abs=1e-12)
    # the strips are coloured by exactly these numbers, sign and size (blue +, red −)
    for strip, row in zip(s.v_strips, v["V"]):
        assert [c.get_fill_color().to_hex() for c in strip.cells] == [s.magnitudes.colour(x).to_hex() for x in row]
    for strip, row in zip(s.wv_strips, v["weighted_values"]):
        assert [c.get_fill_color().to_hex() for c in strip.cells] == [s.magnitudes.colour(x).to_hex() for x in row]
    assert any(x < 0 for x in np.ravel(v["V"])) and any(x > 0 for x in np.ravel(v["V"]))


# --- rendering through render.py, and the manifest as proof ------------------------------------------------
@pytest.fixture(scope="module")
def rendered(lecture):
    return lecture.clips("values_update")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_its_manifest_matches_the_trace(rendered, gpt, lang):
    m = manifest_of(rendered[lang])
    v = m["values"]
    assert (m["params"]["layer"], m["params"]["head"], m["params"]["focus"]) == (v["layer"], v["head"], v["focus"])
    ref = recompute(gpt, v["prompt"], v["layer"], v["head"], v["focus"])
    tr = gpt.trace(v["prompt"])
    assert v["tokens"] == list(tr["tokens"]) and v["token_ids"] == list(tr["token_ids"])
    src = v["source"]["position"]
    np.testing.assert_allclose(v["value_product"]["normalised_E"], ref["x_hat"][src], atol=1e-9)
    np.testing.assert_allclose(v["value_product"]["W_v"], ref["W_v"], atol=0)
    np.testing.assert_allclose(v["value_product"]["b_v"], ref["b_v"], atol=0)
    for key, name in (("V", "V"), ("weights", "weights"), ("weighted_values", "weighted"), ("head_out", "head_out"),
                      ("W_O_rows", "W_O_rows"), ("delta_E", "delta"), ("E", "E"), ("E_new", "E_new")):
        np.testing.assert_allclose(v[key], ref[name], atol=1e-9, err_msg=key)
    assert v["source"]["weight"] == pytest.approx(ref["weights"][src], abs=1e-9)
    f = v["focus"]
    np.testing.assert_allclose(v["pattern"], tr["layers"][v["layer"]]["attn"]["weights"][v["head"], : f + 1, : f + 1],
                               atol=1e-12)
    np.testing.assert_allclose(np.asarray(v["pattern"])[f], ref["weights"], atol=1e-9)
    assert v["choice"]["weight"] == pytest.approx(
        best_lookback_head(tr, v["focus"], v["choice"]["keys"])["all_scores"][v["layer"], v["head"]])
    ref = key_value_by_hand(gpt, v["token_ids"], v["focus"], v["layer"], v["head"], lang)
    kv = v["key_value"]
    assert (kv["p_clean"], kv["key_only"]["p"], kv["value_only"]["p"]) == \
        (pytest.approx(ref["p_clean"], abs=1e-9), pytest.approx(ref["key"], abs=1e-6), pytest.approx(ref["value"], abs=1e-6))


# --- a key frame against committed control data (tests/control_data/values_update) ------------------------
@pytest.fixture
def sum_beat(monkeypatch):
    stop_at_beat(monkeypatch, "sum", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=ValuesUpdate)
@pytest.mark.usefixtures("sum_beat")
def test_frame_weighted_sum(scene):
    play_until_section_ends(scene, ValuesUpdate.construct)


def test_components_stay_inside_the_frame(played):
    s = played["en"]
    for m in (s.token_column, s.grid.squares, s.out_column, s.value_product, s.delta_product, s.prompt_row):
        assert inside_safe_area(m), type(m).__name__


# --- the question (opening) and its answer (closing) ---------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_question_and_its_answer_are_the_lens_numbers(played, gpt, lang):
    """The opening question and the closing answer read the logit lens at the focus (attention_lens), written out
    here again: entering the head's layer, with this head's ΔE alone, after the layer's attention. In both languages
    the attention lifts P(word) from under 2% to over 90%, and this head's ΔE alone lifts it above 80%."""
    s = played[lang]
    v = s.values
    trace, eps = gpt.trace(v["token_ids"]), gpt.config.layer_norm_epsilon
    layer, f = trace["layers"][v["layer"]], v["focus"]
    delta = np.asarray(v["head_out"], np.float64) @ np.asarray(v["W_O_rows"], np.float64)
    w = gpt.tokenizer.words.index(v["lens"]["word"])
    assert v["lens"]["word"] == v["next_word"]
    for name, x in (("before", layer["resid_pre"][f]), ("head_only", layer["resid_pre"][f] + delta),
                    ("after", layer["resid_mid"][f])):
        z = layer_norm(np.asarray(x, np.float64)[None], gpt.p("ln_f.weight"), gpt.p("ln_f.bias"), eps)[0] @ gpt.W_E.T
        p = np.exp(z - z.max())
        p /= p.sum()
        assert v["lens"][name]["p_word"] == pytest.approx(float(p[w]), rel=1e-4, abs=1e-7)
        assert v["lens"][name]["other"] == pytest.approx(1 - sum(r["p"] for r in v["lens"][name]["shown"]), abs=1e-6)
    lens = v["lens"]
    assert lens["before"]["p_word"] < 0.02 and lens["after"]["p_word"] > 0.9 and lens["head_only"]["p_word"] > 0.8
    # the question: the two panels are the lens's rows and add up to 100% as drawn; the caption quotes them
    q = v["question"]["shown"]
    sums = [m for m in v["sums"] if m["beat"] == "question"]
    for name, m in zip(("before", "after"), sums):
        assert q[name]["p"] == [r["p"] for r in lens[name]["shown"]] and q[name]["other"] == lens[name]["other"]
        assert q[name]["labels"] == [t["labels"][0] for t in m["terms"]] and m["total"]["labels"] == ["100.0%"]
    rules = v["caption_rules"]
    assert rules["question"]["key"] == "question_raises" and rules["question_where"]["key"] == "question_where"
    said = [c for c in s.captions if c["key"] == "question_raises"][0]["text"]
    word_label = lambda name: q[name]["labels"][q[name]["words"].index(lens["word"])]  # noqa: E731
    assert word_label("before") in said and word_label("after") in said
    # the answer: the chain's weight, three bars of P(word)
    a = v["answer"]
    assert a["p"] == [lens["before"]["p_word"], lens["head_only"]["p_word"], lens["after"]["p_word"]]
    assert a["labels"] == [style.percent(p) for p in a["p"]]
    assert a["weight_label"] == style.percent(v["source"]["weight"]) == style.percent(a["weight"])
    assert rules["summary"]["key"] == "summary_lifts"
    lifts = [c for c in s.captions if c["key"] == "summary_lifts"][0]["text"]
    assert a["labels"][0] in lifts and a["labels"][1] in lifts
    together = [c for c in s.captions if c["key"] == "summary_layer"][0]["text"]
    assert a["labels"][2] in together


def test_the_opening_comes_first_and_the_closing_last(played):
    s = played["en"]
    keys = [c["key"] for c in s.captions]
    assert keys.index("question_where") < keys.index("values") and keys[-1] == "summary_layer"
