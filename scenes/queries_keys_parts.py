"""Pieces of the queries_keys scene's intuition beats, built from numbers model.analysis gives (nothing computed here):

- random_dots_chart: dot products of random vectors, one strip of dots per length d, with each strip's spread
  (model.analysis.query_key.random_dots): why scores are divided by √d_k;
- head_census: the head's top key over the seeded stories ending in the focus word (model.analysis.head_jobs);
- story_row, blocks: the prompt row of the question, Q and K as heat matrices;
- ranking: one query's keys in one ranking (model.analysis.query_key.direct_comparison), its top rows and the
  followed key's row: compared directly (x̂·x̂) against through W_q and W_k (q·k).
"""

from __future__ import annotations

import math

from manim import DOWN, LEFT, RIGHT, UP, Circle, Line, SurroundingRectangle, VGroup

from model.analysis import head_jobs
from scenes import style
from scenes.attention_chapter import TOP
from scenes.components import HeatMatrix, Label, NumberColumn, TokenRow

STORY_LINE = 1.25               # the story row's second line, below its first
BLOCK_CELL_W, BLOCK_GAP = 0.22, 0.6      # Q and K as heat matrices: a cell's widest, the gap between the blocks
JOB_SHARE = 0.5     # job_kind: the census's top key is the repeated word in more than this share of the stories
BLOCKS_RIGHT = 3.9               # the blocks end left of the entry legend (its bar at 6.35 - 2.25)

CHART_LEFT, CHART_RIGHT = -4.6, 3.6      # the strips' centres spread between these
CHART_MID, CHART_HALF = 0.1, 1.95        # the zero line's height, and the largest |dot product|'s distance from it
STRIP_HALF = 0.32                         # a strip's dots spread this far either side of its centre (for visibility)
LABEL_Y = 3.15                            # the "d = …" labels above the strips (and √d under them)
DOT_R = 0.028


def random_dots_chart(data: dict, d_k: int, spread_text, d_text) -> VGroup:
    """data: random_dots' answer. One strip per length: its dots at their true heights (one scale for all; a dot's
    offset across the strip is only its index's, so the dots do not hide one another), ticks at ± the spread, the
    length above (d_text(d, is_d_k): its lines) and the spread below the zero line's end (spread_text(spread)).
    Returns the chart with .strips (per length: dots, ticks, label, spread label) and .zero (the zero line)."""
    dims, dots, spreads = data["dims"], data["dots"], data["spread"]
    top = max(max(abs(v) for v in d) for d in dots)
    unit = CHART_HALF / top
    xs = [CHART_LEFT + i * (CHART_RIGHT - CHART_LEFT) / max(1, len(dims) - 1) for i in range(len(dims))]
    zero = Line([CHART_LEFT - 0.8, CHART_MID, 0], [CHART_RIGHT + 0.8, CHART_MID, 0], color=style.MUTED,
                stroke_width=2)
    strips = []
    for x, d, vals, sd in zip(xs, dims, dots, spreads):
        cloud = VGroup(*[Circle(radius=DOT_R, stroke_width=0, fill_color=style.TEXT, fill_opacity=0.55)
                         .move_to([x + STRIP_HALF * (2 * ((i * 0.618034) % 1.0) - 1), CHART_MID + unit * v, 0])
                         for i, v in enumerate(vals)])
        colour = style.KEY if d == d_k else style.QUERY
        ticks = VGroup(*[Line([x - STRIP_HALF - 0.12, CHART_MID + s * unit * sd, 0],
                              [x + STRIP_HALF + 0.12, CHART_MID + s * unit * sd, 0], color=colour, stroke_width=4)
                         for s in (1, -1)])
        label = VGroup(*[Label(t, font_size=style.LABEL, color=style.KEY if d == d_k else style.TEXT)
                         for t in d_text(d, d == d_k)]).arrange(DOWN, buff=0.15).move_to([x, LABEL_Y, 0], aligned_edge=UP)
        spread = Label(spread_text(sd), font_size=style.SMALL, color=colour)
        spread.next_to(ticks[0], RIGHT, buff=0.1)
        strips.append(VGroup(cloud, ticks, label, spread))
    chart = VGroup(zero, *strips)
    chart.strips, chart.zero, chart.xs, chart.unit = strips, zero, xs, unit
    return chart


def ranking(words: list[str], values: list[float], order: list[int], ranks: list[int], followed: int, title: str,
            x: float, top_y: float, pitch: float, colour, shown: int = 3) -> VGroup:
    """One ranking as rows "rank  word  value": its first `shown` keys, then, where the followed key is not among
    them, "⋯" and its row. The followed key's row framed in `colour`. Returns the group with .rows (key per row,
    None for "⋯"), .frame and .labels (the value labels as drawn)."""
    keys = order[:shown] + ([None, followed] if ranks[followed] > shown else [])
    ys = [top_y - 0.6 - i * pitch for i in range(len(keys))]
    head = Label(title, font_size=style.LABEL, color=colour).move_to([x, top_y, 0])
    rank_x, word_right, value_right = x - 1.9, x + 0.6, x + 2.0
    rows, texts = VGroup(), []
    for k, y in zip(keys, ys):
        if k is None:
            rows.add(Label("\u22ef", font_size=style.LABEL, color=style.MUTED).move_to([x, y + 0.1, 0]))
            continue
        r = Label(f"{ranks[k]}", font_size=style.SMALL, color=style.MUTED)
        r.shift(RIGHT * (rank_x - r.get_left()[0])).on_baseline(y)
        w = Label(words[k], font_size=style.LABEL, color=colour if k == followed else style.TEXT)
        w.shift(RIGHT * (word_right - w.get_right()[0])).on_baseline(y)
        texts.append(style.signed(values[k], 1))
        v = NumberColumn([texts[-1]], [y], value_right)
        rows.add(VGroup(r, w, v))
    i = keys.index(followed)
    frame = SurroundingRectangle(rows[i], color=colour, buff=0.1, corner_radius=0.06)
    group = VGroup(head, rows, frame)
    group.rows, group.frame, group.labels, group.keys = rows, frame, texts, keys
    return group



