"""multi_head's numbers: every head of one layer at the token in focus (LayerHeads), read from the trace and the
weights (model.analysis: each head's ΔE and their lengths; model.analysis.head_jobs: the swap test that alone may call
a head idle, IDLE_RULE, and which head fetches the colour and which the texture, JOBS_RULE, each measured over 200
prompts) and the manifest's record. The scene: beats.py.
"""

from __future__ import annotations

import numpy as np

from model.analysis import head_contribution, head_delta_sizes
from model.analysis.head_jobs import IDLE_RULE, answer_swaps, form_jobs, swap_test
from scenes.attention_chapter import HeadChoice
from scenes.params import AUTO
from scenes.prompts import language_of, lookback_prompt, own_language


class LayerHeads(HeadChoice):
    """Every head of one layer at the token in focus (the layer chosen once: attention_chapter.HeadChoice, with the
    rule's head in that layer): patterns, where each looks most, outputs, concat, W_O."""

    def __init__(self, gpt, params: dict):
        super().__init__(gpt, params, head=AUTO)
        c = gpt.config
        self.config, self.dh, self.d = c, self.d_head, self.d_model
        tr, L, f = self.trace, self.layer, self.focus
        attn = tr["layers"][L]["attn"]
        self.patterns = attn["weights"]                                  # (heads, query, key)
        row = attn["weights"][:, f, : f + 1]
        self.top_keys = [int(np.argmax(r)) for r in row]                 # where each head looks most
        self.top_weights = [float(r.max()) for r in row]
        self.head_out = attn["head_out"][:, f]                           # (heads, d_head)
        self.concat = attn["concat"][f]
        self.W_O = gpt.attn_out_weight(L)
        self.b_O = gpt.attn_out_bias(L)
        self.out = attn["out"][f]
        # the swap test at the focus (IDLE_RULE): only a head it moves by under 1 percentage point is called idle;
        # where the prompt has no swap test (its next word is not an earlier word of a group), no head is
        self.lang = lang = params.get("lang", "en")
        own = own_language(gpt)
        written = language_of([gpt.tokenizer.words[i] for i in self.token_ids]) if own else lang   # the prompt's
        self.swaps = answer_swaps(gpt, self.token_ids, f, written) if own else None
        self.swap = (swap_test(gpt, self.token_ids, f, self.swaps["answer_id"], self.swaps["swapped"], layers=[L])
                     if self.swaps else None)
        self.idle = [bool(self.swap and self.swap["heads"][L, h]["idle"]) for h in range(self.n_head)]
        # which head of this layer fetches the colour and which the texture, on the chapter's prompt in the prompt's
        # language (JOBS_RULE): the same prompt gives the same jobs in either language's clip
        self.written = written
        chapter = lookback_prompt(written, gpt) if own else None
        self.jobs = (form_jobs(gpt, written, L, [int(i) for i in gpt.encode(chapter["prompt"])], chapter["focus_index"])
                     if own else None)
        # each head's ΔE at the focus: its output through its own rows of W_O (gpt.head(layer, h).W_O)
        self.head_deltas = np.array([head_contribution(gpt, tr, L, h)[f] for h in range(self.n_head)])
        self.sizes = head_delta_sizes(gpt, tr, L, f)                     # |ΔE| of each head, |out| (the answer)

    def record(self) -> dict:
        ch = self.choice
        return {
            "prompt": self.prompt, "tokens": self.tokens, "token_ids": self.token_ids, "focus": self.focus,
            "layer": self.layer, "n_head": self.n_head, "d_head": self.dh, "d_model": self.d,
            "choice": {"rule": ch["rule"], "score": ch["score"], "head": ch["head"], "keys": ch["keys"],
                       "given": ch["given"], "prompt_rule": ch["prompt_rule"], "all_scores": ch["all_scores"],
                       "weight": ch["weight"], "causal": ch["causal"], "story": ch["story"]},
            "patterns": self.patterns, "every_layer_patterns": [l["attn"]["weights"] for l in self.trace["layers"]],
            "top_keys": self.top_keys, "top_weights": self.top_weights,
            "head_out": self.head_out, "concat": self.concat, "W_O": self.W_O, "b_O": self.b_O, "out": self.out,
            "prompt_lang": self.written, "idle": self.idle, "idle_rule": IDLE_RULE,
            "swap": None if self.swap is None else {
                "answer": self.swaps["answer"], "position": self.swaps["position"], "group": self.swaps["group"],
                "swapped_for": self.swaps["swapped_for"], "rule": self.swaps["rule"], "p_clean": self.swap["p_clean"],
                "heads": [{k: v for k, v in self.swap["heads"][self.layer, h].items()} for h in range(self.n_head)]},
            "jobs": self.jobs,
            "head_deltas": self.head_deltas, "delta_lengths": self.sizes["delta_lengths"],
            "out_length": self.sizes["out_length"],
        }
