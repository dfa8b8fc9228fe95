"""model.analysis.head_jobs: the census of a head's top key over the chapter's prompts (KIND_RULE), and the swap test
that alone may call a head idle (IDLE_RULE), in both languages."""

from __future__ import annotations

import numpy as np
import pytest

from model import NumpyGPT, probabilities
from model.analysis import ablation_effect
from model.analysis.head_jobs import (IDLE_POINTS, KINDS, answer_swaps, key_kind, story_sample, swap_test,
                                      top_key_census)
from model.errors import ModelError
from scenes.prompts import head_scores, lookback_prompt

LANGS = ("en", "zh")


@pytest.fixture(scope="module")
def gpt():
    return NumpyGPT.load()


@pytest.mark.parametrize("lang", LANGS)
def test_sample_is_the_chapter_form(lang):
    sample = story_sample(lang, n=40)
    assert len(sample) == 40 and sample == story_sample(lang, n=40)          # seeded
    recall = {"en": {"was", "felt"}, "zh": {"是", "摸起来"}}[lang]
    for s in sample:
        assert s["words"][s["focus"]] in recall and s["focus"] == len(s["words"]) - 1
        assert s["words"][s["answer_index"]] == s["answer"] and s["answer_index"] < s["focus"]
        assert s["form"] == ("colour" if s["words"][s["focus"]] in ("was", "是") else "texture")
    with pytest.raises(ModelError):
        story_sample("fr")
    with pytest.raises(ModelError):
        story_sample(lang, n=0)


def test_key_kind_rule_order():
    words = ["a", "silky", "orange", "tiny", "frog", "dived", "the", "verdant", "lake", ".", "the", "frog", "was"]
    f = len(words) - 1
    assert key_kind(words, 2, f, "orange", "en") == "answer"
    assert key_kind(words, f, f, "orange", "en") == "self"
    assert key_kind(words, f - 1, f, "orange", "en") == "previous"
    assert key_kind(words, 0, f, "orange", "en") == "first"
    assert key_kind(words, 9, f, "orange", "en") == "punctuation"
    assert key_kind(words, 6, f, "orange", "en") == "grammar"
    assert key_kind(words, 7, f, "orange", "en") == "other"
    # the answer is tested first: the same word as the answer at the previous position is still "answer"
    assert key_kind(words, f - 1, f, "frog", "en") == "answer"
    zh = ["一只", "丝滑", "橙色", "微小", "青蛙", "潜入", "了", "翠绿", "的", "湖泊", "。", "这只", "青蛙", "是"]
    assert key_kind(zh, 6, len(zh) - 1, "橙色", "zh") == "grammar"
    assert key_kind(zh, 10, len(zh) - 1, "橙色", "zh") == "punctuation"
    with pytest.raises(ModelError):
        key_kind(words, f, f - 1, "orange", "en")


@pytest.mark.parametrize("lang", LANGS)
def test_census_counts_each_head_top_key(gpt, lang):
    sample = story_sample(lang, n=30)
    census = top_key_census(gpt, lang, sample)
    assert census["n"] == 30 and sum(census["forms"].values()) == 30
    vocab = gpt.tokenizer.vocab
    traces = [gpt.trace([vocab[w] for w in s["words"]]) for s in sample]
    for (layer, head), h in census["heads"].items():
        assert sum(h["counts"].values()) == 30
        for form, n in census["forms"].items():
            assert sum(h["by_form"][form].values()) == n
        # decided again, from the traces' weights
        kinds = [key_kind(s["words"], int(np.argmax(t["layers"][layer]["attn"]["weights"][head, s["focus"],
                                                                                           : s["focus"] + 1])),
                          s["focus"], s["answer"], lang) for s, t in zip(sample, traces)]
        assert h["counts"] == {k: kinds.count(k) for k in KINDS}
        assert h["job_count"] == max(h["counts"].values()) and h["counts"][h["job"]] == h["job_count"]


@pytest.mark.parametrize("lang", LANGS)
def test_swap_inputs_for_the_default_prompt(gpt, lang):
    chosen = lookback_prompt(lang, gpt)
    ids = [int(i) for i in gpt.encode(chosen["prompt"])]
    f = chosen["focus_index"]
    swaps = answer_swaps(gpt, ids, f, lang)
    assert swaps["answer"] == chosen["adjective"] and swaps["position"] == chosen["adjective_index"]
    assert swaps["group"] == "colour" and len(swaps["swapped"]) == 9
    for word, s in zip(swaps["swapped_for"], swaps["swapped"]):
        assert s[swaps["position"]] == gpt.tokenizer.vocab[word] and len(s) == f + 1
        assert [a for i, a in enumerate(s) if i != swaps["position"]] == \
               [a for i, a in enumerate(ids[: f + 1]) if i != swaps["position"]]
    # a focus whose next word is not an earlier word of the prompt has no swap test
    assert answer_swaps(gpt, ids, 1, lang) is None


@pytest.mark.parametrize("lang", LANGS)
def test_swap_test_calls_no_working_head_idle(gpt, lang):
    """The causal head of each language's default prompt moves P(adjective) by far more than the idle bound; a swap
    that changes nothing moves nothing (every head idle)."""
    chosen = lookback_prompt(lang, gpt)
    ids = [int(i) for i in gpt.encode(chosen["prompt"])]
    f = chosen["focus_index"]
    swaps = answer_swaps(gpt, ids, f, lang)
    layer = head_scores(gpt, lang)["best"][0]
    test = swap_test(gpt, ids, f, swaps["answer_id"], swaps["swapped"], layers=[layer])
    best = tuple(head_scores(gpt, lang)["best"])
    assert test["heads"][best]["mean_abs_move"] > 10 * IDLE_POINTS and not test["heads"][best]["idle"]
    assert test["p_clean"] == pytest.approx(float(probabilities(gpt.trace(ids)["logits"][f])[swaps["answer_id"]]))
    for h in test["heads"].values():
        assert h["idle"] == (h["mean_abs_move"] < IDLE_POINTS) and h["mean_abs_move"] >= abs(h["move"]) - 1e-9
    same = swap_test(gpt, ids, f, swaps["answer_id"], [ids[: f + 1]], layers=[layer])
    assert all(h["idle"] and h["mean_abs_move"] < 1e-6 for h in same["heads"].values())
    with pytest.raises(ModelError):
        swap_test(gpt, ids, f, swaps["answer_id"], [])
    with pytest.raises(ModelError):
        swap_test(gpt, ids, f, swaps["answer_id"], [ids[:f]])


def test_zeroing_hides_the_backup_head(gpt):
    """English, layer 3 head 1 (index (2, 0)): zeroing it moves P("orange") by less than the idle bound, but the swap
    test moves it by far more: it is not idle, and only the swap test can tell."""
    chosen = lookback_prompt("en", gpt)
    ids = [int(i) for i in gpt.encode(chosen["prompt"])]
    f = chosen["focus_index"]
    swaps = answer_swaps(gpt, ids, f, "en")
    zero = ablation_effect(gpt, ids, 2, 0, swaps["answer"])
    assert 100 * abs(zero["p_with_head"] - zero["p_without_head"]) < IDLE_POINTS
    test = swap_test(gpt, ids, f, swaps["answer_id"], swaps["swapped"], layers=[2])
    assert not test["heads"][2, 0]["idle"] and test["heads"][2, 0]["mean_abs_move"] > 10 * IDLE_POINTS
