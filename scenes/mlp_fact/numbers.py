"""mlp_fact's numbers: where the person's sport lives in the model, read from model.analysis (causal tracing, the
measured sport directions, the MLP output through the unembedding, each neuron's push and what it fires for, the
mean-ablation, the fact's path and the AND neuron) for one prompt (FactLookup), with the rule behind each caption's
key and the manifest's record. The scene that draws them: beats.py.
"""

from __future__ import annotations

import numpy as np

from model import language as model_language
from model import probabilities
from model.analysis import (contrast_direction, mean_ablation, neuron_attribute_profile,
                            neuron_direction_attribution, person_causal_trace,
                            push_share, top_k_shares,
                            vector_readout)
from model.analysis.circuits import sport_alternatives
from model.analysis.factmap import LIT_DROP, NAME_DROP, attention_reads, key_site, kind_sites, lit_sites
from model.analysis.factpath import (and_search, fact_path, held_out_directions, held_out_rise,
                                     pair_words, pre_activation_parts)
from model.analysis.patching import MEAN_SAMPLE
from scenes.mlp_chapter import sample_means
from scenes.params import AUTO, ParamError
from scenes.prompts import person_in, sport_fact_prompt

MAX_TOKENS = 10      # columns of the tracing grid
K_NEURONS = 3        # neurons in the table: the largest pushes toward the sport
SPREAD_KS = (1, 5, 20)
N_WORDS = 5          # words the MLP output raises most




def nan_none(x: float):
    """A share for the manifest: None where there is none (no neuron pushes toward the answer)."""
    return None if np.isnan(x) else float(x)


