"""The softmax and temperature scene: its numbers against the model, and its key frames (the checks every scene
shares are in test_scenes.py)."""

from __future__ import annotations

from collections import Counter
from importlib import metadata

import numpy as np
import pytest

from sum_checks import assert_sums_as_shown
from manim.utils.testing.frames_comparison import frames_comparison

from scene_checks import manifest_of, play_until_section_ends, stop_at_beat
from model import weights_sha256
from model.language import vocabulary_of
from scenes import style
from scenes.catalog import sweep_stops
from scenes.prompts import uncertain_prompt
from scenes.components import NumberText
from scenes.softmax_temperature import S, NextToken, SoftmaxTemperature

__module_test__ = "softmax_temperature"


def softmax(z: np.ndarray, t: float) -> np.ndarray:
    """Written out again here, independently of model.probabilities."""
    if t == 0:
        return (z == z.max()).astype(np.float64) / np.count_nonzero(z == z.max())
    e = np.exp((z - z.max()) / t)
    return e / e.sum()


# --- the numbers ------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_default_prompt_is_chosen_by_its_rule(gpt, lang):
    import random
    from model import language
    chosen = uncertain_prompt(lang)
    assert chosen == uncertain_prompt(lang) and chosen["lang"] == lang
    gpt.encode(chosen["prompt"])  # grammatical: every word is in the vocabulary
    stream = language.Language().stream(64, random.Random(language.SEED), lang=lang)
    words = list(gpt.trace(chosen["prompt"])["tokens"])
    stop = language.Language().grammar(lang).t(".")
    assert any([t.word for t in stream[i:i + len(words)]] == words and (i == 0 or stream[i - 1].word == stop)
               for i in range(len(stream))), "a sentence's beginning in that language's stream"
    assert (" " in chosen["prompt"]) == (lang == "en")
    assert chosen["next_word_entropy_nats"] > 1.0 and chosen["candidates_considered"] > 1
    p = softmax(np.asarray(gpt.trace(chosen["prompt"])["logits"][-1], np.float64), 1.0)
    assert 0.1 < p.max() < 0.9, "the model should be unsure, but have a favourite"


@pytest.mark.parametrize("prompt", [None, "zh", "michael jordan plays", "a fluffy blue fox roamed the misty"])
def test_shown_numbers_are_the_models(gpt, prompt):
    prompt = uncertain_prompt("zh")["prompt"] if prompt == "zh" else prompt or uncertain_prompt()["prompt"]
    nt = NextToken(gpt, prompt, 5)
    z = np.asarray(gpt.trace(prompt)["logits"][-1], dtype=np.float64)
    assert np.array_equal(nt.logits, z)
    assert list(nt.top) == list(np.argsort(-z, kind="stable")[:5])
    for t in (1, 2, 5, 0.5, 0.1, 0.05, 0):
        shown, other = nt.at(t)
        expected = softmax(z, t)
        np.testing.assert_allclose(shown, expected[nt.top], atol=1e-6)
        assert abs(other - expected[nt.rest].sum()) <= 1e-6
    exps, exp_other, total = nt.exponentials()
    np.testing.assert_allclose(exps / total, softmax(z, 1)[nt.top], atol=1e-12)
    assert abs((exps.sum() + exp_other) / total - 1) < 1e-12


def test_number_formats_round_only_the_label():
    assert style.percent(0.26849) == "26.8%" and style.percent(0) == "0%" and style.percent(3e-5) == "<0.1%"
    assert style.percent(0.99991) == ">99.9%" and style.percent(1 - 1e-16) == "100.0%"
    assert style.signed(10.886) == "+10.89" and style.signed(-0.4) == "\u22120.40" and style.signed(-0.001) == "0.00"
    assert style.scientific(53512.7) == "5.35\u00d710\u2074" and style.scientific(9.996e5) == "1.00\u00d710\u2076"
    assert style.scientific(12.34) == "12.3"


