"""The why beats (issue 45): in six chapters, one short beat asks why a part is there and answers from the lab's
record (model/snapshots/lab.json, read through model.lab.why: our model retrained without the part, on the same
data, steps and seeds): the question, the curves with and without it, the final figures, and a one-sentence
conclusion chosen by a caption rule (components.why.verdict, decided over both languages).

Each function here is a scene's `beat_lab` (`beat_lab = why_beats.queries_keys`): it reads the record, draws
components.WhyChart, says the scene's own words (its .toml: why_question, the rule's keys, the chart's labels) and
records values["why"] = {"variant", "metric", "with", "without", "curve_with", "curve_without", ...} as the record
gave them, with what the chart drew ("shown"). Nothing here computes model maths.
"""

from __future__ import annotations

import math

from scenes import style
from scenes.components import why as W
from scenes.components.why import WhyChart, rows_for

PAUSE = style.PAUSE


def show(scene, curves: list[dict], labels: list[str], columns: list[tuple], *, y_max: float, y_step: float,
         y_label: str, y_min: float = 0.0, y_decimals: int = 0) -> WhyChart:
    """The beat's picture on a cleared stage: the curves of `curves` (model.lab.why answers, one per variant compared
    with the standard model) and the table of `columns` ((head, answers, formatter): components.why.rows_for; the
    answers one per variant, or {language: answers} for a measure each language's video shows of its own). The
    chart is kept as scene.why_chart (the tests read its labels); chart.by_language is what its table shows in each
    language's video (the manifest's values["why"]["shown"]: the same in both videos' manifests)."""
    def rows(lang: str):
        return rows_for(curves, labels, [(h, a[lang] if isinstance(a, dict) else a, f) for h, a, f in columns])

    chart = WhyChart(curves[0]["steps"], rows(scene.lang), y_max=y_max, y_step=y_step, y_label=y_label,
                     x_label=scene.s("why_steps"), columns=[c[0] for c in columns], y_min=y_min,
                     y_decimals=y_decimals)
    chart.by_language = {lang: {"rows": [{"numbers": r.numbers, "spreads": r.spreads} for r in rows(lang)],
                                "y_max": float(y_max), "y_min": float(y_min)} for lang in style.LANGUAGES}
    scene.clear_stage()
    chart.play_in(scene)
    scene.why_chart = chart
    return chart


def conclude(scene, key: str, record: dict, **said) -> None:
    """The beat's last line (the rule's key, with its figures), the picture held, and values["why"] = record."""
    scene.say(key, **said)
    scene.wait(PAUSE + 1)
    scene.values["why"] = record


def queries_keys(scene) -> None:
    """Why divide by √d_k: no_scale against the standard model: the attention weights' entropy over training, and
    the loss on unseen text (the rule: entropy, and each language's loss)."""
    e, loss, per_lang = W.read("no_scale", "attention_entropy"), W.read("no_scale", "held_out_loss"), \
        W.per_language("no_scale")
    r = W.recipe()                # the lab's model (a checkpoint's render still names the lecture's d_k)
    scene.say("why_question", root=f"{math.sqrt(r['n_embd'] // r['n_head']):g}")
    chart = show(scene, [e], [scene.s("why_with"), scene.s("why_without")],
                 [(scene.s("why_entropy"), [e], W.entropy_text), (scene.s("why_loss"), [loss], W.loss_text)],
                 y_max=3, y_step=1, y_label=scene.s("why_entropy_axis"))
    sharper, worse = W.verdict([e], W.ENTROPY_GAP), W.verdict(per_lang, W.LOSS_GAP)
    key = scene.caption_rule(
        "lab", {("lower", "same"): "lab_sharper_same", ("lower", "higher"): "lab_sharper_worse"}.get(
            (sharper, worse), "lab_other"),
        f"the attention weights' entropy without ÷ √d_k against with (components.why.verdict, {W.ENTROPY_GAP} nats) "
        f"and the loss on unseen text in each language (verdict over both, {W.LOSS_GAP} nats): lower and same: "
        "lab_sharper_same; lower and higher: lab_sharper_worse; else lab_other", entropy=sharper, loss=worse)
    conclude(scene, key, W.record(e, shown=chart.by_language, loss=W.record(loss),
                                  per_language=[W.record(w) for w in per_lang]),
             e=W.entropy_text(e["with"]), e_without=W.entropy_text(e["without"]),
             loss=W.loss_text(loss["with"]), loss_without=W.loss_text(loss["without"]))


