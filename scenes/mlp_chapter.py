"""The MLP chapter's shared pieces: what the chapter found about where the model keeps a fact, for the scenes that
refer to it after mlp_fact (parameters). A scene never imports another scene: what two scenes share lives here.
"""

from __future__ import annotations

import numpy as np

from model import language as model_language
from model.analysis import person_causal_trace
from model.analysis.factpath import name_enrichment
from scenes.prompts import sport_fact_prompt

_FINDINGS: dict = {}


def chapter_finding(gpt) -> dict:
    """What the chapter found about the MLPs, for the scenes that refer to it (parameters): per language, the lookup
    MLP of the default prompt (the largest MLP cell of its causal trace, as FactLookup picks it) and whether that MLP
    writes people's sports into their last names, each person held out in turn against shuffled labels
    (factpath.name_enrichment). Once per model object in a process."""
    key = id(gpt)
    if key not in _FINDINGS:
        lang_ = model_language.Language()
        out = {}
        for lang in ("en", "zh"):
            chosen = sport_fact_prompt(lang, gpt)
            tokens, first = list(chosen["tokens"]), chosen["first_index"]
            ct = person_causal_trace(gpt, lang_, lang, tokens, first)
            share = ct["share"][:, ct["components"].index("mlp"), :]
            layer = int(np.argmax(share)) // share.shape[1]
            out[lang] = {"prompt": chosen["prompt"], **name_enrichment(gpt, lang_, lang, layer)}
        _FINDINGS[key] = out
    return _FINDINGS[key]
