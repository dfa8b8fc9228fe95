"""Next-token prediction and generation: the sampler (reproducible, each draw checkable from its u), NumPy
against Torch and transformers step by step, the context pair's rule recomputed by brute force, the scene's
manifest against the model, its labels against the manifest, and bad input as one clear line (the checks every
scene shares: test_scenes.py)."""

from __future__ import annotations

import re

import itertools

import numpy as np
import pytest

from sum_checks import assert_sums_as_shown, reads_as_quoted
import torch

from model import DEFAULT_DIR, ModelError, probabilities
from model.analysis.context import largest_context_effect, total_variation
from model.generate import generate, order, sample
from model.torch_gpt import TorchGPT
from manim.utils.testing.frames_comparison import frames_comparison

from scene_checks import manifest_of, play_until_section_ends, stop_at_beat
from scenes import style
from scenes.catalog import NEXT_TOKEN
from scenes.next_token import NextToken
from scenes.params import ParamError
from scenes.prompts import context_pair, language_of, uncertain_prompt

__module_test__ = "next_token"
PROMPTS = {"en": uncertain_prompt("en")["prompt"], "zh": uncertain_prompt("zh")["prompt"]}


# --- the sampler ------------------------------------------------------------------------------------------
def test_sample_takes_the_stretch_that_holds_u():
    p = np.array([0.1, 0.5, 0.0, 0.4])            # laid out most probable first: 1 [0, .5), 3 [.5, .9), 0 [.9, 1)
    assert list(order(p)) == [1, 3, 0, 2]
    assert [sample(p, u) for u in (0.0, 0.49, 0.5, 0.89, 0.9, 0.999999)] == [1, 1, 3, 3, 0, 0]
    tie = np.array([0.25, 0.5, 0.25])               # a tie: the lower id first
    assert [sample(tie, u) for u in (0.6, 0.8)] == [0, 2]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_same_seed_gives_the_same_words_and_each_draw_is_checkable(gpt, lang):
    a = generate(gpt, PROMPTS[lang], steps=6, temperature=1.0, seed=7)
    assert a == generate(gpt, PROMPTS[lang], steps=6, temperature=1.0, seed=7)
    runs = {tuple(s["sampled"]["token_id"] for s in generate(gpt, PROMPTS[lang], 6, 1.0, seed)) for seed in range(8)}
    assert len(runs) > 1, "eight seeds all wrote the same words"
    us = np.random.default_rng(7).random(6)
    ids = gpt.encode(PROMPTS[lang])
    for step, u in zip(a, us):
        assert step["token_ids"] == ids and step["u"] == u
        p = probabilities(gpt.trace(ids)["logits"][-1], 1.0)
        s = step["sampled"]
        ranked = list(order(p))
        assert s["rank"] == ranked.index(s["token_id"]) and s["probability"] == pytest.approx(p[s["token_id"]])
        assert s["cumulative_before"] == pytest.approx(p[ranked[:s["rank"]]].sum(), abs=1e-12)
        assert s["cumulative_before"] <= u < s["cumulative_before"] + s["probability"] + 1e-12
        shown = [c["token_id"] for c in step["candidates"]]
        assert shown == ranked[:5]
        assert sum(c["probability"] for c in step["candidates"]) + step["other"] == pytest.approx(1.0)
        ids = ids + [s["token_id"]]


def test_temperature_zero_takes_the_most_likely_word_and_draws_nothing(gpt):
    steps = generate(gpt, PROMPTS["en"], steps=3, temperature=0.0, seed=1)
    for s in steps:
        logits = gpt.trace(s["token_ids"])["logits"][-1]
        assert s["u"] is None and s["sampled"]["token_id"] == int(np.argmax(logits)) and s["sampled"]["rank"] == 0


@pytest.mark.slow
def test_numpy_torch_and_transformers_agree_on_every_step(gpt):
    """Each step's distribution from Torch and from transformers' GPT-2 equals NumPy's; with the recorded u the
    same word is drawn."""
    import transformers
    torch_gpt = TorchGPT.from_tensors(gpt.config, gpt.params).eval()
    hf = transformers.GPT2LMHeadModel.from_pretrained(DEFAULT_DIR).eval()
    for lang in ("en", "zh"):
        for step in generate(gpt, PROMPTS[lang], steps=4, temperature=0.7, seed=3):
            ids = torch.tensor([step["token_ids"]])
            with torch.no_grad():
                p_torch = torch.softmax(torch_gpt(ids)[0, -1].double() / 0.7, -1).numpy()
                p_hf = torch.softmax(hf(ids).logits[0, -1].double() / 0.7, -1).numpy()
            p_np = probabilities(gpt.trace(step["token_ids"])["logits"][-1], 0.7)
            np.testing.assert_allclose(p_torch, p_np, atol=1e-5)
            np.testing.assert_allclose(p_hf, p_np, atol=1e-5)
            assert sample(p_torch, step["u"]) == step["sampled"]["token_id"] or \
                abs(step["u"] - step["sampled"]["cumulative_before"]) < 1e-5   # only a u on a border may differ


