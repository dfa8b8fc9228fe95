"""Layout checks every scene runs at every moment checked (scene_checks.assert_legible calls assert_layout; the
facts come from scene_checks.snapshot, which calls layout_facts while it walks what is on screen).

What each check catches (the 480p faults of issue 22 that it was written for; tests/test_layout_checks.py shows each
one failing on such a layout):
- chips: a token's word lies inside its chip with CHIP_MARGIN to spare (descenders and Chinese characters across the
  chip's border), and no two chips overlap (values_update's chips);
- dots: no text on a point or a ring (embedding_space's "walrus" on a dot);
- run-together: two texts on one line keep MIN_GAP apart (unless both are parts of one phrase: a VGroup marked
  `phrase`, one line of text in several colours) (token_embedding's "316 288 317 301", mlp_steps' header
  running into "> 0.1", summary's "12,288 dimensions" against the next column), and two texts one above the other
  keep MIN_LEADING apart;
- contrast: every text against what it is drawn on (the background, or the filled shape under it), every line wider
  than a hairline, and every point, at style.MIN_CONTRAST or more (WCAG 2 relative luminance); fills of cells and
  bars show a value on a scale whose zero is meant to be dark, and hairline (1 px) cell outlines only separate
  cells, so those two are not held to it (mlp_steps' inactive neurons, dark grey on black);
- keys: the colours a key names (a VGroup with `key_colours`) differ by KEY_DELTA_E (CIE76) pairwise, and each
  keeps the contrast floor (parameters' embedding and LayerNorm greys);
- attention lines: a query line an AttentionGrid frames (line_frame) carries its position on screen (queries_keys'
  query 13, unlabelled in Chinese).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from manim import Circle, ManimColor, Rectangle, VectorizedPoint, VMobject

from scenes import style

CHIP_MARGIN = 0.02     # scene units (60 per inch of a 480p frame: about 1 px) between a chip's word and its border
MIN_GAP = 0.1          # two texts side by side on one line: at least a space apart (6 px at 480p) ...
MIN_GAP_WORDS = 0.2    # ... and two Labels (words) two spaces, or they read as one phrase
MIN_LEADING = -0.02    # two texts one above the other (overlapping across): their ink overlaps by no more than 1 px
SAME_LINE = 0.5        # texts whose heights overlap by more than this share of the lower one are on one line
KEY_DELTA_E = 20.0     # CIE76 difference between any two colours of one key


def _rgba(rgbas) -> tuple:
    """A mobject's first fill or stroke colour and opacity (its rgbas array), rounded so that it can be cached."""
    return tuple(round(float(v), 3) for v in rgbas[0])


@lru_cache(maxsize=8192)
def _composite(rgba: tuple, under: tuple = (0.0, 0.0, 0.0)) -> tuple:
    """A colour at its opacity over another, as drawn (rgb 0..1)."""
    a = rgba[3]
    return tuple(round(c * a + u * (1 - a), 4) for c, u in zip(rgba[:3], under))


@lru_cache(maxsize=8192)
def _contrast(a: tuple, b: tuple = (0.0, 0.0, 0.0)) -> float:
    return style.contrast_ratio(ManimColor(a), ManimColor(b))


def _hex(rgb: tuple) -> str:
    return ManimColor(rgb).to_hex()


def _box(m) -> tuple:
    p = m.get_all_points() if m.submobjects else m.points
    return (float(p[:, 0].min()), float(p[:, 1].min()), float(p[:, 0].max()), float(p[:, 1].max()))


def _ink(m):
    """The first drawn glyph of a text (its colour and opacity are the text's)."""
    return next((x for x in m.get_family() if isinstance(x, VMobject) and not isinstance(x, VectorizedPoint)
                 and x.has_points() and x.get_fill_opacity() > 0.01), None)


