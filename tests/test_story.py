"""One story in two languages (docs/model.md, "One story in two languages"): the default lecture, played in English
and in Chinese (the dry runs the suite already makes: scene_checks.Lecture.dry), follows the same components where
the rules pick the same ones in both languages, records both picks in the manifest (never naming the other
language's pick in a video: docs/teaching.md §6), and chooses the same caption, by the same rule key, beat by beat.

- Featured components: the attention chapter's head (queries_keys, causal_mask, values_update) and the layer that
  holds it (multi_head, add_norm) are each language's pick of one rule run on both languages' default prompts
  (scenes.prompts.story_heads): the scene's manifest records both languages' scores, its component is its own
  language's pick, and its title card asks the scene's question, naming neither pick. The summary's head is the
  chapter's; architecture's logit lens shows the answer forming at the chapter head's layer's attention, in each
  language.
- The MLP chapter: mlp_fact's lookup point (MLP 0 at the last name) is the same in both languages; mlp_steps picks its
  layer and neuron per language; each records both languages' picks and conclusions (values.story),
  and says a conclusion that differs as a finding in both languages (lookup_langs, ablation_langs, readout_langs).
- Caption keys: every beat says the same caption keys in the same order in both languages.
"""

from __future__ import annotations

import tomllib

import numpy as np
import pytest

from helpers import ROOT

LANGS = ("en", "zh")
LECTURE = [s["name"] for s in tomllib.loads((ROOT / "lecture.toml").read_text())["scene"]]

HEAD_SCENES = ("queries_keys", "causal_mask", "values_update")    # follow the chapter's head
LAYER_SCENES = {"multi_head": "choice", "add_norm": "layer_choice"}  # follow its layer (where the story is recorded)

# Scenes whose beats still say different caption keys in the two languages (none now). A scene listed here is a
# strict xfail, so that a fix shows; never add one to pass a test.
KNOWN_DIFFERENCES: dict[str, str] = {}


def story_of(name: str, v: dict) -> dict:
    return v["choice"]["story"] if name in HEAD_SCENES or name == "multi_head" else v["layer_choice"]["story"]


def picks(story: dict) -> dict:
    """Each language's head, decided again from every head's score the manifest records for both languages."""
    out = {}
    for lang in LANGS:
        s = np.asarray(story["scores"][lang])
        assert s.shape[0] >= 1 and np.isfinite(s).all()
        out[lang] = [int(i) for i in np.unravel_index(int(s.argmax()), s.shape)]
    assert story["chosen"] == out
    return out


@pytest.fixture(scope="module")
def dry(lecture):
    return lambda name, lang: lecture.dry(name, lang)


@pytest.mark.parametrize("name", [*HEAD_SCENES, *LAYER_SCENES])
def test_the_featured_component_is_each_languages_pick_of_one_rule(dry, name):
    scenes = {lang: dry(name, lang) for lang in LANGS}
    stories = {lang: story_of(name, s.values) for lang, s in scenes.items()}
    assert stories["en"]["scores"] == stories["zh"]["scores"], "both lectures record the same two languages' scores"
    chosen = picks(stories["en"])
    for lang, s in scenes.items():
        v = s.values
        if name in HEAD_SCENES:
            assert [v["layer"], v["head"]] == chosen[lang]
        else:
            assert v["layer"] == chosen[lang][0]
        # the title card asks the scene's question: no pick, no language named (the story is the manifest's)
        note = s.captions[0]
        assert note["key"] == "title_note" and "parts" not in note
        assert not any(word in note["text"] for word in ("English", "Chinese", "英文", "中文")), note["text"]
        assert not {"story", "layer_story"} & set(v.get("caption_rules", {}))


