"""The shared visual language (docs/visual-language.md) as constants and helpers.

Colours carry meaning, sizes are chosen for 854x480, numbers are formatted in one
way everywhere, and every on-screen string exists in English and Chinese.
"""

from __future__ import annotations

import math
import re
import unicodedata

from .words import LANGUAGES, Strings, Words  # noqa: F401  (Strings, LANGUAGES: the words' API, used from style)
from manim import BLUE_C, GREY_B, RED_C, TEAL_C, WHITE, YELLOW_C, ManimColor, config, interpolate_color

# --- colour carries meaning --------------------------------------------------------
BACKGROUND = "#000000"
LOGIT = TEAL_C          # logits (and keys)
PROB = YELLOW_C         # probabilities (and queries)
TEMPERATURE = RED_C     # temperature
QUERY, KEY, VALUE = YELLOW_C, TEAL_C, "#FF8C42"
EMBEDDING, EMBEDDING_UPDATED = GREY_B, TEAL_C
POSITIVE, NEGATIVE = BLUE_C, RED_C
MASKED = "#5C0A0A"
POSITION = TEAL_C       # position indices under tokens
TEXT = WHITE
MUTED = "#9A9A9A"       # secondary text: column notes, "other"
ACCENT = WHITE          # the one highlight on screen (e.g. the argmax row)
LAYERNORM = "#C983D8"   # LayerNorm's gains and biases where parts of a model are told apart by colour

# Soft fills for token chips; a token keeps its colour (by its id, token_colours) everywhere in one prompt. 14 of them:
# a default prompt's row (at most prompts.DRAWN_TOKENS = 13 tokens) and the word it adds never run out.
TOKEN_PALETTE = ["#58C4DD", "#83C167", "#F0AC5F", "#C983D8", "#E07A7A", "#9CDCEB", "#D1D87A", "#7AA2E0",
                 "#F29BC4", "#4FCFA6", "#C9A27E", "#B7A3F2", "#E6C35C", "#FF8FA3"]


