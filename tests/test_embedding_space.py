"""The embedding-space scene: the plane, the parallelograms and the neighbours recomputed here by brute force, the
manifest against them and against semantic_directions, each caption's rule, the labels against the manifest, and
a key frame (the checks every scene shares: test_scenes.py)."""

from __future__ import annotations

import numpy as np
import pytest
from manim.utils.testing.frames_comparison import frames_comparison

from model import ModelError
from model.analysis.directions import language_directions, parallelogram_accuracy, semantic_directions
from model.analysis.embedding import attribute_plane, class_words, nearest_words, parallelograms
from scene_checks import manifest_of, play_until_section_ends, stop_at_beat
from scenes import style
from scenes.embedding_space import NULL_SEED, NULL_SHUFFLES, EmbeddingSpace

__module_test__ = "embedding_space"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_plane_is_the_two_measured_directions(gpt, lang):
    p = attribute_plane(gpt, lang)
    words = class_words("habitat", lang)
    X = gpt.W_E[[gpt.tokenizer.vocab[w] for w in p["words"]]]
    water = X[[words[w]["habitat"] == "water" for w in p["words"]]].mean(0)
    land = X[[words[w]["habitat"] == "land" for w in p["words"]]].mean(0)
    big = X[[words[w]["size"] == "big" for w in p["words"]]].mean(0)
    small = X[[words[w]["size"] == "small" for w in p["words"]]].mean(0)
    u1 = (water - land) / np.linalg.norm(water - land)
    d2 = big - small
    u2 = d2 - (d2 @ u1) * u1
    u2 /= np.linalg.norm(u2)
    np.testing.assert_allclose(p["unit_axes"], [u1, u2], atol=1e-12)
    C = X - X.mean(0)
    np.testing.assert_allclose(p["coords"], C @ np.stack([u1, u2]).T, atol=1e-12)
    assert p["variance_kept"] == pytest.approx(((C @ u1) ** 2).sum() / (C ** 2).sum()
                                               + ((C @ u2) ** 2).sum() / (C ** 2).sum())
    assert 0 < p["variance_kept"] < 1 and len(p["words"]) == 16


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_parallelograms_agree_with_the_directions_test(gpt, lang):
    r = parallelograms(gpt, lang, "habitat", "size")
    words = class_words("habitat", lang)
    names = list(words)
    X = gpt.W_E[[gpt.tokenizer.vocab[w] for w in names]]
    ref = parallelogram_accuracy(X, np.array([words[w]["habitat"] for w in names]),
                                 np.array([words[w]["size"] for w in names]), np.array(["one"] * len(names)))
    assert (r["accuracy"], r["quadruples"]) == (pytest.approx(ref["accuracy"]), ref["n"])
    ex = r["example"]
    query = X[names.index(ex["b"])] - X[names.index(ex["a"])] + X[names.index(ex["c"])]
    others = [w for w in names if w not in (ex["a"], ex["b"], ex["c"])]
    cos = {w: float(X[names.index(w)] @ query / np.linalg.norm(X[names.index(w)]) / np.linalg.norm(query))
           for w in others}
    assert ex["nearest"] == max(cos, key=cos.get) and ex["cosine"] == pytest.approx(cos[ex["nearest"]])
    assert ex["hit"] == (words[ex["nearest"]]["habitat"] == words[ex["b"]]["habitat"]
                         and words[ex["nearest"]]["size"] == words[ex["c"]]["size"])