# --- rendering, and the manifest as proof ---------------------------------------------------------
@pytest.fixture(scope="module")
def rendered(lecture):
    return lecture.clips("softmax_temperature")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_manifest_probabilities_are_softmax_of_the_trace(rendered, gpt, lang):
    m = manifest_of(rendered[lang])
    assert m["scene"] == "softmax_temperature" and m["manim_version"] == metadata.version("manim")
    assert m["model"]["weights_sha256"] == weights_sha256() and m["model"]["dir"] == "model/weights"
    v = m["values"]
    assert m["params"]["prompt"] == uncertain_prompt(lang)["prompt"] and v["prompt_rule"] == uncertain_prompt(lang)
    trace = gpt.trace(m["params"]["prompt"])
    z = np.asarray(trace["logits"][-1], dtype=np.float64)
    assert v["prompt"] == m["params"]["prompt"] and v["token_ids"] == list(trace["token_ids"])
    assert v["tokens"] == list(trace["tokens"]) and v["vocab_size"] == gpt.config.vocab_size
    ids = [c["token_id"] for c in v["candidates"]]
    assert [c["word"] for c in v["candidates"]] == [gpt.tokenizer.words[i] for i in ids]
    np.testing.assert_allclose([c["logit"] for c in v["candidates"]], z[ids], atol=1e-6)
    rest = np.setdiff1d(np.arange(len(z)), ids)
    assert v["other"]["words"] == len(rest) and z[rest].max() <= z[ids].min()
    steps = v["softmax_steps"]
    np.testing.assert_allclose(steps["exp"], np.exp(z[ids]), rtol=1e-9)
    np.testing.assert_allclose(steps["exp_sum"], np.exp(z).sum(), rtol=1e-9)
    np.testing.assert_allclose(steps["probabilities"], softmax(z, 1)[ids], atol=1e-6)
    assert [e["T"] for e in v["temperatures"]] == [1.0, *sweep_stops(m["params"]["temperatures"])]
    for entry in v["temperatures"]:
        expected = softmax(z, entry["T"])
        np.testing.assert_allclose(entry["probabilities"], expected[ids], atol=1e-6, err_msg=f"T={entry['T']}")
        assert abs(entry["other"] - expected[rest].sum()) <= 1e-6
        if entry["T"] > 0:
            np.testing.assert_allclose(entry["logits_over_T"], z[ids] / entry["T"], rtol=1e-9)
        else:
            assert entry["argmax"] == [gpt.tokenizer.words[int(np.argmax(z))]]


# --- what is on screen: every number drawn is the rounding of a manifest value -----------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_labels_are_the_rounded_manifest_values(lecture, lang):
    sc = lecture.dry("softmax_temperature", lang)
    v = sc.values
    texts = lambda group: [m.text for m in group if isinstance(m, NumberText)]  # noqa: E731
    words = [style.token_label(c["word"]) for c in v["candidates"]]
    assert [m.text for m in sc.labels] == words + [S("other", lang)]
    assert sc.more_words.text == S("n_more_words", lang, n=v["other"]["words"])
    assert texts(sc.logit_numbers) == [style.signed(c["logit"]) for c in v["candidates"]]
    steps = v["softmax_steps"]
    exp_sum = v["sums"][0]                      # e^z in one unit, 10^power: the terms add up to the sum as shown
    unit = 10.0 ** steps["exp_power"]
    assert exp_sum["unit"] == unit and (steps["exp_power"] == 0 or 1 <= max(steps["exp"]) / unit < 10 or
                                        1 <= v["other"]["exp_sum"] / unit < 10)
    np.testing.assert_allclose([t["values"][0] * unit for t in exp_sum["terms"]],
                               steps["exp"] + [v["other"]["exp_sum"]], rtol=1e-12)
    np.testing.assert_allclose(exp_sum["total"]["values"][0] * unit, steps["exp_sum"], rtol=1e-12)
    assert texts(sc.exp_numbers) == [t["labels"][0] for t in exp_sum["terms"]]
    assert sc.exp_sum.text == exp_sum["total"]["labels"][0]
    assert sc.prob_total.text == ("\u2248 100.0%" if v["sums"][1]["approx"] else "100.0%")
    assert steps["probability_total"] == pytest.approx(1.0, abs=1e-12)
    _, divided, *stops = v["sums"]   # the probability column at step 3 and at every stop (100%)
    assert assert_sums_as_shown(v, f"softmax_temperature {lang}") == 2 + len(v["temperatures"])
    assert [t["values"][0] for t in divided["terms"]] == steps["probabilities"] + [steps["other"]]
    last = v["temperatures"][-1]        # the bars end on the last stop of the sweep
    assert [t["values"][0] for t in stops[-1]["terms"]] == last["probabilities"] + [last["other"]]
    assert texts(sc.prob_bars.numbers) == [t["labels"][0] for t in stops[-1]["terms"]]
    assert sc.t_value.text == style.temperature(last["T"])


