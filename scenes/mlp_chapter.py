"""The MLP chapter's shared pieces: what the chapter found about where the model keeps a fact, for the scenes that
refer to it after mlp_fact (parameters). A scene never imports another scene: what two scenes share lives here.
"""

from __future__ import annotations

import numpy as np

from model import language as model_language
from model.analysis import mean_states, person_causal_trace
from model.memo import per_model
from model.analysis.factmap import key_site, lit_sites
from model.analysis.factpath import fact_path, name_enrichment
from scenes.prompts import sport_fact_prompt

def sample_means(gpt) -> dict:
    """Per (layer, component): the mean state over MEAN_SAMPLE (200 windows of the training mixture, seed 7), once
    per model in a process (mean_states is remembered per model: model.memo)."""
    return mean_states(gpt, model_language.Language())


@per_model
def chapter_finding(gpt) -> dict:
    """What the chapter found about the MLPs, for the scenes that refer to it (parameters): per language, the lookup
    MLP of the default prompt (the largest MLP cell of its causal trace, as FactLookup picks it), whether that MLP
    writes people's sports into their last names, each person held out in turn against shuffled labels
    (factpath.name_enrichment), and whether mlp_fact's map lights it at a name of that prompt (its mean-ablation
    there drops P(answer) by LIT_DROP or more: "lit_at_name", the causal test), and the map's conclusion (summary):
    the lit site at a name whose mean-ablation drops P(answer) most ("key_site", None when no name site is lit),
    with P(answer) intact ("p_clean"). Once per model in a process (model.memo)."""
    lang_ = model_language.Language()
    out = {}
    for lang in ("en", "zh"):
        chosen = sport_fact_prompt(lang, gpt)
        tokens, first = list(chosen["tokens"]), chosen["first_index"]
        ct = person_causal_trace(gpt, lang_, lang, tokens, first)
        share = ct["share"][:, ct["components"].index("mlp"), :]
        layer = int(np.argmax(share)) // share.shape[1]
        path = fact_path(gpt, lang_, lang, tokens, first, sample_means(gpt), layer)
        names = (first, first + 1)
        sites = lit_sites(path["ablation"], path["p_clean"], path["components"], names)
        lit = [s["site"] for s in sites if s["component"] == "mlp" and s["layer"] == layer and s["at_name"]]
        # the map's conclusion, as mlp_fact draws it: the lit site at a name with the largest drop
        top = key_site(sites)
        out[lang] = {"prompt": chosen["prompt"], **name_enrichment(gpt, lang_, lang, layer), "lit_at_name": lit,
                     "p_clean": float(path["p_clean"]), "answer": chosen.get("answer"),
                     "names": [tokens[first], tokens[first + 1]],
                     "lit_elsewhere": sum(not s["at_name"] for s in sites),
                     "key_site": None if top is None else {**top, "token": tokens[top["position"]]}}
    return out
