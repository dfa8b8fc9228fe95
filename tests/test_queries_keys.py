"""The queries-and-keys scene: the head chosen by computation, every number against the model, the labels
as the rounding of those numbers, and a stable key frame (the checks every scene shares: test_scenes.py)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from manim.utils.testing.frames_comparison import frames_comparison

from attention_checks import causal_head_scores, recompute_head
from sum_checks import assert_sums_as_shown
from scene_checks import manifest_of, play_until_section_ends, signed_ticks, stop_at_beat
from model.analysis import lookback_scores
from scenes import style
from scenes.catalog import QUERIES_KEYS
from scenes.components import NumberText
from scenes.params import ParamError
from scenes.prompts import lookback_prompt
from scenes.attention_chapter import ChosenHead
from scenes.queries_keys import QueriesKeys

__module_test__ = "queries_keys"


def texts(group) -> list[str]:
    return [m.text for m in group if isinstance(m, NumberText)]


# --- the choice and the numbers, without rendering --------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_default_head_is_the_one_that_carries_the_adjective(gpt, lang):
    h = ChosenHead(gpt, {**QUERIES_KEYS.defaults(), "lang": lang})
    chosen = lookback_prompt(lang)
    assert h.prompt == chosen["prompt"] and h.focus == chosen["focus_index"]
    brute = causal_head_scores(gpt, lang)
    assert [h.layer, h.head] == brute["best"]
    assert h.choice["score"] == pytest.approx(brute["scores"].max(), abs=1e-9) and h.choice["score"] > 0.5
    np.testing.assert_allclose(h.choice["story"]["scores"][lang], brute["scores"], atol=1e-9)
    assert h.choice["rule"].startswith("the head whose output, patched in from the same prompt")
    scores = lookback_scores(gpt.trace(h.prompt), h.focus, [chosen["adjective_index"]])
    assert h.choice["weight"] == pytest.approx(scores[h.layer, h.head], abs=1e-12)
    assert h.source == chosen["adjective_index"], "the chosen head's focus looks at the adjective most"


def test_a_given_layer_and_head_are_kept_and_checked(gpt):
    h = ChosenHead(gpt, {**QUERIES_KEYS.defaults(), "layer": 0, "head": 3})
    assert (h.layer, h.head) == (0, 3) and h.choice["given"]["layer"] and h.choice["given"]["head"]
    with pytest.raises(ParamError, match="heads"):
        QUERIES_KEYS.resolve({"head": gpt.config.n_head}, model=gpt)
    with pytest.raises(ParamError, match="layers"):
        QUERIES_KEYS.resolve({"layer": gpt.config.n_layer}, model=gpt)
    with pytest.raises(ParamError, match="focus"):
        ChosenHead(gpt, {**QUERIES_KEYS.defaults(), "prompt": "the fox was", "focus": 5})


@pytest.mark.parametrize("params", [{}, {"lang": "zh"}, {"prompt": "a fluffy blue fox roamed the misty forest . the fox was",
                                         "layer": 0, "head": 2, "focus": 3}])
def test_head_numbers_are_the_models(gpt, params):
    h = ChosenHead(gpt, {**QUERIES_KEYS.defaults(), **params})
    ref = recompute_head(gpt, h.prompt, h.layer, h.head)
    for name in ("x_hat", "W_q", "W_k", "b_q", "b_k", "Q", "K", "scores", "scaled", "weights"):
        np.testing.assert_allclose(getattr(h, name), ref[name], atol=1e-9, err_msg=name)
    assert np.array_equal(np.isneginf(h.masked), np.isneginf(ref["masked"]))
    assert h.d_head == gpt.config.d_head == 16 and h.d_model == gpt.config.n_embd == 64


# --- rendering, and the manifest as proof ------------------------------------------------------------------
@pytest.fixture(scope="module")
def rendered(lecture):
    return lecture.clips("queries_keys")


def shown(entry: dict, full) -> None:
    """A vector as recorded: all its values (the model's) and the honest ellipsis: its first entries and its last,
    six in all (five where the product takes five of W's columns to stay inside the title-safe area, see
    QueriesKeys.product)."""
    np.testing.assert_allclose(entry["values"], full, atol=1e-9)
    n, k = len(full), len(entry["indices"])
    assert k in (5, 6) or k == n
    assert entry["indices"] == ([*range(k - 1), n - 1] if n > k else list(range(n)))


def matrix_shown(entry: dict, M) -> None:
    """Shown entries of a matrix, as displayed: (rows, cols) of M."""
    assert entry["shape"] == list(M.shape)
    np.testing.assert_allclose(entry["values"], M[np.ix_(entry["rows"], entry["cols"])], atol=1e-9)
    assert entry["scale"] == pytest.approx(np.abs(M).max(), abs=1e-12)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_manifest_numbers_are_the_models(rendered, gpt, lang):
    m = manifest_of(rendered[lang])
    v, p = m["values"], m["params"]
    assert (p["layer"], p["head"], p["focus"], p["prompt"]) == (v["layer"], v["head"], v["focus"], v["prompt"])
    ref = recompute_head(gpt, v["prompt"], v["layer"], v["head"])
    tr = ref["trace"]
    assert v["tokens"] == list(tr["tokens"]) and v["token_ids"] == list(tr["token_ids"])
    f, s = v["focus"], v["source"]
    assert s == int(np.argmax(ref["weights"][f]))
    assert v["choice"]["source_weight"] == pytest.approx(ref["weights"][f].max())
    keys = v["choice"]["keys"]
    assert v["choice"]["weight"] == pytest.approx(float(ref["weights"][f, keys].sum()), abs=1e-9)
    assert v["model"] == {"d_model": gpt.config.n_embd, "d_head": gpt.config.d_head, "n_head": gpt.config.n_head,
                          "n_positions": gpt.config.n_positions}
    # q = W_qᵀ x̂ + b_q for the focus; k likewise for the source
    for part, token, W, b, out in (("query", f, ref["W_q"], ref["b_q"], ref["Q"]),
                                   ("key", s, ref["W_k"], ref["b_k"], ref["K"])):
        e = v[part]
        assert e["token"] == token
        shown(e["x_hat"], ref["x_hat"][token])
        matrix_shown(e["W_shown"], W.T)
        shown(e["bias"], b)
        shown(e[part[0]], out[token])
    # the weights beat: W_qᵀ and, beside it, W_kᵀ, each as drawn (turned) with its own scale
    matrix_shown(v["weights"]["W_q"], ref["W_q"].T)
    matrix_shown(v["weights"]["W_k"], ref["W_k"].T)
    assert v["weights"]["W_k"]["cols"] == [0, 1, 2, 3, ref["W_k"].shape[0] - 1], "its first columns and its last"
    np.testing.assert_allclose(v["Q"]["values"], ref["Q"], atol=1e-9)
    np.testing.assert_allclose(v["K"]["values"], ref["K"], atol=1e-9)
    largest = np.abs(np.concatenate([ref["Q"], ref["K"]])).max()   # one signed scale for Q and K: their signs show
    assert v["Q"]["scale"] == v["K"]["scale"] == pytest.approx(largest, rel=1e-6)
    # K q for the focus, then the whole grid, then ÷ √d_k
    e = v["scores_for_focus"]
    matrix_shown(e["K_shown"], ref["K"])
    shown(e["q"], ref["Q"][f])
    np.testing.assert_allclose(e["scores"]["values"], ref["scores"][f], atol=1e-9)
    np.testing.assert_allclose(v["scores"]["grid"], ref["scores"], atol=1e-9)
    assert v["scores"]["scale"] == pytest.approx(np.abs(ref["scores"]).max())
    assert v["scaled"]["d_k"] == gpt.config.d_head and v["scaled"]["sqrt_d_k"] == math.sqrt(gpt.config.d_head)
    np.testing.assert_allclose(v["scaled"]["grid"], ref["scaled"], atol=1e-9)
    np.testing.assert_allclose(v["scaled"]["focus_line"], ref["scaled"][f], atol=1e-9)
    assert v["scaled"]["scale"] == v["scores"]["scale"], "one colour scale: the scaled grid dims"


# --- what is on screen: labels and colours -----------------------------------------
@pytest.fixture(scope="module")
def scenes(lecture):
    return {lang: lecture.dry("queries_keys", lang) for lang in ("en", "zh")}


def test_labels_are_the_rounded_manifest_values(scenes):
    sc = scenes["en"]
    v = sc.values
    for mv, part in ((sc.q_product, "query"), (sc.k_product, "key")):
        e = v[part]
        assert texts(mv.vector.entries) == [style.signed(e["x_hat"]["values"][i], 1) for i in e["x_hat"]["indices"]]
        bias = [e["bias"]["values"][i] for i in e["bias"]["indices"]]
        # the vector rule: one decimal, unless every entry shown would read 0.0 (ours: b_q and b_k, about ±0.001)
        d = 1 if max(abs(b) for b in bias) >= 0.05 else style.decimals_for(bias)
        assert texts(mv.bias.entries) == [style.signed(b, d) for b in bias]
        out = e[part[0]]
        assert texts(mv.output.entries) == [style.signed(out["values"][i], 1) for i in out["indices"]]
        numbers = [c[1].text for c in mv.matrix.cells if len(c) > 1 and isinstance(c[1], NumberText)]
        assert numbers == [style.signed(x, 1) for row in e["W_shown"]["values"] for x in row]
        assert mv.matrix.shape_label.text == f"W_{part[0]}\u1d40: {sc.h.d_head} \u00d7 {sc.h.d_model}"
        assert texts(mv.legend.ticks) in signed_ticks(e["W_shown"]["scale"], 1)
    k = sc.k_beside      # W_kᵀ beside W_qᵀ in the weights beat
    numbers = [c[1].text for c in k.cells if len(c) > 1 and isinstance(c[1], NumberText)]
    assert numbers == [style.signed(x, 1) for row in v["weights"]["W_k"]["values"] for x in row]
    assert k.shape_label.text == f"W_k\u1d40: {sc.h.d_head} \u00d7 {sc.h.d_model}"
    # the head followed is the one the causal rule chose: patching it costs the adjective most of its probability
    # (recorded in the manifest); the title card asks the scene's question and carries no figure (teaching.md §8)
    st, (L, H) = v["choice"]["story"], (v["layer"], v["head"])
    assert all(st["p_patched"][lang][L][H] < st["p_clean"][lang] for lang in ("en", "zh"))
    assert not re.search(r"\d", sc.title_group[2].text)
    assert texts(sc.line_numbers) == [style.signed(x, 1) for x in v["scaled"]["focus_line"]]
    limit = v["scores"]["scale"]
    assert texts(sc.score_legend.ticks) in signed_ticks(limit, 0)
    # every cell's colour is the scaled score's colour on the one scale
    grid = sc.grid
    for q in range(len(v["tokens"])):
        for k in range(len(v["tokens"])):
            expected = grid.colour_scale.colour(v["scaled"]["grid"][q][k])
            assert grid.cell_square(q, k).get_fill_color().to_hex() == expected.to_hex()
    # a 13-token prompt is too tall for a word on every row at the legibility pitch: every stride-th row is
    # labelled (the 2-layer model's 12-token default fitted one on each), from the first, evenly
    stride = grid.labelled[1] - grid.labelled[0] if len(grid.labelled) > 1 else 1
    assert grid.labelled == list(range(0, len(v["tokens"]), stride)) and grid.cell * stride >= grid.LABEL_PITCH - 1e-9
    assert [w.text for w in grid.key_words] == [style.token_label(v["tokens"][k]) for k in grid.labelled]


# --- a key frame against committed control data (tests/control_data/queries_keys) ---------------------------
@pytest.fixture
def query_beat(monkeypatch):
    stop_at_beat(monkeypatch, "query", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=QueriesKeys)
@pytest.mark.usefixtures("query_beat")
def test_frame_query_product(scene):
    play_until_section_ends(scene, QueriesKeys.construct)


def test_the_followed_key_row_and_the_query_row_both_have_their_word():
    """Every stride-th row is labelled with the query's among them; the key the chapter follows is labelled too,
    and no two labels are nearer than a stride (the Chinese default prompt: 14 rows, query 13, key 2)."""
    from scenes.queries_keys import labelled_rows
    for n, stride, focus, source in [(14, 2, 13, 2), (13, 2, 12, 2), (14, 2, 13, 12), (5, 1, 4, 0), (30, 3, 29, 4),
                                     (32, 2, 31, 0), (9, 3, 8, 8)]:
        rows = labelled_rows(n, stride, focus, source)
        assert focus in rows and all(0 <= r < n for r in rows)
        assert source in rows or abs(source - focus) < stride
        assert all(b - a >= stride for a, b in zip(rows, rows[1:])), rows
    assert labelled_rows(14, 2, 13, 2) == [2, 5, 7, 9, 11, 13]


# --- the question before the machinery: the model's next word looking back, and seeing only the focus ------------
def blocked_by_hand(gpt, ids):
    """The model re-run with the last token's query seeing only its own key, written out here from the weights."""
    from model.numpy_gpt import layer_norm as ln, softmax
    c = gpt.config
    T, H, dh = len(ids), c.n_head, c.d_head
    x = np.asarray(gpt.p("wte.weight")[ids] + gpt.p("wpe.weight")[:T], dtype=np.float64)
    hidden = np.triu(np.ones((T, T), dtype=bool), k=1)
    hidden[T - 1, :T - 1] = True
    for i in range(c.n_layer):
        h = f"h.{i}."
        xh = ln(x, gpt.p(h + "ln_1.weight"), gpt.p(h + "ln_1.bias"), c.layer_norm_epsilon)["out"]
        out = gpt.p(h + "attn.c_proj.bias") * np.ones((T, 1))
        for head in range(H):
            w = gpt.head(i, head)
            Q, K, V = xh @ w.W_Q + w.b_Q, xh @ w.W_K + w.b_K, xh @ w.W_V + w.b_V
            weights = softmax(np.where(hidden, -np.inf, Q @ K.T / math.sqrt(dh)), axis=-1)
            out = out + (weights @ V) @ w.W_O
        x = x + out
        x2 = ln(x, gpt.p(h + "ln_2.weight"), gpt.p(h + "ln_2.bias"), c.layer_norm_epsilon)["out"]
        x = x + gpt.feed_forward(i, x2)["out"]
    logits = ln(x, gpt.p("ln_f.weight"), gpt.p("ln_f.bias"), c.layer_norm_epsilon)["out"] @ gpt.p("wte.weight").T
    p = np.exp(logits[-1] - logits[-1].max())
    return p / p.sum()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_question_is_a_real_run_and_its_caption_the_rule(scenes, gpt, lang):
    """The question beat: the chapter's own story (the training stream's first story, by rule), P(adjective) as
    trained and with "was" seeing only itself, recomputed here by hand; the bars show those numbers; the caption
    is the rule's (en 99.9% -> 0.2%, zh 99.95% -> 0.0001%: lookback_needed in both)."""
    sc = scenes[lang]
    v = sc.values
    q = v["question"]
    chosen = lookback_prompt(lang)
    assert q["story"] and q["word"] == chosen["adjective"] and q["adjective_index"] == chosen["adjective_index"]
    ids = v["token_ids"][:v["focus"] + 1]
    w = gpt.tokenizer.words.index(q["word"])
    p_by_hand = blocked_by_hand(gpt, ids)
    assert q["blocked"]["p_word"] == pytest.approx(float(p_by_hand[w]), rel=1e-4)
    assert q["looking_back"]["p_word"] == pytest.approx(float(gpt.next_token_probabilities(ids)[w]), rel=1e-5)
    top = np.argsort(-p_by_hand, kind="stable")[:3]
    assert [r["word"] for r in q["blocked"]["top"]] == [gpt.tokenizer.words[i] for i in top]
    assert q["looking_back"]["p_word"] > 0.9 > 0.01 > q["blocked"]["p_word"]
    rule = v["caption_rules"]["lookback"]
    assert rule["key"] == "lookback_needed"
    # the bars show the runs' rows and "other", each at its plain rounding, and the caption quotes them
    for panel, name in zip(sc.question_panels, ("looking_back", "blocked")):
        bars = panel[1]
        shown = q["shown"][name]
        assert shown["words"] == [r["word"] for r in q[name]["shown"]]
        assert texts(bars.numbers) == shown["labels"]
        assert shown["other"] == pytest.approx(1 - sum(r["p"] for r in q[name]["shown"]), abs=1e-6)
        assert [m.text for m in bars.labels][:-1] == [style.token_label(x) for x in shown["words"]]
    said = [c for c in sc.captions if c["key"] == "lookback_needed"][0]["text"]
    for name in ("looking_back", "blocked"):
        label = q["shown"][name]["labels"][q["shown"][name]["words"].index(q["word"])]
        assert label in said
    assert_sums_as_shown(v, "queries_keys")


def test_the_idea_beat_names_the_best_match(scenes):
    for sc in scenes.values():
        v = sc.values
        assert v["idea"]["source"] == v["source"] and v["idea"]["label"] == style.percent(v["idea"]["weight"])
        assert v["caption_rules"]["idea"]["key"] == ("idea_self" if v["source"] == v["focus"] else "idea_value")


def test_blocking_the_look_back_is_checked(gpt):
    from model.errors import ModelError
    with pytest.raises(ModelError, match="self_only"):
        gpt.trace("the frog was", self_only=(5,))
    tr = gpt.trace("the frog was", self_only=(2,))
    for layer in tr["layers"]:
        assert np.all(layer["attn"]["weights"][:, 2, :2] == 0) and np.allclose(layer["attn"]["weights"][:, 2, 2], 1)
        assert np.all(layer["attn"]["weights"][:, 1, :2] > 0), "the other tokens still look back"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_heads_job_is_counted_over_the_stories_ending_in_the_focus_word(scenes, gpt, lang):
    """The idea beat's census: the seeded sample's stories that end in the focus word, each traced here again, and
    the head's top key (its largest weight from the last token) is the story's repeated word in k of them (ours:
    en "was" 119 of 119, zh "是" 90 of 136: both over half, job_kind); the caption says k and n."""
    from model.analysis import head_jobs
    sc = scenes[lang]
    v, c = sc.values, sc.values["census"]
    focus = v["tokens"][v["focus"]]
    sample = [s for s in head_jobs.story_sample(lang) if s["words"][-1] == focus]
    assert c["n"] == len(sample) > 100
    k = 0
    for s in sample:
        tr = gpt.trace([gpt.tokenizer.vocab[w] for w in s["words"]])
        f = s["focus"]
        top = int(np.argmax(tr["layers"][v["layer"]]["attn"]["weights"][v["head"], f, :f + 1]))
        k += s["words"][top] == s["answer"]
    assert c["answer"] == k
    rule = v["caption_rules"]["job"]
    assert rule["key"] == ("job_kind" if k > 0.5 * len(sample) else "job_mixed") == "job_kind"
    said = next(x["text"] for x in sc.captions if x["key"] == rule["key"])
    assert f"{len(sample)} " in said and f"{k} " in said


def test_the_job_line_is_said_only_with_a_story(tmp_path):
    """Without the story (a focus that is not the story's last word) there is no census and no job line."""
    from scene_checks import lean, run_dry
    sc = run_dry(lean(QueriesKeys), {"prompt": "a fluffy blue fox roamed the misty forest . the fox was", "layer": 0,
                                     "head": 2, "focus": 3}, tmp_path, frames=False)
    assert sc.values["census"] is None and "job" not in sc.values["caption_rules"]
    assert not any(c["key"].startswith("job") for c in sc.captions)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_scale_beat_draws_real_random_dot_products(scenes, lang):
    """The strips: n seeded pairs of standard-normal vectors per length (recomputed here), their spread about √d
    (within 10%), every dot at its true height on one scale, the labels the spreads as drawn; d_k among the lengths."""
    sc = scenes[lang]
    r = sc.values["random_dots"]
    assert r["d_k"] == sc.h.d_head and r["d_k"] in r["dims"] and r["dims"] == sorted(r["dims"])
    rng = np.random.default_rng(r["seed"])
    for d, dots, sd in zip(r["dims"], r["dots"], r["spread"]):
        a, b = rng.standard_normal((r["n"], d)), rng.standard_normal((r["n"], d))
        np.testing.assert_allclose(dots, (a * b).sum(axis=1), rtol=1e-12)
        assert sd == pytest.approx(np.std(dots)) and abs(sd / math.sqrt(d) - 1) < 0.1
    assert r["shown"]["spreads"] == [f"{sd:.1f}" for sd in r["spread"]]
    said = [c["key"] for c in sc.captions if c["beat"] == "scale"]
    assert said[0] == "scale_random" and said[1] in ("scale", "scale_same")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_direct_beat_ranks_the_keys_both_ways(scenes, gpt, lang):
    """Why learned W_q and W_k: the keys ranked by the head's inputs compared directly (x̂·x̂, recomputed here with
    LayerNorm written out) and by q·k; compared directly the focus is most like itself and the story's colour word
    ranks low (ours: en "orange" 7th of 13, zh "橙色" 14th of 14), through W_q and W_k it ranks first."""
    sc = scenes[lang]
    v, d = sc.values, sc.values["direct"]
    ref = recompute_head(gpt, v["prompt"], v["layer"], v["head"])
    f, src = v["focus"], v["source"]
    x = np.asarray(ref["x_hat"], np.float64)[:f + 1]
    np.testing.assert_allclose(d["direct"], x @ x[f], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(d["head_scores"], ref["scores"][f, :f + 1], rtol=1e-5, atol=1e-5)
    assert d["direct_order"][0] == f and d["head_order"][0] == src and d["direct_rank"][src] > 3
    assert v["caption_rules"]["direct"]["key"] == "direct_self"
    said = next(c["text"] for c in sc.captions if c["key"] == "direct_self")
    assert (f"{d['direct_rank'][src]}th" if lang == "en" else f"{d['direct_rank'][src]}") in said
    shown = d["shown"]
    assert shown["direct"]["keys"][-1] == src and shown["head"]["keys"][0] == src
    assert shown["direct"]["labels"][0] == style.signed(d["direct"][f], 1)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_closing_answers_the_question_on_its_row(scenes, lang):
    """The closing beat goes back to the question's prompt row: the focus's query met every key up to it; the table
    is the best-matching keys with their q·k, ÷ √d_k and attention weight as drawn (the weights and "other", each at
    its plain rounding), the best one the word the question asked for (answer_word with the shipped model: en "orange" 93.9%, zh
    "橙色" 96.8%), and the caption quotes the table's numbers."""
    sc = scenes[lang]
    v, a = sc.values, sc.values["answer"]
    f = v["focus"]
    assert a["keys"] == f + 1 and a["source"] == v["source"] == a["rows"][0]["key"]
    assert v["question"]["story"] and a["source"] == v["question"]["adjective_index"]
    assert v["caption_rules"]["answer"]["key"] == "answer_word"
    scaled = np.asarray(v["scaled"]["focus_line"][:f + 1])
    assert [r["key"] for r in a["rows"]] == list(np.argsort(-scaled, kind="stable")[:3])
    heads, bars, dots, scaled_col, best = sc.answer_table
    assert texts(dots) == a["labels"]["dot"] and texts(scaled_col) == a["labels"]["scaled"]
    assert texts(bars.numbers) == a["labels"]["weight"]
    assert a["labels"]["weight"][0] == v["idea"]["label"], "the weight the idea beat showed"
    said = next(c["text"] for c in sc.captions if c["key"] == "answer_word")
    for label in (a["labels"]["dot"][0], a["labels"]["scaled"][0], a["labels"]["weight"][0]):
        assert label in said
    assert_sums_as_shown(v, "queries_keys")


def test_the_closing_rule_can_choose_otherwise(scenes, monkeypatch):
    """Another best match chooses another closing: the focus itself, another word than the story's adjective, a
    prompt without a story."""
    sc = scenes["en"]
    h = sc.h
    adj = h.choice["prompt_rule"]["adjective_index"]
    assert sc.answer_rule() == "answer_word"
    monkeypatch.setattr(h, "source", h.focus)
    assert sc.answer_rule() == "answer_self"
    monkeypatch.setattr(h, "source", adj + 1)
    assert sc.answer_rule() == "answer_not_word"
    monkeypatch.setattr(sc, "story", False)
    assert sc.answer_rule() == "answer_back"


# --- why divide: the lab's no_scale run (issue 45) --------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_why_beat_is_the_labs_record(scenes, lang):
    from scenes.components.why import entropy_text, loss_text
    from why_checks import assert_why_beat
    sc = scenes[lang]
    v = sc.values["why"]
    assert (v["variant"], v["metric"], v["loss"]["metric"]) == ("no_scale", "attention_entropy", "held_out_loss")
    assert [w["metric"] for w in v["per_language"]] == ["val_loss_en", "val_loss_zh"]
    assert_why_beat(sc, [[entropy_text(v["with"]), loss_text(v["loss"]["with"])],
                         [entropy_text(v["without"]), loss_text(v["loss"]["without"])]],
                    [sc.s("why_with"), sc.s("why_without")])
    said = [c for c in sc.captions if c["beat"] == "lab"]
    assert [c["key"] for c in said] == ["why_question", v_key(sc)]
    assert entropy_text(v["without"]) in said[1]["text"] and loss_text(v["loss"]["without"]) in said[1]["text"]
    from model import lab
    r = lab.load()["recipe"]      # the question names the lab's d_k (√16 = 4), whatever model the scene shows
    assert f"\u00f7 {math.sqrt(r['n_embd'] // r['n_head']):g}" in said[0]["text"]


def v_key(sc) -> str:
    return sc.values["caption_rules"]["lab"]["key"]


def test_the_query_key_measures_refuse_bad_input(gpt):
    from model.analysis.query_key import direct_comparison, random_dots
    from model.errors import ModelError
    tr = gpt.trace("the fox was")
    with pytest.raises(ModelError, match="no query 3"):
        direct_comparison(tr, 0, 0, 3)
    with pytest.raises(ModelError, match="no layer"):
        direct_comparison(tr, gpt.config.n_layer, 0, 2)
    with pytest.raises(ModelError, match="at least 1"):
        random_dots([0, 4])
    with pytest.raises(ModelError, match="at least 2 pairs"):
        random_dots([4], n=1)
    a, b = random_dots([4, 16]), random_dots([4, 16])
    assert a == b, "seeded: the same dots every run"
