"""Where a person's sport is needed, by one rule over the mean-ablation record (factpath.fact_path's `ablation`):
the sites of the fact's map, and what the attention at a lit site reads.

lit_sites      every (layer, component, position) whose mean-ablation drops P(answer) by at least LIT_DROP (25
               percentage points): the map's sites, as "attention:L@P" / "mlp:L@P" (layers and positions from 0).
               So a site is lit only if its ablation drops P(answer) by 25 points or more, and every site at a name
               position that drops it by 50 points or more (NAME_DROP) is lit.
attention_reads  at a lit attention site: each head's attention weight from that position to every earlier word
               (the trace's own weights), the head that reads `source` most, and its weight there.
kind_sites     whether a lit site decides *that* the answer is of its kind (a sport at all) or *which* one: P(any word
               of the kind), intact and with the site mean-ablated; a kind site is one whose ablation drops it by
               LIT_DROP or more (without it no sport comes at all).
"""

from __future__ import annotations

import numpy as np

LIT_DROP = 0.25      # a site is lit when its mean-ablation drops P(answer) by at least this (25 percentage points)
NAME_DROP = 0.50     # every name site dropping it by this much is lit (it follows from LIT_DROP <= NAME_DROP)
COMPONENT_NAMES = {"attn": "attention", "mlp": "mlp"}


def site_name(layer: int, component: str, position: int) -> str:
    """'attention:L@P' / 'mlp:L@P' (zero-based), the map's name of a site."""
    return f"{COMPONENT_NAMES[component]}:{layer}@{position}"


def lit_sites(ablation, p_clean: float, components=("attn", "mlp"), name_positions=()) -> list[dict]:
    """The lit sites of a mean-ablation record `ablation` (layers × components × positions, P(answer) with that one
    state replaced by its mean) against the clean P(answer): every site whose drop is at least LIT_DROP, in the
    record's order (layer, component, position), each with its P after, its drop and whether it is at a name."""
    a = np.asarray(ablation, np.float64)
    out = []
    for l in range(a.shape[0]):
        for ci, c in enumerate(components):
            for t in range(a.shape[2]):
                drop = float(p_clean - a[l, ci, t])
                if drop >= LIT_DROP:
                    out.append({"site": site_name(l, c, t), "layer": l, "component": c, "position": t,
                                "p_after": float(a[l, ci, t]), "drop": drop, "at_name": t in name_positions})
    return out


def key_site(sites: list[dict]) -> dict | None:
    """The map's conclusion: of lit_sites' sites, the one at a name whose drop is largest (None: none at a name)."""
    return max((s for s in sites if s["at_name"]), key=lambda s: s["drop"], default=None)


def attention_reads(trace: dict, layer: int, position: int, source: int) -> dict:
    """At `position` of `layer`'s attention: every head's weights over the words up to it, the head with the largest
    weight on `source` (the first on a tie) and that weight, and the heads' mean weight on `source`."""
    w = np.asarray(trace["layers"][layer]["attn"]["weights"], np.float64)[:, position, :position + 1]
    head = int(np.argmax(w[:, source]))
    return {"layer": layer, "position": position, "source": source, "weights": w.tolist(), "head": head,
            "weight": float(w[head, source]), "mean_weight": float(w[:, source].mean()),
            "reads_most": int(np.argmax(w[head])),
            "rule": "the head with the largest attention weight on the source word (the first on a tie)"}


def kind_sites(gpt, ids: list[int], sites: list[dict], means: dict, kind_ids: list[int]) -> dict:
    """For each lit site (lit_sites' records): P(any word of `kind_ids`: the answer's kind, every sport of the prompt's
    language) summed, with that site's state replaced by its mean (the same ablation as the map's); `kind` when that
    sum drops by LIT_DROP or more from the intact run's. A lit site that is not a kind site keeps the answer a sport
    and changes which one. `first`: the kind site away from the names with the lowest P(any) after (the first on a
    tie), the one the scene names; `names_pick_which`: no lit site at a name is a kind site."""
    from ..numpy_gpt import probabilities
    kind_ids = list(kind_ids)
    p_any = float(probabilities(gpt.trace(ids)["logits"][-1])[kind_ids].sum())
    out = []
    for s in sites:
        run = gpt.trace(ids, patch={(s["layer"], s["component"], s["position"]): means[s["layer"], s["component"]]})
        after = float(probabilities(run["logits"][-1])[kind_ids].sum())
        out.append({"site": s["site"], "p_any_after": after, "kind": p_any - after >= LIT_DROP,
                    "at_name": s["at_name"], "layer": s["layer"], "component": s["component"],
                    "position": s["position"]})
    away = [x for x in out if x["kind"] and not x["at_name"]]
    first = min(away, key=lambda x: x["p_any_after"], default=None)
    return {"p_any": p_any, "sites": out, "first": first,
            "names_pick_which": not any(x["kind"] for x in out if x["at_name"]),
            "rule": f"a lit site is a kind site when its mean-ablation drops P(any sport of the prompt's language) by "
                    f"{LIT_DROP:.0%} points or more; the one named: the kind site away from the names with the lowest "
                    f"P(any sport) after (the first on a tie)"}
