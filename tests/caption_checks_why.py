"""The why beats' caption rules (issue 45), decided again from the manifest's values["why"] (the lab's record as the
scene read it): tests/test_caption_rules.py adds each as the scene's "lab" rule. The thresholds are stated here
again, not imported: a change to the scene's rule must be made twice to pass."""

from __future__ import annotations

LOSS, ENTROPY = 0.02, 0.1      # nats of loss, nats of attention entropy


def clear(pairs: list[dict], threshold: float) -> str:
    """"higher" / "lower" where every pair's variant differs from the standard model by at least `threshold`, with
    the seeds' ranges apart, all the same way; else "same"."""
    ways = set()
    for p in pairs:
        gap = p["without"] - p["with"]
        (lo_w, hi_w), (lo_v, hi_v) = p["range_with"], p["range_without"]
        if abs(gap) < threshold or (lo_v <= hi_w and hi_v >= lo_w):
            return "same"
        ways.add("higher" if gap > 0 else "lower")
    return ways.pop() if len(ways) == 1 else "same"


def check_qk_lab(v, rule, gpt) -> str:
    w = v["why"]
    way = (clear([w], ENTROPY), clear(w["per_language"], LOSS))
    return {("lower", "same"): "lab_sharper_same", ("lower", "higher"): "lab_sharper_worse"}.get(way, "lab_other")


QK_LAB = ({"lab_sharper_same", "lab_sharper_worse", "lab_other"}, check_qk_lab)


def check_mlp_lab(v, rule, gpt) -> str:
    w = v["why"]
    way = (clear(w["others"][0]["per_language"], LOSS), clear(w["per_language"], LOSS))
    return {("same", "higher"): "lab_mlp_needed", ("higher", "higher"): "lab_mlp_both"}.get(way, "lab_mlp_other")


MLP_LAB = ({"lab_mlp_needed", "lab_mlp_both", "lab_mlp_other"}, check_mlp_lab)


def check_heads_lab(v, rule, gpt) -> str:
    return {"same": "lab_heads_same", "higher": "lab_heads_needed", "lower": "lab_heads_better"}[
        clear(v["why"]["per_language"], LOSS)]


HEADS_LAB = ({"lab_heads_same", "lab_heads_needed", "lab_heads_better"}, check_heads_lab)


def check_mask_lab(v, rule, gpt) -> str:
    w = v["why"]
    return "lab_mask_reads" if (clear([w], LOSS), clear([w["writing"]], LOSS)) == ("lower", "higher") \
        else "lab_mask_other"


MASK_LAB = ({"lab_mask_reads", "lab_mask_other"}, check_mask_lab)


def check_norm_lab(v, rule, gpt) -> str:
    w = v["why"]
    way = (clear(w["per_language"], LOSS), clear(w["others"][0]["per_language"], LOSS))
    return {("higher", "same"): "lab_residual_only", ("higher", "higher"): "lab_both"}.get(way, "lab_other")


NORM_LAB = ({"lab_residual_only", "lab_both", "lab_other"}, check_norm_lab)

APART = 0.5      # the order test tells the orders apart (total variation)


def check_order_lab(v, rule, gpt) -> str:
    w = v["why"]
    apart = all(t["range_without"][0] >= APART for t in w["order_tv"])
    same = clear(w["per_language"], LOSS) == "same"
    return "lab_order_mask" if same and apart else "lab_order_needed" if not apart else "lab_order_other"


ORDER_LAB = ({"lab_order_mask", "lab_order_needed", "lab_order_other"}, check_order_lab)
