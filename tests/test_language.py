"""The training language asks exactly what the lecture explains, in two languages, and its entropy floor is exact."""

import random

import pytest

from model.data import make_split
from model.errors import ModelError
from model.language import (CREATURES, HABITAT, HABITAT_TEXTURES, LANGUAGES, PLACES, PRONOUN, RELATIONS, SIZE, SIZE_ADJECTIVES, SPORT_VERBS,
                            TITLE, VERBS,
                            ZH, Language, vocabulary, vocabulary_of)
from model.tokenizer import WordTokenizer, build_tokenizer


@pytest.fixture(scope="module")
def language():
    return Language()


@pytest.fixture(scope="module")
def tok():
    return WordTokenizer(build_tokenizer(vocabulary()))


def test_a_few_hundred_words_in_two_languages_that_share_none():
    en, zh = set(vocabulary_of("en")), set(vocabulary_of("zh"))
    assert not en & zh
    assert 250 <= len(vocabulary()) <= 500 and len(vocabulary()) == 1 + len(en) + len(zh)
    assert all(w.isascii() for w in en) and not any(w.isascii() for w in zh)


def test_michael_jordan_plays_basketball_but_no_single_name_decides(language):
    assert language.sport_of("michael", "jordan") == "basketball"
    assert language.person("迈克尔", "乔丹").sport == "basketball"
    for attr in ("first", "last"):
        for relation in RELATIONS:
            by_name = {}
            for p in language.people:
                by_name.setdefault(getattr(p, attr), set()).add(p.attribute(relation))
            assert all(len(values) >= 2 for values in by_name.values()), (attr, relation)


def test_generator_is_deterministic_and_one_stream_is_one_language(language):
    for lang in (None, "en", "zh"):
        a = [t.word for t in language.stream(200, random.Random(7), lang)]
        b = [t.word for t in Language().stream(200, random.Random(7), lang)]
        assert a == b
    for s in language.corpus(100, 40, seed=1):
        langs = {t.lang for t in s}
        assert len(langs) == 1
        vocab = set(vocabulary_of(langs.pop()))
        assert all(t.word in vocab for t in s)
    with pytest.raises(ValueError, match="unknown language"):
        language.stream(5, random.Random(0), "fr")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_recall_words_repeat_an_earlier_adjective(language, lang):
    stream = language.stream(3000, random.Random(3), lang)
    words = [t.word for t in stream]
    start_word = "a" if lang == "en" else ZH["a"]
    recalls = [i for i, t in enumerate(stream) if t.kind == "recall"]
    assert len(recalls) > 50
    for i in recalls:
        start = max(j for j in range(i) if words[j] == start_word)
        assert words[i] in words[start + 1:start + 3]   # the story's texture or colour
        assert i - start >= 11                         # far back: attention is needed


@pytest.mark.parametrize("lang", LANGUAGES)
def test_facts_are_the_persons_and_the_verb_after_the_name_is_the_sports(language, lang):
    g = language.grammar(lang)
    stream = language.stream(5000, random.Random(4), lang)
    words = [t.word for t in stream]
    seen = set()
    for i, t in enumerate(stream):
        if t.kind in RELATIONS or t.kind in ("sport_verb", "pronoun"):
            # the person is the last first-name/last-name pair before the answer
            j = max(k for k in range(i) if (words[k - 1], words[k]) in g.person) if i > 1 else None
            person = g.person[words[j - 1], words[j]]
            if t.kind in RELATIONS:
                assert t.word == g.t(person.attribute(t.kind))
                assert t.entropy == 0.0
            elif t.kind == "sport_verb":
                assert i == j + 1 and t.word == g.t(SPORT_VERBS[person.sport])
            else:
                assert t.word == g.t(PRONOUN[person.gender]) and t.entropy == 0.0
            seen.add((t.kind, t.template))
    assert {("sport", "filler"), ("sport", "adjacent"), ("sport", "of"), ("sport", "pronoun"),
            ("sport_verb", ""), ("pronoun", "")} <= seen


