"""The multi-head scene: every head's pattern, output, the concatenation and W_O against the model (recomputed
here from the heads' weights), GPT-3's figures recomputed from its published shape, the labels as the rounding of
the manifest's numbers, and a stable key frame (the checks every scene shares: test_scenes.py)."""

from __future__ import annotations


import numpy as np
import pytest
from manim.utils.testing.frames_comparison import frames_comparison

from model import GPT3_175B
from model.analysis import head_contribution
from scene_checks import manifest_of, parameter_counts, play_until_section_ends, stop_at_beat
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


def counted(c) -> dict:
    """The scale figures' counts from a config (scene_checks.parameter_counts)."""
    counts = parameter_counts(c)
    return {"heads": c.n_layer * c.n_head, "attention_parameters": counts["attention"],
            "total_parameters": sum(counts.values())}


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


def test_gpt3_figures_come_from_its_published_shape(gpt):
    f = LayerHeads(gpt, MULTI_HEAD.defaults()).scale_figures()
    g, c = GPT3_175B, gpt.config
    assert (g.n_layer, g.n_head, g.n_embd, g.d_head) == (96, 96, 12288, 128)
    for name, cfg in (("gpt3", g), ("ours", c)):
        expected = counted(cfg)
        for key, value in expected.items():
            assert f[name][key] == value, (name, key)
        assert f[name]["d_head"] == cfg.n_embd // cfg.n_head and f[name]["n_layer"] == cfg.n_layer
    assert f["gpt3"]["heads"] == 9216
    assert abs(f["gpt3"]["total_parameters"] / 175e9 - 1) < 0.01, "GPT-3 is the 175B model"


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
    scale = v["scale"]
    rows = s.table[1:]
    for row, key in zip(rows, ("heads", "d_head", "attention_parameters", "total_parameters")):
        assert row[1].text == f"{scale['ours'][key]:,}" and row[2].text == f"{scale['gpt3'][key]:,}"
        assert v["scale_shown"][key] == {"ours": scale["ours"][key], "gpt3": scale["gpt3"][key]}
    assert s.gpt3_block[1].text == f"GPT-3: 96 \u00d7 96 = {scale['gpt3']['heads']:,} heads"
    assert texts(s.legend.ticks) == ["0", f"{v['magnitude_scale_limit']:g}"]
    thumbnails = list(s.ours_block[0])                                 # every head of every layer, keys down
    layers = v["every_layer_patterns"]
    assert len(thumbnails) == len(layers) * v["n_head"]
    for i, thumb in enumerate(thumbnails):
        np.testing.assert_array_equal(thumb.values, np.asarray(layers[i // v["n_head"]][i % v["n_head"]]).T)
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
    g = GPT3_175B
    assert v["scale"]["gpt3"] == {**v["scale"]["gpt3"], "n_layer": g.n_layer, "n_head": g.n_head,
                                  "d_model": g.n_embd, "d_head": g.d_head, "context": g.n_positions,
                                  **counted(g)}


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


# --- each head's target, spoken; the park rule; W_O split into per-head blocks ------------------------------------
def write_sizes_by_hand(gpt, prompt: str, layer: int, focus: int, head: int) -> np.ndarray:
    """|v_j W_O| for keys 0 .. focus, from the head's own weights (recompute_layer's LayerNorm, not the trace)."""
    c = gpt.config
    x = np.asarray(gpt.trace(prompt)["layers"][layer]["resid_pre"], dtype=np.float64)
    x_hat = layer_norm(x, gpt.p(f"h.{layer}.ln_1.weight"), gpt.p(f"h.{layer}.ln_1.bias"), c.layer_norm_epsilon)
    hw = gpt.head(layer, head)
    return np.linalg.norm((x_hat[: focus + 1] @ hw.W_V + hw.b_V) @ hw.W_O, axis=1)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_heads_target_is_spoken_by_the_park_rule(gpt, played, lang):
    """The focus beat's spoken line names every head's top word and weight (as the labels under the grids), and says
    that a head parks exactly where its top key writes less than the median key would (recomputed from the weights)."""
    from speech.spoken import announced
    from scenes.multi_head.beats import S as MS
    s = played[lang]
    v = s.values
    parked = []
    for h in range(v["n_head"]):
        sizes = write_sizes_by_hand(gpt, v["prompt"], v["layer"], v["focus"], h)
        np.testing.assert_allclose(v["write_sizes"][h], sizes, atol=1e-9)
        parked.append(bool(sizes[v["top_keys"][h]] < np.median(sizes)))
    assert v["parked"] == parked
    assert v["targets"]["keys"] == ["target_parked" if p else "target" for p in parked]
    said = [c for c in s.captions if c["beat"] == "focus"][0]["say"]
    for h in range(v["n_head"]):
        phrase = announced(MS.table[v["targets"]["keys"][h]][lang],
                           {"h": h + 1, "word": style.token_label(v["tokens"][v["top_keys"][h]]),
                            "w": style.percent(v["top_weights"][h])}, lang)
        assert phrase in said, (h, phrase, said)
    if lang == "en":       # the shipped model, English: two heads park (on "orange" and on "."), two fetch
        assert parked == [True, True, False, False]


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


# --- the opening question, the parked heads on screen, the closing answer ---------------------------------------
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
def test_parked_heads_are_marked_on_screen_by_the_rule(rendered, gpt, played, lang):
    """A parked head (its top key writes less than the median key, recomputed from the weights) is dimmed and tagged
    in the focus beat, in the manifest of the rendered clip and in the scene as played; no other head is."""
    v = manifest_of(rendered[lang])["values"]
    parked = []
    for h in range(v["n_head"]):
        sizes = write_sizes_by_hand(gpt, v["prompt"], v["layer"], v["focus"], h)
        parked.append(bool(sizes[v["top_keys"][h]] < np.median(sizes)))
    shown = v["parked_shown"]
    assert shown["parked"] == parked and shown["dimmed"] == [h for h, p in enumerate(parked) if p]
    assert set(shown["tagged"]) <= set(shown["dimmed"])
    s = played[lang]
    from scenes.multi_head.layout import PARK_DIM
    for h, g in enumerate(s.grids):
        opacity = g.squares.get_fill_opacity()
        assert (opacity == pytest.approx(PARK_DIM)) == parked[h], (h, opacity)
        assert (len(s.park_tags[h].points) > 0 or len(s.park_tags[h].submobjects) > 0) == (h in shown["tagged"])
    if lang == "en":
        assert shown["dimmed"] == [0, 1] and shown["tagged"] == [0, 1]
    else:
        assert shown["dimmed"] == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_summary_answers_with_each_heads_target_and_delta_e(gpt, played, lang):
    """The closing beat: the question's rows with each head's |ΔE| at the focus (its output through its own rows of
    W_O) and |out|, as drawn and as spoken; a parked head is tagged there too."""
    s = played[lang]
    v, rows = s.values, s.rows
    lengths = [np.linalg.norm(np.asarray(v["head_out"][h]) @ gpt.head(v["layer"], h).W_O) for h in range(v["n_head"])]
    for i, h in enumerate(rows["heads"]):
        assert rows["lengths"][i].text == f"|\u0394E| {lengths[h]:.2f}"
        assert (len(rows["parks"][i].submobjects) + len(rows["parks"][i].points) > 0) == v["parked"][h]
    out = f"{np.linalg.norm(np.asarray(v['out'])):.2f}"
    assert rows["out"].text.endswith(f"|out| {out}")
    said = [c for c in s.captions if c["beat"] == "summary"][0]["say"]
    assert all(f"{lengths[h]:.2f}" in said for h in rows["heads"]) and out in said


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
