"""The superposition-in-our-model scene: the embedding angles recomputed from W_E, the random reference against a
simulation, the neuron's contexts against the sample's raw activations with topics assigned here, the fact's
per-neuron shares recomputed from the weights, the labels as the rounding of the manifest, a bad prompt as one
clear line, and a key frame."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from manim.utils.testing.frames_comparison import frames_comparison

from model import language
from model.analysis import sample_states
from model.analysis.patching import MEAN_SAMPLE
from model.analysis.superposition import embedding_angles, fact_neuron_shares
from scene_checks import manifest_of, play_until_section_ends, stop_at_beat
from scenes import style
from scenes.superposition_in_gpt import SuperpositionInGpt

__module_test__ = "superposition_in_gpt"
REPO = Path(__file__).resolve().parents[1]


def test_embedding_angles_are_every_pair_of_w_e(gpt):
    e = embedding_angles(gpt)
    E = np.asarray(gpt.W_E, np.float64)
    U = E / np.linalg.norm(E, axis=1, keepdims=True)
    C = (U @ U.T)[np.triu_indices(len(U), 1)]
    angles = np.degrees(np.arccos(np.clip(C, -1, 1)))
    counts = np.bincount(np.floor(angles).astype(int), minlength=180)
    assert e["pairs"] == len(U) * (len(U) - 1) // 2 == sum(e["counts"])
    assert np.abs(counts - np.asarray(e["counts"])).sum() <= 2
    assert e["within_85_95"] == pytest.approx(((angles >= 85) & (angles < 95)).mean(), abs=1e-4)
    assert e["min_deg"] == pytest.approx(angles.min(), abs=1e-6)
    assert (e["words"], e["dim"]) == (gpt.config.vocab_size, gpt.config.n_embd)


def test_the_random_reference_matches_a_simulation(gpt):
    e = embedding_angles(gpt)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 300_000, e["dim"]))
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    angles = np.degrees(np.arccos(cos))
    assert e["random_within_85_95"] == pytest.approx(((angles >= 85) & (angles < 95)).mean(), abs=0.004)
    assert sum(e["random_expected"]) == pytest.approx(e["pairs"], rel=1e-3)


def topic_here(word: str) -> str:
    """Each word by its own meaning, from the training language's own lists (independent of TOPICS)."""
    L, zh = language, language.ZH
    flat = lambda d: [w for ws in d.values() for w in ws]      # noqa: E731
    groups = {"people": L.FIRST_NAMES + L.LAST_NAMES, "sports": L.SPORTS + list(L.SPORT_VERBS.values()) + ["sport"],
              "places of people": L.CITIES + L.COUNTRIES + ["city", "country"], "creatures": L.CREATURES,
              "looks": L.COLOURS + L.TEXTURES + flat(L.SIZE_ADJECTIVES),
              "habitats": L.PLACE_ADJECTIVES + flat(L.PLACES), "movements": flat(L.VERBS)}
    for topic, words in groups.items():
        if word in words or word in [zh[w] for w in words]:
            return topic
    return "function words"


def test_the_packed_null_is_every_pair_at_welchs_floor(gpt):
    """Issue 43: "spread like random" is forced by 318 words in 64 dimensions. The second null: as many directions
    packed as perpendicular as the lab can. Its vectors recomputed here (the lab's run, every pair in NumPy): its
    root-mean-square cosine sits at Welch's floor sqrt((n - d) / (d (n - 1))), below which no n unit vectors in d
    dimensions can go; the embeddings' and random directions' (1 / sqrt(d)) sit above it."""
    from model.analysis.superposition import PACK_STEPS, packed_angles
    from model.superposition import pack_near_orthogonal
    e = embedding_angles(gpt)
    n, d = e["words"], e["dim"]
    k = packed_angles(n, d)
    V = pack_near_orthogonal(n, d, steps=PACK_STEPS, seed=0, sample_pairs=1, return_vectors=True)["vectors"]
    V = V.double().numpy()
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    cos = (V @ V.T)[np.triu_indices(n, 1)]
    angles = np.degrees(np.arccos(np.clip(cos, -1, 1)))
    assert k["within_85_95"] == pytest.approx(((angles >= 85) & (angles < 95)).mean(), abs=1e-12)
    assert sum(k["counts"]) == n * (n - 1) // 2
    welch = np.sqrt((n - d) / (d * (n - 1)))
    assert k["welch_rms_cos"] == pytest.approx(welch) and k["rms_cos"] == pytest.approx(welch, rel=1e-4)
    assert e["rms_cos"] > welch and 1 / np.sqrt(d) > welch