def bar_lengths(bars) -> list[float]:
    """A bar column's drawn lengths, with their sign (which side of the zero line)."""
    return [b.width * (1 if b.get_center()[0] >= bars.x0 else -1) for b in bars.bars]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bars_and_every_sweep_stop_show_the_manifest_values(lecture, lang):
    """The logit bars are the manifest's logits to one scale; the sweep is one beat that records every stop (its
    percentages as a sum of that beat); at its end the numbers on screen are the last stop's manifest values (T, z/T,
    the percentages) and the probability bars their length. The hot line is said before the first stop above 1, the
    cold line before the first below 1."""
    from scenes.softmax_temperature import PROB_BAR
    sc = lecture.dry("softmax_temperature", lang)
    v = sc.values
    assert [c.label.text for c in sc.tokens.chips] == [style.token_label(t) for t in v["tokens"]][-len(sc.tokens.chips):]
    logits = np.array([c["logit"] for c in v["candidates"]])
    lengths = np.array(bar_lengths(sc.logits.bars))
    np.testing.assert_allclose(lengths / logits, lengths[0] / logits[0], rtol=1e-6)   # one scale, signs kept
    assert "sweep" in sc.section_names and not any(n.startswith("t") and n[1:2].isdigit() for n in sc.section_names)
    swept = [s for s in v["sums"] if s["beat"] == "sweep"]
    assert [s["what"] for s in swept] == [f"probabilities at T = {e['T']:g}" for e in v["temperatures"][1:]]
    for s, entry in zip(swept, v["temperatures"][1:]):
        assert [t["values"][0] for t in s["terms"]] == entry["probabilities"] + [entry["other"]]
    last = v["temperatures"][-1]
    shown = [t[1] for t in sc.snapshots["sweep:end"]["texts"] if t[0] == "NumberText"]
    expected = [style.temperature(last["T"])] + [t["labels"][0] for t in swept[-1]["terms"]]
    if last["T"] > 0:
        expected += [style.signed(z) for z in last["logits_over_T"]]
    missing = Counter(expected) - Counter(shown)
    assert not missing, missing
    np.testing.assert_allclose(bar_lengths(sc.prob_bars.bars), np.maximum(
        np.array(last["probabilities"] + [last["other"]]) * PROB_BAR[1], 1e-4), atol=1e-6)
    said = [c["key"] for c in sc.captions if c["beat"] == "sweep"]
    rules = v["caption_rules"]
    assert said == [rules["sweep hot"]["key"], rules["sweep cold"]["key"]]   # the default sweep: 2, 5, 0.5, 0.1, 0
    assert rules["sweep hot"]["inputs"]["T"] == 5 and rules["sweep cold"]["inputs"]["T"] == 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_text_it_writes_is_the_models(lecture, gpt, lang):
    """The write beat: at each of a low, a medium and a high T, the words model.generate writes after the prompt with
    the one seed shown; the lines on screen are those words in order (at most lines_per_text lines: a longer text
    shows its first shown_words words and a closing "…"); each header counts its text's different
    words of the other language; the caption is the rule's (none at the low and medium T, some at the highest:
    write_mixes)."""
    from model.generate import generate
    from scenes.components import join_tokens
    from scenes.softmax_temperature import WRITE_TEMPERATURES
    sc = lecture.dry("softmax_temperature", lang)
    w = sc.values["write"]
    assert [s["T"] for s in w["samples"]] == list(WRITE_TEMPERATURES) and w["seed"] == sc.params["seed"]
    assert w["prompt_ids"] == sc.values["token_ids"]
    for s, block in zip(w["samples"], sc.write_blocks):
        records = generate(gpt, w["prompt_ids"], w["steps"], s["T"], w["seed"])
        assert s["generated_ids"] == [r["sampled"]["token_id"] for r in records]
        assert s["distinct"] == len(set(s["generated_ids"]))
        header, lines, count = block
        assert header.text == S("write_header", lang, t=f"{s['T']:g}")
        assert count.text == S("write_count_other", lang, m=s["other_words"], n=w["steps"],
                               other=S(f"lang_{w['other_lang']}", lang))
        shown = join_tokens([line.text for line in lines])
        cut = "…" if s["shown_words"] < len(s["words"]) else ""    # a text longer than its lines closes in "…"
        assert shown.replace(" ", "") == ("…" + "".join(style.token_label(x) for x in s["words"][:s["shown_words"]])
                                          + cut).replace(" ", "")
        assert len(lines) <= w["lines_per_text"]
    said = [c for c in sc.captions if c["beat"] == "write"]
    rule = sc.values["caption_rules"]["write"]
    other = "zh" if lang == "en" else "en"
    counts = [sum(gpt.tokenizer.words[i] in set(vocabulary_of(other)) for i in s["generated_ids"]) for s in w["samples"]]
    assert w["other_lang"] == other and counts == [s["other_words"] for s in w["samples"]]
    assert rule["key"] == ("write_mixes" if counts[0] == counts[1] == 0 < counts[2] else
                           "write_mixes_more" if counts[0] < counts[2] else "write_alike_mix")
    assert [c["key"] for c in said] == ["write_seed", rule["key"]]
    assert sc.write_seed.text == S("write_seed_label", lang, seed=w["seed"])