def mlp_steps(scene) -> None:
    """Why an MLP, and why GELU: no_mlp and linear_mlp against the standard model: the loss on unseen text over
    training and the facts about the people recalled (the rule: each variant's loss, in both languages; the facts,
    each language's own, in the table with the seeds' spread)."""
    variants = ("linear_mlp", "no_mlp")
    loss = [W.read(v, "held_out_loss") for v in variants]
    facts = {lang: [W.read(v, f"facts_known_{lang}") for v in variants] for lang in style.LANGUAGES}
    total = W.facts_total(scene.lang)
    scene.say("why_question")
    # the loss axis from the data (issue 43: on 0-6 the final losses, about 1.04 and 1.10, lie on one line): from the
    # lowest loss of any curve rounded down to 0.1, to the highest final loss rounded up to 0.1, plus 0.4; the
    # axis's title states the range shown (the early losses run off its top)
    lo = math.floor(10 * min(min(c["curve_with"] + c["curve_without"]) for c in loss)) / 10
    hi = math.ceil(10 * max(max(c["with"], c["without"]) for c in loss)) / 10 + 0.4
    chart = show(scene, loss, [scene.s("why_full"), scene.s("why_linear"), scene.s("why_none")],
                 [(scene.s("why_loss"), loss, W.loss_text),
                  (scene.s("why_facts", total=total), facts, W.count_text)],
                 y_min=lo, y_max=hi, y_step=0.1, y_decimals=1,
                 y_label=scene.s("why_loss_axis", lo=f"{lo:.1f}", hi=f"{hi:.1f}"))
    per = [W.per_language(v) for v in variants]
    linear, none = (W.verdict(p, W.LOSS_GAP) for p in per)
    key = scene.caption_rule(
        "lab", {("same", "higher"): "lab_mlp_needed", ("higher", "higher"): "lab_mlp_both"}.get(
            (linear, none), "lab_mlp_other"),
        "the loss on unseen text with GELU replaced by the identity and without the MLP, against the standard model's, "
        f"in each language (components.why.verdict over both, {W.LOSS_GAP} nats): same and higher: lab_mlp_needed; "
        "higher and higher: lab_mlp_both; else lab_mlp_other (the facts recalled are in the table, each language's "
        "own, with the seeds' spread)", linear=linear, none=none)
    conclude(scene, key, W.record(loss[1], shown=chart.by_language, facts=[W.record(x[1]) for x in facts.values()],
                                  per_language=[W.record(w) for w in per[1]], facts_total=total,
                                  others=[W.record(loss[0], facts=[W.record(x[0]) for x in facts.values()],
                                                   per_language=[W.record(w) for w in per[0]])]),
             l=W.loss_text(loss[0]["with"]), l_linear=W.loss_text(loss[0]["without"]),
             l_none=W.loss_text(loss[1]["without"]))


