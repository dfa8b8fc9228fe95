"""values_update's numbers: one head at the token in focus (HeadAtFocus), read from the trace and model.analysis
(head_update, ablation_effect, attention_lens), never computed here beyond display, with the rules behind the
captions that state a property of them and the manifest's record. The scene: beats.py.
"""

from __future__ import annotations

import numpy as np

from model import probabilities
from model.analysis import attention_lens, head_update
from model.analysis.head_jobs import key_value_swap
from scenes.attention_chapter import HeadChoice
from scenes.params import ParamError

MAX_KEYS = 14    # the table lists every key up to the focus, one row each, at the legibility floor
# a head "almost entirely" / "mostly" takes one token's value when its weight is at least this
ALMOST_ALL, MOSTLY = 0.9, 0.5
# heads "carry" the adjective when swapping it in what they alone see brings at least this share of the fall under
# the whole swap (scenes.prompts.head_scores' `share`)
CARRIES = 0.9
KV_RULE = ("the swap test split in two (model.analysis.head_jobs.key_value_swap): the key alone moves P(answer) by "
           "under 1 percentage point while the value moves it by 1 or more: kv_key_blind; the value moves it more "
           "than the key: kv_value_more; else kv_key_more; no swap test on the prompt: kv_unmeasured")



class HeadAtFocus(HeadChoice):
    """One head at the token in focus (the head chosen once: attention_chapter.HeadChoice): every token's V, the
    focus's weights, the weighted values, the head's output, its ΔE through its rows of W_O, E and E′, and the
    measured effect of zeroing it."""

    def __init__(self, gpt, params: dict):
        super().__init__(gpt, params)
        if self.focus >= MAX_KEYS:
            raise ParamError(f"focus: this scene lists every key up to the focus, at most {MAX_KEYS} "
                             f"(positions 0..{MAX_KEYS - 1}); got {self.focus}")
        self.d, self.dh = self.d_model, self.d_head
        tr, L, H, f = self.trace, self.layer, self.head, self.focus
        attn = tr["layers"][L]["attn"]
        weights = gpt.head(L, H)
        self.W_v, self.b_v = weights.W_V, weights.b_V              # (d_model, d_head), (d_head)
        self.W_O_rows = weights.W_O                                 # this head's rows of W_O: (d_head, d_model)
        self.normalised = tr["layers"][L]["ln_1"]["out"]            # LN(E), the input of Q, K and V
        self.keys = list(range(f + 1))                              # causal: the focus sees itself and before
        self.v = attn["v"][H][: f + 1]                              # (keys, d_head)
        self.pattern = attn["weights"][H]                           # (query, key), the whole grid
        self.weights = attn["weights"][H, f, : f + 1]
        self.weighted = attn["weighted_values"][H, f, : f + 1]      # weight × V, per key
        self.head_out = attn["head_out"][H, f]
        update = head_update(gpt, tr, L, H)
        self.E, self.delta, self.E_new = update["before"][f], update["delta"][f], update["after"][f]
        # the model's next word at the focus, and the same with this head zeroed (only tokens up to the focus)
        p = probabilities(tr["logits"][f])
        self.next_word = gpt.tokenizer.words[int(np.argmax(p))]
        # the one intervention: the swap test split in two, the answer word swapped in this head's key only, then in its
        # value only (model.analysis.head_jobs.key_value_swap); None where the prompt has no swap test
        from scenes.prompts import language_of, own_language
        self.lang = params.get("lang", "en")
        self.written = written = language_of([gpt.tokenizer.words[i] for i in self.token_ids])   # the prompt's words
        self.kv = key_value_swap(gpt, self.token_ids, f, L, H, written) if own_language(gpt) else None
        # the question: the logit lens at the focus entering the layer, with this head's ΔE alone, after the attention
        self.lens = attention_lens(gpt, tr, L, H, f, self.next_word)

    def effect(self) -> str:
        """The key/value caption (KV_RULE): the key alone moves P(answer) by under a point while the value moves it:
        kv_key_blind; the value moves it more than the key: kv_value_more; else kv_key_more; no swap test:
        kv_unmeasured."""
        if self.kv is None:
            return "kv_unmeasured"
        p, key, value = self.kv["p_clean"], self.kv["key_only"]["p"], self.kv["value_only"]["p"]
        if 100 * abs(p - key) < 1 <= 100 * abs(p - value):
            return "kv_key_blind"
        return "kv_value_more" if abs(p - value) > abs(p - key) else "kv_key_more"

    def share(self) -> str:
        w = self.weights[self.source]
        return "sum" if w >= ALMOST_ALL else "sum_mostly" if w >= MOSTLY else "sum_blend"

    def shared(self) -> tuple[str, int]:
        """alone / shared (k heads) / spread, by the patched sets' shares (the default lecture's causal story), and
        the number of heads the caption names; None where the head was not chosen by the causal rule."""
        sets = self.sets()
        if not sets:
            return None, 0
        if sets[0]["share"] >= CARRIES:
            return "shared_alone", 1
        k = next((len(s["heads"]) for s in sets if s["share"] >= CARRIES), None)
        return ("shared", k) if k else ("shared_spread", len(sets[-1]["heads"]))

    def sets(self) -> list:
        """The causal story's top heads patched alone and together in this lecture's language (scenes.prompts
        head_scores), if this head is the one the rule chose (the default lecture); else []."""
        st = self.choice["story"]
        given = self.choice["given"]["layer"] or self.choice["given"]["head"]
        if not self.choice["causal"] or st is None or given:
            return []
        lang = self.choice["prompt_rule"]["lang"]
        sets = st["sets"][lang]
        return sets if list(sets[0]["heads"][0]) == [self.layer, self.head] else []

    def meaning(self) -> str:
        key = "meaning_self" if self.source == self.focus else "meaning"
        return key if self.weights[self.source] >= MOSTLY else key + "_blend"

    def record(self) -> dict:
        """Every number the scene shows, at full precision."""
        ch = self.choice
        return {
            "prompt": self.prompt, "tokens": self.tokens, "token_ids": self.token_ids, "focus": self.focus,
            "layer": self.layer, "head": self.head,
            "choice": {"rule": ch["rule"], "score": ch["score"], "keys": ch["keys"], "given": ch["given"],
                       "prompt_rule": ch["prompt_rule"], "all_scores": ch["all_scores"], "weight": ch["weight"],
                       "causal": ch["causal"], "story": ch["story"]},
            "source": {"position": self.source, "word": self.tokens[self.source],
                       "weight": float(self.weights[self.source])},
            "d_model": self.d, "d_head": self.dh, "n_head": self.n_head,
            "value_product": {"key": self.source, "normalised_E": self.normalised[self.source],
                              "W_v": self.W_v, "b_v": self.b_v, "V": self.v[self.source]},
            "pattern": self.pattern[: self.focus + 1, : self.focus + 1],
            "V": self.v, "weights": self.weights, "weighted_values": self.weighted, "head_out": self.head_out,
            "W_O_rows": self.W_O_rows, "delta_E": self.delta, "E": self.E, "E_new": self.E_new,
            "next_word": self.next_word, "lens": self.lens, "prompt_lang": self.written, "key_value": self.kv, "effect": self.effect(),
            "kv_rule": KV_RULE, "share": self.share(),
            "shared": ({"sets": self.sets(), "p_clean": self.choice["story"]["p_clean"][self.choice["prompt_rule"]["lang"]],
                        "p_corrupt": self.choice["story"]["p_corrupt"][self.choice["prompt_rule"]["lang"]],
                        "adjective": self.choice["prompt_rule"]["adjective"], "carries": CARRIES}
                       if self.sets() else None),
        }