@pytest.mark.parametrize("kwargs, needle", [({"steps": 0}, "steps"), ({"seed": -1}, "seed"),
                                            ({"temperature": -1}, "temperature"), ({"steps": 40}, "context")])
def test_bad_generation_requests_are_model_errors(gpt, kwargs, needle):
    with pytest.raises(ModelError, match=needle):
        generate(gpt, PROMPTS["en"], **{"steps": 2, **kwargs})


# --- the context pair ------------------------------------------------------------------------------------
def test_the_context_rule_is_the_brute_force_maximum(gpt):
    """largest_context_effect against every pair compared one by one, on a few sentences."""
    sentences = [gpt.encode(s) for s in ("the city of michael williams is rome .", "the sport of michael williams is",
                                         "a silky orange tiny frog dived the verdant lake .",
                                         "the country of maria bryant is")]
    found = largest_context_effect(gpt, sentences, max_tokens=6)
    prefixes = []
    for ids in sentences:
        for n in range(2, min(len(ids), 6) + 1):
            if tuple(ids[:n]) not in prefixes:
                prefixes.append(tuple(ids[:n]))
    best = (-1.0, None)
    for a, b in itertools.combinations(prefixes, 2):
        if a[-1] == b[-1]:
            d = float(total_variation(gpt.next_token_probabilities(list(a)), gpt.next_token_probabilities(list(b))))
            if d > best[0] + 1e-12:
                best = (d, [list(a), list(b)])
    assert found["prefixes"] == best[1] and found["distance"] == pytest.approx(best[0], abs=1e-9)
    assert found["prefixes_compared"] == len(prefixes)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_default_pair_ends_on_one_word_after_different_words(gpt, lang):
    pair = context_pair(gpt, lang)
    a, b = pair["token_ids"]
    assert a[-1] == b[-1] and a[:-1] != b[:-1] and 2 <= len(a) <= 8 and 2 <= len(b) <= 8
    assert language_of(gpt.tokenizer.decode(a)) == lang
    d = total_variation(gpt.next_token_probabilities(a), gpt.next_token_probabilities(b))
    assert pair["total_variation"] == pytest.approx(float(d), abs=1e-9)


# --- the scene ------------------------------------------------------------------------------------------
def test_bad_parameters_are_clear_errors(gpt):
    long = " ".join(["the"] * (gpt.config.n_positions - 1))
    NEXT_TOKEN.resolve({"prompt": long, "steps": 2}, model=gpt)          # the last word fills the context
    with pytest.raises(ParamError, match="do not fit the model's context"):
        NEXT_TOKEN.resolve({"prompt": long, "steps": 3}, model=gpt)
    with pytest.raises(ParamError, match="temperature: a temperature must be 0 or between"):
        NEXT_TOKEN.resolve({}, {"temperature": "-0.5"}, model=gpt)
    with pytest.raises(ParamError, match="seed: must be between"):
        NEXT_TOKEN.resolve({"seed": -1}, model=gpt)