def test_a_word_is_labelled_by_its_own_topic_not_its_sentences():
    """Issue 33: "jungle" and "pond" were called creatures, 银色 (silver) 动物, because the creatures' topic held their
    habitats and colours. Each is its own topic now, and no word is in two."""
    from model.analysis.superposition import TOPICS, topic_of
    assert topic_of("jungle") == topic_of("pond") == topic_of(language.ZH["pond"]) == "habitats"
    assert topic_of("silver") == topic_of("银色") == "looks"
    assert topic_of("frog") == "creatures" and topic_of("swam") == "movements"
    words = [w for ws in TOPICS.values() for w in set(ws)]
    assert len(words) == len(set(words))
    for w in words:
        assert topic_of(w) == topic_here(w) == topic_of(language.ZH[w]), w


def test_the_share_of_the_push_is_one_definition():
    """One "share of the push" for the lecture (model.analysis.attribution.push_share): a contribution over the sum
    of the pushes towards the answer; the shares of the neurons that push towards it add up to 1 whatever the
    others do, and neurons_for_share counts the fewest largest ones reaching a fraction of it."""
    from model.analysis.attribution import neurons_for_share, push_share
    v = [3.0, -5.0, 1.0, 0.5, -0.2, 0.5]
    assert sum(push_share(x, v) for x in v if x > 0) == pytest.approx(1.0)
    assert push_share(3.0, v) == pytest.approx(0.6)
    assert neurons_for_share(v, 0.5) == 1 and neurons_for_share(v, 0.61) == 2 and neurons_for_share(v, 0.9) == 3
    assert neurons_for_share([-1.0, -2.0], 0.5) is None and np.isnan(push_share(1.0, [-1.0]))


