"""The shared components (scenes/components): honest ellipses, real corners and true shapes, every entry of a
heatmap, token rows and chips; and the gallery (scenes/gallery.py), one of each, against committed frames."""

from __future__ import annotations

import numpy as np
import pytest
from manim.utils.testing.frames_comparison import frames_comparison

from scene_checks import play_until_section_ends
from scenes import style
from scenes.components import (ColourScale, Heatmap, LayoutError, MatrixGrid, NumberText, TokenChip, TokenColumn, TokenRow,
                               VectorColumn, bounds, inside_safe_area, shown_indices)
from scenes.gallery import GalleryAttention, GalleryCharts, GalleryMatrices, GalleryText

__module_test__ = "components"
LEFT_POINT = [-2.0, -1.5, 0.0]


def test_bounds_are_manims_four_edges(gpt):
    """bounds() gives get_left, get_bottom, get_right and get_top's numbers exactly, for every kind of mobject a scene
    draws: text in both scripts, formulas, shapes, groups of them, a group with no points, a lone point."""
    from manim import (Arrow, Dot, Line, MathTex, Mobject, Rectangle, SurroundingRectangle, VectorizedPoint,
                       VGroup)
    from scenes.components import Label
    word, han = Label("jordan plays", font_size=style.LABEL), Label("迈克尔乔丹打", font_size=style.SMALL)
    formula = MathTex(r"\frac{q \cdot k}{\sqrt{d_k}}").shift([1.3, -0.7, 0])
    shapes = [Dot([2.5, 1, 0]), Line([-3, 1, 0], [4, -2, 0]), Arrow(LEFT_POINT, [1, 2, 0]), Rectangle(width=2, height=1)]
    cases = [word, han, formula, *shapes, VGroup(word, *shapes), SurroundingRectangle(han, buff=0.1),
             TokenRow(["michael", "jordan", "plays"], lang="en"), VectorColumn(np.arange(9.0) - 4, lang="zh"),
             VGroup(), VectorizedPoint([0.4, -0.2, 0]), Mobject().set_points(np.array([[1.0, 2, 0], [-1, 0, 0]]))]
    for m in cases:
        assert bounds(m) == (m.get_left()[0], m.get_bottom()[1], m.get_right()[0], m.get_top()[1]), m
    assert bounds(VGroup()) == (0.0, 0.0, 0.0, 0.0)


def test_a_rounded_box_is_manims_rounded_rectangle_point_for_point():
    """Made anew or copied from one made before (the second of each size), anywhere it is moved to."""
    from manim import RoundedRectangle
    from scenes.components import RoundedBox
    for _ in range(2):
        for w, h, r in ((1.37, 0.62, 0.1), (0.7, 0.62, 0.1), (2.0, 0.5, 0.08), (1.37, 0.62, 0.12)):
            box = RoundedBox(corner_radius=r, width=w, height=h, stroke_width=2, fill_opacity=0.2).shift([1, -2, 0])
            plain = RoundedRectangle(corner_radius=r, width=w, height=h).shift([1, -2, 0])
            assert isinstance(box, RoundedRectangle) and box.corner_radius == r
            assert np.array_equal(box.points, plain.points)
    a, b = RoundedBox(width=1, height=1), RoundedBox(width=1, height=1)
    a.shift([3, 0, 0])
    assert not np.array_equal(a.points, b.points)      # each box its own points


def test_vector_column_ellipsis_is_honest(gpt):
    v = gpt.trace("michael jordan plays")["embeddings"][1]
    col = VectorColumn(v, lang="en", shown=7)
    assert shown_indices(len(v), 7) == [0, 1, 2, 3, 4, 5, None, len(v) - 1]
    numbers = [e.text for e in col.entries if isinstance(e, NumberText)]
    assert numbers == [style.signed(v[i], 1) for i in (0, 1, 2, 3, 4, 5, len(v) - 1)]
    assert col.size_label.text == f"{gpt.config.n_embd} numbers"
    assert VectorColumn(v, lang="zh").size_label.text == f"{gpt.config.n_embd} 个数"
    assert len(VectorColumn(v[:4], lang="en").entries) == 4  # short vectors need no ellipsis


def test_matrix_grid_shows_real_corners_and_true_shape(gpt):
    W = gpt.head(0, 0).W_Q
    grid = MatrixGrid(W, name="W_q", rows=4, cols=4)
    assert grid.shape_label.text == f"W_q: {gpt.config.n_embd} \u00d7 {gpt.config.d_head}"
    assert grid.rows_shown == [0, 1, 2, None, W.shape[0] - 1] and grid.cols_shown[-1] == W.shape[1] - 1
    corner = grid.cells[-1][1]  # bottom-right cell's number
    assert corner.text == style.signed(W[-1, -1], 1)


