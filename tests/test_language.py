"""The training language asks exactly what the lecture explains, and its entropy floor is exact."""

import random

import pytest

from model.data import make_split
from model.language import Language, vocabulary
from model.tokenizer import WordTokenizer, build_tokenizer
from model.errors import ModelError


@pytest.fixture(scope="module")
def language():
    return Language()


def test_michael_jordan_plays_basketball_but_neither_name_decides(language):
    assert language.sport_of("michael", "jordan") == "basketball"
    for attr in ("first", "last"):
        by_name = {}
        for p in language.people:
            by_name.setdefault(getattr(p, attr), set()).add(p.sport)
        assert all(len(sports) >= 2 for sports in by_name.values()), attr


def test_generator_is_deterministic(language):
    a = [t.word for t in language.stream(200, random.Random(7))]
    b = [t.word for t in Language().stream(200, random.Random(7))]
    assert a == b


def test_recall_words_repeat_an_earlier_adjective(language):
    stream = language.stream(3000, random.Random(3))
    words = [t.word for t in stream]
    recalls = [i for i, t in enumerate(stream) if t.kind == "recall"]
    assert len(recalls) > 50
    for i in recalls:
        start = max(j for j in range(i) if words[j] == "a")
        assert words[i] in words[start + 1:start + 3]   # the story's texture or colour
        assert i - start >= 11                         # far back: attention is needed


def test_entropy_floor_is_the_generators_own_uncertainty():
    split = make_split(400, 32, seed=5)
    assert 0.5 < split.entropy_floor < 2.0
    # deterministic continuations (the fact's sport, the recalled adjective) cost nothing
    assert split.entropy[split.kind == "sport"].max() == 0.0
    assert split.entropy[split.kind == "recall"].max() == 0.0
    # the floor is the expectation of the generator's own surprise: they agree on a large sample
    assert -split.logp.mean() == pytest.approx(split.entropy_floor, abs=0.03)


def test_open_choices_are_skewed_so_temperature_matters(language):
    probs = language.verb.cum_weights
    first, second = probs[0], probs[1] - probs[0]
    assert first > 1.5 * second and len(language.verb.words) >= 8


def test_tokenizer_errors():
    tok = WordTokenizer(build_tokenizer(vocabulary()))
    assert tok.decode(tok.encode("Michael Jordan plays.")) == ["michael", "jordan", "plays", "."]
    with pytest.raises(ModelError, match=r"unknown word 'micheal'.*'michael'"):
        tok.encode("micheal jordan")
    with pytest.raises(ModelError, match="5 tokens long.*context is 4"):
        tok.encode("a fox fox fox fox", max_len=4)
    with pytest.raises(ModelError, match=r"unknown word '<\|'"):
        tok.encode("<|endoftext|>")   # the special token is not a word of the language