@pytest.mark.parametrize("name", ["mlp_steps", "mlp_fact"])
def test_the_mlp_chapter_records_both_languages_picks(dry, name):
    """Each language's scene records both languages' picks and conclusions alike; its own entry is what it shows."""
    scenes = {lang: dry(name, lang) for lang in LANGS}
    entries = {lang: {k: e for k, e in s.values["story"].items() if k in LANGS} for lang, s in scenes.items()}
    assert entries["en"] == entries["zh"], "both lectures record the same two languages' numbers"
    for lang, s in scenes.items():
        v, own = s.values, entries[lang][lang]
        shown = (v["layer"], v["readout"]["neuron"]) if name == "mlp_steps" else \
            (v["lookup"]["layer"], v["lookup"]["position"])
        assert shown == ((own["layer"], own["neuron"]) if name == "mlp_steps" else (own["layer"], own["position"]))
    if name == "mlp_fact":   # one rule, one component: the lookup MLP at the last name in both languages
        en, zh = entries["en"]["en"], entries["en"]["zh"]
        assert (en["layer"], en["position_is"]) == (zh["layer"], zh["position_is"]) == (en["layer"], "last_name")
    else:                    # each language's pick is recorded, and said in neither title card
        for lang, s in scenes.items():
            assert "mlp_story" not in s.values.get("caption_rules", {}) and "parts" not in s.captions[0]
            assert not any(word in s.captions[0]["text"] for word in ("English", "Chinese", "英文", "中文"))


def test_the_summary_and_the_logit_lens_tell_the_chapters_story(dry):
    for lang in LANGS:
        head = dry("queries_keys", lang).values
        c = dry("summary", lang).values["context"]
        assert [c["layer"], c["head"]] == [head["layer"], head["head"]]
        lens = dry("architecture", lang).values["lens"]
        tops = [p["top_id"] for p in lens["points"]]
        settled = next(i for i in range(len(tops)) if all(t == lens["answer_id"] for t in tops[i:]))
        point = lens["points"][settled]
        assert (point["part"], point["layer"]) == ("attn", head["layer"]), \
            f"{lang}: the answer forms at {point}, the chapter's head is in layer {head['layer']}"


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN_DIFFERENCES[n], strict=True))
                                  if n in KNOWN_DIFFERENCES else n for n in LECTURE])
def test_every_beat_says_the_same_caption_keys_in_both_languages(dry, name):
    said = {lang: [(c["beat"], c["key"], tuple(c.get("parts", ()))) for c in dry(name, lang).captions]
            for lang in LANGS}
    assert said["en"] == said["zh"]
    rules = {lang: {k: r["key"] for k, r in dry(name, lang).values.get("caption_rules", {}).items()} for lang in LANGS}
    assert rules["en"] == rules["zh"]


def test_the_mlp_chapter_reaches_one_conclusion_and_parameters_claims_only_it(dry):
    """mlp_fact's closing beat states the carry beat's finding by one rule in both languages: the same conclusion key
    where both languages' carry keys agree, conclusion_langs (naming both) where they differ; then what research on
    real GPTs finds, in both. parameters' closing claim about the MLP chapter is the chapter's lookup layer, with the
    held-out counts the chapter's rule gives, in both lectures alike."""
    scenes = {lang: dry("mlp_fact", lang) for lang in LANGS}
    carry = {lang: scenes["en"].values["story"][lang]["carry_key"] for lang in LANGS}
    assert carry == {lang: scenes["zh"].values["story"][lang]["carry_key"] for lang in LANGS}
    for lang, s in scenes.items():
        rules = s.values["caption_rules"]
        want = "conclusion_langs" if len(set(carry.values())) > 1 else \
            {"carry_lookup": "conclusion_two_steps", "carry_kept": "conclusion_carried",
             "carry_other": "conclusion_other", "carry_none": "conclusion_none"}[carry[lang]]
        assert rules["conclusion"]["key"] == want
        assert rules["carry"]["key"] == ("carry_langs" if len(set(carry.values())) > 1 else carry[lang])
        closing = [c["key"] for c in s.captions if c["beat"] == "summary"]
        assert closing == [want, "research"], closing
        # the carrier and the lookup MLP are lit on the closing map
        lit = s.values["where"]
        assert lit["carrier"] == s.values["path"]["carrier"]["layer"] and lit["layer"] == s.values["lookup"]["layer"]
    for lang in LANGS:
        p = dry("parameters", lang).values
        if p["caption_rules"]["summary"]["key"] != "summary":
            continue
        finding = p["mlp_finding"]
        for l in LANGS:
            assert finding[l]["layer"] == scenes[l].values["lookup"]["layer"], "the layer the chapter found"
            assert finding[l]["hits"] == scenes[l].values["projections"]["loo"]["hits"]
            assert finding[l]["p_value"] < 0.05
