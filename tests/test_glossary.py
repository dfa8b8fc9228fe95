"""Define before use (docs/teaching.md §3): every term of the glossary below is glossed the first
time the default lecture says it, in English and in Chinese.

The lecture's captions are taken in lecture order (the catalog's, which is lecture.toml's: test_render.py) from the
suite's dry runs of every scene with its defaults (scene_checks.Lecture.dry, shared with test_scenes.py). A caption
"says" a term when the term's pattern matches its text or its words for the ear (what the voice reads).

A caption *glosses* a term when it is the caption recorded for the term in GLOSSARY (scene and caption key) and it
also says the term's meaning: the meaning pattern recorded beside it matches the caption's text or its words for the
ear ("logit" with "score", 总变差 with 不共有). So the test fails when a term is first said somewhere else (an earlier
scene started using it bare, or the order changed), and when the defining caption loses its meaning.

A term whose first use is in a scene this table cannot change yet is recorded as a known gap (GAP: why): its test is
expected to fail (xfail, strict), so a fix shows up as an unexpected pass and the gap is struck from the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from scenes.catalog import SCENES

LANGS = ("en", "zh")


@dataclass(frozen=True)
class Term:
    name: str
    said: dict        # lang -> pattern: the caption says the term
    meaning: dict     # lang -> pattern: the caption says what it means
    defined: dict     # lang -> (scene, caption key): the caption that glosses it, the term's first use
    gap: dict | None = None   # lang -> why the first use does not gloss it yet (a known gap: xfail, strict)


GLOSSARY = (
    Term("token", {"en": r"\btokens?\b", "zh": r"词元|\btokens?\b"},
         {"en": r"(cuts?|splits?)[\s\S]*into|pieces?", "zh": r"切分"},
         {"en": ("token_embedding", "tokens"), "zh": ("token_embedding", "tokens")}),
    Term("softmax", {"en": r"softmax", "zh": r"softmax"},
         {"en": r"into[\s\S]*probabilit", "zh": r"变成[\s\S]*概率"},
         {"en": ("architecture", "pipeline_out"), "zh": ("architecture", "pipeline_out")}),
    Term("logit", {"en": r"\blogits?\b", "zh": r"logit"},
         {"en": r"score", "zh": r"分数"},
         {"en": ("architecture", "unembed_rows"), "zh": ("architecture", "unembed_rows")}),
    Term("MLP / 多层感知机", {"en": r"\bMLPs?\b|multilayer perceptron", "zh": r"\bMLP\b|多层感知机"},
         {"en": r"multilayer perceptron", "zh": r"多层感知机"},
         {"en": ("architecture", "pipeline"), "zh": ("architecture", "pipeline")}),
    Term("residual stream", {"en": r"residual", "zh": r"残差"},
         {"en": r"adds? its output", "zh": r"加回"},
         {"en": ("architecture", "stream"), "zh": ("architecture", "stream")}),
    Term("LayerNorm", {"en": r"layer ?norm", "zh": r"layer ?norm|层归一化"},
         {"en": r"mean 0", "zh": r"均值 ?0"},
         {"en": ("architecture", "stream_norm"), "zh": ("architecture", "stream_norm")}),
    Term("embedding", {"en": r"embedding", "zh": r"嵌入"},
         {"en": r"vector|numbers", "zh": r"向量"},
         {"en": ("architecture", "pipeline"), "zh": ("architecture", "pipeline")}),
    Term("temperature", {"en": r"temperature", "zh": r"温度"},
         {"en": r"sharpens or flattens", "zh": r"变尖或变平"},
         {"en": ("next_token", "settings"), "zh": ("next_token", "settings")}),
    Term("seed", {"en": r"\bseed(?:s|ed)?\b", "zh": r"种子"},
         {"en": r"same seed", "zh": r"种子相同"},
         {"en": ("next_token", "settings"), "zh": ("next_token", "settings")}),
    Term("score", {"en": r"\bscores?\b", "zh": r"分数"},
         {"en": r"row times[\s\S]*added up", "zh": r"相乘再求和"},
         {"en": ("architecture", "unembed_rows"), "zh": ("architecture", "unembed_rows")}),
    Term("logit lens", {"en": r"logit lens", "zh": r"logit ?透镜"},
         {"en": r"as if (?:it were )?(?:the )?last", "zh": r"当作最后一层"},
         {"en": ("architecture", "lens_forms"), "zh": ("architecture", "lens_forms")}),
    Term("argmax", {"en": r"argmax", "zh": r"argmax"},
         {"en": r"largest", "zh": r"最大"},
         {"en": ("softmax_temperature", "zero"), "zh": ("softmax_temperature", "zero")}),
    Term("parallelogram", {"en": r"parallelogram", "zh": r"平行四边形"},
         {"en": r"opposite sides equal and parallel", "zh": r"对边相等且平行"},
         {"en": ("embedding_space", "example_hit"), "zh": ("embedding_space", "example_miss")}),
    Term("attention weight", {"en": r"attention weights?", "zh": r"注意力权重"},
         {"en": r"share of attention", "zh": r"注意力份额"},
         {"en": ("queries_keys", "idea_value"), "zh": ("queries_keys", "idea_value")}),
    Term("total variation", {"en": r"total variation", "zh": r"总变差"},
         {"en": r"not (in common|share)", "zh": r"不共有"},
         {"en": ("next_token", "context_apart"), "zh": ("next_token", "context_apart")}),
    Term("held-out", {"en": r"held[- ]out", "zh": r"留出"},
         {"en": r"not used to measure|measured? the direction from the (?:others|rest)", "zh": r"没有用来测|只用其余的测"},
         {"en": ("embedding_space", "direction_separates"), "zh": ("embedding_space", "direction_separates")}),
    Term("cosine", {"en": r"cosine", "zh": r"余弦"},
         {"en": r"same (way|direction)", "zh": r"同向|方向"},
         {"en": ("embedding_space", "neighbours"), "zh": ("embedding_space", "neighbours")}),
    Term("head", {"en": r"\bheads?\b", "zh": r"注意力头|\d+ ?号头|个头"},
         {"en": r"one of .*attention|several .*at once|each head", "zh": r"并行|各自"},
         {"en": ("architecture", "heads_gloss"), "zh": ("architecture", "heads_gloss")}),
    Term("neuron", {"en": r"\bneurons?\b", "zh": r"神经元"},
         {"en": r"one (for each|per) neuron", "zh": r"每个神经元一个"},
         {"en": ("mlp_steps", "up"), "zh": ("mlp_steps", "up")}),
    Term("restore", {"en": r"\brestor", "zh": r"恢复"},
         {"en": r"putting back its value from the real run", "zh": r"放回原来运行中的值"},
         {"en": ("mlp_fact", "where"), "zh": ("mlp_fact", "where")}),
    Term("superposition", {"en": r"superposition", "zh": r"叠加"},
         {"en": r"more .* than .*(dimensions|numbers)|share", "zh": r"多于|比.*多|共用|共享"},
         {"en": ("toy_superposition", "define_pentagon"), "zh": ("toy_superposition", "define_pentagon")}),
    Term("feature", {"en": r"\bfeatures?\b", "zh": r"特征"},
         {"en": r"direction|property", "zh": r"方向|属性"},
         {"en": ("toy_superposition", "define_pentagon"), "zh": ("toy_superposition", "define_pentagon")}),
    Term("ablation", {"en": r"\bablat", "zh": r"消融"},
         {"en": r"set to zero|zeroed|replace", "zh": r"置零|设为 ?0|替换"},
         {"en": ("values_update", "ablation"), "zh": ("values_update", "ablation")}),
    Term("saturate", {"en": r"saturat", "zh": r"饱和"},
         {"en": r"one key takes nearly all", "zh": r"几乎拿走全部"},
         {"en": ("queries_keys", "scale"), "zh": ("queries_keys", "scale")}),
    Term("loss", {"en": r"\bloss\b", "zh": r"损失"},
         {"en": r"surprised", "zh": r"意外"},
         {"en": ("positional_encoding", "lab_question"), "zh": ("positional_encoding", "lab_question")}),
)


# Terms the lecture does without (issue 41 rule 5: cut a term rather than define it where it is not needed): never
# said, in either language, so none comes back bare.
CUT = {
    "class-mean direction": {"en": r"class[- ]mean", "zh": r"类均值"},
    "<eos>": {"en": r"<eos>|end of text", "zh": r"<eos>|结束符"},
    "state (of a run)": {"en": r"\bstates?\b", "zh": r"状态"},
}


def lecture_captions(lecture, lang: str) -> list[dict]:
    """Every caption of the default lecture in `lang`, in lecture order: scene, key, text and the words said."""
    return [{"scene": name, "key": c["key"], "text": c["text"], "say": c["say"]}
            for name in SCENES for c in lecture.dry(name, lang).captions]


def first_use(captions: list[dict], pattern: str) -> dict | None:
    rx = re.compile(pattern, re.IGNORECASE)
    return next((c for c in captions if rx.search(c["text"]) or rx.search(c["say"])), None)


def cases():
    for term in GLOSSARY:
        for lang in LANGS:
            gap = (term.gap or {}).get(lang)
            marks = [pytest.mark.xfail(strict=True, reason=f"known gap: {gap}")] if gap else []
            yield pytest.param(term, lang, marks=marks, id=f"{term.name}-{lang}")


@pytest.mark.parametrize("term,lang", list(cases()))
def test_every_term_is_glossed_where_the_lecture_first_says_it(lecture, term, lang):
    c = first_use(lecture_captions(lecture, lang), term.said[lang])
    assert c is not None, f"{term.name!r} is never said in the {lang} lecture: strike it from GLOSSARY"
    where = (c["scene"], c["key"])
    assert where == term.defined[lang], (f"{term.name!r} is first said in {where[0]}'s caption {where[1]!r} "
                                         f"({c['text']!r}), not where GLOSSARY has it defined: {term.defined[lang]}")
    said = c["text"] + "\n" + c["say"]
    assert re.search(term.meaning[lang], said, re.IGNORECASE), (
        f"{term.name!r} is first said in {where} without its meaning ({term.meaning[lang]!r}): {c['text']!r}")


def test_the_glossary_names_real_captions():
    """Every caption GLOSSARY records is a string of its scene's table, in both languages."""
    import importlib
    for term in GLOSSARY:
        for lang, (scene, key) in term.defined.items():
            module = importlib.import_module(SCENES[scene].module)
            # the module that defines the scene class: the scene's module, or its package's beats.py
            module = importlib.import_module(getattr(module, SCENES[scene].cls).__module__)
            tables = [v for v in vars(module).values() if hasattr(v, "table") and isinstance(v.table, dict)]
            if key == "title_note":     # the title card's note: built by the scene's title_note(), not one string
                assert hasattr(module, SCENES[scene].cls), (term.name, scene)
                continue
            assert any(key in t.table for t in tables), f"{term.name}: {scene} has no caption {key!r}"


@pytest.mark.parametrize("lang", LANGS)
def test_a_term_the_lecture_cut_is_never_said(lecture, lang):
    captions = lecture_captions(lecture, lang)
    for term, patterns in CUT.items():
        c = first_use(captions, patterns[lang])
        assert c is None, f"{term!r} was cut from the lecture, yet {c['scene']}'s {c['key']!r} says it: {c['text']!r}"