def layout_facts(ordered: list) -> dict:
    """From what is on screen in drawing order (`ordered`: (kind, mobject), kind "text", "shape", or "group" for a
    chip, an attention grid or a key whose own outline draws nothing), what the checks
    need: chips, circles, colours below the floor, attention frames without their position, key colours."""
    from scenes.components import AttentionGrid, TokenChip
    faint, chips, circles, unlabelled, keys = [], [], [], [], []
    black = (0.0, 0.0, 0.0)
    fills = []      # filled shapes so far, in drawing order: (box, rgb as drawn)
    for kind, m in ordered:
        if kind == "text":
            ink = _ink(m)
            b = _box(m)
            cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
            under = next((c for fb, c in reversed(fills) if fb[0] <= cx <= fb[2] and fb[1] <= cy <= fb[3]), black)
            colour = _composite(_rgba(ink.fill_rgbas), under)
            if _contrast(colour, under) < style.MIN_CONTRAST - 1e-9:
                faint.append(f"text {getattr(m, 'text', '')!r} {_hex(colour)} on {_hex(under)}: "
                             f"{_contrast(colour, under):.2f}")
            continue
        if kind == "group":
            if isinstance(m, TokenChip):
                if m.box in m.submobjects and m.label in m.submobjects and _ink(m.label) is not None \
                        and not getattr(m, "tab", False):      # a tab stands before its word, not around it
                    chips.append((m.word, _box(m.label), _box(m.box)))
            elif isinstance(m, AttentionGrid):
                shown = {int(t.text) for t in m.query_indices if _ink(t) is not None}
                if shown and any(_ink(s) is not None for s in m.squares[:1]):
                    unlabelled += [q for q in sorted(m.framed) if q not in shown]
            else:
                keys.append([ManimColor(c).to_hex() for c in m.key_colours])
            continue
        if m.stroke_width > 1 and m.stroke_rgbas[0, 3] > 0.01:
            stroke = _composite(_rgba(m.stroke_rgbas))
            if stroke != black and _contrast(stroke) < style.MIN_CONTRAST - 1e-9:
                faint.append(f"line {type(m).__name__} {_hex(stroke)}: {_contrast(stroke):.2f}")
        if m.fill_rgbas[0, 3] > 0.01:
            if isinstance(m, Circle):
                fill = _composite(_rgba(m.fill_rgbas))
                if _contrast(fill) < style.MIN_CONTRAST - 1e-9:
                    faint.append(f"point {type(m).__name__} {_hex(fill)}: {_contrast(fill):.2f}")
                fills.append((_box(m), fill))
                circles.append((round((fills[-1][0][0] + fills[-1][0][2]) / 2, 4),
                                round((fills[-1][0][1] + fills[-1][0][3]) / 2, 4),
                                round((fills[-1][0][2] - fills[-1][0][0]) / 2, 4)))
                continue
            if isinstance(m, Rectangle):
                fills.append((_box(m), _composite(_rgba(m.fill_rgbas))))
        if isinstance(m, Circle):
            b = _box(m)
            circles.append((round((b[0] + b[2]) / 2, 4), round((b[1] + b[3]) / 2, 4), round((b[2] - b[0]) / 2, 4)))
    return {"chips": chips, "circles": circles, "faint": faint, "unlabelled_lines": unlabelled,
            "keys": keys}


def _lab(colour) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour."""
    rgb = np.array(ManimColor(colour).to_rgb())
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ lin
    xyz /= np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a, b) -> float:
    return float(np.linalg.norm(_lab(a) - _lab(b)))


def _circle_meets_box(c, b, tol: float = 0.01) -> bool:
    x, y, r = c
    nx, ny = min(max(x, b[0]), b[2]), min(max(y, b[1]), b[3])
    return (x - nx) ** 2 + (y - ny) ** 2 < (r - tol) ** 2


def assert_layout(shot: dict, where: str) -> None:
    """The checks above on one snapshot (scene_checks.snapshot)."""
    for word, label, chip in shot["chips"]:
        inside = (label[0] >= chip[0] + CHIP_MARGIN and label[2] <= chip[2] - CHIP_MARGIN and
                  label[1] >= chip[1] + CHIP_MARGIN and label[3] <= chip[3] - CHIP_MARGIN)
        assert inside, f"{where}: the word {word!r} crosses its chip's border (label {label}, chip {chip})"
    chips = shot["chips"]
    for i, a in enumerate(chips):
        for b in chips[i + 1:]:
            p, q = a[2], b[2]
            assert not (p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3]), \
                f"{where}: the chips {a[0]!r} and {b[0]!r} overlap"
    texts, phrases = shot["texts"], shot["phrases"]
    for t in texts:
        for c in shot["circles"]:
            assert not _circle_meets_box(c, t[3]), f"{where}: {t[:2]} lies on a point or ring at {c}"
    for i, a in enumerate(texts):
        for j, b in enumerate(texts[i + 1:], i + 1):
            if phrases[i] == phrases[j] != -1:      # parts of one line of text (a VGroup marked `phrase`)
                continue
            p, q = a[3], b[3]
            across = min(p[3], q[3]) - max(p[1], q[1])          # their heights' overlap
            along = max(q[0] - p[2], p[0] - q[2])               # the gap between them side by side (< 0: over)
            if across > SAME_LINE * min(p[3] - p[1], q[3] - q[1]):
                gap = MIN_GAP_WORDS if a[0] == b[0] == "Label" else MIN_GAP
                assert along >= gap, f"{where}: {a[:2]} and {b[:2]} run together ({along:.2f} apart on a line)"
            elif along < 0:
                assert -across >= MIN_LEADING, f"{where}: {a[:2]} and {b[:2]} touch ({-across:.2f} apart, stacked)"
    assert not shot["faint"], f"{where}: below {style.MIN_CONTRAST}:1 against the background: {shot['faint'][:4]}"
    assert not shot["unlabelled_lines"], \
        f"{where}: an attention grid frames query line(s) {shot['unlabelled_lines']} without their position"
    for colours in shot["keys"]:
        for i, a in enumerate(colours):
            assert style.contrast_ratio(a) >= style.MIN_CONTRAST, f"{where}: key colour {a}"
            for b in colours[i + 1:]:
                assert delta_e(a, b) >= KEY_DELTA_E, f"{where}: a key's colours {a} and {b} look alike " \
                                                     f"(ΔE {delta_e(a, b):.1f})"
