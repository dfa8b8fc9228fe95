"""The fact scene: its prompt rule, every number against the model (recomputed here from traces, patches and the
weights, not through model.analysis), the labels as the rounding of the manifest's numbers, the caption rules, a
prompt without a person as one clear line, and a key frame (the checks every scene shares: test_scenes.py)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sum_checks import assert_sums_as_shown
from manim import RIGHT
from manim.utils.testing.frames_comparison import frames_comparison

from model import language, probabilities
from model.analysis.patching import MEAN_SAMPLE
from scene_checks import LEGIBILITY, assert_legible, manifest_of, play_until_section_ends, run_dry, stop_at_beat
from scenes import style
from scenes.catalog import MLP_FACT
from scenes.components import Caption, TokenChip, TraceGrid, caption, inside_safe_area
from scenes.components.tracing import share_text
from scenes.mlp_fact import MlpFact
from scenes.mlp_fact.beats import S
from scenes.mlp_fact.numbers import K_NEURONS, MAX_TOKENS, FactLookup
from scenes.params import ParamError
from model.analysis import push_share, top_k_shares
from scenes.prompts import FACT_STREAM_WORDS, join_words, sport_fact_prompt

__module_test__ = "mlp_fact"
REPO = Path(__file__).resolve().parents[1]


# --- independent recomputations -----------------------------------------------------------------------------
def p_answer(gpt, ids, answer_id, patch=None) -> float:
    return float(probabilities(gpt.trace(ids, patch=patch)["logits"][-1])[answer_id])


def restored_share(gpt, tokens, first, partners, answer_id, layer, component, position) -> float:
    """Mean over partners of (P_restored − P_corrupt) / (P_clean − P_corrupt), with the patch hook directly."""
    vocab = gpt.tokenizer.vocab
    clean_ids = [vocab[w] for w in tokens]
    clean = gpt.trace(clean_ids)
    state = clean["layers"][layer][component]["out"][position]
    p_clean = p_answer(gpt, clean_ids, answer_id)
    shares = []
    for f, l in partners:
        words = list(tokens)
        words[first:first + 2] = [f, l]
        ids = [vocab[w] for w in words]
        p_corrupt = p_answer(gpt, ids, answer_id)
        p_restored = p_answer(gpt, ids, answer_id, {(layer, component, position): state})
        shares.append((p_restored - p_corrupt) / (p_clean - p_corrupt))
    return float(np.mean(shares))


def sport_directions(gpt, lang: str, layer: int, held_out=None) -> dict:
    """Per sport: mean resid_post at the last name of "first last" over its people minus over the others (without
    the person `held_out`)."""
    g = language.Language().grammar(lang)
    people = [p for p in language.Language().people if p != held_out]
    X = np.array([gpt.trace(f"{g.t(p.first)} {g.t(p.last)}")["layers"][layer]["resid_post"][-1] for p in people])
    sports = np.array([p.sport for p in people])
    return {s: X[sports == s].mean(0) - X[sports != s].mean(0) for s in language.SPORTS}


def through_ln_f(gpt, trace, position, vector):
    scale = np.sqrt(trace["ln_f"]["var"][position] + gpt.config.layer_norm_epsilon)
    v = np.asarray(vector, np.float64)
    return ((v - v.mean()) / scale * gpt.p("ln_f.weight")) @ gpt.W_E.T


@pytest.fixture(scope="module")
def sample_means(gpt):
    """The MLP outputs' mean over the documented sample, from the language's corpus and plain traces."""
    lang_ = language.Language()
    streams = lang_.corpus(MEAN_SAMPLE["n_streams"], gpt.config.n_positions, MEAN_SAMPLE["seed"])
    vocab = gpt.tokenizer.vocab
    outs = {(l, c): [] for l in range(gpt.config.n_layer) for c in ("attn", "mlp")}
    for s in streams:
        tr = gpt.trace([vocab[t.word] for t in s])
        for (l, c), rows in outs.items():
            rows.append(tr["layers"][l][c]["out"])
    return {k: np.concatenate(o).mean(0) for k, o in outs.items()}


# --- the prompt rule -----------------------------------------------------------------------------------------
def first_sport_sentence(lang, person=None):
    """The first sentence of the seeded stream (FACT_STREAM_WORDS words) asking a sport not through a pronoun, whose
    first person (or `person`, in the language's words) is named before the sport: (tokens, answer), or None."""
    lang_ = language.Language()
    stream = lang_.stream(FACT_STREAM_WORDS, random.Random(language.SEED), lang=lang)
    g = lang_.grammar(lang)
    for i, t in enumerate(stream):
        if t.kind != "sport" or t.template == "pronoun":
            continue
        start = max([j + 1 for j in range(i) if stream[j].word == g.t(".")], default=0)
        words = [x.word for x in stream[start:i]]
        pairs = [tuple(words[j:j + 2]) for j in range(len(words) - 1) if tuple(words[j:j + 2]) in g.person]
        if pairs and (person is None or person in pairs):
            return words, t.word
    return None


def article_example(lang):
    """Michael Jordan asked as the stream asks his sport, or else as facts_known asks it: "first last plays"."""
    g = language.Language().grammar(lang)
    person = (g.t("michael"), g.t("jordan"))
    found = first_sport_sentence(lang, person)
    return found if found is not None else ([*person, g.t("plays")], g.t("basketball"))


class NotKnowing:
    """The shipped model, except that after any prompt its logit for `word` is 50 lower: a model that does not know
    that fact."""

    def __init__(self, gpt, word):
        self.gpt, self.word = gpt, word

    def __getattr__(self, name):
        return getattr(self.gpt, name)

    def trace(self, *args, **kwargs):
        tr = self.gpt.trace(*args, **kwargs)
        logits = np.array(tr["logits"], dtype=np.float64)
        logits[:, self.gpt.tokenizer.vocab[self.word]] -= 50
        return {**tr, "logits": logits}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_default_prompt_is_the_article_example_the_model_knows(gpt, lang):
    tokens, answer = article_example(lang)
    chosen = sport_fact_prompt(lang, gpt)
    ex = chosen["example"]
    assert ex["tokens"] == tokens and ex["answer"] == answer
    assert ex["source"] == ("template" if lang == "zh" else "stream")     # the zh stream's first 600 words: none
    p = probabilities(gpt.trace(tokens_to_ids(gpt, tokens))["logits"][-1])
    assert ex["top_word"] == gpt.tokenizer.words[int(np.argmax(p))] and ex["p_answer"] == pytest.approx(
        p[gpt.tokenizer.vocab[answer]], abs=1e-12)
    assert ex["known"] == (ex["top_word"] == answer)
    # the shipped model knows it in both languages: the lecture shows Michael Jordan's basketball
    assert ex["known"] and chosen["branch"] == "example"
    assert chosen["tokens"] == tokens and chosen["answer"] == answer and chosen["lang"] == lang
    assert chosen["person"] == list(tokens[chosen["first_index"]:chosen["first_index"] + 2])
    assert sport_fact_prompt(lang)["prompt"] == chosen["prompt"]            # the shipped model by default


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_model_that_does_not_know_the_example_falls_back(gpt, lang):
    """Falls back to the stream's first sentence asking a person's sport, and records what the model said."""
    _, answer = article_example(lang)
    chosen = sport_fact_prompt(lang, NotKnowing(gpt, answer))
    tokens, fallback_answer = first_sport_sentence(lang)
    assert chosen["branch"] == "fallback" and chosen["tokens"] == tokens and chosen["answer"] == fallback_answer
    assert not chosen["example"]["known"] and chosen["example"]["top_word"] != answer
    g = language.Language().grammar(lang)
    assert tuple(chosen["person"]) in g.person and g.t(g.person[tuple(chosen["person"])].sport) == chosen["answer"]


def tokens_to_ids(gpt, tokens):
    return [gpt.tokenizer.vocab[w] for w in tokens]


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_note_says_when_the_model_does_not_know_the_example(gpt, lang):
    """The title card's note by the prompt rule's branch: the plain note for the example (or a given prompt), the
    note saying the model does not know the example after a fallback; that one fits the card with the widest
    words and numbers."""
    import types

    def note(branch):
        rule = None if branch is None else {"branch": branch, "example": {"prompt": "迈克尔乔丹打", "top_word": "棒球",
                                                                           "answer": "篮球"}}
        f = types.SimpleNamespace(n_layer=3, answer="排球", p_answer=0.9, prompt="男选手罗杰纳达尔的运动是", prompt_rule=rule)
        scene = types.SimpleNamespace(f=f, s=lambda key, **v: S(key, lang, **v), prompt_text=lambda: f.prompt)
        return MlpFact.title_note(scene)

    assert note(None) == note("example") == S("note", lang, n=3, prompt="男选手罗杰纳达尔的运动是", answer="排球",
                                                p=style.percent(0.9))
    assert note("fallback") == S("note_unknown", lang, n=3, ex="迈克尔乔丹打", top="棒球", ex_answer="篮球",
                                 prompt="男选手罗杰纳达尔的运动是", answer="排球", p=style.percent(0.9))
    lang_ = language.Language()
    sport = widest([lang_.grammar(l).t(s) for l in ("en", "zh") for s in language.SPORTS])
    word = widest([style.token_label(w) for l in ("en", "zh") for w in language.vocabulary_of(l)])
    example = widest([join_words(article_example(l)[0], l) for l in ("en", "zh")])
    prompt = widest([join_words(first_sport_sentence(l)[0], l) for l in ("en", "zh")])
    text = S("note_unknown", lang, n=gpt.config.n_layer, ex=example, top=word, ex_answer=sport, prompt=prompt,
             answer=sport, p=style.percent(0.888))
    shown = caption(text, lang, y=MlpFact.NOTE_Y)       # as the title card draws its note
    assert inside_safe_area(shown) and len(shown) <= text.count("\n") + 2, shown.text   # a long prompt: one more


# --- the numbers, without rendering ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def facts(gpt, sample_means):
    return {lang: FactLookup(gpt, {**MLP_FACT.defaults(), "lang": lang}, means=sample_means) for lang in ("en", "zh")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_tracing_table_and_the_lookup_point(gpt, facts, lang):
    f = facts[lang]
    assert f.tokens == sport_fact_prompt(lang, gpt)["tokens"]
    # the partners: every other person with another sport and the same gender
    g = f.g
    want = [[g.t(q.first), g.t(q.last)] for q in language.Language().people
            if q.sport != f.person.sport and q.gender == f.person.gender]
    assert f.ct["partners"] == want
    # the largest cells and the lookup cell, recomputed with the patch hook
    cells = {(c["layer"], c["component"], c["position"]) for c in f.largest} | {(f.layer, "mlp", f.position)}
    for layer, comp, pos in cells:
        r = [i for i, (l, c) in enumerate(f.rows) if (l, c) == (layer, comp)][0]
        assert f.grid[r, pos] == pytest.approx(restored_share(gpt, f.tokens, f.first_index, want, f.answer_id,
                                                              layer, comp, pos), abs=1e-9)
    # the largest are the largest, the lookup is the MLP cell with the largest share
    assert f.largest[0]["share"] == pytest.approx(float(f.grid.max()))
    mlp_rows = [i for i, (_, c) in enumerate(f.rows) if c == "mlp"]
    assert f.lookup_share == pytest.approx(float(f.grid[mlp_rows].max()))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_projections_readout_neurons_ablation_and_the_and(gpt, facts, sample_means, lang):
    f = facts[lang]
    tr = gpt.trace(f.prompt)
    lay = tr["layers"][f.layer]
    dirs = sport_directions(gpt, f.prompt_lang, f.layer, held_out=f.person)    # the prompt's person held out
    for s in language.SPORTS:
        u = dirs[s] / np.linalg.norm(dirs[s])
        assert f.before[s] == pytest.approx(float(lay["resid_mid"][f.position] @ u), abs=1e-9)
        assert f.after[s] == pytest.approx(float(lay["resid_post"][f.position] @ u), abs=1e-9)
    # the MLP output through ln_f and the unembedding, among the prompt language's words
    per_word = through_ln_f(gpt, tr, f.position, lay["mlp"]["out"][f.position])
    ids = sorted(gpt.tokenizer.vocab[w] for w in language.vocabulary_of(f.prompt_lang))
    ranked = sorted(ids, key=lambda i: -per_word[i])
    assert [t["id"] for t in f.readout["top"]] == ranked[:len(f.readout["top"])]
    assert f.readout["ranks"][f.answer_id] == ranked.index(f.answer_id) + 1
    # the neurons: activation × (W_out row · (unit own − mean unit others))
    unit = {s: d / np.linalg.norm(d) for s, d in dirs.items()}
    contrast = unit[f.person.sport] - np.mean([u for s, u in unit.items() if s != f.person.sport], axis=0)
    push = lay["mlp"]["act"][f.position] * (gpt.p(f"h.{f.layer}.mlp.c_proj.weight") @ contrast)
    np.testing.assert_allclose(f.attribution["per_neuron"], push, atol=1e-9)
    assert f.top == list(np.argsort(-push, kind="stable")[:K_NEURONS])
    # the lecture's one share of the push: over the summed push of the neurons pushing toward the sport
    towards = np.sort(push[push > 0])[::-1]
    for k in (1, 5, 20):
        assert f.spread["shares"][k] == pytest.approx(towards[:k].sum() / towards.sum(), abs=1e-9)
    assert (f.spread["n_towards"], f.spread["n_against"]) == ((push > 0).sum(), (push < 0).sum())
    assert f.spread["against"] == pytest.approx(push[push < 0].sum(), abs=1e-9)
    # what each neuron fires for: its activation at the last name of each person
    people = language.Language().people
    g = language.Language().grammar(f.prompt_lang)
    acts = np.array([gpt.trace(f"{g.t(p.first)} {g.t(p.last)}")["layers"][f.layer]["mlp"]["act"][-1] for p in people])
    for n, pr in zip(f.top, f.profiles):
        means = {s: acts[[p.sport == s for p in people], n].mean() for s in language.SPORTS}
        assert pr["best"] == max(means, key=means.get)
        assert pr["mean_best"] == pytest.approx(means[pr["best"]], abs=1e-9)
        assert pr["mean_others"] == pytest.approx(acts[[p.sport != pr["best"] for p in people], n].mean(), abs=1e-9)
    # the mean-ablation, from the sample's mean MLP output
    patch = {(f.layer, "mlp", f.position): sample_means[f.layer, "mlp"]}
    assert f.ablation["p_after"] == pytest.approx(p_answer(gpt, f.token_ids, f.answer_id, patch), abs=1e-9)
    assert f.ablation["p_before"] == pytest.approx(p_answer(gpt, f.token_ids, f.answer_id), abs=1e-12)
    p = probabilities(gpt.trace(f.token_ids, patch=patch)["logits"][-1])
    assert f.new_top["word"] == gpt.tokenizer.words[int(np.argmax(p))]
    # the AND: each variant's prediction is the model's argmax for that prompt, and the variants follow the rule
    assert f.variants[0]["names"] == [f.tokens[f.first_index], f.tokens[f.last_index]]
    for v in f.variants:
        p = probabilities(gpt.trace(v["token_ids"])["logits"][-1])
        assert v["prediction"] == gpt.tokenizer.words[int(np.argmax(p))] and v["p"] == pytest.approx(p.max())
    assert f.variants[1]["names"][1] == f.tokens[f.last_index] != f.variants[2]["names"][1]
    assert f.variants[2]["names"][0] == f.tokens[f.first_index] != f.variants[1]["names"][0]


def test_the_caption_rules_can_choose_otherwise(facts):
    """The rules are over the numbers: shifted numbers choose the other captions."""
    f = facts["en"]
    saved = dict(f.after)
    try:
        other = next(s for s in language.SPORTS if s != f.person.sport)
        f.after[other] = f.before[other] + 10 * abs(f.after[f.person.sport] - f.before[f.person.sport]) + 1
        assert f.lookup_key()[0] == "lookup_not"
    finally:
        f.after.clear()
        f.after.update(saved)
    assert f.lookup_key()[0] in ("lookup_clean", "lookup_most")


def test_the_spread_rule_can_choose_otherwise(facts):
    """Other pushes choose the other spread captions: one neuron giving most of the push toward the sport, no neuron
    pushing the other way, no neuron pushing toward it."""
    f = facts["en"]
    saved = f.spread
    try:
        for pushes, key in (([1.0, 1.0, 1.0, -2.0], "spread_many"), ([3.0, 1.0, -2.0], "spread_one"),
                            ([1.0, 1.0, 1.0, 0.0], "spread_many"), ([3.0, 1.0], "spread_one"),
                            ([-1.0, -2.0, 0.0], "spread_none")):
            f.spread = top_k_shares(pushes, (1, 5, 20))
            assert f.spread_key() == key, (pushes, f.spread)
    finally:
        f.spread = saved


def test_the_share_of_the_push_is_the_lectures_one(facts):
    """mlp_fact's spread is push_share: the top 20 never give more than all the push toward the sport, and the
    top-k sums over that push are the shares (the neurons pushing the other way are not netted in)."""
    for f in facts.values():
        v = f.attribution["per_neuron"]
        for k in (1, 5, 20):
            assert f.spread["shares"][k] == push_share(f.spread["sums"][k], v) <= 1
        assert f.spread["towards"] + f.spread["against"] == pytest.approx(f.spread["total"])
    assert top_k_shares([2.0, -5.0], (1, 5))["shares"] == {1: 1.0, 5: 1.0}     # the net (-3) would say -67%


def test_the_map_lights_what_the_ablations_show(facts):
    """The map rule (issue 43), in both languages: a site is lit only if its mean-ablation (path.ablation) drops
    P(answer) by 25 percentage points or more, and every site at a name position dropping it by 50 or more is lit;
    the conclusion's key site is the lit name site with the largest drop, and an attention site there reads the first
    name by the head that reads it most. (The random-prompt sweep checks it again from the model:
    tests/caption_checks_mlp.py check_map.)"""
    for lang, f in facts.items():
        a, p = np.asarray(f.path["ablation"]), f.path["p_clean"]
        names = (f.first_index, f.last_index)
        lit = {x["site"] for x in f.lit}
        for l in range(f.n_layer):
            for ci, c in enumerate(("attention", "mlp")):
                for t in range(len(f.tokens)):
                    site, drop = f"{c}:{l}@{t}", p - a[l, ci, t]
                    assert (site in lit) == (drop >= 0.25), (lang, site, drop)
                    if t in names and drop >= 0.5:
                        assert site in lit, (lang, site)
        at_name = [x for x in f.lit if x["at_name"]]
        assert f.key_site == max(at_name, key=lambda x: x["drop"])
        if f.key_site["component"] == "attn":
            w = np.asarray(f.trace["layers"][f.key_site["layer"]]["attn"]["weights"])[:, f.key_site["position"],
                                                                                      f.first_index]
            assert f.name_reads["weight"] == pytest.approx(w.max()) and f.name_reads["head"] == int(np.argmax(w))
    # what the shipped model shows, in both languages: the attention at the last name, reading the first name
    for f in facts.values():
        assert f.conclusion_key() == "conclusion_attention"
        assert (f.key_site["layer"], f.key_site["position"]) == (0, f.last_index)


def test_the_map_tells_the_part_that_asks_for_a_sport_from_the_parts_that_pick_which(facts, gpt):
    """kind_sites, in both languages: a lit site is a kind site when its mean-ablation drops P(any sport of the
    prompt's language) by 25 points or more, recomputed here from the model; with the shipped model the one named is
    layer 1's MLP at the question word (without it, under 0.1% for every sport together), and no name site is one:
    the names pick which sport."""
    from model.analysis.circuits import sport_alternatives
    from model.language import Language
    for lang, f in facts.items():
        sports = sport_alternatives(gpt, Language(), f.prompt_lang)
        intact = float(np.asarray(probabilities(f.trace["logits"][-1]))[sports].sum())
        assert f.kinds["p_any"] == pytest.approx(intact)
        for x, site in zip(f.kinds["sites"], f.lit):
            patch = {(site["layer"], site["component"], site["position"]): f.means[site["layer"], site["component"]]}
            after = float(probabilities(gpt.trace(f.token_ids, patch=patch)["logits"][-1])[sports].sum())
            assert x["site"] == site["site"] and x["p_any_after"] == pytest.approx(after)
            assert x["kind"] == (intact - after >= 0.25), (lang, x)
        first = f.kinds["first"]
        assert (first["component"], first["layer"], first["position"]) == ("mlp", 0, len(f.tokens) - 1), lang
        assert first["p_any_after"] < 0.001 and f.kinds["names_pick_which"] and f.kind_key() == "kind_which"
        # the lit name sites pick which: without one, P(answer) falls by 25 points or more, yet a sport still comes
        at_names = [x for x in f.kinds["sites"] if x["at_name"]]
        assert at_names and all(x["p_any_after"] > 0.5 for x in at_names), (lang, at_names)


# --- every valid prompt fits: the widest words and numbers any prompt could bring --------------------------------
def widest(texts, font_size=style.CAPTION) -> str:
    from scenes.components import Label
    return max(texts, key=lambda t: Label(t, font_size=font_size).width)


@pytest.fixture(scope="module")
def widest_fills(gpt):
    """Per language of the captions: each value a caption takes, at its widest. The words of either language (a
    prompt may be written in the other one), the longest sport and sport verb, the last layer's component name,
    and numbers at their longest as shown: a restored share (share_text), a signed projection change, a
    percentage, a signed push, a rank in the vocabulary; shares of the spread up to 100%."""
    lang_ = language.Language()
    words = [style.token_label(w) for lang in ("en", "zh") for w in language.vocabulary_of(lang)]
    token = widest(words)
    sport = widest([lang_.grammar(lang).t(s) for lang in ("en", "zh") for s in language.SPORTS])
    verb = widest([lang_.grammar(lang).t(v) for lang in ("en", "zh") for v in language.SPORT_VERBS.values()])
    share = widest([style.MINUS + "8.88", "88.8", "8888"])
    percent = widest([style.percent(x) for x in (1.0, 0.888, 0.9996)])
    spread = style.percent(0.888)
    n = str(max(gpt.config.n_inner, len(words)))
    fills = {}
    for lang in ("en", "zh"):
        comp = widest([S(k, lang, l=style.shown(gpt.config.n_layer - 1)) for k in ("attn_n", "mlp_n")])
        short = widest([S(k, lang, l=style.shown(gpt.config.n_layer - 1)) for k in ("attn_short", "mlp_short")])
        language_name = widest([S(f"language_{l}", lang) for l in ("en", "zh")])
        fills[lang] = dict(answer=sport, sport=sport, other=sport, verb=verb, word=token, new=token, ta=token,
                           tb=token, tok=token, a=short, b=short, comp=comp, sa=share, sb=share,
                           d=style.signed(-88.8, 1), od=style.signed(-88.8, 1), p=percent, p0=percent, p1=percent,
                           p5=spread, p20=spread, against=style.signed(-88.88, 2), na=n, m=n, n=n, rank=len(words),
                           vrank=len(words), k=3, l=style.shown(gpt.config.n_layer - 1), language=language_name,
                           name=token, first=token, w=percent, fires=sport, q=percent)
    return fills


CAPTION_KEYS = ("where", "largest_spread", "largest_one", "largest_over", "lookup_clean", "lookup_most",
                "lookup_not", "readout_verb", "readout_sport", "readout_other", "spread_many", "spread_one",
                "spread_none",
                "and_yes", "and_partly", "conclusion_attention", "conclusion_mlp", "conclusion_elsewhere",
                "kind_which", "kind_only")


# what a caption's own rule bounds: spread_many's top neuron carries under half
RULE_BOUNDS = {"spread_many": {"p1": style.percent(0.4888)}}


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_caption_fits_two_lines_at_its_widest(widest_fills, lang):
    """With the widest values any valid prompt brings, every caption still fits the title-safe area in as many
    lines as its author gave it (Caption breaks the words again where a line would be too wide)."""
    for key in CAPTION_KEYS:
        text = S(key, lang, **{**widest_fills[lang], **RULE_BOUNDS.get(key, {})})
        shown = Caption(text, lang)
        assert len(shown) == text.count("\n") + 1 and inside_safe_area(shown), (key, shown.text)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_tracing_grid_fits_any_prompt_length(gpt, lang):
    """One column per token, 1 to MAX_TOKENS tokens, all of them the widest word of either language (and, as it
    comes, the widest next to narrow ones): the grid, its labels and its chips stay in the title-safe area, chips
    on one row never touch, and a written share sits inside its cell."""
    lang_ = language.Language()
    words = sorted({style.token_label(w) for l in ("en", "zh") for w in language.vocabulary_of(l)},
                   key=lambda w: -TokenChip(w, "#ffffff", font_size=style.SMALL).width)
    rows = [(l, c) for l in range(gpt.config.n_layer) for c in ("attn", "mlp")]
    labels = [S("mlp_short" if c == "mlp" else "attn_short", lang, l=style.shown(l)) for l, c in rows]
    half = style.safe_half_width()
    for T in range(1, MAX_TOKENS + 1):
        for tokens in (words[:1] * T, [words[i % 2 * (len(words) - 1)] for i in range(T)], words[:T]):
            share = np.linspace(0, 1, len(rows) * T).reshape(len(rows), T)
            grid = TraceGrid(share, labels, tokens, left=0.0, top=2.25, cell_w=0.9, max_width=2 * half)
            grid.shift(RIGHT * -grid.get_center()[0])
            assert grid.width <= 2 * half + 1e-6, (T, tokens, grid.width)
            chips = list(grid.chips)
            step = 2 if grid.stagger else 1
            for a, b in zip(chips, chips[step:]):
                assert a.get_right()[0] < b.get_left()[0], (T, a.word, b.word)
            for (r, c), n in zip(grid.written, grid.numbers):
                cell = grid.cell(r, c)
                assert cell.get_left()[0] <= n.get_left()[0] and n.get_right()[0] <= cell.get_right()[0], (T, c)
            assert [w.endswith("\u2026") for w in grid.words] == [c in grid.cut for c in range(T)]


# prompts of MAX_TOKENS of the longest words of each language, naming a person: the worst a valid prompt can be
LONGEST_PROMPTS = {
    "en": "badminton reportedly basketball volleyball badminton reportedly mountain serena williams badminton",
    "zh": "众所周知莎拉波娃众所周知威廉姆斯莱昂内尔布莱恩特众所周知莎拉波娃塞雷娜威廉姆斯",
}


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_longest_prompt_plays_inside_the_frame(gpt, tmp_path, lang):
    """The whole scene on a prompt of MAX_TOKENS of the language's longest words: every beat and every caption
    passes the layout checks (safe area, legibility floor, no overlaps), its grid on two rows of chips."""
    prompt = LONGEST_PROMPTS[lang]
    assert len(gpt.encode(prompt)) == MAX_TOKENS
    scene = run_dry(MlpFact, {"prompt": prompt, "lang": lang}, tmp_path, captions=True, frames=False)
    assert scene.grid.stagger
    assert_legible(scene.snapshots, lang, **LEGIBILITY["mlp_fact"])


def test_a_prompt_without_a_person_is_a_clear_error(gpt):
    with pytest.raises(ParamError, match="names no person"):
        MLP_FACT.resolve({"prompt": "a blue whale swam the sea ."}, model=gpt)


def test_a_prompt_without_a_person_is_one_line_and_exit_2():
    result = subprocess.run([sys.executable, str(REPO / "render.py"), "mlp_fact", "--set", "prompt=a blue whale was",
                             "--quality", "preview", "--format", "png"], cwd=REPO, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "person" in lines[0] and "Traceback" not in result.stderr, result.stderr


# --- the scene as played: labels are the rounding of the manifest's numbers ----------------------------------
@pytest.fixture(scope="module")
def played(lecture):
    return {lang: lecture.dry("mlp_fact", lang) for lang in ("en", "zh")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_labels_are_the_rounded_numbers(played, lang):
    s = played[lang]
    v = s.values
    grid = np.asarray(v["causal_trace"]["share"])
    assert [n.text for n in s.grid.numbers] == [share_text(grid[r, c]) for r, c in s.grid.written]
    assert sorted(s.grid.written) == sorted(zip(*np.nonzero(grid >= v["causal_trace"]["written_floor"])))
    pr = v["projections"]
    lookup, carry, andn = v["sums"]     # before + rise = after, per sport, the rise as the caption says it
    np.testing.assert_allclose(lookup["terms"][0]["values"], pr["before"], atol=1e-12)
    np.testing.assert_allclose(lookup["total"]["values"], pr["after"], atol=1e-12)
    np.testing.assert_allclose(lookup["terms"][1]["values"], np.subtract(pr["after"], pr["before"]), atol=1e-9)
    assert [n.text for n in s.look_numbers] == [f"{b} \u2192 {a}" for b, a in zip(lookup["terms"][0]["labels"],
                                                                                  lookup["total"]["labels"])]
    assert lookup["total"]["labels"] == [style.signed(a, 1) for a in pr["after"]]
    assert assert_sums_as_shown(v, f"mlp_fact {lang}") == 3
    # the carry beat: the parts of the push at the last word (direct logit attribution) and the final LN's bias add up
    # to the logit difference, as drawn
    d, L = v["path"]["dla"], len(v["path"]["dla"]["attn"])
    parts = [d["embeddings"]] + [d[c][l] for l in range(L) for c in ("attn", "mlp")] + [d["ln_f_bias"]]
    np.testing.assert_allclose([t["values"][0] for t in carry["terms"]], parts, atol=1e-12)
    assert carry["total"]["values"] == pytest.approx([d["logit_diff"]]) and sum(parts) == pytest.approx(d["logit_diff"])
    assert [n.text for n in s.carry_numbers] == [t["labels"][0] for t in carry["terms"]]
    # the AND neuron: first + last + others + bias = its input, per row (the person, then one name kept each)
    rows = v["and_neuron"]["rows"]
    for j, k in enumerate(("first", "last", "other", "bias")):
        np.testing.assert_allclose(andn["terms"][j]["values"], [r[k] for r in rows], atol=1e-12)
    np.testing.assert_allclose(andn["total"]["values"], [r["pre"] for r in rows], atol=1e-12)
    assert [n.text for n in s.andn_table.columns[-1]] == [style.signed(r["act"], 2) for r in rows]   # GELU
    said = next(c for c in s.captions if c["key"].startswith("lookup"))   # the rise it says is the one drawn
    sport = v["caption_rules"]["lookup"]["inputs"]["sport"]
    assert lookup["terms"][1]["labels"][pr["sports"].index(sport)] in said["text"]
    assert [n.text for n in s.read_numbers] == [style.signed(t["logit"], 2) for t in v["readout"]["top"]]
    n = v["neurons"][0]       # the neurons beat folded into the spread (issue 41): the top neuron, what it fires for
    assert s.top_neuron.text == S("top_neuron", s.lang, n=n["neuron"], sport=n["fires_most_for_word"])
    assert [n.text for n in s.spread_numbers] == [style.percent(v["spread"][k]) for k in ("1", "5", "20")]
    sa = v["spread_against"]
    assert s.against_note.text == S("against_note", s.lang, na=sa["n"], against=style.signed(sa["sum"], 2))
    assert S("towards_all", s.lang, m=v["spread_towards"]["n"]) == s.full_label.text
    assert [n.text for n in s.and_numbers] == [style.percent(x["p"]) for x in v["and"]]
    rules = v["caption_rules"]
    assert set(rules) == {"largest", "lookup", "readout", "carry", "spread", "and", "and_neuron",
                          "conclusion", "kind"}     # the default prompts, both languages: a kind site at the verb
    keys = [c["key"] for c in s.captions]
    assert all(r["key"] in keys for r in rules.values())
    # the map: the lit sites, each a line with its P(answer) replaced by its mean, the boxes their parts
    w = v["where"]
    assert w["lit"] == [x["site"] for x in v["map"]["lit"]] and w["boxes"] == sorted({x.split("@")[0] for x in w["lit"]})
    lines = [line.text for line in s.where.callout][2:]
    assert lines == [S("where_site", s.lang, comp=S(("attn" if x["component"] == "attn" else "mlp") + "_short", s.lang,
                                                     l=style.shown(x["layer"])),
                       tok=v["tokens"][x["position"]], p=style.percent(x["p_after"])) for x in v["map"]["lit"]]


def test_components_stay_inside_the_frame(played):
    for lang in ("en", "zh"):
        s = played[lang]
        for m in (s.grid, s.legend, s.look_words, s.look_numbers, s.top_neuron, s.spread_numbers, s.against_note,
                  s.full_label,
                  s.and_rows):
            assert inside_safe_area(m), (lang, type(m).__name__)


# --- rendering through render.py, and the manifest as proof ------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_its_manifest_matches_the_model(lecture, gpt, lang):
    m = manifest_of(lecture.clips("mlp_fact")[lang])
    v = m["values"]
    tr = gpt.trace(v["prompt"])
    assert v["tokens"] == list(tr["tokens"]) and v["token_ids"] == [int(i) for i in tr["token_ids"]]
    assert v["prompt"] == sport_fact_prompt(lang, gpt)["prompt"] and v["prompt_rule"]["lang"] == lang
    # the rule's branch and its measurement: the example is shown because the model's top-1 word after it is the sport
    ex = v["prompt_rule"]["example"]
    p = probabilities(gpt.trace(ex["prompt"])["logits"][-1])
    assert ex["top_word"] == gpt.tokenizer.words[int(np.argmax(p))] == ex["answer"] == v["answer"]
    assert v["prompt_rule"]["branch"] == "example" and ex["prompt"] == v["prompt"]
    assert v["p_answer"] == pytest.approx(p_answer(gpt, v["token_ids"], v["answer_id"]), abs=1e-12)
    ct = v["causal_trace"]
    lk = v["lookup"]
    r = [list(x) for x in ct["rows"]].index([lk["layer"], "mlp"])
    assert ct["share"][r][lk["position"]] == pytest.approx(
        restored_share(gpt, v["tokens"], v["first_index"], ct["partners"], v["answer_id"], lk["layer"], "mlp",
                       lk["position"]), abs=1e-9)
    assert len(v["push_all"]) == gpt.config.n_inner
    assert sum(v["push_all"]) + v["push_bias"] == pytest.approx(v["push_total"], abs=1e-9)
    assert [n["neuron"] for n in v["neurons"]] == list(np.argsort(-np.asarray(v["push_all"]), kind="stable")[:K_NEURONS])


# --- a key frame against committed control data (tests/control_data/mlp_fact) -------------------------------
@pytest.fixture
def where_beat(monkeypatch):
    stop_at_beat(monkeypatch, "where", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=MlpFact)
@pytest.mark.usefixtures("where_beat")
def test_frame_where(scene):
    play_until_section_ends(scene, MlpFact.construct)