def relative_luminance(colour) -> float:
    """WCAG 2 relative luminance of a colour (sRGB, 0 black .. 1 white)."""
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in ManimColor(colour).to_rgb())
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a, b=BACKGROUND) -> float:
    """WCAG 2 contrast ratio of two colours (1 .. 21); by default against the background. Everything drawn to be
    seen (text, lines, points) keeps MIN_CONTRAST against what it is drawn on (tests/layout_checks.py)."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


MIN_CONTRAST = 3.0      # WCAG's floor for graphics and large text


def token_colours(tokens, prompt=None) -> list[ManimColor]:
    """Each token's colour, by its id: the same token, the same colour (the two "the"s of a prompt alike). The palette
    is dealt in the order the prompt's distinct tokens first appear (`prompt`: the whole prompt, when `tokens` is part
    of it or its words reordered; a token not in it takes the next colour after the prompt's), so different tokens
    of one prompt differ while TOKEN_PALETTE lasts, then it starts again. A token is its id or its text (our
    vocabulary and a checkpoint's decoded tokens have one entry per text), and every scene drawing one prompt deals
    the same colours."""
    order: dict = {}
    for t in [*(prompt if prompt is not None else []), *tokens]:
        order.setdefault(t, len(order))
    return [ManimColor(TOKEN_PALETTE[order[t] % len(TOKEN_PALETTE)]) for t in tokens]


def token_colour(prompt, position: int) -> ManimColor:
    """The colour of the prompt's token at `position` (token_colours)."""
    return token_colours([prompt[position]], prompt)[0]


ACTIVATION_ZERO = "#4D4D4D"   # the size of an activation, 0: a clear grey, never the black of a weight of 0


def magnitude_colour(size: float, limit: float) -> ManimColor:
    """An activation's size |v| as a cell: grey -> white, linear up to `limit`, no hue."""
    return interpolate_color(ManimColor(ACTIVATION_ZERO), ManimColor(WHITE), min(abs(size) / limit, 1.0) if limit else 0.0)


def activation_colour(value: float, scale: float) -> ManimColor:
    """Grey -> white by magnitude, no hue (the colour of a vector's entry written as a number)."""
    return interpolate_color(ManimColor(GREY_B), ManimColor(WHITE), min(abs(value) / scale, 1.0) if scale else 0.0)


def weight_colour(value: float, scale: float) -> ManimColor:
    """Blue for positive, red for negative, brighter with magnitude (one scale per matrix)."""
    base = ManimColor(POSITIVE if value >= 0 else NEGATIVE)
    return interpolate_color(ManimColor("#1A1A1A"), base, min(abs(value) / scale, 1.0) if scale else 0.0)


# --- type ----------------------------------------------------------------------------
FONT = "Noto Sans CJK SC"   # one font for both languages: Latin and CJK glyphs, identical metrics
MATH_FONT_SIZE = 44   # Computer Modern at 44 has an em of about 27 px at 480p

# manim font_size -> em height in pixels at 854x480 (measured for Noto Sans CJK: cap height 0.733 em)
EM_PX_PER_FONT_SIZE = 0.8355
MIN_LABEL_PX = 24


def font_size_for_px(px: float) -> float:
    return px / EM_PX_PER_FONT_SIZE


SMALL = font_size_for_px(24)     # position indices, column notes: the legibility floor
LABEL = font_size_for_px(25)     # token words, numbers
CAPTION = font_size_for_px(25)
HEADER = font_size_for_px(27)
STEP, PAUSE = 1.2, 1.6   # seconds: an animation step, a pause to read
# the pace (docs/teaching.md §9, scenes/pace.py), in seconds of the scene's nominal clock
HELD_SILENCE = 1.5   # a picture built is held with no line said for at least this long before the next line
SPEECH_SHARE = 0.8   # the most of a content beat its lines may fill: the beat's last picture is held until they do
TITLE_CARD = 6.0     # the longest a title card may last, its note said
TITLE_IN = 0.8       # each of the title card's two fades in (the title; the subtitle and note)

TITLE = font_size_for_px(44)
SUBTITLE = font_size_for_px(28)

# --- layout: everything stays inside the title-safe area (5% in from each edge) -----
SAFE_MARGIN = 0.05


def safe_half_width() -> float:
    return config.frame_width / 2 * (1 - 2 * SAFE_MARGIN)


def safe_half_height() -> float:
    return config.frame_height / 2 * (1 - 2 * SAFE_MARGIN)


# --- numbers: full precision in the maths, rounded only in the label ---------------
MINUS = "\u2212"
SUPERSCRIPT = str.maketrans("0123456789-", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b")


def signed(x: float, decimals: int = 2) -> str:
    """+1.23 / −0.40: an explicit sign (weights, logits)."""
    s = f"{x:+.{decimals}f}"
    if float(s) == 0:
        s = f"{0:.{decimals}f}"
    return s.replace("-", MINUS)


WEIGHT_DECIMALS = 1        # a weight's label: one decimal with its sign (the visual language) ...
SIGNIFICANT_BELOW = 0.1    # ... unless the largest magnitude shown is under 0.1 (it would read ±0.1 or 0.0)


def statistic_decimals(value: float) -> int:
    """The decimals of a statistic (a variance, a mean beside it): two while the value is at least SIGNIFICANT_BELOW
    (our model's, and every normalised one: 0.99, 1.00) or zero; below that, enough for two significant digits
    (a random-init GPT-2's residual variance of 0.00041 reads 0.00041, not 0.00)."""
    v = abs(float(value))
    return 2 if v >= SIGNIFICANT_BELOW or v == 0.0 else 1 - math.floor(math.log10(v))


def statistic(value: float) -> str:
    """A statistic as shown, in statistic_decimals: 0.99, 1.00, 0.00041."""
    return f"{value:.{statistic_decimals(value)}f}"


def decimals_for(shown) -> int:
    """The decimals of every label of one matrix or vector, by one rule over the entries it shows (its corner rows
    and columns, its first and last entries): one (WEIGHT_DECIMALS) while the largest magnitude shown is at least
    SIGNIFICANT_BELOW; below that, enough for that largest entry to show two significant digits (0.047 as +0.047,
    0.0031 as +0.0031). A random-init GPT-2 (weights of about ±0.02) then reads in thousandths instead of 0.0, and a
    matrix whose shown entries reach 0.1 keeps one decimal (our model's). All zeros: one decimal."""
    import numpy as np
    values = np.asarray(shown, dtype=np.float64)
    largest = float(np.abs(values[np.isfinite(values)]).max()) if values.size else 0.0
    if largest >= SIGNIFICANT_BELOW or largest == 0.0:
        return WEIGHT_DECIMALS
    return 1 - math.floor(math.log10(largest))


FLOAT32_SUM = 1e-5   # how far a float32 softmax column (a checkpoint's trace, up to 1,024 terms) may sum from 1


def percent(p: float) -> str:
    """A probability as a percentage with one decimal; tiny but non-zero values say so."""
    if p == 0:
        return "0%"
    if p < 0.0005:
        return "<0.1%"
    if 0.9995 <= p < 1 - FLOAT32_SUM:   # below 1 by more than a float32 sum can miss it by, so not "100.0%"
        return ">99.9%"
    return f"{100 * p:.1f}%"


LABEL_UNITS = 10   # the widest token label, in letter widths: our longest words ("basketball") fit whole


def token_label(word: str) -> str:
    """How a vocabulary entry is written on screen: the end-of-text marker as <eos>; a longer token (a checkpoint's
    BPE pieces, model/bpe.py display) is cut to LABEL_UNITS letter widths with "…" (␣ counts three, a <0xNN> six,
    a wide character, Chinese, two; one is never split). The manifest keeps the whole token."""
    if word == "<|endoftext|>":
        return "<eos>"
    pieces = re.findall(r"<0x[0-9A-F]{2}>|.", word, flags=re.S)
    width = [6 if len(p) > 1 else 3 if p == "\u2423" else 2 if unicodedata.east_asian_width(p) in "WF" else 1
             for p in pieces]
    if sum(width) <= LABEL_UNITS:
        return word
    out, used = [], 0
    for p, w in zip(pieces, width):
        if used + w > LABEL_UNITS - 3:   # room for the "…" (as wide as ␣ in the lecture's CJK font)
            break
        out.append(p)
        used += w
    return "".join(out) + "\u2026"


def scientific(x: float, digits: int = 3) -> str:
    """Three significant digits; 10^4 and above as a × 10ⁿ (e.g. 5.97×10⁵)."""
    if x == 0:
        return "0"
    exponent = math.floor(math.log10(abs(x)))
    if -2 <= exponent < 4:
        decimals = max(digits - 1 - exponent, 0)
        return f"{x:,.{decimals}f}".replace("-", MINUS)
    mantissa = x / 10 ** exponent
    if round(mantissa, digits - 1) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.{digits - 1}f}\u00d710{str(exponent).translate(SUPERSCRIPT)}".replace("-", MINUS)


def temperature(t: float) -> str:
    return f"{t:.2f}" if t < 10 else f"{t:.1f}"


# --- layers and heads: counted from 1 on screen --------------------------------------
# The one place where an index becomes the number a viewer reads. The model, the command line (--layer 0) and the
# manifests (values["layer"], values["head"]) count from 0; every caption, label and chapter name counts from 1:
# "layer 1 of 3", "head 3", "MLP of layer 1", and the same in Chinese. A scene passes the zero-based index through
# shown() and never adds 1 itself (tests/test_layer_convention.py reads every text on screen against the manifest).
def shown(index: int) -> int:
    """A layer's or head's zero-based index as it is counted on screen: from 1."""
    return int(index) + 1


# --- every on-screen string in both languages: scenes/words.py, the words in scenes/style.toml and beside each scene
WORDS = Words.beside(__file__)     # style.toml: the strings every scene shares, the beat titles', the attention grids'

SHARED = WORDS["shared"]

# Beat titles: a scene's `beat_titles` table names each of its beats (by section name) in a few words, in English and
# Chinese: the chapter names of its clip's chapter track, the lecture's chapters, the course page and the deck. A title
# names what the beat shows and states no property of the numbers. The title card's beat is named by the scene's
# "title" string. Every scene's table starts from this one: `BEATS = BEAT_TITLES | WORDS["beat_titles"]`.
BEAT_TITLES = WORDS["beat_titles"]

# --- attention chapter: grids, masks, legends ------------------------------------------
ATTENTION_ZERO = "#1A1A1A"   # an attention weight of 0 (and the dark end of every cell scale)
CELL_OUTLINE = "#3A3A3A"     # thin outline, so a cell near 0 is still visible on black
MASK_TEXT = "\u2212\u221e"    # −∞
MASK_ACCENT = "#E0605A"      # frames and text that point at masked cells (the cells themselves are MASKED)


def attention_colour(weight: float) -> ManimColor:
    """An attention weight (0..1) as a cell: dark -> white, linear, no hue."""
    return interpolate_color(ManimColor(ATTENTION_ZERO), ManimColor(WHITE), min(max(float(weight), 0.0), 1.0))


ATTENTION = WORDS["attention"]

# --- the MLP chapter: GELU curves and neurons ----------------------------------------------------------
GELU_CURVE = "#83C167"       # ReLU / GELU curves: green (ReLU would be yellow)
NEURON_INACTIVE = "#666666"  # an MLP neuron at or below the active threshold: dim grey (3.7:1 on black; 3.1 at 0.9)
NEURON_ACTIVE = "#83C167"    # an active neuron: green, brighter with its activation


def neuron_colour(activation: float, threshold: float, limit: float) -> ManimColor:
    """An MLP neuron's cell: dim grey when not active (activation <= threshold), else green growing brighter with
    the activation up to `limit`."""
    if activation <= threshold:
        return ManimColor(NEURON_INACTIVE)
    t = min((activation - threshold) / max(limit - threshold, 1e-9), 1.0)
    return interpolate_color(ManimColor("#3F7A2E"), ManimColor("#B8F5A0"), t)   # from 4.0:1 on black

# --- the MLP chapter: causal tracing -------------------------------------------------------------------------
SHARE_ZERO, SHARE_FULL = "#000000", "#FFC233"   # restored share of the answer: black (0) -> gold (1)


def share_colour(share: float) -> ManimColor:
    """A restored share (causal tracing, attribution) as a cell: black at 0 -> gold at 1, clipped to that range."""
    return interpolate_color(ManimColor(SHARE_ZERO), ManimColor(SHARE_FULL), min(max(float(share), 0.0), 1.0))

# --- the superposition chapter: angles, bounds and estimates ---------------------------------------------------
ANGLE_BARS = GREY_B          # a histogram of measured angles between directions
BAND = YELLOW_C              # the 89-91 degree band (the seed's "almost perpendicular")
MEASURED = "#58C4DD"         # what a run measured (the closest pair, the counts the lab's packing reached)
BOUND = "#F0AC5F"            # a proven bound (Welch/Levenshtein): what no arrangement can beat
RANDOM_ESTIMATE = "#C983D8"  # the random-vector (Johnson-Lindenstrauss style) estimate
FEATURE_COLOURS = ["#58C4DD", "#83C167", "#F0AC5F", "#C983D8", "#E07A7A"]   # the toy model's features 1..5
TOPIC_COLOURS = {"people": "#F0AC5F", "sports": "#58C4DD", "places of people": "#E07A7A", "creatures": "#83C167",
                 "looks": "#C792EA", "habitats": "#E8D36A", "movements": "#F28DB2",
                 "function words": "#9A9A9A"}   # the training language's topics (model.analysis.superposition)
