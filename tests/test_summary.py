"""The closing scene: each answer's number against its source (the head rule, the recorded benchmark, mlp_fact's
map, GPT-3's config and the lab's estimate), each caption's rule, the labels against the manifest, the benchmark
script's bad input, and a key frame (the checks every scene shares: test_scenes.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from manim.utils.testing.frames_comparison import frames_comparison

from conftest import REPO
from model import GPT3_175B
from model.params import parameter_split
from model.superposition import random_count_estimate
from scene_checks import manifest_of, play_until_section_ends, stop_at_beat
from scenes import style
from scenes.prompts import lookback_head, lookback_prompt
from scenes.summary import EPS_DEG, PARALLEL_PASS, Summary, count_text

__module_test__ = "summary"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_its_manifest_matches_the_sources(lecture, gpt, lang):
    m = manifest_of(lecture.clips("summary")[lang])
    v = m["values"]
    head = lookback_head(gpt, lang=lang)
    c = v["context"]
    assert (c["layer"], c["head"], c["focus"]) == (head["layer"], head["head"], head["focus"])
    assert c["weight"] == head["weight"] and c["tokens_back"] == c["focus"] - c["key"] > 0
    weights = head["trace"]["layers"][c["layer"]]["attn"]["weights"][c["head"], c["focus"]]
    assert weights[c["key"]] == pytest.approx(c["weight"])
    assert v["parallel"] == json.loads(PARALLEL_PASS.read_text())[lang]   # the clip's language's own entry
    assert gpt.encode(v["parallel"]["prompt"]) == gpt.encode(v["prompt"]) and v["parallel"]["tokens"] == len(v["tokens"])
    # where facts live: mlp_fact's own conclusion in this language (the same site, the same numbers as its map)
    story = lecture.dry("mlp_fact", lang).values["story"][lang]
    f = v["facts"]
    assert f["key_site"]["site"] == story["key_site"]["site"] and f["key_site"]["token"] == story["key_site"]["token"]
    assert f["key_site"]["p_after"] == pytest.approx(story["key_site"]["p_after"], abs=1e-12)
    assert f["prompt"] == story["prompt"]
    s = v["scaling"]
    assert s["gpt3_parameters"] == parameter_split(GPT3_175B)["total"] and s["d_model"] == 12288
    assert [r["count"] for r in s["random_directions"]] == [random_count_estimate(12288, e) for e in EPS_DEG]
    rules = v["caption_rules"]
    assert rules["parallel"]["key"] == ("parallel_faster" if v["parallel"]["ratio"] > 1 else "parallel_not_faster")
    said = next(c for c in lecture.dry("summary", lang).captions if c["key"] == rules["parallel"]["key"])
    assert f"{v['parallel']['tokens']} " in said["text"] and f"{v['parallel']['ratio']:.1f}" in said["text"]
    # issue 43: "parallel" holds for reading a prompt and for training, not for generating: the line says so
    assert all(w in said["text"] for w in (("training", "enerating") if lang == "en" else ("训练", "生成")))
    # the superposition line uses the chapter's kept band, 85-95 degrees (near_orthogonal says why)
    sup = next(c for c in lecture.dry("summary", lang).captions if c["key"] == "scaling")
    assert "85–95°" in sup["text"] and EPS_DEG[-1] == 5
    site = f["key_site"]
    assert rules["facts"]["key"] == ("facts_elsewhere" if site is None else f"facts_{site['component']}")
    said = next(c for c in lecture.dry("summary", lang).captions if c["key"] == rules["facts"]["key"])
    if site is not None:   # the map's numbers, as mlp_fact labels them; no new statistic
        assert style.percent(site["p_after"]) in said["text"] and style.token_label(site["token"]) in said["text"]
        assert re.findall(r"\d+(?:\.\d+)?%", said["text"]) == [style.percent(site["p_after"])]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_labels_are_the_manifests_numbers(lecture, lang):
    s = lecture.dry("summary", lang)
    v = s.values
    assert s.arc_label.text == style.percent(v["context"]["weight"])
    assert [n.text for n in s.times.numbers] == [f"{v['parallel'][k]:.2f} ms"
                                                for k in ("one_pass_ms", "token_by_token_ms")]
    f = v["facts"]
    if f["key_site"] is not None:
        assert [n.text for n in s.fact_bars.numbers] == [style.percent(f["p_clean"]),
                                                         style.percent(f["key_site"]["p_after"])]
    numbers = s.scaling_table.columns[0]
    assert [n.text for n in numbers] == [f"{v['scaling']['gpt3_parameters']:,}"] + \
        [count_text(r["count"]) for r in v["scaling"]["random_directions"]]


def test_counts_are_written_plainly_then_as_powers_of_ten():
    assert count_text(9.43) == "9" and count_text(4586.4) == "4,586"
    assert count_text(1.352e21) == "1.4\u00d710\u00b2\u00b9" == style.scientific(1.352e21, 2)   # as near_orthogonal


def test_the_benchmark_refuses_a_bad_run_count_in_one_line():
    r = subprocess.run([sys.executable, "benchmarks/parallel_pass.py", "--runs", "0"], capture_output=True,
                       text=True, cwd=REPO)
    assert r.returncode == 2 and r.stderr.strip() == "error: --runs must be at least 1"


def test_the_recorded_benchmark_is_the_scripts_own_record(gpt):
    """One entry per language, each measured on that language's default prompt (the one the summary shows)."""
    record = json.loads(PARALLEL_PASS.read_text())
    assert set(record) == set(style.LANGUAGES)
    for lang, r in record.items():
        assert r["lang"] == lang and gpt.encode(r["prompt"]) == gpt.encode(lookback_prompt(lang)["prompt"])
        assert r["tokens"] == len(gpt.encode(r["prompt"])) and r["runs"] >= 100
        assert r["ratio"] == pytest.approx(r["token_by_token_ms"] / r["one_pass_ms"])


# --- a key frame against committed control data (tests/control_data/summary) --------------------------------
@pytest.fixture
def scaling_beat(monkeypatch):
    stop_at_beat(monkeypatch, "scaling", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=Summary)
@pytest.mark.usefixtures("scaling_beat")
def test_frame_scaling(scene):
    play_until_section_ends(scene, Summary.construct)