def test_nearest_words_are_the_highest_cosines(gpt):
    E = gpt.W_E
    i = gpt.tokenizer.vocab["frog"]
    cos = E @ E[i] / np.linalg.norm(E, axis=1) / np.linalg.norm(E[i])
    cos[i] = -2
    got = nearest_words(gpt, i, 5)
    assert [n["token_id"] for n in got] == list(np.argsort(-cos, kind="stable")[:5])
    assert [n["cosine"] for n in got] == pytest.approx(sorted(cos, reverse=True)[:5])
    with pytest.raises(ModelError, match="no token id"):
        nearest_words(gpt, 10_000)
    with pytest.raises(ModelError, match="unknown attribute"):
        class_words("colour", "en")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_its_manifest_matches_the_analysis(lecture, gpt, lang):
    m = manifest_of(lecture.clips("embedding_space")[lang])
    v = m["values"]
    assert v["words_lang"] == lang
    plane = attribute_plane(gpt, lang)
    assert v["plane"]["words"] == plane["words"]
    np.testing.assert_allclose(v["plane"]["coords"], plane["coords"], atol=1e-12)
    # each language's own figures, against its own shuffled labels
    measured = semantic_directions(gpt, n_shuffles=NULL_SHUFFLES, seed=NULL_SEED)["habitat"]
    own = language_directions(gpt, lang, "habitat", n_shuffles=NULL_SHUFFLES, seed=NULL_SEED)
    assert v["held_out"]["measured"] == measured["held_out_by_language"][lang] == own["held_out"]
    assert v["held_out"]["null_mean"] == own["null"]["held_out_mean"]
    assert v["held_out"]["missed"] == own["held_out_missed"]
    assert v["parallelogram"]["measured"] == own["parallelogram"] and v["parallelogram"]["lang"] == lang
    assert v["parallelogram"]["null_p95"] == own["null"]["parallelogram_p95"]
    # the language's own parallelogram figure is the directions test's over that language's words alone
    words = {w: a for w, a in class_words("habitat", lang).items()}
    names = list(words)
    X = gpt.W_E[[gpt.tokenizer.vocab[w] for w in names]]
    assert own["parallelogram"] == parallelogram_accuracy(
        X, np.array([words[w]["habitat"] for w in names]), np.array([words[w]["size"] for w in names]),
        np.array([lang] * len(names)))["accuracy"]
    assert v["parallelogram"]["example"] == parallelograms(gpt, lang, "habitat", "size", start=v["word"])["example"]
    # the example by its rule, blind to the results: from the prompt's creature, b and c the first listed that fit
    ex, creatures = v["parallelogram"]["example"], class_words("habitat", lang)
    names = list(creatures)
    first = lambda keep: next(w for w in names if keep(creatures[w]))   # noqa: E731
    assert ex["a"] == v["word"]
    assert ex["b"] == first(lambda c: c["size"] == creatures[ex["a"]]["size"] and c["habitat"] != creatures[ex["a"]]["habitat"])
    assert ex["c"] == first(lambda c: c["habitat"] == creatures[ex["a"]]["habitat"] and c["size"] != creatures[ex["a"]]["size"])
    assert v["neighbours"] == nearest_words(gpt, gpt.tokenizer.vocab[v["word"]], 5)
    creatures = class_words("habitat", lang)
    assert v["word"] in creatures and v["word"] in v["tokens"]
    assert v["neighbour_creatures"] == sum(n["word"] in creatures for n in v["neighbours"])
    rules = v["caption_rules"]
    assert rules["direction"]["key"] == ("direction_separates" if v["held_out"]["measured"] > v["held_out"]["null_p95"]
                                         else "direction_no_better")
    # each language's own result; the other language's recorded where it differs (the course page's note)
    other = language_directions(gpt, "zh" if v["words_lang"] == "en" else "en", "habitat", n_shuffles=NULL_SHUFFLES,
                                seed=NULL_SEED)
    beats = {"mine": v["parallelogram"]["measured"] > v["parallelogram"]["null_p95"],
             "other": other["parallelogram"] > other["null"]["parallelogram_p95"]}
    differ = v.get("languages_differ", {})
    assert rules["parallelogram"]["key"] == ("parallelogram_often" if beats["mine"] else "parallelogram_chance")
    assert ("parallelogram" in differ) == (beats["mine"] != beats["other"])
    assert rules["example"]["key"] == ("example_hit" if v["parallelogram"]["example"]["hit"] else "example_miss")
    missed = {"mine": bool(v["held_out"]["missed"]), "other": bool(other["held_out_missed"])}
    assert rules["picture"]["key"] == ("picture_missed" if missed["mine"] else "picture_all")
    assert ("picture" in differ) == (missed["mine"] != missed["other"])
    said = [c["key"] for c in m["captions"]] if "captions" in m else None
    if said:       # (a clip with its own captions) the lesson follows the parallelogram's figure, as its rule chose
        lesson = {"parallelogram_often": "lesson_often", "parallelogram_chance": "lesson_chance"}[
            rules["parallelogram"]["key"]]
        assert lesson in said and said.index(lesson) == said.index(rules["parallelogram"]["key"]) + 1, said


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_labels_and_points_are_the_manifests(lecture, lang):
    s = lecture.dry("embedding_space", lang)
    v = s.values
    header, _, _, numbers = s.held_bars
    assert [n.text for n in numbers] == [style.percent(v["held_out"]["measured"]), style.percent(v["held_out"]["null_mean"])]
    _, _, _, numbers = s.par_bars
    assert [n.text for n in numbers] == [style.percent(v["parallelogram"]["measured"]),
                                         style.percent(v["parallelogram"]["null_mean"])]
    assert [n.text for n in s.neighbour_chart.numbers] == [style.signed(n["cosine"]) for n in v["neighbours"]]
    assert [w.text for w in s.neighbour_chart.labels] == [n["word"] for n in v["neighbours"]]
    # every dot is named, each label nearer its own dot than any other dot
    assert [label.text for label in s.dot_labels] == v["plane"]["words"]
    for i, label in enumerate(s.dot_labels):
        gaps = [np.linalg.norm(label.get_center()[:2] - d.get_center()[:2]) for d in s.dots]
        assert gaps[i] <= min(gaps) + 0.6, (label.text, gaps[i], min(gaps))
    # the points are the coordinates, at one scale for both axes (the view does not stretch the plane)
    centres = np.array([d.get_center()[:2] for d in s.dots])
    coords = np.array(v["plane"]["coords"])
    scale = (centres - centres.mean(0)) / (coords - coords.mean(0))
    np.testing.assert_allclose(scale, scale[0, 0], rtol=1e-6)


# --- a key frame against committed control data (tests/control_data/embedding_space) -----------------------
@pytest.fixture
def parallelogram_beat(monkeypatch):
    stop_at_beat(monkeypatch, "parallelogram", lang="en")


@pytest.mark.slow
@frames_comparison(base_scene=EmbeddingSpace)
@pytest.mark.usefixtures("parallelogram_beat")
def test_frame_parallelogram(scene):
    play_until_section_ends(scene, EmbeddingSpace.construct)