def test_heatmap_colours_every_entry_by_its_scale(gpt):
    W = gpt.W_E.T
    scale = ColourScale.signed_for(W)
    h = Heatmap(W, scale, width=9.2, height=2.56)
    assert (h.n_rows, h.n_cols) == (gpt.config.n_embd, gpt.config.vocab_size)
    np.testing.assert_array_equal(h.levels, np.round(W / np.abs(W).max() * Heatmap.LEVELS))
    for i, j in ((0, 0), (5, 76), (63, 122)):
        assert h.shown_colour(i, j) == scale.colour(round(W[i, j] / scale.limit * Heatmap.LEVELS)
                                                    / Heatmap.LEVELS * scale.limit)
    n_cells = sum(len(m.points) // 16 for m in h.submobjects[1:])
    assert n_cells == W.size                                  # every entry is drawn, once
    assert abs(h.column_x(0) - (h.get_left()[0] + h.cell_width / 2)) < 0.02


def test_token_row_keeps_true_positions_when_it_must_drop_tokens():
    words = "a fluffy blue fox roamed the misty forest . the fox was blue".split()
    row = TokenRow(words, next_slot=True)
    assert row.first_shown > 0 and len(row.ellipsis) == 1
    assert [n.text for n in row.indices] == [str(i) for i in range(row.first_shown, len(words) + 1)]
    assert inside_safe_area(row.move_to([0, 0, 0]))


def test_a_token_row_keeps_a_word_it_is_told_to_between_hidden_runs():
    words = "a fluffy blue fox roamed the misty forest . the fox was blue".split()
    plain = TokenRow(words, max_width=6.0)
    kept = TokenRow(words, max_width=6.0, keep=(2,))
    assert 2 not in plain.positions and plain.positions == list(range(plain.first_shown, len(words)))
    assert 2 in kept.positions and len(kept.ellipsis) == 2            # "⋯ blue ⋯ … was blue"
    assert kept.positions[-1] == len(words) - 1 and kept.width <= 6.0
    assert [c.word for c in kept.chips] == [words[p] for p in kept.positions]
    assert kept.chip_for(2).word == "blue" and kept.chip_for(len(words) - 1) is kept.chips[-1]
    ink = [m.get_center()[0] for m in kept[0]]                          # ⋯, blue, ⋯, then the tail, left to right
    assert ink == sorted(ink) and kept[0][0] is kept.ellipsis[0] and kept[0][2] is kept.ellipsis[1]
    with pytest.raises(LayoutError, match="token 0 is not shown"):
        kept.chip_for(0)


def test_a_token_is_a_chip_in_its_tokens_colour():
    row = TokenRow(["the", "fox", "was"], next_slot=True)
    assert all(isinstance(c, TokenChip) for c in row.chips) and isinstance(row.slot, TokenChip)
    assert [c.word for c in row.chips] == ["the", "fox", "was"] and row.slot.word == "?"
    for position, chip in enumerate(row.chips):
        assert chip.box.get_fill_color() == style.token_colour(row.words, position)
        assert chip.label.text == chip.word and chip.box.width > chip.label.width
    column = TokenColumn(["fox", "<|endoftext|>"], [1, 7], [0.0, -0.4], right=0.0)
    assert [c.label.text for c in column.chips] == ["fox", "<eos>"]
    assert column.chips[0].box.get_fill_color() != column.chip(7).box.get_fill_color()
    assert column.chips[0].box.width == column.chips[1].box.width       # one width for the column


def test_a_caption_line_too_wide_is_broken_again_by_rule():
    """A line the filled-in words make too wide: the same words, as many lines, each inside the title-safe area,
    a break after punctuation where one fits; Chinese breaks between characters but never before "，"; a word
    and its number stay together; where no break fits, the caption is fitted, never refused (the next test)."""
    from scenes.components import Caption, inside_safe_area
    en = "Largest: attn 2 at \"reportedly\" (0.61), then MLP 0 at \"sharapova\" (0.58), and more.\nShort."
    c = Caption(en, "en")
    assert len(c) == 2 and inside_safe_area(c) and c.text != en
    assert c.text.replace("\n", " ").split() == en.replace("\n", " ").split()
    assert "attn\n" not in c.text and "MLP\n" not in c.text
    fits = "One line that fits.\nAnother."
    assert Caption(fits, "en").text == fits
    zh = "最大：注意力 2·\u201creportedly\u201d 0.61，MLP 0·\u201csharapova\u201d 0.58，还有更多更多更多。\n短。"
    c = Caption(zh, "zh")
    assert len(c) == 2 and inside_safe_area(c)
    assert c.text.replace("\n", "") == zh.replace("\n", "")
    assert not any(line.startswith(("\uff0c", "\u3002", "\u201d")) for line in c.text.split("\n"))
    assert c.fitted == "rebroken" and c.font_size == style.CAPTION


def test_a_caption_no_break_fits_is_scaled_then_its_tokens_cut_never_refused():
    """Issue 44: a lecturer's checkpoint's long BPE tokens in a caption. Scaled to the legibility floor if a break fits
    there; else the quoted tokens cut with "…" (the numbers and the other words kept); else its end dropped for a
    "…". Never more lines than the author wrote, always inside the title-safe area, never below the floor."""
    from scenes.components import Caption, inside_safe_area
    # the issue's caption (queries_keys' idea_value at a 3-layer, 6-head checkpoint): no two-line break at 25 px
    issue = ('Here "\u2423atte\u2026" matches "\u2423fox" best: 21.2% of its attention (layer 3, head 6).\n'
             'That word\'s value, its information, flows to "\u2423atte\u2026".')
    c = Caption(issue, "en")
    assert c.fitted == "scaled" and style.SMALL <= c.font_size < style.CAPTION
    assert len(c) == 2 and inside_safe_area(c) and c.text.split() == issue.split()
    longer = issue.replace("\u2423atte\u2026", "\u2423counterrevolutionary")
    longer = longer.replace("\u2423fox", "\u2423Internationalization")
    c = Caption(longer, "en")
    assert c.fitted == "elided" and c.font_size == pytest.approx(style.SMALL) and len(c) == 2 and inside_safe_area(c)
    assert "21.2%" in c.text and "(layer 3, head 6)" in c.text.replace("\n", " ") and "information" in c.text
    assert '"\u2423cou' in c.text and "counterrevolutionary" not in c.text and c.text.endswith('\u2026".')
    zh = ("这里\u201c\u2423counterrevolutionary\u201d与\u201c\u2423Internationalization\u201d最匹配：在第 3 层第 6 个头"
          "占它 21.2% 的注意力。\n那个词的值向量，也就是它的信息，流向\u201c\u2423counterrevolutionary\u201d。")
    c = Caption(zh, "zh")
    assert c.fitted == "elided" and len(c) == 2 and inside_safe_area(c) and "21.2%" in c.text
    many = " ".join(["reportedly"] * 30)       # nothing quoted to cut: the end goes
    c = Caption(many, "en")
    assert c.fitted == "elided" and len(c) == 1 and inside_safe_area(c) and c.text.endswith("reportedly\u2026")
    assert c.font_size == pytest.approx(style.SMALL)


def test_the_pipeline_map_lights_the_parts_asked_for_in_one_layout_for_both_languages():
    """PipelineMap (a scene's closing beat): a box per stage, the lit ones framed and joined to the lines; the shapes
    do not move with the language; a deep model keeps its first, last and lit layers; a bad part or a line too
    wide is refused."""
    from manim import VMobject
    from scenes.components import LayoutError, PipelineMap

    def shapes(m):
        return [np.round(x.get_all_points(), 6).tolist() for x in m.get_family()
                if type(x).__name__ in ("RoundedBox", "Line")]
    lines = [("layer 2, head 3", style.MUTED), ("weight 62%", style.TEXT)]
    en, zh = (PipelineMap(3, lit=["attention:1"], lines=lines, lang=lang) for lang in ("en", "zh"))
    assert shapes(en) == shapes(zh) and inside_safe_area(en) and inside_safe_area(zh)
    assert en.lit_parts == ["attention:1"] and len(en.frames) == 1 and len(en.links) == 1 + 1   # the bar, a line
    assert en.frames[0].get_center()[1] == pytest.approx(en.boxes["attention:1"][0].get_center()[1])
    assert [m.text for m in en.callout] == ["layer 2, head 3", "weight 62%"]
    assert en.record() == {"lit": ["attention:1"]}
    assert len(en.boxes) == 1 + 2 * 3 + 2
    every = PipelineMap(3, lit=["mlp:*"], lines=lines, lang="en")
    assert every.lit_parts == ["mlp:0", "mlp:1", "mlp:2"] and len(every.frames) == 3 and len(every.links) == 1 + 3
    deep = PipelineMap(12, lit=["attention:5"], lines=lines, lang="zh")    # GPT-2's depth: layers 1, 6, 12 drawn
    assert sorted(deep.boxes) == sorted(["embedding", "ln_f", "unembedding"] +
                                        [f"{k}:{l}" for k in ("attention", "mlp") for l in (0, 5, 11)])
    gaps = [m.text for m in deep.base if isinstance(m, VMobject) and "另外" in getattr(m, "text", "")]
    assert gaps == ["\u22ee 另外 4 层", "\u22ee 另外 5 层"] and inside_safe_area(deep)
    with pytest.raises(ValueError, match="unknown or no lit parts"):
        PipelineMap(3, lit=["attention:3"], lines=lines, lang="en")
    with pytest.raises(LayoutError, match="runs past the title-safe area"):
        PipelineMap(3, lit=["ln_f"], lines=[("x" * 60, style.TEXT)], lang="en")


# --- the gallery: one of each component, from the model's numbers, against committed frames ----------------------
@pytest.mark.parametrize("page", [GalleryText, GalleryCharts, GalleryMatrices, GalleryAttention])
def test_gallery_pages_stay_inside_the_safe_area(page, tmp_path):
    from manim import tempconfig
    with tempconfig({"dry_run": True, "quality": "low_quality", "media_dir": str(tmp_path), "verbosity": "ERROR",
                     "disable_caching": True, "tex_dir": str(tmp_path), "text_dir": str(tmp_path)}):
        scene = page(skip_animations=True)
        scene.render()
        assert all(inside_safe_area(m) for m in scene.mobjects), page.page


@frames_comparison(base_scene=GalleryText)
def test_frame_gallery_text(scene):
    play_until_section_ends(scene, GalleryText.construct)


@frames_comparison(base_scene=GalleryCharts)
def test_frame_gallery_charts(scene):
    play_until_section_ends(scene, GalleryCharts.construct)


@frames_comparison(base_scene=GalleryMatrices)
def test_frame_gallery_matrices(scene):
    play_until_section_ends(scene, GalleryMatrices.construct)


@frames_comparison(base_scene=GalleryAttention)
def test_frame_gallery_attention(scene):
    play_until_section_ends(scene, GalleryAttention.construct)


def test_percent_says_what_one_decimal_would_hide():
    """A probability that rounds to 0.0% or 100.0% but is not says so; a float32 softmax column's sum, a few float32
    steps from 1 (a checkpoint's trace), is 100.0%, not '>99.9%'."""
    assert style.percent(0.0) == "0%" and style.percent(0.0004) == "<0.1%" and style.percent(0.0005) == "0.1%"
    assert style.percent(0.9996) == ">99.9%" and style.percent(0.99998) == ">99.9%"
    scores = np.arange(13, dtype=np.float32) * np.float32(0.37)
    column = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()      # a float32 softmax
    assert float(column.sum()) < 1.0 and style.percent(float(column.sum())) == "100.0%"
    assert style.percent(1.0) == "100.0%" and style.percent(0.123) == "12.3%"


def _colours(chips) -> list[str]:
    return [c.box.get_fill_color().to_hex() for c in chips]


@pytest.mark.slow
def test_the_same_token_keeps_its_colour_and_different_tokens_differ():
    """A token's colour is its id's (style.token_colours), in every component that draws a prompt's tokens: the two
    "the"s of a prompt alike, different tokens different while the palette lasts; a row cut to "⋯", a column of some
    of the prompt's tokens, the words reordered, a trace grid's chips and the word that fills the "?" slot all agree
    with the whole row. Random prompts from the vocabulary's words, some repeated."""
    import random
    from scenes.components import CompactTokenRow, TraceGrid
    rng = random.Random(34)
    vocab = ["the", "fox", "was", "a", "frog", ".", ",", "blue", "misty", "forest", "lake", "jordan", "plays", "mr",
             "michael", "indeed", "orange", "tiny", "silky"]
    for _ in range(20):
        words = [rng.choice(vocab) for _ in range(rng.randint(2, 14))]
        colour = dict(zip(words, style.token_colours(words)))
        distinct = list(dict.fromkeys(words))
        assert len({colour[w].to_hex() for w in distinct}) == min(len(distinct), len(style.TOKEN_PALETTE))
        expected = [colour[w].to_hex() for w in words]
        row = TokenRow(words, next_slot=True, max_width=1e9)
        assert _colours(row.chips) == expected
        narrow = CompactTokenRow(words, max_width=4.0)
        assert _colours(narrow.chips) == expected[narrow.first_shown:]
        some = sorted(rng.sample(range(len(words)), rng.randint(1, len(words))))
        column = TokenColumn([words[i] for i in some], some, [-0.5 * n for n in range(len(some))], right=0.0,
                             prompt=words)
        assert _colours(column.chips) == [expected[i] for i in some]
        shuffled = rng.sample(words, len(words))
        assert _colours(TokenRow(shuffled, prompt=words, max_width=1e9).chips) == [colour[w].to_hex() for w in shuffled]
        grid = TraceGrid(np.zeros((1, len(words))), ["x"], words, left=0.0, top=0.0)
        assert _colours(grid.chips) == expected
        for word in (rng.choice(words), "basketball"):    # a word of the prompt keeps its colour; a new one the next
            filled = row.slot_filled(word).box.get_fill_color().to_hex()
            assert filled == (colour[word].to_hex() if word in colour else
                              style.TOKEN_PALETTE[len(distinct) % len(style.TOKEN_PALETTE)].upper())
    # the two "the"s alike, "orange" and the second "the" not (the position rule drew them so)
    words = "a silky orange tiny frog dived the verdant lake . the frog was".split()
    chips = TokenRow(words, max_width=1e9).chips
    assert _colours(chips)[6] == _colours(chips)[10] and _colours(chips)[4] == _colours(chips)[11]
    assert _colours(chips)[2] != _colours(chips)[10]


def test_every_token_colour_in_the_palette_is_legible():
    """Each of the palette's colours keeps MIN_CONTRAST against the background, and no two are the same; there are
    enough for a default prompt's longest row and the word it adds, all different tokens."""
    from scenes.prompts import DRAWN_TOKENS
    assert len(style.TOKEN_PALETTE) >= DRAWN_TOKENS + 1
    assert len(set(c.lower() for c in style.TOKEN_PALETTE)) == len(style.TOKEN_PALETTE)
    assert all(style.contrast_ratio(c) >= style.MIN_CONTRAST for c in style.TOKEN_PALETTE)


# --- the bar chart and the table (scenes/components/barchart.py) ---------------------------------------------------
def test_a_bar_scale_fits_the_widest_bar_and_puts_zero_inside_the_range():
    from scenes.components import BarScale
    s = BarScale.fit(-1.0, 4.0, [0.5, 2.0, 1.0])          # all positive: zero at the left edge, 2.0 reaches 4 wide
    assert s.x0 == -1.0 and s.length(2.0) == pytest.approx(4.0)
    s = BarScale.fit(-1.0, 4.0, [-1.0, 3.0])              # signed: the range −1..3 fills the width, zero 1/4 in
    assert s.x0 == pytest.approx(0.0) and s.unit == pytest.approx(1.0)
    assert s.x0 + s.length(-1.0) == pytest.approx(-1.0) and s.x0 + s.length(3.0) == pytest.approx(3.0)
    w = BarScale.widest(0.5, 2.0, [0.3, -0.8, 0.1])     # by size, whatever the sign
    assert w.x0 == 0.5 and abs(w.length(-0.8)) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        BarScale(0.0, 0.0)


def test_a_bar_chart_scaled_to_its_numbers_ends_its_widest_bar_short_of_them():
    from scenes.components import BarChart
    values = [0.4, -1.7, 0.9]
    chart = BarChart(values, [1.0, 0.5, 0.0], None, style.LOGIT, bar_left=-1.0, gap=0.2, labels=["a", "b", "c"],
                     label_right=-1.2, numbers=style.signed, number_right=3.0)
    bars = chart.bars.bars
    widest = max(bars, key=lambda b: b.width)
    assert widest is bars[1]
    room = min(n.get_left()[0] for n in chart.numbers) - 0.2 - (-1.0)
    assert widest.width == pytest.approx(room)
    for bar, v in zip(bars, values):
        assert bar.width == pytest.approx(abs(v) * chart.bar_scale.unit)


def test_signed_bars_sit_on_the_zero_line_and_grow_out_of_it():
    from manim import LEFT, RIGHT
    from scenes.components import BarChart, BarScale
    values = [1.5, -0.75, 0.0]
    chart = BarChart(values, [1.0, 0.5, 0.0], BarScale.fit(-2.0, 3.0, values), style.LOGIT)
    x0 = chart.bar_scale.x0
    positive, negative, _ = chart.bars.bars
    assert positive.get_left()[0] == pytest.approx(x0) and positive.get_right()[0] > x0
    assert negative.get_right()[0] == pytest.approx(x0) and negative.get_left()[0] < x0
    grows = chart.grow()
    assert len(grows) == 3
    for grow, bar, v in zip(grows, chart.bars.bars, values):
        assert grow.mobject is bar
        edge = bar.get_critical_point(RIGHT if v < 0 else LEFT)
        assert edge[0] == pytest.approx(x0, abs=1e-4)      # a zero is a 1e-4 sliver centred on the line
        # the animation's first frame: the bar shrunk to nothing at the zero line
        grow.begin()
        assert grow.mobject.width == pytest.approx(0.0, abs=1e-6)
        assert grow.mobject.get_center()[0] == pytest.approx(x0, abs=1e-4)
        grow.finish()
        assert grow.mobject.width == pytest.approx(max(abs(v) * chart.bar_scale.unit, 1e-4))


def test_a_bar_charts_numbers_are_its_values_and_its_parts_come_in_drawing_order():
    from scenes.components import BarChart, BarScale
    values = [0.61, 0.25, 0.0812]
    chart = BarChart(values, [1.0, 0.5, 0.0], BarScale(0.0, 2.0), style.PROB, labels=["x", "y", "z"],
                     label_right=-0.2, numbers=style.percent, number_right=3.5, header="p", header_at=(1.0, 1.6))
    assert [n.text for n in chart.numbers] == [style.percent(v) for v in values]
    assert [label.text for label in chart.labels] == ["x", "y", "z"]
    header, labels, bars, numbers = chart
    assert (header, labels, bars, numbers) == (chart.header, chart.labels, chart.bars, chart.numbers)
    chart.set_values([0.1, 0.2, 0.7], style.percent)
    assert [n.text for n in chart.numbers] == ["10.0%", "20.0%", "70.0%"]
    assert chart.bars.bars[2].width == pytest.approx(1.4)
    with pytest.raises(LayoutError):
        BarChart(values, [1.0, 0.5], BarScale(0.0, 2.0), style.PROB)           # a row short
    with pytest.raises(LayoutError):
        BarChart(values, [1.0, 0.5, 0.0], BarScale(0.0, 2.0), style.PROB, numbers=style.percent)   # nowhere to go


def test_the_clamp_keeps_a_bar_chart_inside_the_title_safe_area():
    from scenes.components import BarChart, BarScale
    edge = style.safe_half_width()
    values = [1.0, 0.5]
    # built running off the right edge and the top: moved back in whole, its rows' spacing kept
    chart = BarChart(values, [3.9, 3.4], BarScale(edge - 1.0, 3.0), style.LOGIT, labels=["left", "right"],
                     label_right=edge - 1.2, numbers=style.percent, number_right=edge + 3.5, header="a header",
                     header_at=(edge, 4.4))
    assert inside_safe_area(chart)
    assert chart.bars.bars[0].get_center()[1] - chart.bars.bars[1].get_center()[1] == pytest.approx(0.5)
    assert chart.bars.bars[0].width == pytest.approx(3.0)
    # the same chart where it fits stays exactly where it was built
    fits = BarChart(values, [1.0, 0.5], BarScale(-1.0, 2.0), style.LOGIT, labels=["left", "right"],
                    label_right=-1.2, numbers=style.percent, number_right=3.0)
    twin = BarChart(values, [1.0, 0.5], BarScale(-1.0, 2.0), style.LOGIT, clamp=False, labels=["left", "right"],
                    label_right=-1.2, numbers=style.percent, number_right=3.0)
    assert all(np.array_equal(a.points, b.points) for a, b in zip(fits.get_family(), twin.get_family()))
    off = BarChart(values, [1.0, 0.5], BarScale(-1.0, 2.0), style.LOGIT, clamp=False, labels=["left", "right"],
                   label_right=-1.2, numbers=style.percent, number_right=edge + 2.0)
    assert not inside_safe_area(off)
    with pytest.raises(LayoutError):     # wider than the whole area: no place to move it to
        BarChart(values, [1.0, 0.5], BarScale(-edge, 3 * edge), style.LOGIT)


def test_a_table_puts_each_column_under_its_header_and_keeps_its_rows():
    from scenes.components import Table
    ys = [1.0, 0.5, 0.0]
    table = Table(["layers", "heads", "width"], [["4", "6", "128"], ["96", "96", "12,288"]], ys, label_right=-1.0,
                  column_rights=[1.0, 3.0], headers=["ours", "GPT-3"], header_baseline=1.6)
    assert [n.text for n in table.columns[1]] == ["96", "96", "12,288"]
    for column, x in zip(table.columns, [1.0, 3.0]):
        assert all(n.get_right()[0] == pytest.approx(x, abs=0.02) for n in column)
    for head, x in zip(table.header, [1.0, 3.0]):
        assert head.get_right()[0] == pytest.approx(x, abs=1e-6) and head.get_bottom()[1] > ys[0]
    assert [m.text for m in table.row(2)] == ["width", "128", "12,288"]
    assert inside_safe_area(table)
    centred = Table(["layers"], [["4"], ["96"]], [1.0], label_right=-1.0, column_rights=[1.0, 3.0],
                    headers=["ours", "GPT-3"], header_centre=1.7)
    for head, x in zip(centred.header, [1.0, 3.0]):
        assert head.get_right()[0] == pytest.approx(x, abs=1e-6) and head.get_center()[1] == pytest.approx(1.7)
    with pytest.raises(LayoutError):     # a header row needs one place to sit
        Table(["a"], [["1"]], [1.0], label_right=0.0, column_rights=[1.0], headers=["x"])
    with pytest.raises(LayoutError):
        Table(["a", "b"], [["1"]], [1.0, 0.5], label_right=0.0, column_rights=[1.0])


def test_a_table_can_centre_its_columns_size_its_labels_apart_and_shape_its_cells_as_text():
    from scenes.components import Label, Table
    table = Table(["inputs", "loss"], [["62,377", "0%"], ["69", "30.3%"]], [1.0, 0.5], label_right=-1.0,
                  column_rights=[1.0, 3.0], align="centre", label_size=style.SMALL, headers=["none", "two or more"],
                  header_baseline=1.6, label_header="on")
    for column, x in zip(table.columns, [1.0, 3.0]):        # centred by the numbers' advance: a bearing's slack
        assert all(n.get_center()[0] == pytest.approx(x, abs=0.03) for n in column)
    assert table.header[0].get_right()[0] == pytest.approx(-1.0)     # the label header stays right-aligned
    assert [h.get_center()[0] for h in table.header[1:]] == pytest.approx([1.0, 3.0])
    assert table.labels[0].font_size == pytest.approx(style.SMALL) and table.columns[0][0].font_size == style.LABEL
    text = Table(["within 85-95\u00b0"], [["1.2\u00d710\u00b2\u00b9"]], [0.0], label_right=0.0, column_rights=[3.0],
                 text_cells=True)
    assert isinstance(text.columns[0][0], Label) and text.columns[0][0].get_right()[0] == pytest.approx(3.0)
    with pytest.raises(ValueError):
        Table(["a"], [["1"]], [1.0], label_right=0.0, column_rights=[1.0], align="middle")


def test_a_tables_row_heads_may_be_mobjects_right_aligned_and_centred_on_their_rows():
    from manim import VGroup
    from scenes.components import Table
    ys = [1.0, 0.3]
    chips = [VGroup(TokenChip("michael", style.LOGIT), TokenChip("jordan", style.PROB)).arrange(),
             TokenChip("rafael", style.LOGIT)]
    table = Table(chips, [["+0.91", "+0.61"]], ys, label_right=-2.0, column_rights=[0.0], headers=["first"],
                  header_baseline=1.6)
    for head, y in zip(table.labels, ys):           # the chips themselves, right-aligned, centred on their row
        assert head.get_right()[0] == pytest.approx(-2.0) and head.get_center()[1] == pytest.approx(y + 0.1)
    assert table.labels[0] is chips[0] and table.row(1)[0] is chips[1] and inside_safe_area(table)
    lifted = Table([TokenChip("a", style.LOGIT)], [["1"]], [0.0], label_right=0.0, column_rights=[1.0], label_lift=0.2)
    assert lifted.labels[0].get_center()[1] == pytest.approx(0.2)
    with pytest.raises(LayoutError):                # texts or mobjects, not both
        Table(["a", TokenChip("b", style.LOGIT)], [["1", "2"]], ys, label_right=0.0, column_rights=[1.0])


def test_a_tables_column_may_colour_each_cell_its_own():
    from manim import ManimColor
    from scenes.components import Table
    ys = [1.0, 0.3]
    table = Table(["person", "other"], [["+0.91", "+0.61"], ["+0.51", "+0.25"]], ys, label_right=-2.0,
                  column_rights=[0.0, 2.0], column_colours=[style.TEXT, [style.NEURON_ACTIVE, style.MUTED]])
    hexes = lambda column: [ManimColor(n.family_members_with_points()[-1].get_fill_color()).to_hex() for n in column]
    assert hexes(table.columns[1]) == [ManimColor(c).to_hex() for c in (style.NEURON_ACTIVE, style.MUTED)]
    assert hexes(table.columns[0]) == [ManimColor(style.TEXT).to_hex()] * 2
    text = Table(["a", "b"], [["x", "y"]], ys, label_right=0.0, column_rights=[1.0], text_cells=True,
                 column_colours=[[style.MUTED, style.PROB]])
    assert hexes(text.columns[0]) == [ManimColor(c).to_hex() for c in (style.MUTED, style.PROB)]    # text cells too
    with pytest.raises(LayoutError):                # one colour a row, or one for the whole column
        Table(["a", "b"], [["1", "2"]], ys, label_right=0.0, column_rights=[1.0], column_colours=[[style.TEXT]])


def test_a_bar_charts_numbers_can_follow_each_bar_in_its_own_colour():
    from manim import ManimColor
    from scenes.components import BarChart, BarScale
    values = [0.5, -1.0, 2.0]
    chart = BarChart(values, [1.0, 0.5, 0.0], BarScale(0.0, 1.0), [style.PROB, style.LOGIT, style.MUTED],
                     numbers=lambda v: f"{v:.1f}", number_after=0.15)
    bars, numbers = chart.bars.bars, chart.numbers
    assert [b.get_fill_color().to_hex() for b in bars] == [ManimColor(c).to_hex() for c in (style.PROB, style.LOGIT,
                                                                                             style.MUTED)]
    for n, bar, v in zip(numbers, bars, values):   # past the bar's end, on its side of the zero line
        if v < 0:
            assert n.get_right()[0] < bar.get_left()[0] - 0.1 and n.anchor_point()[0] == pytest.approx(-1.15)
        else:
            assert n.get_left()[0] > bar.get_right()[0] + 0.1
            assert n.anchor_point()[0] == pytest.approx(bar.get_right()[0] + 0.15)
    chart.set_values([-0.5, 1.0, 1.0], lambda v: f"{v:.1f}")      # the numbers follow, one crossing sides
    assert numbers[0].anchor_point()[0] == pytest.approx(-0.65) and numbers[0].get_right()[0] < -0.5
    assert numbers[1].anchor_point()[0] == pytest.approx(1.15) and numbers[1].get_left()[0] > 1.0
    with pytest.raises(LayoutError):      # one place for the numbers, not two
        BarChart(values, [1.0, 0.5, 0.0], BarScale(0.0, 1.0), style.PROB, numbers=style.signed, number_right=3.0,
                 number_after=0.15)
    with pytest.raises(LayoutError):
        BarChart(values, [1.0, 0.5, 0.0], BarScale(0.0, 1.0), [style.PROB], numbers=style.signed, number_right=3.0)


def test_column_bars_numbers_can_skip_a_bar_and_take_each_bars_colour():
    from scenes.components import ColumnBars
    bars = ColumnBars([0.5, 0.0, 1.0], [-1.0, 0.0, 1.0], 0.0, 1.0, [style.MUTED, style.PROB, style.LOGIT], width=0.3)
    numbers = bars.numbers_above(["0.50", None, "1.00"], [style.MUTED, style.PROB, style.LOGIT], gap=0.15)
    assert [n.text for n in numbers] == ["0.50", "1.00"]
    assert numbers[1].color_ == style.LOGIT and numbers[1].baseline() == pytest.approx(1.15)
    assert numbers[1].get_center()[0] == pytest.approx(1.0)


def test_column_bars_stand_on_hang_from_or_cross_their_base_and_grow_out_of_it():
    from scenes.components import ColumnBars
    xs = [-1.0, 0.0, 1.0]
    standing = ColumnBars([0.5, 1.0, 0.0], xs, -2.0, 2.0, style.PROB, width=0.3, floor=0.01)
    assert [b.height for b in standing] == pytest.approx([1.0, 2.0, 0.01])
    assert all(b.get_bottom()[1] == pytest.approx(-2.0) for b in standing)
    assert [b.get_center()[0] for b in standing] == pytest.approx(xs)
    hanging = ColumnBars([0.5, 1.0, 0.25], xs, 1.0, 2.0, style.PROB, width=0.3, down=True)
    assert all(b.get_top()[1] == pytest.approx(1.0) for b in hanging)
    signed = ColumnBars([0.5, -1.0, 0.25], xs, 0.0, 2.0, [style.LOGIT, style.PROB, style.TEXT], width=0.3,
                        signed=True)
    up, down, _ = signed
    assert up.get_bottom()[1] == pytest.approx(0.0) and down.get_top()[1] == pytest.approx(0.0)
    assert down.height == pytest.approx(2.0)
    for bars in (standing, hanging, signed):
        for grow, bar in zip(bars.grow(), bars):
            start = bar.copy()
            grow.begin()               # the first frame: flat on the base line
            assert grow.mobject.height == pytest.approx(0.0, abs=1e-6)
            assert grow.mobject.get_center()[1] == pytest.approx(bars.base, abs=1e-6)
            grow.finish()
            assert np.allclose(grow.mobject.points, start.points)
    with pytest.raises(LayoutError):
        ColumnBars([1.0], xs, 0.0, 1.0, style.PROB, width=0.3)


def test_column_bars_can_stand_each_on_a_base_line_of_its_own():
    """Bars under a row of chips that wraps onto two lines: one base a bar, each bar standing (or hanging) on its own,
    and growing out of it."""
    from scenes.components import ColumnBars
    bases = [1.0, 1.0, -0.5]
    standing = ColumnBars([0.5, 0.25, 1.0], [-1.0, 0.0, -1.0], bases, 2.0, style.PROB, width=0.3)
    assert [b.get_bottom()[1] for b in standing] == pytest.approx(bases)
    assert [b.height for b in standing] == pytest.approx([1.0, 0.5, 2.0])
    hanging = ColumnBars([0.5, 0.25, 1.0], [-1.0, 0.0, -1.0], bases, 2.0, style.PROB, width=0.3, down=True)
    assert [b.get_top()[1] for b in hanging] == pytest.approx(bases)
    for bars in (standing, hanging):
        for grow, y in zip(bars.grow(), bases):
            grow.begin()
            assert grow.mobject.get_center()[1] == pytest.approx(y, abs=1e-6)
            grow.finish()
    with pytest.raises(LayoutError):
        ColumnBars([0.5, 0.25, 1.0], [-1.0, 0.0, 1.0], [1.0, 0.5], 2.0, style.PROB, width=0.3)


def test_a_stacked_bar_lays_its_parts_end_to_end_by_their_shares():
    from manim import LEFT
    from scenes.components import StackedBar
    shares = [0.5, 0.0, 0.3, 0.2]
    bar = StackedBar(shares, -2.0, 4.0, 1.0, [style.PROB, style.PROB, style.LOGIT, style.MUTED], height=0.5,
                     opacities=[0.9, 0.6, 0.9, 0.35], stroke_width=1.5)
    assert [p.width for p in bar] == pytest.approx([2.0, 1e-3, 1.2, 0.8])      # an empty part: the floor
    assert [p.get_left()[0] for p in (bar[0], bar[2], bar[3])] == pytest.approx([-2.0, 0.0, 1.2])
    assert bar[3].get_right()[0] == pytest.approx(2.0)                        # the whole: the full width
    assert all(p.get_center()[1] == pytest.approx(1.0) and p.height == pytest.approx(0.5) for p in bar)
    assert [p.get_fill_opacity() for p in bar] == pytest.approx([0.9, 0.6, 0.9, 0.35])
    assert bar[0].get_stroke_width() == 1.5 and bar[0].get_stroke_color().to_hex().lower() == style.BACKGROUND.lower()
    one = StackedBar([0.25, 0.75], 0.0, 2.0, 0.0, style.PROB, height=0.3)       # one colour, no stroke
    assert one[1].get_left()[0] == pytest.approx(0.5) and one[1].get_stroke_width() == 0
    for grow, part in zip(bar.grow(), bar):
        left = part.get_critical_point(LEFT)[0]
        grow.begin()                     # the first frame: nothing, at the part's left end
        assert grow.mobject.width == pytest.approx(0.0, abs=1e-6)
        assert grow.mobject.get_center()[0] == pytest.approx(left, abs=1e-6)
        grow.finish()
    with pytest.raises(LayoutError):
        StackedBar(shares, 0.0, 1.0, 0.0, [style.PROB, style.MUTED], height=0.3)


def test_probability_bars_grow_out_of_zero():
    from scenes.components import ProbabilityBars
    bars = ProbabilityBars(["a", "b"], [0.6, 0.3], 0.1, [1.0, 0.5, 0.0], lang="en", bar_left=-1.0, bar_width=2.0,
                           number_right=2.5, label_right=-1.2)
    grows = bars.grow()
    assert [g.mobject for g in grows] == list(bars.bars.bars)
    for grow in grows:
        grow.begin()
        assert grow.mobject.width == pytest.approx(0.0, abs=1e-6)
        assert grow.mobject.get_center()[0] == pytest.approx(-1.0, abs=1e-6)
        grow.finish()
    assert [b.width for b in bars.bars.bars] == pytest.approx([1.2, 0.6, 0.2])


def test_charts_are_whole_mobjects_that_animations_can_copy_scale_and_fade():
    """A chart's own attributes shadow no mobject method (a chart's `scale` once broke every FadeOut of it)."""
    from manim import FadeOut, Mobject, VGroup
    from scenes.components import BarChart, BarScale, ColumnBars, StackedBar, Table
    charts = [BarChart([0.5, -0.2], [1.0, 0.5], BarScale.fit(-1.0, 2.0, [0.5, -0.2]), style.LOGIT, labels=["a", "b"],
                       label_right=-1.2, numbers=style.signed, number_right=2.5, header="h", header_at=(0.0, 1.6)),
              ColumnBars([0.5, 1.0], [0.0, 1.0], -1.0, 1.0, style.PROB, width=0.3),
              StackedBar([0.5, 0.5], -1.0, 2.0, 0.0, style.PROB, height=0.3),
              Table(["a"], [["1"]], [0.0], label_right=0.0, column_rights=[1.0])]
    for chart in charts:
        shadowed = [name for name in vars(chart) if callable(getattr(VGroup, name, None))]
        assert not shadowed, shadowed
        fade = FadeOut(chart, scale=0.5)
        fade.begin()
        fade.finish()
        assert isinstance(chart.copy().scale(0.5), Mobject)


# --- the why beat's chart and rule (scenes/components/why.py, issue 45) ------------------------------------------
def _pair(w, v, rw=None, rv=None):
    return {"with": w, "without": v, "range_with": rw or [w, w], "range_without": rv or [v, v]}


def test_a_why_verdict_needs_a_clear_gap_in_every_pair():
    from scenes.components.why import verdict
    assert verdict([_pair(1.045, 1.119), _pair(1.04, 1.11)], 0.02) == "higher"
    assert verdict([_pair(1.18, 0.64)], 0.1) == "lower"
    assert verdict([_pair(1.045, 1.049)], 0.02) == "same"                     # below the threshold
    assert verdict([_pair(1.045, 1.119), _pair(1.04, 1.05)], 0.02) == "same"  # one language shows no difference
    assert verdict([_pair(1.0, 1.1), _pair(1.0, 0.9)], 0.02) == "same"         # the languages disagree
    # over the threshold, but within the seeds' spread: no clear difference
    assert verdict([_pair(1.00, 1.05, [0.97, 1.04], [1.03, 1.08])], 0.02) == "same"
    assert verdict([_pair(1.00, 1.05, [0.99, 1.01], [1.04, 1.06])], 0.02) == "higher"


def test_a_why_chart_draws_its_rows_inside_its_axes():
    from scenes.components import LayoutError
    from scenes.components.why import WhyChart, WhyRow, spread_text, loss_text
    steps = [0, 100, 200, 300]
    rows = [WhyRow("with", [20.0, 4.0, 1.2, 1.0], [[20.0, 20.0], [4.0, 4.0], [1.2, 1.2], [1.0, 1.0]], ["1.000"], [None]),
            WhyRow("without", [10.0, 5.0, 5.1, 5.0], [[9, 11], [4.9, 5.1], [5.0, 5.2], [4.9, 5.1]], ["5.000"],
                   [spread_text(5.0, 4.9, 5.1, loss_text)])]
    chart = WhyChart(steps, rows, y_max=6, y_step=2, y_label="loss", x_label="training step", columns=["loss"])
    left, bottom = chart.c2p(0, 0)[:2]
    right, top = chart.c2p(chart.x_max, 6)[:2]
    for curve in chart.curves:             # the early loss above the axes is cut at the top, never drawn over it
        pts = np.concatenate([m.points for m in curve.family_members_with_points()])
        assert pts[:, 1].max() <= top + 1e-6 and pts[:, 1].min() >= bottom - 1e-6
        assert pts[:, 0].min() >= left - 1e-6 and pts[:, 0].max() <= right + 1e-6
    assert len(chart.bands[0]) == 0 and len(chart.bands[1]) == 1        # a band only where the seeds differ
    assert [r[2][0].text for r in chart.table[1:]] == ["1.000", "5.000"]
    assert [[s.text for s in r[3]] for r in chart.table[1:]] == [[], ["\u00b10.100"]]
    assert chart.x_max == 300 and inside_safe_area(chart)
    two = WhyChart(steps, [WhyRow(r.label, r.curve, r.band, r.numbers * 2, r.spreads * 2) for r in rows], y_max=6,
                   y_step=2, y_label="loss", x_label="step", columns=["held-out loss", "facts of 40"])
    heads = list(two.table[0])
    assert heads[0].get_right()[0] < heads[1].get_left()[0]       # the columns' heads side by side, never overlapping
    for row in two.table[1:]:            # a model's figures under its label, side by side
        assert row[2][0].get_right()[0] < row[2][1].get_left()[0] and row[1].get_bottom()[1] > row[2].get_top()[1]
    assert two.table[1][2].get_bottom()[1] > two.table[2][1].get_top()[1]     # each model above the next
    assert two.table[2][3].get_top()[1] < two.table[2][2].get_bottom()[1]     # a range under its figure
    with pytest.raises(LayoutError, match="wider than the table"):
        WhyChart(steps, [rows[0], WhyRow("a label far too long for the table of the why chart", rows[1].curve,
                                         rows[1].band, ["5.000"], [None])], y_max=6, y_step=2, y_label="loss",
                 x_label="step", columns=["loss"])
    with pytest.raises(LayoutError, match="compares 2 to 3"):
        WhyChart(steps, rows[:1], y_max=6, y_step=2, y_label="loss", x_label="step", columns=["loss"])


def test_why_rows_read_with_from_the_baseline_and_without_from_each_variant():
    from scenes.components.why import count_text, loss_text, rows_for, spread_text
    a = {"with": 1.0446, "without": 1.1191, "range_with": [1.0446, 1.0446], "range_without": [1.1, 1.13],
         "curve_with": [2.0, 1.0446], "curve_without": [2.0, 1.1191], "band_with": [[2, 2], [1.0446, 1.0446]],
         "band_without": [[2, 2], [1.1, 1.13]]}
    facts = {"with": 40.0, "without": 37.0, "range_with": [40, 40], "range_without": [37, 37]}
    rows = rows_for([a], ["full", "no MLP"], [("loss", [a], loss_text), ("facts", [facts], count_text)])
    assert [r.numbers for r in rows] == [["1.045", "40"], ["1.119", "37"]]
    assert [r.spreads for r in rows] == [[None, None], ["\u00b10.019", None]]     # the farthest seed from the mean
    assert spread_text(1.0446, 1.0443, 1.0451, loss_text) is None      # the labels differ, the spread reads ±0.000
    assert rows[1].curve == a["curve_without"] and rows[0].band == a["band_with"]


def test_a_token_label_is_cut_by_its_drawn_width_chinese_counting_double():
    """style.token_label: our longest words whole; a checkpoint's long BPE token cut with "…" to LABEL_UNITS letter
    widths, a Chinese character counting two (a 9-character Chinese token of a lecturer's BPE ran 3.5 units wide
    across architecture's unembedding and pushed its logits off the frame)."""
    from scenes.style import LABEL_UNITS, token_label
    for whole in ("basketball", "众所周知", "\u2423the", "<0xE7>"):
        assert token_label(whole) == whole
    assert token_label("<|endoftext|>") == "<eos>"
    assert token_label("乔丹在河边的银行的") == "乔丹在\u2026"                     # 3 × 2 + "…" 3 <= 10
    assert token_label("\u2423counterrevolutionary") == "\u2423coun\u2026"       # 3 + 4 + 3
    assert token_label("<0xE7><0x8C><0xAB>") == "<0xE7>\u2026"                # a byte piece is never split
    assert token_label("abcdefghijk") == "abcdefg\u2026" and len("abcdefg") + 3 == LABEL_UNITS


def shaped_greedy(words: list[str], font_size: float, max_width: float) -> list[str]:
    """The plain greedy fill wrap_words must equal: every trial line shaped whole."""
    from scenes.components import Label, join_tokens
    lines: list[list[str]] = [[]]
    for w in words:
        trial = lines[-1] + [w]
        if lines[-1] and Label(join_tokens(trial), font_size=font_size).width > max_width:
            lines.append([w])
        else:
            lines[-1] = trial
    return [join_tokens(line) for line in lines if line]


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_wrapping_shapes_only_the_doubtful_lines_and_wraps_as_shaping_every_line_would(lang):
    """wrap_words bounds a line's width from its words' own and shapes a line whole only near the edge: the same lines
    as the plain greedy fill, on text of the training language at two widths, with at most three strings of several
    words shaped per line it writes (the plain fill shapes one per word: 40 here)."""
    import random
    from unittest import mock

    from model.language import Language
    from scenes.components import text
    words = [t.word for t in Language().stream(40, random.Random(f"wrap-{lang}"), lang)]
    for width in (4.0, 11.0):
        expected = shaped_greedy(words, style.LABEL, width)
        text._label_outlines.cache_clear()
        with mock.patch.object(text, "_label_outlines", wraps=text._label_outlines) as shaped:
            assert text.wrap_words(words, style.LABEL, width) == expected, width
        lines_shaped = {c.args[0] for c in shaped.call_args_list} - set(words) - {"M"}
        assert len(expected) > 2 and len(lines_shaped) <= 3 * len(expected) < len(words), (width, len(lines_shaped))