# --- the numbers: read from model.analysis ---------------------------------------------------------------
class FactLookup:
    """The person's sport in one prompt: traced, located, projected, attributed, ablated and varied."""

    def __init__(self, gpt, params: dict, means: dict | None = None):
        chosen = sport_fact_prompt(params.get("lang", "en"), gpt) if params["prompt"] == AUTO else None
        self.prompt = chosen["prompt"] if chosen else params["prompt"]
        self.prompt_rule = chosen
        tr = self.trace = gpt.trace(self.prompt)
        self.tokens, self.token_ids = list(tr["tokens"]), [int(i) for i in tr["token_ids"]]
        T = len(self.tokens)
        if T > MAX_TOKENS:
            raise ParamError(f"prompt: this scene draws one column per token, at most {MAX_TOKENS}; got {T}")
        found = person_in(self.tokens)
        if found is None:
            raise ParamError("prompt: it names no person of the training language (a first name then a last name)")
        self.prompt_lang, self.first_index = found["lang"], found["first_index"]
        self.last_index = self.first_index + 1
        lang_ = model_language.Language()
        g = self.g = lang_.grammar(self.prompt_lang)
        self.person = g.person[tuple(found["person"])]
        vocab = gpt.tokenizer.vocab
        self.answer = g.t(self.person.sport)
        self.answer_id = vocab[self.answer]
        self.verb = g.t(model_language.SPORT_VERBS[self.person.sport])
        self.verb_id = vocab[self.verb]
        p = probabilities(tr["logits"][-1])
        self.p_answer = float(p[self.answer_id])
        self.top_word = gpt.tokenizer.words[int(np.argmax(p))]
        L = self.n_layer = gpt.config.n_layer

        # where: causal tracing, both names swapped, attention and MLP outputs
        self.ct = person_causal_trace(gpt, lang_, self.prompt_lang, self.tokens, self.first_index)
        comps = self.ct["components"]
        share = self.ct["share"]                                     # (layers, components, positions)
        self.rows = [(l, c) for l in range(L) for c in comps]        # attn 0, mlp 0, attn 1, ...
        self.grid = np.array([share[l, comps.index(c)] for l, c in self.rows])
        order = np.argsort(-self.grid, axis=None, kind="stable")
        self.largest = [{"row": int(r), "position": int(t), "layer": self.rows[r][0], "component": self.rows[r][1],
                         "share": float(self.grid[r, t])}
                        for r, t in (np.unravel_index(i, self.grid.shape) for i in order[:2])]
        mlp = comps.index("mlp")
        flat = int(np.argmax(share[:, mlp, :]))                      # the first on a tie
        self.layer, self.position = divmod(flat, T)
        self.lookup_share = float(share[self.layer, mlp, self.position])

        # at the lookup point: the stream before and after that MLP on sport directions measured on the other people
        # (the prompt's person held out, so the rise is a prediction, not built into the directions); with the
        # leave-one-out count over every person against shuffled labels
        self.rise = held_out_rise(gpt, lang_, self.prompt_lang, tr, self.layer, self.position, self.person)
        self.directions = held_out_directions(gpt, lang_, self.prompt_lang, self.layer, exclude=(self.person,))
        self.sports = list(model_language.SPORTS)
        lay = tr["layers"][self.layer]
        self.before, self.after = self.rise["before"], self.rise["after"]
        self.mlp_out = lay["mlp"]["out"][self.position]

        # the MLP output read through the unembedding, among the prompt language's words
        words = [vocab[w] for w in model_language.vocabulary_of(self.prompt_lang)]
        self.readout = vector_readout(gpt, tr, self.position, self.mlp_out, k=N_WORDS, word_ids=words,
                                      rank_of=[self.answer_id, self.verb_id])

        # the neurons: push along (the sport's direction − the others'), and what each fires for
        self.contrast = contrast_direction(self.directions, self.person.sport)
        self.attribution = neuron_direction_attribution(gpt, tr, self.layer, self.position, self.contrast)
        self.spread = top_k_shares(self.attribution["per_neuron"], SPREAD_KS)
        self.top = [int(i) for i in self.spread["order"][:K_NEURONS]]
        self.profiles = neuron_attribute_profile(gpt, lang_, self.prompt_lang, self.layer, self.top)

        # the evidence: mean-ablate that MLP output at the lookup point
        self.means = means if means is not None else sample_means(gpt)
        # the path: which attention carries the answer to the last word, and whether it reads what that MLP wrote
        self.path = fact_path(gpt, lang_, self.prompt_lang, self.tokens, self.first_index, self.means, self.layer)
        # the map: every site whose mean-ablation drops P(answer) by 25 points or more (factmap.lit_sites); at the
        # name site that drops it most, what its attention reads (the first name, when the two names meet there)
        self.lit = lit_sites(self.path["ablation"], self.path["p_clean"], self.path["components"],
                             (self.first_index, self.last_index))
        self.key_site = key_site(self.lit)
        self.name_reads = (attention_reads(tr, self.key_site["layer"], self.key_site["position"], self.first_index)
                           if self.key_site and self.key_site["component"] == "attn" else None)
        # which lit sites decide that a sport comes at all, not which one: without them P(any sport) falls too
        self.kinds = kind_sites(gpt, self.token_ids, self.lit, self.means,
                                sport_alternatives(gpt, lang_, self.prompt_lang))
        # the AND: a neuron of that MLP for the two names together, by rule; its input split by name
        self.andn = and_search(gpt, lang_, self.prompt_lang, self.tokens, self.first_index, self.layer)
        self.andn_k = int(gpt.mlp(self.layer).W_in.shape[1])
        self.and_rows = []
        for pair in ([self.tokens[self.first_index], self.tokens[self.last_index]],
                     self.andn["groups"]["same_first"]["pair"], self.andn["groups"]["same_last"]["pair"]):
            words_ = pair_words(self.tokens, self.first_index, *pair)
            t_ = gpt.trace([vocab[w] for w in words_])
            self.and_rows.append({"pair": list(pair), **pre_activation_parts(gpt, t_, self.layer, self.last_index,
                                                                               self.andn["neuron"], self.first_index)})
        self.ablation = mean_ablation(gpt, self.token_ids, self.answer_id, self.layer, "mlp", self.position,
                                      self.means)
        ablated = gpt.trace(self.token_ids, patch={(self.layer, "mlp", self.position): self.means[self.layer, "mlp"]})
        pa = probabilities(ablated["logits"][-1])
        self.new_top = {"word": gpt.tokenizer.words[int(np.argmax(pa))], "p": float(pa.max())}

        # the AND: the first person (language order) with the same last name and another first name and sport,
        # and the first with the same first name and another last name and sport, both of the same gender
        self.variants = [self.variant(gpt, self.person)]
        for same in ("last", "first"):
            other = next((q for q in lang_.people if getattr(q, same) == getattr(self.person, same)
                          and q.sport != self.person.sport and q.gender == self.person.gender), None)
            if other is not None:
                self.variants.append(self.variant(gpt, other))

    def variant(self, gpt, q) -> dict:
        g, vocab = self.g, gpt.tokenizer.vocab
        words = list(self.tokens)
        words[self.first_index:self.last_index + 1] = [g.t(q.first), g.t(q.last)]
        p = probabilities(gpt.trace([vocab[w] for w in words])["logits"][-1])
        top = int(np.argmax(p))
        return {"names": [g.t(q.first), g.t(q.last)], "sport": g.t(q.sport), "token_ids": [vocab[w] for w in words],
                "prediction": gpt.tokenizer.words[top], "p": float(p[top]), "p_own_sport": float(p[vocab[g.t(q.sport)]])}

    # --- the rules behind the captions --------------------------------------------------------------------
    def largest_key(self) -> str:
        share = self.largest[0]["share"]
        return "largest_over" if share > 1 else "largest_one" if share >= 0.5 else "largest_spread"

    def deltas(self) -> dict[str, float]:
        return {s: self.after[s] - self.before[s] for s in self.sports}

    def lookup_key(self) -> tuple[str, str]:
        d = self.deltas()
        own = self.person.sport
        best_other = max((s for s in self.sports if s != own), key=lambda s: d[s])
        if d[own] < d[best_other]:
            return "lookup_not", best_other
        if d[best_other] < 0.5 * d[own]:
            return "lookup_clean", best_other
        return "lookup_most", best_other

    def readout_key(self) -> str:
        top = self.readout["top"][0]["word"]
        return "readout_sport" if top == self.answer else "readout_verb" if top == self.verb else "readout_other"

    def spread_key(self) -> str:
        """The lecture's one share (push_share) of what the neurons write along the sport's direction: no neuron
        writes toward the sport: spread_none; else the top neuron gives less than half of it: spread_many, else
        spread_one."""
        if not self.spread["n_towards"]:
            return "spread_none"
        return "spread_many" if self.spread["shares"][1] < 0.5 else "spread_one"

    def story_entry(self) -> dict:
        """What the story compares between the languages: the lookup point and every conclusion's key and numbers."""
        lookup, other = self.lookup_key()
        d = self.deltas()
        return {"prompt": self.prompt, "layer": self.layer, "position": self.position,
                "position_is": "last_name" if self.position == self.last_index else "other",
                "last_index": self.last_index,
                "sport": self.person.sport, "lookup_key": lookup, "best_other": other, "deltas": d,
                "readout_key": self.readout_key(), "spread_key": self.spread_key(), "largest_key": self.largest_key(),
                "ablation_key": self.ablation_key(), "ablation": dict(self.ablation), "new_top": self.new_top,
                "carry_key": self.carry_key(), "carrier": dict(self.path["carrier"]),
                "through_lookup": dict(self.path["through_lookup"]), "and_neuron_key": self.and_neuron_key(),
                "and_neuron": {k: self.andn[k] for k in ("layer", "neuron", "act", "margin", "is_and", "groups")},
                "loo": dict(self.rise["loo"]), "lit": [x["site"] for x in self.lit],
                "conclusion_key": self.conclusion_key(), "kind_key": self.kind_key(),
                "key_site": None if self.key_site is None else {**self.key_site,
                                                                "token": self.tokens[self.key_site["position"]]}}

    def carry_key(self) -> str:
        c, t = self.path["carrier"], self.path["through_lookup"]
        if not c["push"] > 0:
            return "carry_none"
        if c["reads_most"] != self.last_index:
            return "carry_other"
        return "carry_lookup" if t["push_after"] < t["push_before"] / 2 else "carry_kept"

    def and_neuron_key(self) -> str:
        a = self.andn
        if a["is_and"]:
            return "andn_yes"
        if not a["fires"]:
            return "andn_none"
        first, last = (a["groups"][k]["act"] > a["threshold"] for k in ("same_first", "same_last"))
        return "andn_sum" if first and last else "andn_one"

    def ablation_key(self) -> str:
        a = self.ablation
        if a["p_before"] - a["p_after"] < 0.05:
            return "ablation_none"
        return "ablation_drop" if self.new_top["word"] == self.answer else "ablation_flip"

    def conclusion_key(self) -> str:
        """The map's finding: the lit site at a name position with the largest drop (key_site) is an attention
        output: conclusion_attention; an MLP output: conclusion_mlp; no site at a name is lit: conclusion_elsewhere."""
        if self.key_site is None:
            return "conclusion_elsewhere"
        return "conclusion_attention" if self.key_site["component"] == "attn" else "conclusion_mlp"

    def kind_key(self) -> str | None:
        """The map's second finding (kind_sites): a lit site away from the names whose mean-ablation leaves no sport at
        all (its `first`): kind_which when no lit site at a name is such a site (those pick which sport), else
        kind_only; None (nothing said) when there is none."""
        if self.kinds["first"] is None:
            return None
        return "kind_which" if self.kinds["names_pick_which"] else "kind_only"

    def and_right(self) -> int:
        return sum(v["prediction"] == v["sport"] for v in self.variants)

    def record(self) -> dict:
        d = self.deltas()
        return {
            "prompt": self.prompt, "prompt_rule": self.prompt_rule, "tokens": self.tokens, "token_ids": self.token_ids,
            "prompt_lang": self.prompt_lang, "person": [self.tokens[self.first_index], self.tokens[self.last_index]],
            "first_index": self.first_index, "last_index": self.last_index,
            "answer": self.answer, "answer_id": self.answer_id, "p_answer": self.p_answer, "top_word": self.top_word,
            "causal_trace": {"rows": [list(r) for r in self.rows], "share": self.grid,
                             "components": self.ct["components"], "partners": self.ct["partners"],
                             "partner_rule": self.ct["partner_rule"], "p_clean": self.ct["p_clean"],
                             "p_corrupt": self.ct["p_corrupt"], "written_floor": 0.05, "largest": self.largest},
            "lookup": {"layer": self.layer, "position": self.position, "share": self.lookup_share,
                       "rule": "the MLP cell (layer, position) with the largest restored share (the first on a tie)"},
            "projections": {"sports": self.sports, "words": [self.g.t(s) for s in self.sports],
                            "before": [self.before[s] for s in self.sports],
                            "after": [self.after[s] for s in self.sports], "delta": [d[s] for s in self.sports],
                            "directions": self.rise["directions"], "held_out": self.rise["held_out"],
                            "loo": self.rise["loo"]},
            "path": self.path, "and_neuron": {**self.andn, "rows": self.and_rows},
            "readout": {"top": self.readout["top"], "ranks": {str(k): v for k, v in self.readout["ranks"].items()},
                        "n_words": self.readout["n_words"], "verb": self.verb},
            "neurons": [{"neuron": n, "push": float(self.attribution["per_neuron"][n]),
                         "share": nan_none(push_share(float(self.attribution["per_neuron"][n]),
                                                      self.attribution["per_neuron"])),
                         "fires_most_for": pr["best"], "fires_most_for_word": self.g.t(pr["best"]),
                         "mean_them": pr["mean_best"], "mean_others": pr["mean_others"], "by_value": pr["by_value"]}
                        for n, pr in zip(self.top, self.profiles)],
            "neuron_choice": "the largest activation x (W_out row . (unit sport direction - mean of the other "
                             "sports' unit directions)) at the lookup point",
            "push_all": self.attribution["per_neuron"], "push_bias": self.attribution["bias"],
            "push_total": self.attribution["total"],
            # the lecture's one share of the push (push_share): the top k's push toward the sport over all of it
            "spread": {str(k): nan_none(v) for k, v in self.spread["shares"].items()},
            "spread_sums": {str(k): v for k, v in self.spread["sums"].items()},
            "spread_towards": {"sum": self.spread["towards"], "n": self.spread["n_towards"]},
            "spread_against": {"sum": self.spread["against"], "n": self.spread["n_against"]},
            "spread_total": self.spread["total"],
            "share_of_push": "model.analysis.attribution.push_share: a push over the summed push of every neuron "
                             "that pushes toward the sport; the neurons pushing the other way counted apart",
            "ablation": {**self.ablation, "layer": self.layer, "component": "mlp", "position": self.position,
                         "new_top": self.new_top, "sample": MEAN_SAMPLE},
            "and": self.variants,
            "map": {"lit": self.lit, "key_site": self.key_site, "name_reads": self.name_reads, "kinds": self.kinds,
                    "lit_drop": LIT_DROP, "name_drop": NAME_DROP,
                    "rule": "lit: every (layer, component, position) whose mean-ablation (path.ablation) drops "
                            f"P(answer) by at least {LIT_DROP:.0%} points, so every name site dropping it by "
                            f"{NAME_DROP:.0%} points or more is lit; key_site: the lit site at a name with the "
                            "largest drop; name_reads: its attention weights, the head reading the first name most"},
        }