@pytest.mark.parametrize("lang", LANGUAGES)
def test_habitat_decides_the_verb_and_the_place_and_size_the_adjective_before_the_creature(language, lang):
    g = language.grammar(lang)
    for creature in CREATURES:
        places = set(g.place_given_creature[g.t(creature)].words)
        assert places == {g.t(p) for p in PLACES[HABITAT[creature]]}
        assert set(g.verb[HABITAT[creature]].words) == {g.t(v) for v in VERBS[HABITAT[creature]]}
    for size, adjectives in SIZE_ADJECTIVES.items():
        for adjective in adjectives:
            assert g.size_of_adjective[g.t(adjective)] == size
    for habitat, textures in HABITAT_TEXTURES.items():
        assert {g.habitat_of_texture[g.t(x)] for x in textures} == {habitat}
    stream = language.stream(2000, random.Random(6), lang)
    words = [t.word for t in stream]
    creatures = {g.t(c): c for c in CREATURES}
    seen = 0
    for i in range(3, len(words) - 1):
        if words[i] in creatures and words[i - 1] in g.size_of_adjective:   # a story's first mention
            c = creatures[words[i]]
            assert g.size_of_adjective[words[i - 1]] == SIZE[c]              # size: the word before
            assert g.habitat_of_texture[words[i - 3]] == HABITAT[c]          # habitat: the texture
            assert words[i + 1] in g.verb[HABITAT[c]].words                  # habitat: the word after
            seen += 1
    assert seen > 20


def test_a_title_before_the_name_tells_the_gender(language):
    for lang in LANGUAGES:
        g = language.grammar(lang)
        for gender, title in TITLE.items():
            names = set(g.first_given_title[g.t(title)].words)
            assert names == {g.t(p.first) for p in language.people if p.gender == gender}


@pytest.mark.parametrize("lang", [None, "en", "zh"])
def test_entropy_floor_is_the_generators_own_uncertainty(lang):
    split = make_split(400, 32, seed=5, lang=lang)
    assert 0.5 < split.entropy_floor < 2.0
    # deterministic continuations (a fact's answer, the recalled adjective) cost nothing
    for kind in ("sport", "city", "country", "recall", "pronoun"):
        assert split.entropy[split.kind == kind].max() == 0.0
    # the floor is the expectation of the generator's own surprise: they agree on a large sample
    assert -split.logp.mean() == pytest.approx(split.entropy_floor, abs=0.03)


def test_the_first_word_of_a_mixture_stream_carries_the_languages_entropy(language):
    first = language.stream(1, random.Random(0))[0]
    en_only = language.stream(1, random.Random(0), "en")[0]
    assert first.entropy > en_only.entropy   # the language itself is uncertain before the first word


def test_open_choices_are_skewed_so_temperature_matters(language):
    probs = sorted(language.verb.probs.values(), reverse=True)
    assert probs[0] > 1.5 * probs[1] and len(probs) >= 6 and probs[1] > 0.1


def test_chinese_typed_without_spaces_splits_into_the_vocabularys_words(tok, language):
    assert tok.split("迈克尔乔丹打") == ["迈克尔", "乔丹", "打"]
    zh = vocabulary_of("zh")
    for a in zh:            # every pair of Chinese words, written together, splits back into the pair
        for b in zh:
            assert tok.split(a + b) == [a, b], (a, b)
    for s in language.corpus(50, 40, seed=9, lang="zh"):
        words = [t.word for t in s]
        assert tok.decode(tok.encode("".join(words))) == words


def test_tokenizer_errors(tok):
    assert tok.decode(tok.encode("Michael Jordan plays.")) == ["michael", "jordan", "plays", "."]
    with pytest.raises(ModelError, match=r"unknown word 'micheal'.*'michael'"):
        tok.encode("micheal jordan")
    with pytest.raises(ModelError, match=r"unknown word '迈克'.*'迈克尔'"):
        tok.encode("迈克乔丹打")
    with pytest.raises(ModelError, match=r"unknown word '跑'"):
        tok.encode("迈克尔乔丹跑")
    with pytest.raises(ModelError, match="5 tokens long.*context is 4"):
        tok.encode("a fox fox fox fox", max_len=4)
    with pytest.raises(ModelError, match=r"unknown word '<\|'"):
        tok.encode("<|endoftext|>")   # the special token is not a word of the language