def multi_head(scene) -> None:
    """Why several heads: one_head (one head as wide as the four together, the same parameters) against the
    standard model: the loss on unseen text (the rule: each language's loss)."""
    loss, per_lang = W.read("one_head", "held_out_loss"), W.per_language("one_head")
    r = W.recipe()
    shape = {"heads": r["n_head"], "dh": r["n_embd"] // r["n_head"], "d": r["n_embd"]}
    scene.say("why_question", **shape)
    chart = show(scene, [loss], [scene.s("why_with", **shape), scene.s("why_without", **shape)],
                 [(scene.s("why_loss"), [loss], W.loss_text)], y_max=6, y_step=2, y_label=scene.s("why_loss_axis"))
    way = W.verdict(per_lang, W.LOSS_GAP)
    key = scene.caption_rule(
        "lab", {"same": "lab_heads_same", "higher": "lab_heads_needed"}.get(way, "lab_heads_better"),
        f"one head's loss on unseen text against the standard model's, in each language (components.why.verdict "
        f"over both, {W.LOSS_GAP} nats): same: lab_heads_same; higher: lab_heads_needed; lower: lab_heads_better",
        loss=way)
    conclude(scene, key, W.record(loss, shown=chart.by_language, per_language=[W.record(w) for w in per_lang],
                                  shape=shape),
             loss=W.loss_text(loss["with"]), loss_without=W.loss_text(loss["without"]), **shape)


def causal_mask(scene) -> None:
    """Why the mask: no_mask against the standard model: the training loss over training, and the loss when writing
    one word at a time, as generation must (both measured on both languages' text together)."""
    train, writing = W.read("no_mask", "train_loss"), W.read("no_mask", "generating_loss")
    facts = W.per_language("no_mask", "facts_known")
    scene.say("why_question")
    chart = show(scene, [train], [scene.s("why_with"), scene.s("why_without")],
                 [(scene.s("why_train"), [train], W.loss_text), (scene.s("why_writing"), [writing], W.loss_text)],
                 y_max=6, y_step=2, y_label=scene.s("why_train_axis"))
    lower, higher = W.verdict([train], W.LOSS_GAP), W.verdict([writing], W.LOSS_GAP)
    key = scene.caption_rule(
        "lab", "lab_mask_reads" if (lower, higher) == ("lower", "higher") else "lab_mask_other",
        f"without the mask against with (components.why.verdict, {W.LOSS_GAP} nats; both losses on both languages' "
        "text): training loss lower and the loss writing word by word higher: lab_mask_reads; else lab_mask_other",
        train=lower, writing=higher)
    conclude(scene, key, W.record(train, shown=chart.by_language, writing=W.record(writing),
                                  facts=[W.record(f) for f in facts]),
             train=W.loss_text(train["with"]), train_without=W.loss_text(train["without"]),
             gen=W.loss_text(writing["with"]), gen_without=W.loss_text(writing["without"]))


def add_norm(scene) -> None:
    """Why the residual additions and LayerNorm: no_residual and no_layernorm against the standard model: the loss
    on unseen text over training (the rule: each variant's loss, in both languages)."""
    variants = ("no_residual", "no_layernorm")
    loss = [W.read(v, "held_out_loss") for v in variants]
    per = [W.per_language(v) for v in variants]
    layers = W.recipe()["n_layer"]
    scene.say("lab_question")
    chart = show(scene, loss, [scene.s("lab_full"), scene.s("lab_no_residual"), scene.s("lab_no_layernorm")],
                 [(scene.s("lab_loss"), loss, W.loss_text)], y_max=6, y_step=2, y_label=scene.s("lab_loss_axis"))
    residual, norm = (W.verdict(p, W.LOSS_GAP) for p in per)
    key = scene.caption_rule(
        "lab", {("higher", "same"): "lab_residual_only", ("higher", "higher"): "lab_both"}.get(
            (residual, norm), "lab_other"),
        f"the loss on unseen text without the residual additions and without LayerNorm against the standard model's, "
        f"in each language (components.why.verdict over both, {W.LOSS_GAP} nats): higher and same: lab_residual_only; "
        "higher and higher: lab_both; else lab_other", residual=residual, layernorm=norm)
    conclude(scene, key, W.record(loss[0], shown=chart.by_language, per_language=[W.record(w) for w in per[0]],
                                  others=[W.record(loss[1], per_language=[W.record(w) for w in per[1]])]),
             loss=W.loss_text(loss[0]["with"]), res=W.loss_text(loss[0]["without"]),
             ln=W.loss_text(loss[1]["without"]), layers=layers)


ORDER_APART = 0.5    # the order test tells the orders apart: total variation between the two next-word distributions


def positional_encoding(scene) -> None:
    """What positions add: no_position against the standard model: the loss on unseen text over training, and the
    order test on the lecture's story prompt (P of its next word after the earlier words are reversed); the rule:
    each language's loss, and whether the model without the table still tells the orders apart in both languages.
    Beside it, values["no_position"]: the shipped model with its table zeroed, the last token's attention output's
    largest change per layer when the earlier words are reversed (model.analysis.no_position_attn_change)."""
    from model.analysis import no_position_attn_change
    loss, per_lang = W.read("no_position", "held_out_loss"), W.per_language("no_position")
    reversed_p = {lang: W.read("no_position", f"order_p_reversed_{lang}") for lang in style.LANGUAGES}
    tv = W.per_language("no_position", "order_tv")
    written = W.read("no_position", f"order_p_as_written_{scene.lang}")
    word = W.order_word(scene.lang)
    scene.say("lab_question")
    chart = show(scene, [loss], [scene.s("lab_with"), scene.s("lab_without")],
                 [(scene.s("lab_loss"), [loss], W.loss_text),
                  (scene.s("lab_reversed", word=word), {lang: [p] for lang, p in reversed_p.items()}, style.percent)],
                 y_max=6, y_step=2, y_label=scene.s("lab_loss_axis"))
    same = W.verdict(per_lang, W.LOSS_GAP)
    apart = all(t["range_without"][0] >= ORDER_APART for t in tv)       # every seed tells them apart
    key = scene.caption_rule(
        "lab", "lab_order_mask" if same == "same" and apart else "lab_order_needed" if not apart else "lab_order_other",
        f"without the position table: the loss on unseen text in each language (components.why.verdict over both, "
        f"{W.LOSS_GAP} nats) and the order test's total variation in both languages (at least {ORDER_APART} at every "
        "seed: the orders told apart): same and apart: lab_order_mask; not apart: lab_order_needed; else lab_order_other",
        loss=same, total_variation=[t["without"] for t in tv])
    rp = reversed_p[scene.lang]
    conclude(scene, key, W.record(loss, shown=chart.by_language, per_language=[W.record(w) for w in per_lang],
                                  order_reversed=[W.record(reversed_p[lang]) for lang in style.LANGUAGES],
                                  order_tv=[W.record(t) for t in tv],
                                  order_as_written=[W.record(W.read("no_position", f"order_p_as_written_{lang}"))
                                                    for lang in style.LANGUAGES],
                                  word={lang: W.order_word(lang) for lang in style.LANGUAGES}),
             word=word, p=style.percent(written["without"]), p_rev=style.percent(rp["with"]),
             p_rev_without=style.percent(rp["without"]), loss=W.loss_text(loss["with"]),
             loss_without=W.loss_text(loss["without"]))
    change = no_position_attn_change(scene.gpt, list(scene.token_ids))
    scene.values["no_position"] = {"attn_change": change["attn_change"], "rule": change["rule"],
                                   "reversed_ids": change["reversed_ids"],
                                   "reversal_test": {lang: {"p_reversed": reversed_p[lang]["without"],
                                                            "total_variation": t["without"]}
                                                     for lang, t in zip(style.LANGUAGES, tv)}}
