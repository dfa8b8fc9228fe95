"""`python -m model lab show`: the lab's record (model/snapshots/lab.json) as a readable table."""

from __future__ import annotations

from .language import LANGUAGES


def _cell(stats: dict | None, fmt: str) -> str:
    """The mean over seeds, and the range when the seeds differ."""
    if stats is None:
        return "-"
    text = format(stats["mean"], fmt)
    if stats["max"] != stats["min"]:
        text += f" ({format(stats['min'], fmt)}–{format(stats['max'], fmt)})"
    return text


COLUMNS = (  # heading, summary key, format
    ("train loss", "train_loss", ".3f"), ("held-out", "held_out_loss", ".3f"),
    *[(f"excess {lang}", f"excess_loss_{lang}", ".3f") for lang in LANGUAGES],
    *[(f"accuracy {lang}", f"accuracy_{lang}", ".3f") for lang in LANGUAGES],
    *[(f"facts {lang} /40", f"facts_known_{lang}", ".1f") for lang in LANGUAGES],
    *[(f"recall {lang}", f"recall_accuracy_{lang}", ".3f") for lang in LANGUAGES],
    ("attn entropy", "final_attention_entropy", ".2f"),
)


def table(rec: dict) -> str:
    recipe = rec["recipe"]
    lines = [f"the lab: {recipe['steps']} steps, batch {recipe['batch_size']}, seeds {rec['seeds']}"
             f"{'' if rec.get('complete') else ' (INCOMPLETE: not every run is recorded yet)'}"
             f"; {rec.get('seconds', 0) / 60:.0f} min to record",
             "mean over seeds (min–max); losses in nats; held-out: 256 windows of the mixture, the model's own mask"]
    rows = [("variant", "seeds", *[c[0] for c in COLUMNS])]
    for name, v in rec["variants"].items():
        s = v.get("summary")
        if not s:
            rows.append((name, "0", *["-"] * len(COLUMNS)))
            continue
        rows.append((name, str(len(s["seeds"])), *[_cell(s.get(key), fmt) for _, key, fmt in COLUMNS]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    lines.append("")
    lines.append("word order (positional_encoding's prompt, earlier words reversed): P(word) as written -> reversed; "
                 "total variation")
    for name, v in rec["variants"].items():
        s = v.get("summary")
        if s:
            lines.append(f"  {name:<13}" + "   ".join(
                f"{lang} {_cell(s[f'order_p_as_written_{lang}'], '.2f')} -> {_cell(s[f'order_p_reversed_{lang}'], '.2f')};"
                f" TV {_cell(s[f'order_tv_{lang}'], '.2f')}" for lang in LANGUAGES))
    lines.append("")
    lines.append("writing one word at a time (each word from its prefix alone) vs the whole window at once:")
    for name in ("baseline", "no_mask"):
        s = rec["variants"].get(name, {}).get("summary")
        if s and "generating_loss" in s:
            lines.append(f"  {name:<13}train {_cell(s['train_loss'], '.3f')}, held-out {_cell(s['held_out_loss'], '.3f')}, "
                         f"word by word {_cell(s['generating_loss'], '.3f')}, mask switched on "
                         f"{_cell(s['mask_on_loss'], '.3f')}")
    lines.append("")
    lines.append("the shipped model with its position table zeroed: the last token's attention output, largest "
                 "change per layer when the earlier words are reversed")
    for lang, np_ in rec["no_position"].items():
        lines.append(f"  {lang}: " + ", ".join(f"layer {i} {x:.2f}" for i, x in enumerate(np_["attn_change"])))
    return "\n".join(lines)


MARKDOWN = (  # heading, summary key, format
    ("train loss", "train_loss", ".3f"), ("held-out loss", "held_out_loss", ".3f"),
    ("excess en / zh", ("excess_loss_en", "excess_loss_zh"), ".3f"),
    ("next-word accuracy en / zh", ("accuracy_en", "accuracy_zh"), ".3f"),
    ("facts known en / zh (of 40)", ("facts_known_en", "facts_known_zh"), ".0f"),
    ("story recall en / zh", ("recall_accuracy_en", "recall_accuracy_zh"), ".3f"),
    ("order: P(word) as written → reversed, en", ("order_p_as_written_en", "order_p_reversed_en"), ".2f"),
    ("order, zh", ("order_p_as_written_zh", "order_p_reversed_zh"), ".2f"),
    ("attention entropy (nats)", "final_attention_entropy", ".2f"),
)


def markdown(rec: dict) -> str:
    """The record's summary as a Markdown table (docs/model.md's "The lab"): means over the recorded seeds."""
    def cell(s, key, fmt):
        if isinstance(key, str):
            return format(s[key]["mean"], fmt)
        sep = " → " if key[0].startswith("order") else " / "
        return sep.join(format(s[k]["mean"], fmt) for k in key)
    lines = ["| variant | seeds | " + " | ".join(h for h, _, _ in MARKDOWN) + " |",
             "|---|---|" + "---|" * len(MARKDOWN)]
    for name, v in rec["variants"].items():
        s = v.get("summary")
        if s:
            lines.append(f"| {name} | {len(s['seeds'])} | " + " | ".join(cell(s, k, f) for _, k, f in MARKDOWN) + " |")
    return "\n".join(lines)