@pytest.fixture(scope="module")
def played(lecture):
    return {lang: lecture.dry("superposition_in_gpt", lang) for lang in ("en", "zh")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_neuron_is_its_top_contexts_with_their_topics(gpt, played, lang):
    v = played[lang].values
    n = v["neuron"]
    sample = sample_states(gpt, language.Language(), MEAN_SAMPLE["n_streams"], MEAN_SAMPLE["seed"],
                           lang=v["prompt_lang"])
    acts = sample["mlp_act"][n["layer"]][..., n["neuron"]]
    assert n["contexts"][0]["activation"] == pytest.approx(float(acts.max()))
    for c in n["contexts"]:
        assert acts[c["stream"], c["position"]] == pytest.approx(c["activation"])
        assert sample["streams"][c["stream"]][c["position"]] == c["token"]
        assert c["topic"] == topic_here(c["token"])
    assert n["topics"] == sorted({topic_here(c["token"]) for c in n["contexts"]})
    assert n["polysemantic"] == (len(n["topics"]) >= 3)
    # the caption says which neurons the rule searched: every MLP neuron of every layer
    searched = sum(a.shape[-1] for a in sample["mlp_act"])
    assert n["neurons_searched"] == searched
    said = [c for c in played[lang].captions if c["beat"] == "neuron"]
    assert len(said) == 1 and said[0]["values"]["all"] == searched
    if said[0]["key"] == "polysemantic":
        assert f"{searched}" in said[0]["text"] and f"{searched}" in said[0]["say"]


def test_the_fact_shares_are_the_weights_read_through_the_unembedding(gpt):
    f = fact_neuron_shares(gpt, "naomi", "williams", "en")
    tr = gpt.trace(gpt.encode("naomi williams plays"))
    sports = [gpt.tokenizer.vocab[s] for s in language.SPORTS]
    answer = gpt.tokenizer.vocab[f["answer"]]
    direction = gpt.W_E[answer] - gpt.W_E[[s for s in sports if s != answer]].mean(0)
    scale = np.sqrt(tr["ln_f"]["var"][-1] + gpt.config.layer_norm_epsilon)
    per = []
    for l in range(gpt.config.n_layer):
        W_out = gpt.p(f"h.{l}.mlp.c_proj.weight")
        read = ((W_out - W_out.mean(1, keepdims=True)) / scale * gpt.p("ln_f.weight")) @ direction
        per += [(float(a * r), l, i) for i, (a, r) in enumerate(zip(tr["layers"][l]["mlp"]["act"][-1], read))]
    per.sort(reverse=True)
    positive = [p for p in per if p[0] > 0]
    total = sum(p[0] for p in positive)
    assert f["positive_total"] == pytest.approx(total, rel=1e-9)
    assert [(t["layer"], t["neuron"]) for t in f["top"]] == [(l, i) for _, l, i in positive[:len(f["top"])]]
    cum = np.cumsum([p[0] for p in positive]) / total
    assert f["for_half"] == int(np.argmax(cum >= 0.5)) + 1 and f["for_90"] == int(np.argmax(cum >= 0.9)) + 1
    person = next(p for p in language.make_people() if (p.first, p.last) == ("naomi", "williams"))
    assert f["answer"] == person.sport


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_labels_are_the_rounded_numbers(played, lang):
    s = played[lang]
    v = s.values
    assert [n.text for n in s.ctx_numbers] == [f"{c['activation']:.2f}" for c in v["neuron"]["contexts"]]
    assert [n.text for n in s.spread.numbers] == [style.percent(t["share"]) for t in v["fact"]["top"][:10]]
    assert str(v["fact"]["positive_neurons"]) in s.spread_count.text and str(v["fact"]["neurons"]) in \
        s.spread_count.text
    assert f"{v['embeddings']['pairs']:,}" in s.emb_header.text
    top = v["histogram_view"]["full_height_count"]
    lo = v["histogram_view"]["lo_deg"]
    for bar, count in zip(s.hist.bars, v["embeddings"]["counts"][lo:]):
        assert bar.height == pytest.approx(max(count / top * s.hist.height_, 1e-3), rel=1e-6)
    rules = v["caption_rules"]
    e, k = v["embeddings"], v["packed"]
    ours, nulls = e["within_85_95"], (e["random_within_85_95"], k["within_85_95"])
    assert rules["embeddings"]["key"] == ("less_random" if ours < min(nulls) - 0.02 else
                                          ("more_random" if ours > max(nulls) + 0.02 else "like_random"))
    assert rules["spread"]["key"] == ("spread" if v["fact"]["top"][0]["share"] < 0.5 else "concentrated")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_its_manifest_holds_every_number(lecture, gpt, lang):
    v = manifest_of(lecture.clips("superposition_in_gpt")[lang])["values"]
    assert v["embeddings"]["counts"] == embedding_angles(gpt)["counts"]
    assert v["prompt_lang"] == lang and len(v["neuron"]["contexts"]) == 8


def test_a_prompt_without_a_person_is_one_line_and_exit_2():
    r = subprocess.run([sys.executable, str(REPO / "render.py"), "superposition_in_gpt", "--set", "prompt=the fox",
                        "--quality", "preview", "--format", "png"], cwd=REPO, capture_output=True, text=True,
                       timeout=300)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "person" in lines[0], r.stderr


@pytest.fixture
def spread_beat(monkeypatch):
    stop_at_beat(monkeypatch, "spread", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=SuperpositionInGpt)
@pytest.mark.usefixtures("spread_beat")
def test_frame_spread(scene):
    play_until_section_ends(scene, SuperpositionInGpt.construct)
