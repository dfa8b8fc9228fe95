"""The multi-head scene: every head's pattern, output, the concatenation and W_O against the model (recomputed
here from the heads' weights), the idle-head rule (the swap test, recomputed here) and the two heads' jobs, the
labels as the rounding of the manifest's numbers, and a stable key frame (the checks every scene shares:
test_scenes.py)."""

from __future__ import annotations


import numpy as np
import pytest
from manim.utils.testing.frames_comparison import frames_comparison

from attention_checks import swap_test_by_hand
from model.analysis import head_contribution
from scene_checks import manifest_of, play_until_section_ends, stop_at_beat
from scenes import style
from scenes.catalog import MULTI_HEAD
from scenes.components import NumberText
from scenes.multi_head import MultiHead
from scenes.multi_head.numbers import LayerHeads
from scenes.prompts import lookback_head
from test_values_update import layer_norm

__module_test__ = "multi_head"


def texts(group) -> list[str]:
    return [m.text for m in group if isinstance(m, NumberText)]


def recompute_layer(gpt, prompt: str, layer: int, focus: int) -> dict:
    """Every head of the layer at the focus, from the heads' weights: weights, outputs, concat, W_O projection."""
    c = gpt.config
    tr = gpt.trace(prompt)
    x = np.asarray(tr["layers"][layer]["resid_pre"], dtype=np.float64)
    x_hat = layer_norm(x, gpt.p(f"h.{layer}.ln_1.weight"), gpt.p(f"h.{layer}.ln_1.bias"), c.layer_norm_epsilon)
    dh, T = c.d_head, x.shape[0]
    patterns, outs = [], []
    for h in range(c.n_head):
        hw = gpt.head(layer, h)
        q, k, v = x_hat @ hw.W_Q + hw.b_Q, x_hat @ hw.W_K + hw.b_K, x_hat @ hw.W_V + hw.b_V
        s = q @ k.T / np.sqrt(dh)
        s[np.triu_indices(T, 1)] = -np.inf
        w = np.exp(s - s.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        patterns.append(w)
        outs.append(w[focus] @ v)
    concat = np.concatenate(outs)
    out = concat @ np.concatenate([gpt.head(layer, h).W_O for h in range(c.n_head)]) + gpt.attn_out_bias(layer)
    return {"patterns": np.array(patterns), "head_out": np.array(outs), "concat": concat, "out": out}


# --- the numbers, without rendering -------------------------------------------------------------------------
@pytest.mark.parametrize("params", [{}, {"layer": 0}, {"prompt": "michael jordan plays", "focus": 1}])
def test_every_number_is_the_models(gpt, params):
    m = LayerHeads(gpt, {**MULTI_HEAD.defaults(), **params})
    ref = recompute_layer(gpt, m.prompt, m.layer, m.focus)
    np.testing.assert_allclose(m.patterns, ref["patterns"], atol=1e-9)
    np.testing.assert_allclose(m.head_out, ref["head_out"], atol=1e-9)
    np.testing.assert_allclose(m.concat, ref["concat"], atol=1e-9)
    np.testing.assert_allclose(m.out, ref["out"], atol=1e-9)
    np.testing.assert_array_equal(m.concat, np.concatenate(m.head_out))   # concatenation is just side by side
    # the projection equals every head's ΔE added up, plus the bias (what the scene says)
    tr = gpt.trace(m.prompt)
    total = sum(head_contribution(gpt, tr, m.layer, h)[m.focus] for h in range(m.n_head)) + m.b_O
    np.testing.assert_allclose(m.out, total, atol=1e-9)
    for h in range(m.n_head):
        row = ref["patterns"][h, m.focus, : m.focus + 1]
        assert m.top_keys[h] == int(np.argmax(row)) and m.top_weights[h] == pytest.approx(row.max(), abs=1e-9)
    if "layer" in params:
        assert m.layer == params["layer"]
    else:
        assert m.layer == lookback_head(gpt, m.prompt if params.get("prompt") else "auto", m.focus)["layer"]


def test_heads_really_differ(gpt):
    m = LayerHeads(gpt, MULTI_HEAD.defaults())
    assert len(set(m.top_keys)) > 1, "at the focus, the heads look at different tokens"
    for a in range(m.n_head):
        for b in range(a + 1, m.n_head):
            assert np.abs(m.patterns[a] - m.patterns[b]).max() > 0.2


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_working_head_is_called_idle(gpt, lang):
    """The idle-head rule, recomputed here: a head is idle exactly where the swap test moves P(answer) by under one
    percentage point. English layer 3 head 1 (index 0) is the backup head: zeroing it moves P("orange") by under a
    point, yet the swap test moves it by far more, so it is not idle."""
    from model.analysis import ablation_effect
    m = LayerHeads(gpt, {**MULTI_HEAD.defaults(), "lang": lang})
    ref = swap_test_by_hand(gpt, m.token_ids, m.focus, m.layer, lang)
    assert ref is not None and m.swaps["answer"] == ref["answer"]
    np.testing.assert_allclose([m.swap["heads"][m.layer, h]["mean_abs_move"] for h in range(m.n_head)], ref["moves"],
                               atol=1e-6)
    assert m.idle == ref["idle"]
    if lang == "en":
        assert m.layer == 2 and not m.idle[0] and ref["moves"][0] > 10
        zero = ablation_effect(gpt, m.token_ids[: m.focus + 1], 2, 0, "orange")
        assert 100 * abs(zero["p_with_head"] - zero["p_without_head"]) < 1


def test_a_prompt_without_a_swap_test_calls_no_head_idle(gpt):
    """Where the next word is no earlier word of the prompt there is no swap test: no head is called idle."""
    m = LayerHeads(gpt, {**MULTI_HEAD.defaults(), "prompt": "michael jordan plays", "focus": 2})
    assert swap_test_by_hand(gpt, m.token_ids, m.focus, m.layer, "en") is None
    assert m.swaps is None and m.idle == [False] * m.n_head


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_two_heads_two_jobs(gpt, lang):
    """The jobs beat's heads, by JOBS_RULE: on the chapter's prompt and its twin ending in "felt", the head the swap
    test moves most (recomputed here), not idle; its count is the census's (the top key is the answer). The shipped
    model: a colour head and a texture head, different heads, in both languages."""
    from model.analysis.head_jobs import cached_census
    m = LayerHeads(gpt, {**MULTI_HEAD.defaults(), "lang": lang})
    census = cached_census(gpt, lang)
    for form, word in (("colour", {"en": "was", "zh": "是"}), ("texture", {"en": "felt", "zh": "摸起来"})):
        f = m.jobs["forms"][form]
        twin = m.token_ids[: m.focus] + [gpt.tokenizer.vocab[word[lang]]]
        ref = swap_test_by_hand(gpt, twin, m.focus, m.layer, lang)
        np.testing.assert_allclose(f["moves"], ref["moves"], atol=1e-6)
        assert f["head"] == int(np.argmax(ref["moves"])) and f["useful"] == (not ref["idle"][f["head"]])
        assert f["answer_top"] == [census["heads"][m.layer, h]["by_form"][form]["answer"] for h in range(m.n_head)]
        assert f["of"] == census["forms"][form]
    heads = {k: v["head"] for k, v in m.jobs["forms"].items()}
    assert heads["colour"] != heads["texture"] and all(v["useful"] for v in m.jobs["forms"].values())


# --- the scene as played ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def played(lecture):
    return {lang: lecture.dry("multi_head", lang) for lang in ("en", "zh")}


def test_labels_are_the_rounded_numbers(played):
    s = played["en"]
    v = s.values
    for h, label in enumerate(s.top_labels):
        word, weight = label
        assert word.text == f"\u2192 {v['tokens'][v['top_keys'][h]]}"
        assert weight.text == style.percent(v["top_weights"][h])
    p = s.product
    out = np.asarray(v["out"])
    assert texts(p.output.entries) == [style.signed(out[i], 1) for i in p.output.indices_shown if i is not None]
    assert texts(p.vector.entries) == [style.signed(v["concat"][i], 1) for i in p.vector.indices_shown
                                       if i is not None]
    assert texts(p.bias.entries) == [style.signed(v["b_O"][i], 1) for i in p.bias.indices_shown if i is not None]
    assert texts(s.legend.ticks) == ["0", f"{v['magnitude_scale_limit']:g}"]
    table, shown = s.jobs_parts["table"], v["jobs_shown"]
    for k, form in enumerate(("colour", "texture")):        # the jobs table: the census's counts, the swap moves
        f = v["jobs"]["forms"][form]
        assert [t.text for t in table.columns[2 * k]] == [f"{f['answer_top'][h]} of {f['of']}" for h in shown["heads"]]
        assert [t.text for t in table.columns[2 * k + 1]] == [f"{f['moves'][h]:.1f} points" for h in shown["heads"]]
        assert shown["counts"][form] == [[f["answer_top"][h], f["of"]] for h in shown["heads"]]
        assert [f"{x} points" for x in shown["moves"][form]] == [t.text for t in table.columns[2 * k + 1]]
    for g, pattern in zip(s.grids, v["patterns"]):
        np.testing.assert_array_equal(g.values, pattern)
    for h, part in enumerate(s.concat_parts):     # each head's part of the trace's concat: its 16 cells, in order
        assert part.indices_shown == list(range(v["d_head"])) and part.gap is None     # ours: every entry drawn
        expected = [s.legend.colour_scale.colour(abs(x)).to_hex() for x in v["concat"][h * v["d_head"]:][:v["d_head"]]]
        assert [c.get_fill_color().to_hex() for c in part.cells] == expected
        np.testing.assert_array_equal(v["concat"][h * v["d_head"]:][:v["d_head"]], v["head_out"][h])
    assert s.heads_named == list(range(v["n_head"])) and len(s.concat_ticks) == v["n_head"]
    assert s.concat_heads == v["concat_heads_shown"] == list(range(v["n_head"])) and s.concat_gap is None


def test_a_strip_too_narrow_for_every_entry_is_cut_honestly():
    """A checkpoint's 64 numbers per head under a narrow grid: the first entries, ⋯, the real last entry."""
    from scenes.components import ColourScale
    from scenes.components.vectors import MagnitudeStrip
    values = np.linspace(-1, 1, 64)
    scale = ColourScale.magnitude_for(values)
    whole = MagnitudeStrip(values[:16], scale, width=2.3)
    assert whole.indices_shown == list(range(16)) and whole.gap is None
    cut = MagnitudeStrip(values, scale, width=0.8)
    shown = [i for i in cut.indices_shown if i is not None]
    assert cut.indices_shown[-2:] == [None, 63] and shown == list(range(len(shown) - 1)) + [63]
    assert len(cut.cells) == len(shown) >= 3 and cut.gap is not None
    assert [c.get_fill_color().to_hex() for c in cut.cells] == [scale.colour(abs(values[i])).to_hex() for i in shown]
    assert cut.width <= 0.8 + 1e-9 and min(c.width for c in cut.cells) >= 0.9 * MagnitudeStrip.MIN_CELL - 1e-9


# --- rendering through render.py, and the manifest as proof --------------------------------------------------
@pytest.fixture(scope="module")
def rendered(lecture):
    return lecture.clips("multi_head")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_its_manifest_matches_the_trace(rendered, gpt, lang):
    m = manifest_of(rendered[lang])
    v = m["values"]
    assert (m["params"]["layer"], m["params"]["focus"]) == (v["layer"], v["focus"])
    ref = recompute_layer(gpt, v["prompt"], v["layer"], v["focus"])
    np.testing.assert_allclose(v["patterns"], ref["patterns"], atol=1e-9)
    for key in ("head_out", "concat", "out"):
        np.testing.assert_allclose(v[key], ref[key], atol=1e-9, err_msg=key)
    np.testing.assert_array_equal(v["W_O"], np.concatenate([gpt.head(v["layer"], h).W_O for h in range(v["n_head"])]))
    np.testing.assert_array_equal(v["b_O"], gpt.attn_out_bias(v["layer"]))
    for h, key in enumerate(v["top_keys"]):
        assert v["top_weights"][h] == pytest.approx(ref["patterns"][h, v["focus"], key], abs=1e-9)
    for layer, patterns in enumerate(v["every_layer_patterns"]):
        np.testing.assert_allclose(patterns, gpt.trace(v["prompt"])["layers"][layer]["attn"]["weights"], atol=1e-12)
    ref = swap_test_by_hand(gpt, v["token_ids"], v["focus"], v["layer"], lang)
    assert v["idle"] == ref["idle"]
    np.testing.assert_allclose([h["mean_abs_move"] for h in v["swap"]["heads"]], ref["moves"], atol=1e-6)


# --- a key frame against committed control data (tests/control_data/multi_head) ------------------------------
@pytest.fixture
def focus_beat(monkeypatch):
    stop_at_beat(monkeypatch, "focus", lang="zh")


@pytest.mark.slow
@frames_comparison(base_scene=MultiHead)
@pytest.mark.usefixtures("focus_beat")
def test_frame_heads_at_the_focus(scene):
    play_until_section_ends(scene, MultiHead.construct)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_focus_caption_is_chosen_by_the_top_keys(lecture, lang):
    """One token for every head, a different token for each, or some shared (the default in English: two heads
    of layer 1 both put their largest weight on "."): the caption says which, by its rule."""
    scene = lecture.dry("multi_head", lang)
    rule = scene.values["caption_rules"]["focus"]
    top = rule["inputs"]["top_keys"]
    assert top == [int(k) for k in scene.m.top_keys]
    distinct = len(set(top))
    assert rule["key"] == ("focus_same" if distinct == 1 else "focus" if distinct == len(top) else "focus_shared")
    said = [c for c in scene.captions if c["beat"] == "focus"]
    assert said and said[0]["key"] == rule["key"]


# --- each head's target, spoken; the idle rule; W_O split into per-head blocks ------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_heads_target_is_spoken_by_the_idle_rule(gpt, played, lang):
    """The focus beat's spoken line names every head's top word and weight (as the labels under the grids), and says
    that a head is idle exactly where the swap test moves P(answer) by under a point (recomputed here)."""
    from speech.spoken import announced
    from scenes.multi_head.beats import S as MS
    s = played[lang]
    v = s.values
    idle = swap_test_by_hand(gpt, v["token_ids"], v["focus"], v["layer"], lang)["idle"]
    assert v["idle"] == idle
    assert v["targets"]["keys"] == ["target_idle" if p else "target" for p in idle]
    said = [c for c in s.captions if c["beat"] == "focus"][0]["say"]
    for h in range(v["n_head"]):
        phrase = announced(MS.table[v["targets"]["keys"][h]][lang],
                           {"h": h + 1, "word": style.token_label(v["tokens"][v["top_keys"][h]]),
                            "w": style.percent(v["top_weights"][h]), "answer": style.token_label(v["swap"]["answer"])},
                           lang)
        assert phrase in said, (h, phrase, said)
    assert "park" not in said and "停靠" not in said
    if lang == "en":       # the shipped model, English: heads 2 and 4 idle; head 1, the backup head, is not
        assert idle == [False, True, False, True]


def test_the_split_adds_every_heads_delta_e_as_shown(gpt, played):
    """W_O split into per-head blocks: each column is the head's ΔE at the focus (its output through its own rows of
    W_O, gpt.head(layer, h).W_O), the columns and b_O add up to out row by row (≈ drawn where the labels miss), and the columns'
    texts are the manifest's labels."""
    from sum_checks import assert_sums_as_shown
    for lang, s in played.items():
        v = s.values
        deltas = np.array([np.asarray(v["head_out"][h]) @ gpt.head(v["layer"], h).W_O for h in range(v["n_head"])])
        np.testing.assert_allclose(v["head_deltas"], deltas, atol=1e-9)
        np.testing.assert_allclose(deltas.sum(0) + np.asarray(v["b_O"]), v["out"], atol=1e-5)
        (split,) = [x for x in v["sums"] if x["beat"] == "project"]
        columns, heads, _ = s.split
        drawn = [texts(c.entries) for c in columns]
        assert drawn == [t["labels"] for t in split["terms"]] + [split["total"]["labels"]]
        assert [h[0].text for h in heads[:-2]] == [f"head {h + 1}" if lang == "en" else f"头 {h + 1}"
                                                   for h in range(v["n_head"])]
        assert [h[-1].text for h in heads] == ["\u0394E"] * v["n_head"] + ["b_O", "out"]
        assert_sums_as_shown(v, f"multi_head {lang}", required=True)
        said = [c for c in s.captions if c["key"] == "split"][0]["say"]
        terms = [t["labels"][0] for t in split["terms"]]
        assert all(t in said for t in terms) and said.rstrip("。.").endswith(split["total"]["labels"][0])


# --- the opening question, the idle heads on screen, the closing answer ---------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_question_rows_are_each_heads_weights_and_its_caption_the_rule(played, lang):
    """The question beat: one row of cells per shown head under the prompt's words, each cell the head's weight from
    the focus (the attention colour scale), its top key's cell framed, "→ word w" the rounding; the caption by how many
    different words the heads look at most, decided again here from the patterns."""
    from scenes.components import ColourScale
    from scenes.multi_head.beats import question_rule
    s = played[lang]
    v, rows = s.values, s.rows
    f, first = v["focus"], v["question"]["first_word_shown"]
    patterns = np.asarray(v["patterns"])
    scale = ColourScale("attention")
    for i, h in enumerate(rows["heads"]):
        cells = rows["cells"][i]
        weights = patterns[h, f, first:f + 1]
        assert len(cells) == len(weights)
        assert [c.get_fill_color().to_hex() for c in cells] == [scale.colour(float(w)).to_hex() for w in weights]
        top = int(np.argmax(patterns[h, f, :f + 1]))
        assert rows["targets"][i].text == f"\u2192 {style.token_label(v['tokens'][top])} " \
                                          f"{style.percent(patterns[h, f, top])}"
        if top >= first:
            assert rows["frames"][i].get_center() == pytest.approx(cells[top - first].get_center())
    tops = [int(np.argmax(p[f, :f + 1])) for p in patterns]
    assert s.values["caption_rules"]["question"]["key"] == question_rule(tops)
    said = [c for c in s.captions if c["beat"] == "question"]
    assert said and said[0]["key"] == question_rule(tops)
    expected = "question_shared" if len(set(tops)) not in (1, len(tops)) else None
    if expected:      # the shipped model: English 3 words of 4 heads, Chinese 2
        assert said[0]["key"] == expected


def test_question_rule_covers_every_case():
    from scenes.multi_head.beats import question_rule
    assert question_rule([2, 2, 2]) == "question_same"
    assert question_rule([2, 9, 11]) == "question"
    assert question_rule([2, 9, 2, 11]) == "question_shared"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_idle_heads_are_marked_on_screen_by_the_rule(rendered, gpt, played, lang):
    """An idle head (the swap test, recomputed here) is dimmed and tagged in the focus beat, in the manifest of the
    rendered clip and in the scene as played; no other head is."""
    v = manifest_of(rendered[lang])["values"]
    idle = swap_test_by_hand(gpt, v["token_ids"], v["focus"], v["layer"], lang)["idle"]
    shown = v["idle_shown"]
    assert shown["idle"] == idle and shown["dimmed"] == [h for h, p in enumerate(idle) if p]
    assert set(shown["tagged"]) <= set(shown["dimmed"])
    s = played[lang]
    from scenes.multi_head.layout import IDLE_DIM
    for h, g in enumerate(s.grids):
        opacity = g.squares.get_fill_opacity()
        assert (opacity == pytest.approx(IDLE_DIM)) == idle[h], (h, opacity)
        assert (len(s.idle_tags[h].points) > 0 or len(s.idle_tags[h].submobjects) > 0) == (h in shown["tagged"])
    if lang == "en":
        assert shown["dimmed"] == [1, 3] and shown["tagged"] == [1, 3]
    else:
        assert shown["dimmed"] == [2, 3]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_summary_answers_with_each_heads_target_and_delta_e(gpt, played, lang):
    """The closing beat: the question's rows with each head's |ΔE| at the focus (its output through its own rows of
    W_O) and |out|, as drawn; |out| as spoken; an idle head is tagged there too."""
    s = played[lang]
    v, rows = s.values, s.rows
    lengths = [np.linalg.norm(np.asarray(v["head_out"][h]) @ gpt.head(v["layer"], h).W_O) for h in range(v["n_head"])]
    for i, h in enumerate(rows["heads"]):
        assert rows["lengths"][i].text == f"|\u0394E| {lengths[h]:.2f}"
        assert (len(rows["idles"][i].submobjects) + len(rows["idles"][i].points) > 0) == v["idle"][h]
    out = f"{np.linalg.norm(np.asarray(v['out'])):.2f}"
    assert rows["out"].text.endswith(f"|out| {out}")
    said = [c for c in s.captions if c["beat"] == "summary"][0]["say"]
    assert out in said


# --- why several heads: the lab's one_head run (issue 45) ---------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_why_beat_is_the_labs_record(played, lang):
    from model import lab
    from scenes.components.why import loss_text
    from why_checks import assert_why_beat
    sc = played[lang]
    v = sc.values["why"]
    assert (v["variant"], v["metric"]) == ("one_head", "held_out_loss")
    assert [w["metric"] for w in v["per_language"]] == ["val_loss_en", "val_loss_zh"]
    recipe = lab.load()["recipe"]        # the lab's model, not the scene's: four heads of 16 against one of 64
    assert v["shape"] == {"heads": recipe["n_head"], "dh": recipe["n_embd"] // recipe["n_head"], "d": recipe["n_embd"]}
    assert_why_beat(sc, [[loss_text(v["with"])], [loss_text(v["without"])]],
                    [sc.s("why_with", **v["shape"]), sc.s("why_without", **v["shape"])])
    said = [c for c in sc.captions if c["beat"] == "lab"]
    assert [c["key"] for c in said] == ["why_question", sc.values["caption_rules"]["lab"]["key"]]
    assert loss_text(v["without"]) in said[1]["text"] and loss_text(v["with"]) in said[1]["text"]
