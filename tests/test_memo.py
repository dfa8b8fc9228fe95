"""model.memo: a prompt-free analysis computed once per model (by what the model is, not which object holds it),
its answer shared read-only."""

from __future__ import annotations

import numpy as np
import pytest

from model import NumpyGPT
from model.language import Language
from model.memo import model_digest, per_model


def test_an_answer_is_kept_per_model_content_not_per_object():
    calls = []

    @per_model
    def analysis(gpt, lang, language=None):
        calls.append(lang)
        return {"mean": gpt.params["transformer.wte.weight"].mean(0), "rows": [1, 2], "lang": lang}

    a, b = NumpyGPT.load(), NumpyGPT.load()
    assert a is not b and model_digest(a) == model_digest(b)
    first = analysis(a, "en", language=Language())
    again = analysis(b, "en", language=Language())          # another object, the same weights, a new Language
    assert calls == ["en"] and np.array_equal(first["mean"], again["mean"])
    analysis(a, "zh")
    assert calls == ["en", "zh"]
    # the answer is shared read-only: its arrays refuse writes, its dicts and lists are the caller's own
    with pytest.raises(ValueError):
        first["mean"][0] = 1.0
    first["rows"].append(3)
    first["lang"] = "changed"
    fresh = analysis(a, "en", language=Language())
    assert fresh["rows"] == [1, 2] and fresh["lang"] == "en" and calls == ["en", "zh"]
    # other weights: computed again
    c = NumpyGPT.load()
    c.params["transformer.wte.weight"] = c.params["transformer.wte.weight"] + 1.0
    c._digest = None
    assert model_digest(c) != model_digest(a)
    analysis(c, "en", language=Language())
    assert calls == ["en", "zh", "en"]


def test_the_language_sample_is_computed_once_per_model(monkeypatch):
    """The chapter's heaviest prompt-free analyses (the mean state over the language sample, the people's name
    states) are remembered: a second scene's model object asks and gets the same arrays without a forward pass."""
    from model.analysis import mean_states
    from model.analysis.directions import last_name_states
    a, b = NumpyGPT.load(), NumpyGPT.load()
    means = mean_states(a, Language(), n_streams=3, seed=11)
    states = last_name_states(a, Language(), "en")
    monkeypatch.setattr(NumpyGPT, "trace", lambda *args, **kwargs: pytest.fail("ran the model again"))
    again = mean_states(b, Language(), n_streams=3, seed=11)
    assert means.keys() == again.keys() and all(np.array_equal(means[k], again[k]) for k in means)
    assert np.array_equal(last_name_states(b, Language(), "en")["mlp"], states["mlp"])