def test_the_default_texts_mix_the_languages_only_when_hot(lecture):
    """What the write beat says of the default lecture, in both languages: at T = 0.1 and 1 every word is the
    prompt's language; at T = 3 the text mixes in the other language's words (measured 2026-12-06: 11 of 20 in
    English, 6 of 20 in Chinese)."""
    for lang in ("en", "zh"):
        w = lecture.dry("softmax_temperature", lang).values["write"]
        counts = [s["other_words"] for s in w["samples"]]
        assert counts[0] == counts[1] == 0 < counts[2], (lang, counts)


# --- key frames against committed control data (tests/control_data/softmax_temperature) -----------
@pytest.fixture
def at_beat(monkeypatch):
    return lambda section, lang="en": stop_at_beat(monkeypatch, section, lang=lang)


@pytest.fixture
def divide_en(at_beat):
    at_beat("divide")


@pytest.fixture
def sweep_en(at_beat):
    at_beat("sweep")


@pytest.fixture
def write_zh(at_beat):
    at_beat("write", "zh")


@pytest.mark.slow
@frames_comparison(base_scene=SoftmaxTemperature)
@pytest.mark.usefixtures("divide_en")
def test_frame_softmax_steps(scene):
    play_until_section_ends(scene, SoftmaxTemperature.construct)


@pytest.mark.slow
@frames_comparison(base_scene=SoftmaxTemperature)
@pytest.mark.usefixtures("sweep_en")
def test_frame_argmax_at_zero(scene):
    play_until_section_ends(scene, SoftmaxTemperature.construct)


@pytest.mark.slow
@frames_comparison(base_scene=SoftmaxTemperature)
@pytest.mark.usefixtures("write_zh")
def test_frame_written_in_chinese(scene):
    play_until_section_ends(scene, SoftmaxTemperature.construct)