def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st: an English rank."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def story_row(h, lang: str) -> TokenRow:
    """The prompt up to the focus and a "?" slot: on one line where it fits the title-safe width, else on two,
    broken after the first sentence's end (else in the middle); where two lines do not hold it either, on one
    line whose earliest tokens give way to a "⋯" (TokenRow's rule). Every token keeps its colour and position."""
    row = TokenRow(h.tokens[:h.focus + 1], lang=lang, next_slot=True, max_width=1e9)
    width = 2 * style.safe_half_width() - 0.2
    if row.width <= width:
        return row.move_to([0, TOP - 0.1 - row.height / 2, 0])
    ends = [i + 1 for i, t in enumerate(h.tokens[:h.focus]) if t.strip() in (".", "\u3002")]
    split = ends[0] if ends and 0 < ends[0] <= h.focus else (h.focus + 1) // 2
    boxes = [*row.chips, row.slot]
    lines = [VGroup(*[VGroup(boxes[i], row.indices[i]) for i in range(split)]),
             VGroup(*[VGroup(boxes[i], row.indices[i]) for i in range(split, len(boxes))])]
    for n, line in enumerate(lines):
        line.shift(RIGHT * -line.get_center()[0])
        line.shift(UP * (TOP - 0.1 - n * STORY_LINE - boxes[0].get_top()[1]
                         + (boxes[0].get_top()[1] - line[0][0].get_top()[1])))
    if any(line.width > width for line in lines):     # a longer prompt (a checkpoint's BPE pieces): one line,
        row = TokenRow(h.tokens[:h.focus + 1], lang=lang, next_slot=True, max_width=width)  # from "⋯" on
        return row.move_to([0, TOP - 0.1 - row.height / 2, 0])
    return row


def blocks(h, entry_scale):
    """Q and K as heat matrices, one row per token, words on the left."""
    pitch = min(0.44, 5.3 / h.T)
    stride = max(1, math.ceil(0.42 / pitch - 1e-9))
    labelled = labelled_rows(h.T, stride, h.focus, h.source)
    # the cells narrow by rule where d_head is large (GPT-2's 64): both blocks fit between the words and the legend
    left = -style.safe_half_width() + 0.2 + max(Label(h.word(i), font_size=style.SMALL).width for i in labelled) + 0.25
    cell_w = min(BLOCK_CELL_W, (BLOCKS_RIGHT - left - BLOCK_GAP) / (2 * h.d_head))
    q = HeatMatrix(h.Q, entry_scale, name="Q", cell_w=cell_w, cell_h=pitch)
    k = HeatMatrix(h.K, entry_scale, name="K", cell_w=cell_w, cell_h=pitch)
    k.next_to(q, RIGHT, buff=BLOCK_GAP).align_to(q, UP)
    words = VGroup(*[Label(h.word(i), font_size=style.SMALL).next_to(q.rows[i], LEFT, buff=0.25)
                     for i in labelled])
    for w in words:
        w.shift(RIGHT * (words.get_right()[0] - w.get_right()[0]))
    group = VGroup(words, q, k)
    group.shift(RIGHT * (-style.safe_half_width() + 0.2 - group.get_left()[0]) + UP * (TOP - group.get_top()[1]))
    return q, k, words
def labelled_rows(n: int, stride: int, focus: int, source: int) -> list[int]:
    """The rows of the Q and K blocks that get their word: every stride-th row, the focus's among them; and the key
    row the chapter follows (source) too, in place of the rows of that rhythm nearer to it than a stride, unless it
    is nearer than a stride to the focus itself (then the two labels would touch, and the focus keeps its own)."""
    rows = set(range(focus % stride, n, stride))
    if source not in rows and abs(source - focus) >= stride:
        rows = {i for i in rows if abs(i - source) >= stride or i == focus} | {source}
    return sorted(rows)


def head_census(gpt, h) -> dict:
    """This head's top key over the seeded sample's stories (model.analysis.head_jobs.story_sample) that end in
    the focus word, as head_jobs.top_key_census sorts it: the count of 'answer' (the word the story repeats)."""
    lang = h.choice["prompt_rule"]["lang"]
    sample = [s for s in head_jobs.story_sample(lang) if s["words"][-1] == h.tokens[h.focus]]
    if not sample:
        return None
    census = head_jobs.top_key_census(gpt, lang, sample)
    counts = census["heads"][h.layer, h.head]["counts"]
    return {"n": census["n"], "answer": counts["answer"], "counts": counts, "lang": lang,
            "sample_rule": census["sample"] + f"; only the stories ending in {h.tokens[h.focus]!r}",
            "kind_rule": census["rule"], "share_rule": JOB_SHARE}