def test_a_bad_temperature_is_one_line_and_exit_2():
    from conftest import run_render
    r = run_render("next_token", "--temperature", "-1", "--dry-run")
    assert r.returncode == 2 and "temperature" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_its_manifest_matches_the_model(lecture, gpt, lang):
    m = manifest_of(lecture.clips("next_token")[lang])
    v, params = m["values"], m["params"]
    assert v["prompt"] == PROMPTS[lang] and v["token_ids"] == gpt.encode(PROMPTS[lang])
    again = generate(gpt, v["prompt"], params["steps"], params["temperature"], params["seed"], top_k=params["top_k"])
    assert len(v["steps"]) == params["steps"]
    for shown, ref in zip(v["steps"], again):
        assert shown["token_ids"] == ref["token_ids"] and shown["u"] == ref["u"]
        assert shown["temperature"] == params["temperature"]
        p = probabilities(gpt.trace(shown["token_ids"])["logits"][-1], shown["temperature"])
        for c in shown["candidates"]:
            assert c["probability"] == pytest.approx(float(p[c["token_id"]]), abs=1e-12)
        assert shown["sampled"]["token_id"] == sample(p, shown["u"])
    assert v["generated_ids"] == [s["sampled"]["token_id"] for s in again]
    ctx = v["context"]
    for prompt in ctx["prompts"]:
        p = gpt.next_token_probabilities(prompt["token_ids"])
        assert [c["token_id"] for c in prompt["candidates"]] == list(order(p)[:3])
        assert prompt["other"] == pytest.approx(1 - sum(c["probability"] for c in prompt["candidates"]), abs=1e-9)
    a, b = (q["token_ids"] for q in ctx["prompts"])
    assert ctx["total_variation"] == pytest.approx(float(total_variation(gpt.next_token_probabilities(a),
                                                                          gpt.next_token_probabilities(b))))
    rules = v["caption_rules"]
    assert rules["context"]["key"] == ("context_apart" if ctx["total_variation"] >= ctx["threshold_apart"]
                                       else "context_differ")
    first = v["steps"][0]
    assert rules["sample"]["key"] == ("sample_argmax" if first["u"] is None else "sample_top"
                                      if first["sampled"]["rank"] < params["top_k"] else "sample_other")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_labels_are_the_rounded_numbers(lecture, lang):
    s = lecture.dry("next_token", lang)
    v = s.values
    sums = v["sums"]                    # every bar column is a whole distribution (100%)
    assert assert_sums_as_shown(v, f"next_token {lang}") == len(v["steps"]) + len(v["context"]["prompts"])
    for step, bars, marker, drawn in zip(v["steps"], s.bars, s.markers, sums):
        assert [t["values"][0] for t in drawn["terms"]] == [c["probability"] for c in step["candidates"]] + \
            [step["other"]]
        assert [n.text for n in bars.numbers] == [t["labels"][0] for t in drawn["terms"]]
        rank = min(step["sampled"]["rank"], len(step["candidates"]))     # the drawn word's row, as captions quote it
        assert reads_as_quoted(bars.numbers[rank].text, style.percent(drawn["terms"][rank]["values"][0]))
        if step["u"] is not None:
            assert f"u = {step['u']:.3f}" == marker[1].text
    said = [c for c in s.captions if c["key"].startswith("sample")]
    first = v["steps"][0]["sampled"]
    assert style.percent(first["probability"]) in said[0]["text"]
    for prompt, bars, drawn in zip(v["context"]["prompts"], s.pair_bars, sums[len(v["steps"]):]):
        assert [t["values"][0] for t in drawn["terms"]] == [c["probability"] for c in prompt["candidates"]] + \
            [prompt["other"]]
        assert [n.text for n in bars.numbers] == [t["labels"][0] for t in drawn["terms"]]
    assert f"{v['context']['total_variation']:.3f}" == s.tv_readout[1].text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_temperature_and_seed_are_explained_where_they_first_appear(lecture, lang):
    """The readout (temperature, seed) comes on in the sample beat, and that beat's captions say what each means:
    the temperature sharpens or flattens the probabilities (scores are not yet defined here; or, at T = 0,
    takes the most likely word), the seed fixes the draws; no
    earlier caption names either."""
    s = lecture.dry("next_token", lang)
    temperature, seed = s.params["temperature"], s.params["seed"]
    beats = [c["beat"] for c in s.captions]
    said = [c for c in s.captions if c["beat"] == "sample"]
    settings = next(c for c in said if c["key"].startswith("settings"))
    assert settings["key"] == ("settings" if temperature > 0 else "settings_argmax")
    assert style.temperature(temperature) in settings["text"] and str(seed) in settings["text"]
    meaning = {"en": r"sharpens or flattens", "zh": r"变尖或变平"} if temperature > 0 else {"en": r"most likely", "zh": r"最可能"}
    assert re.search(meaning[lang], settings["text"])
    assert re.search({"en": r"same seed", "zh": r"种子相同"}[lang], settings["text"]) or temperature == 0
    before = s.captions[:beats.index("sample")]
    assert not any(re.search(r"temperature|seed|温度|种子", c["text"], re.I) for c in before)


# --- a key frame against committed control data (tests/control_data/next_token) ------------------------------
@pytest.fixture
def sample_beat(monkeypatch):
    stop_at_beat(monkeypatch, "sample", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=NextToken)
@pytest.mark.usefixtures("sample_beat")
def test_frame_sample(scene):
    play_until_section_ends(scene, NextToken.construct)
