"""What the voice says for a caption: the caption as written for the eye, turned into words a TTS voice can say.

    spoken("T → 0: 99.8% of it", "en")  ->  "T goes to zero: ninety-nine point eight percent of it"
    spoken("T → 0：99.8%", "zh")         ->  "T 趋于零：百分之九十九点八"

English is read by piper (en_US-joe-medium); Chinese by a FastSpeech2 voice that drops Latin letters, so a Latin run
inside Chinese text stays Latin and is spliced in with the English voice. The rule, in order:

1. layout: a line break is a space (nothing between two Chinese characters); full-width Latin letters, digits and
   signs (ＡＢ１２％＋) are their ASCII forms;
2. terms: a small pronunciation table for words the voices misread (GELU -> "gee-loo", <eos>, ...),
   whole words only; a quoted punctuation mark (a word of the vocabulary: "," is the top word) by its name;
3. numbers, every one of them, into words (num2words for English, cn2an for Chinese numerals): signs (+, −, -),
   thousands separators, decimals (the digits after the point one by one, as shown: "0.40" is "zero point four
   zero"), percents, degrees, ranges (89–91°), powers of ten (1.4×10²¹), comparisons in front of a number
   (<0.1%, >99.9%), shapes (64 × 16: "sixty-four by sixteen"), counts in B/M/K (116.0 B: "one hundred sixteen
   point zero billion", 一千一百六十亿), English ordinals (2nd), #42; a number touching a letter is set apart
   (L1: "L one"); in Chinese 两 for a lone 2 before a measure word (2 个 -> 两个, but 第 2 层 -> 第二层); a comma
   between two numbers only a space apart (the top 5 44.3%; Chinese numerals would run together);
4. symbols and letters: a table per language (→, ≈, =, √, ∞, ·, ×, ÷, ±, Greek letters, primes, ᵀ, x̂, ...);
   an identifier's underscore is a space (W_out -> "W out");
5. punctuation: quotes are dropped, brackets become pauses (commas), dashes pauses; Chinese takes full-width
   punctuation, and no space between two Chinese characters.

Whatever a voice cannot say is left in place, never dropped: unsayable() names it, and the tests fail on it (so
the tables get extended). SAYABLE is each voice's whitelist. SPOKEN_VERSION goes into a cache key: bump it
whenever the rules change what is said.
"""

from __future__ import annotations

import re
from decimal import Decimal

from cn2an import an2cn
from num2words import num2words

SPOKEN_VERSION = "2"

LANGUAGES = ("en", "zh")
CJK = "\u4e00-\u9fff"                         # CJK unified ideographs
ZH_PUNCT = "，。、；：？！"
SAYABLE: dict[str, re.Pattern] = {
    # piper reads words: ASCII letters, spaces and the punctuation that shapes the phrasing; no digits remain
    "en": re.compile(r"[A-Za-z ,.;:?!'\-]"),
    # the Chinese voice: ideographs and Chinese punctuation; Latin runs (letters, spaces) go to the English voice
    "zh": re.compile(rf"[{CJK}{ZH_PUNCT}A-Za-z ]"),
}


def unsayable(spoken_text: str, lang: str) -> set[str]:
    """The characters of `spoken_text` that `lang`'s voice cannot say (outside SAYABLE[lang])."""
    allowed = SAYABLE[lang]
    return {c for c in spoken_text if not allowed.fullmatch(c)}


# --- 2. terms: how a voice should say a word it misreads (whole words, case-sensitive) ---------------------------
# A Latin term is said by the English voice in both languages, so one spelling serves both (in Chinese a hyphen
# becomes a space, step 5). A term whose Chinese form is Chinese has its own.
# Checked against piper's own phonemizer (espeak-ng, en-us): GELU alone is "JEL-oo", ReLU "R-E-loo"; LayerNorm,
# softmax, argmax, logit, GPT, MLP, LN are read right as written, so they are not here.
TERMS: dict[str, dict[str, str]] = {
    "GELU": {"en": "gee-loo"},
    "ReLU": {"en": "ray-loo"},
    "<eos>": {"en": "end of text", "zh": "结束符"},
    "e.g.": {"en": "for example", "zh": "例如"},
    "i.e.": {"en": "that is", "zh": "即"},
    "vs.": {"en": "versus", "zh": "对比"},
}

# A weight matrix is said by what it is, not spelled ("W q transpose"): the screen keeps the symbol (docs/teaching.md §3).
# Turned (ᵀ) or not, it is the same matrix to the ear; where the caption already names it ("the embedding matrix
# W_E"), the symbol is not said a second time.
MATRICES: dict[str, dict[str, str]] = {
    "W_E": {"en": "the embedding matrix", "zh": "嵌入矩阵"},
    "W_U": {"en": "the unembedding matrix", "zh": "解嵌入矩阵"},
    "W_q": {"en": "the query matrix", "zh": "查询矩阵"},
    "W_k": {"en": "the key matrix", "zh": "键矩阵"},
    "W_v": {"en": "the value matrix", "zh": "值矩阵"},
    "W_O": {"en": "the output matrix", "zh": "输出矩阵"},
    "W_in": {"en": "the up-projection matrix", "zh": "升维矩阵"},
    "W_out": {"en": "the down-projection matrix", "zh": "降维矩阵"},
}
NAMED_AS = {"W_E": {"en": ("embedding table",), "zh": ("嵌入表",)},       # other names a caption gives them
            "W_U": {"en": ("unembedding",), "zh": ("解嵌入",)}}
MATRIX = re.compile(r"(?<![\w<])(?P<m>W_(?:E|U|q|k|v|O|in|out))\u1d40?(?![A-Za-z0-9_>])")


NORMALISED = {"en": ("the normalised vector x", "normalised"), "zh": ("归一化向量 x", "归一化向量")}
X_HAT = re.compile("(?<![A-Za-z])x\u0302")


def normalised(text: str, lang: str) -> str:
    """x̂, LayerNorm's output, by what it is ("the normalised vector x"), or "x" where the caption says so already."""
    words, named = NORMALISED[lang]
    return X_HAT.sub(lambda m: "x" if m.string[:m.start()].rstrip().endswith(named) else words, text)


def matrices(text: str, lang: str) -> str:
    def said(m):
        words = MATRICES[m["m"]][lang]
        bare = words.removeprefix("the ")
        before = m.string[:m.start()].rstrip()
        if before.endswith((bare, *NAMED_AS.get(m["m"], {}).get(lang, ()))):   # "the embedding matrix W_E": named
            return ""
        if lang == "en" and re.search(r"\b(?:the|its|this|each|every|a|own)(?: head's)?\s*$", before, re.I):
            return bare                                 # "its W_k", "the head's own W_k"
        return words
    return MATRIX.sub(said, text)


# --- 3. numbers -----------------------------------------------------------------------------------------------
SUPERSCRIPT_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
SUBSCRIPT_DIGITS = "₀₁₂₃₄₅₆₇₈₉"
FROM_SUPERSCRIPT = str.maketrans(SUPERSCRIPT_DIGITS + "⁻⁺", "0123456789-+")
MINUS_SIGNS = "−-"                      # U+2212 as the lecture writes it, and the ASCII hyphen-minus
EN_DIGITS = "zero one two three four five six seven eight nine".split()
ZH_DIGITS = "零一二三四五六七八九"
QUOTES = "\"“”‘’«»「」『』"
ZH_NUMERALS = "零一二三四五六七八九十百千万亿两负正"   # what a Chinese number starts or ends with
# a Chinese measure word: a lone 2 before one is 两 (两个, 两层), never after 第 (第二层)
ZH_MEASURE = "个层次种位倍头组步列行张条句件类处份段项名轮遍"

_INT = r"[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+"
_NUM = rf"(?:{_INT})(?:\.[0-9]+)?"
_SIGN = rf"[+{MINUS_SIGNS}]"
# a sign belongs to a number only where nothing it could be subtracted from stands right before it
_SIGNED = rf"(?:(?<![A-Za-z0-9_)\]′]){_SIGN})?{_NUM}"
_SUP = rf"[⁻⁺]?[{SUPERSCRIPT_DIGITS}]+"

SCIENTIFIC = re.compile(rf"(?P<m>{_SIGNED})\s*[×x]\s*10(?P<e>{_SUP})")
POWER = re.compile(rf"(?P<m>{_SIGNED})(?P<e>{_SUP})")
RANGE = re.compile(rf"(?P<a>{_SIGNED})(?:%|°)?\s*[–—]\s*(?P<b>{_SIGNED})\s*(?P<unit>%|°)?"
                   rf"|(?P<a2>{_SIGNED})-(?P<b2>{_NUM})\s*(?P<unit2>%|°)?")
# what a comparison may follow to stand between two terms (x ≤ 3, d_k > 0, f(x) < 1): a letter alone, an identifier
# with an index, a number, a bracket closed, a prime; after a word ("falls to <0.1%") it reads "less than"
OPERAND = re.compile(r"(?:(?<![A-Za-z])[A-Za-z]|[A-Za-z]+_[A-Za-z0-9]+|[0-9%°)\]′])$")
COMPARED = re.compile(rf"(?P<cmp>[<>≤≥])\s*(?=[+{MINUS_SIGNS}]?[0-9])")
ORDINAL = re.compile(r"(?<![0-9.,])(?P<n>[0-9]+)(?P<suffix>st|nd|rd|th)\b")
# whole numbers (or one-letter sizes) multiplied are a shape (64 × 16 numbers: "sixty-four by sixteen"; n × n
# cells); other products are "times"
SHAPE = re.compile(rf"(?<![0-9.,\w])(?P<a>{_INT}|[A-Za-z])\s*×\s*"
                   rf"(?=(?:{_INT}|[A-Za-z](?!\w))(?!\.?[0-9]|\s*×\s*10[{SUPERSCRIPT_DIGITS}⁻]))")
# 2/5: a fraction; 3 / 318 (spaced): one of a count
FRACTION = re.compile(rf"(?P<a>{_SIGNED})(?P<gap>\s*)/\s*(?P<b>{_NUM})(?![0-9])")
# 116.0 B, 3.4 M, 12 K: a count in billions, millions, thousands (a capital letter right after the number)
SCALES = {"B": ("billion", 10 ** 9), "M": ("million", 10 ** 6), "K": ("thousand", 10 ** 3)}
SCALED = re.compile(rf"(?P<num>{_SIGNED}) ?(?P<scale>[BMK])(?![A-Za-z0-9])")
NUMBERED = re.compile(r"#\s*(?P<n>[0-9]+)(?![0-9.,])")
LETTER = re.compile("[A-Za-z]")
NUMBER = re.compile(rf"(?P<num>{_SIGNED})(?P<unit>\s*%|°)?")


def _parts(number: str) -> tuple[str, str, str]:
    """'−12,288.50' -> ('−', '12288', '50')."""
    sign = number[0] if number[0] in "+" + MINUS_SIGNS else ""
    body = number[len(sign):].replace(",", "")
    whole, _, fraction = body.partition(".")
    return sign, whole, fraction


def _en_int(whole: str) -> str:
    return num2words(int(whole)).replace(" and ", " ").replace(",", "")


def en_number(number: str) -> str:
    """An English number as words: 'plus three point eight', 'twelve thousand two hundred eighty-eight'."""
    sign, whole, fraction = _parts(number)
    words = _en_int(whole)
    if fraction:
        words += " point " + " ".join(EN_DIGITS[int(d)] for d in fraction)
    return {"": "", "+": "plus "}.get(sign, "minus ") + words


def zh_number(number: str) -> str:
    """A Chinese number in Chinese numerals: '正三点八', '一万二千二百八十八', '负零点五'."""
    sign, whole, fraction = _parts(number)
    whole = str(int(whole))
    # cn2an reads up to 16 digits (千万亿); a longer one has no common name: digit by digit, like an id
    words = an2cn(whole, "low") if len(whole) <= 16 else "".join(ZH_DIGITS[int(d)] for d in whole)
    if fraction:
        words += "点" + "".join(ZH_DIGITS[int(d)] for d in fraction)
    return {"": "", "+": "正"}.get(sign, "负") + words


# A number of more than LONG_DIGITS significant digits is said rounded, as a lecturer says it (the screen keeps every
# digit): "174,604,259,328" -> "about one hundred seventy-five billion", "约一千七百五十亿"; in English in the largest of
# billion/million/thousand, whole from ten up and with one decimal below ("about four point two million"); in
# Chinese three significant digits in 亿 or 万 ("约三百八十七亿"). EXACT_FIGURES are said whole: their digits are the
# point (GPT-3's width 12,288 and its MLP's 49,152 = 4 × 12,288, the vocabulary's 50,257: docs/voices.md).
LONG_DIGITS = 4
EXACT_FIGURES = {12288, 49152, 50257}
EN_SCALES = ((10 ** 9, "billion"), (10 ** 6, "million"), (10 ** 3, "thousand"))
ZH_SCALES = ((10 ** 8, "亿"), (10 ** 4, "万"))


def significant_digits(number: str) -> int:
    _, whole, fraction = _parts(number)
    digits = (whole + fraction).lstrip("0")
    return len(digits.rstrip("0")) if not fraction else len(digits)


def lecturer_number(number: str, lang: str) -> str | None:
    """A long number as a lecturer says it (see above), or None where it is said as written."""
    sign, whole, fraction = _parts(number)
    if significant_digits(number) <= LONG_DIGITS or (not fraction and int(whole) in EXACT_FIGURES):
        return None
    value = Decimal(f"{whole}.{fraction or 0}")
    say = en_number if lang == "en" else zh_number
    signed = {"": "", "+": "+"}.get(sign, "−")
    if lang == "en":
        for size, name in EN_SCALES:
            if value >= size:
                x = value / size
                shown = str(int(x.quantize(Decimal(1)))) if x >= 10 else format(x.quantize(Decimal("0.1")), "f")
                shown = shown[:-2] if shown.endswith(".0") else shown           # about one million
                return f"about {say(signed + shown)} {name}"
        shown = format(value.quantize(Decimal(1).scaleb(value.adjusted() - 2)), "f")    # three significant digits
        return f"about {say(signed + shown)}"
    for size, name in ZH_SCALES:
        if value >= size:
            x = value / size
            x = x.quantize(Decimal(1).scaleb(x.adjusted() - 2))            # three significant digits
            shown = str(int(x)) if x == int(x) else format(x.normalize(), "f")
            return f"约{say(signed + shown)}{name}"
    shown = format(value.quantize(Decimal(1).scaleb(value.adjusted() - 2)), "f")
    return f"约{say(signed + shown)}"


def en_ordinal(n: int) -> str:
    return num2words(n, to="ordinal").replace(" and ", " ").replace(",", "")


def en_power(exponent: str) -> str:
    """'²¹' -> 'to the twenty-first'; '⁻³' -> 'to the minus third'; '²' -> 'squared'."""
    e = exponent.translate(FROM_SUPERSCRIPT)
    if e in ("2", "3"):
        return {"2": "squared", "3": "cubed"}[e]
    sign = "minus " if e[0] == "-" else ""
    return f"to the {sign}{en_ordinal(int(e.lstrip('+-')))}"


def zh_power(exponent: str) -> str:
    """'²¹' -> '的二十一次方'; '²' -> '的平方'."""
    e = exponent.translate(FROM_SUPERSCRIPT)
    return "的平方" if e == "2" else f"的{zh_number(e)}次方"


def en_unit(words: str, unit: str | None, number: str) -> str:
    unit = (unit or "").strip()
    if unit == "%":
        return f"{words} percent"
    if unit == "°":
        return f"{words} {'degree' if _parts(number)[1:] == ('1', '') else 'degrees'}"
    return words


def zh_unit(words: str, unit: str | None) -> str:
    unit = (unit or "").strip()
    if unit == "%":
        sign = words[0] if words[0] in "正负" else ""
        return f"{sign}百分之{words[len(sign):]}"
    return words + ("度" if unit == "°" else "")


EN_COMPARE = {"<": "less than", ">": "more than", "≤": "at most", "≥": "at least"}
ZH_COMPARE = {"<": "不到", ">": "超过", "≤": "至多", "≥": "至少"}
EN_BETWEEN = {"<": "is less than", ">": "is greater than", "≤": "is at most", "≥": "is at least"}
ZH_BETWEEN = {"<": "小于", ">": "大于", "≤": "小于等于", "≥": "大于等于"}


def numbers(text: str, lang: str) -> str:
    """Every number in `text` as words of `lang` (step 3)."""
    en = lang == "en"
    say = en_number if en else zh_number

    def scientific(m):
        if en:
            return f"{say(m['m'])} times ten {en_power(m['e'])}"
        return f"{say(m['m'])}乘以十{zh_power(m['e'])}"

    def power(m):
        if en:
            return f"{say(m['m'])} {en_power(m['e'])}"
        return f"{say(m['m'])}{zh_power(m['e'])}"

    def ranged(m):
        a, b, unit = (m["a"], m["b"], m["unit"]) if m["a"] else (m["a2"], m["b2"], m["unit2"])
        if en:
            return f"{say(a)} to {en_unit(say(b), unit, b)}"
        if unit == "%":
            return f"{zh_unit(say(a), unit)}到{zh_unit(say(b), unit)}"
        return f"{say(a)}到{zh_unit(say(b), unit)}"

    def compared(m):
        before = m.string[:m.start()].rstrip()
        if OPERAND.search(before):                                   # x ≤ 3: between two operands
            return " " + (EN_BETWEEN if en else ZH_BETWEEN)[m["cmp"]] + " "
        return (EN_COMPARE if en else ZH_COMPARE)[m["cmp"]] + " "     # <0.1%: in front of a number

    def ordinal(m):
        return en_ordinal(int(m["n"]))

    def number(m):
        num, unit = m["num"], m["unit"]
        rounded = lecturer_number(num, lang) if not unit else None
        if rounded is not None:
            return rounded
        if en:
            return en_unit(say(num), unit, num)
        if num == "2" and not unit and _two_before_measure(m):
            return "两"
        return zh_unit(say(num), unit)

    def _two_before_measure(m):
        before, after = m.string[:m.start()].rstrip(), m.string[m.end():].lstrip()
        return after[:1] != "" and after[:1] in ZH_MEASURE and not before.endswith("第")

    def fraction(m):
        a, b = say(m["a"]), say(m["b"])
        if m["gap"]:                                   # 3 / 318: a count out of a whole
            return f"{a} out of {b}" if en else f"{a}，共{b}"
        return f"{a} over {b}" if en else f"{b}分之{a}"

    def scaled(m):
        """116.0 B: "one hundred sixteen point zero billion"; in Chinese the number itself (一千一百六十亿)."""
        if en:   # 116.0 B: "one hundred sixteen billion" (a zero after the point says nothing to the ear)
            num = re.sub(r"\.0+$", "", m["num"])
            return f"{say(num)} {SCALES[m['scale']][0]}"
        sign, whole, fraction = _parts(m["num"])
        value = Decimal(f"{whole}.{fraction or 0}") * SCALES[m["scale"]][1]
        return say(sign + (str(int(value)) if value == int(value) else format(value.normalize(), "f")))

    def numbered(m):
        return f"number {say(m['n'])}" if en else f"{say(m['n'])}号"

    def spaced(said):
        """A number's words, apart from a letter it touches (L1 -> "L one", not "Lone"); where only a space parts it
        from another number, a comma (the top 5 44.3%; L1 #42 -> "L 一，四十二号": Chinese numerals run together)."""
        def sub(m):
            words = said(m)
            before, after = m.string[:m.start()], m.string[m.end():]
            if LETTER.fullmatch(before[-1:] or "0"):
                words = " " + words
            if LETTER.fullmatch(after[:1] or "0"):
                words += " "
            if en:     # the top 5 44.3%: two numbers only a space apart are two things said
                if after[:1].isspace() and re.match(r"[+−-]?[0-9]", after.lstrip()):
                    words += ","
            else:
                if before[-1:].isspace() and re.search(rf"[0-9{ZH_NUMERALS}{QUOTES}]$", before.rstrip()):
                    words = "，" + words
                if after[:1].isspace() and re.match(rf"[0-9{ZH_NUMERALS}]", after.lstrip()):
                    words += "，"
            return words
        return sub

    text = SCIENTIFIC.sub(spaced(scientific), text)
    text = POWER.sub(spaced(power), text)
    text = RANGE.sub(spaced(ranged), text)
    text = COMPARED.sub(compared, text)
    text = FRACTION.sub(spaced(fraction), text)
    text = SHAPE.sub(lambda m: m["a"] + (" by " if en else " 乘 "), text)
    text = SCALED.sub(spaced(scaled), text)
    text = NUMBERED.sub(spaced(numbered), text)
    if en:
        text = ORDINAL.sub(spaced(ordinal), text)
    return NUMBER.sub(spaced(number), text)


# --- 4. symbols and letters ----------------------------------------------------------------------------------------
GREEK = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "Δ": "delta", "ε": "epsilon", "ϵ": "epsilon",
         "ζ": "zeta", "η": "eta", "θ": "theta", "λ": "lambda", "μ": "mu", "ν": "nu", "π": "pi", "ρ": "rho",
         "σ": "sigma", "Σ": "sigma", "τ": "tau", "φ": "phi", "ϕ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega",
         "Ω": "omega"}
SUBSCRIPT_LETTERS = {"ᵢ": "i", "ⱼ": "j", "ₖ": "k", "ₙ": "n", "ₜ": "t", "ₓ": "x"}
SUPERSCRIPT_LETTERS = {"ⁱ": "i", "ʲ": "j", "ᵏ": "k", "ⁿ": "n"}

# A symbol read out as a word; (a pattern, English, Chinese). Applied in this order, after the numbers. Words are
# padded with spaces here and the spaces tidied at the end.
SYMBOLS: list[tuple[str, str, str]] = [
    (rf"[{MINUS_SIGNS}]\s*∞", " minus infinity ", "负无穷"),
    (r"\+\s*∞", " plus infinity ", "正无穷"),
    (r"∞", " infinity ", "无穷"),
    (r"√", " the square root of ", " 根号 "),
    (r"\s*→\s*(?=(?:minus |plus )?(?:infinity|zero|one|two|three|four|five|six|seven|eight|nine|ten)\b"
     r"|[负正]?无穷|[零一二三四五六七八九十])", " goes to ", " 趋于 "),
    (r"→", " to ", " 到 "),
    (r"←", " from ", " 来自 "),
    (r"[↓⇓]", " down ", " 向下 "),
    (r"[↑⇑]", " up ", " 向上 "),
    (r"≈", " is about ", " 约等于 "),
    (r"≠", " is not ", " 不等于 "),
    (r"≤", " is at most ", " 小于等于 "),
    (r"≥", " is at least ", " 大于等于 "),
    (r"(?<=\S)\s*<\s*(?=\S)", " is less than ", " 小于 "),
    (r"(?<=\S)\s*>\s*(?=\S)", " is greater than ", " 大于 "),
    (r"=", " equals ", " 等于 "),
    (r"±", " plus or minus ", " 正负 "),
    (r"(?<=\w)\s*[·⋅]\s*(?=\w)", " dot ", " 点乘 "),
    (r"[·⋅]", ", ", "，"),                           # MLP 3·“乔丹”: a component at a token
    (r"×", " times ", " 乘以 "),
    (r"÷", " divided by ", " 除以 "),
    (r"\+", " plus ", " 加 "),                       # a sign left by the numbers: between two terms, or alone
    (r"−|(?<=\s)-(?=\s)", " minus ", " 减 "),
    (r"″", " double prime ", " double prime "),
    (r"′", " prime ", " prime "),
    (r"ᵀ", " transpose ", " 转置 "),
    (r"\u0302", " hat ", " hat "),
    (r"°", " degrees ", "度"),
    (r"%", " percent ", "百分比"),
    (r"&", " and ", " 和 "),
    (r"#", " number ", " 号 "),
    (r"@", " at ", " 在 "),
    (r"(?<=[A-Za-z])/(?=[A-Za-z])", " ", " "),
    (r"/", " over ", " 除以 "),
    (r"(?<=\w)_(?=\w)", " ", " "),
    (r"[{}\[\]|^~*\\]", " ", " "),
]


# f(x), P("felt"), MLP(LN(E′)): a function of its argument, innermost first
APPLIED = re.compile(r"(?<![A-Za-z'-])(?P<f>[A-Za-z](?:[A-Za-z-]{0,14}[A-Za-z])?)\((?P<x>[^()]{1,40})\)")


# a function said by what it computes: P(x) is the probability of x, LN(x) LayerNorm of x
FUNCTIONS = {"P": ("the probability of {x}", "{x} 的概率"), "LN": ("LayerNorm of {x}", "{x} 的 LayerNorm")}


def applied(f: str, x: str, lang: str) -> str:
    en, zh = FUNCTIONS.get(f, ("{f} of {x}", "{f} {x}"))
    return " " + (en if lang == "en" else zh).format(f=f, x=x) + " "


def symbols(text: str, lang: str) -> str:
    i = 1 if lang == "en" else 2
    while APPLIED.search(text):
        text = APPLIED.sub(lambda m: applied(m["f"], m["x"], lang), text)
    # a power or an index of a letter (x², E₁): numbers too
    text = re.sub(_SUP, lambda m: f" {en_power(m[0])} " if i == 1 else f" {zh_power(m[0])} ", text)
    text = re.sub(f"[{SUBSCRIPT_DIGITS}]+", lambda m: " " + (en_number if i == 1 else zh_number)(
        m[0].translate(str.maketrans(SUBSCRIPT_DIGITS, "0123456789"))) + " ", text)
    for row in SYMBOLS:
        text = re.sub(row[0], row[i], text)
    return "".join(letter(c, lang) for c in text)


def letter(c: str, lang: str) -> str:
    """A Greek letter by its name; an index letter (Dᵢ) apart; a power letter (0.9ⁱ) as a power."""
    if c in GREEK:
        return f" {GREEK[c]} "
    if c in SUBSCRIPT_LETTERS:
        return f" {SUBSCRIPT_LETTERS[c]} "
    if c in SUPERSCRIPT_LETTERS:
        return f" to the {SUPERSCRIPT_LETTERS[c]} " if lang == "en" else f"的 {SUPERSCRIPT_LETTERS[c]} 次方"
    return c


# --- 5. punctuation and spacing --------------------------------------------------------------------------------
TO_FULL_WIDTH = str.maketrans({",": "，", ".": "。", ";": "；", ":": "：", "?": "？", "!": "！"})
FULL_WIDTH_ASCII = {chr(c): chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)
                    if chr(c) not in "，：；？！（）"}


def punctuation(text: str, lang: str) -> str:
    text = re.sub(f"[{QUOTES}]", "", text)
    text = re.sub(r"(?<![A-Za-z])'|'(?![A-Za-z])", " ", text)     # a single quote that is not an apostrophe
    text = re.sub(r"[(（【\[]", ", ", text)
    text = re.sub(r"[)）】\]]", ", ", text)
    text = re.sub(r"\s*[—–]\s*", ", ", text)
    text = re.sub(r"…|\.\.\.", ".", text)
    if lang == "zh":
        text = re.sub(r"(?<=[A-Za-z])-(?=[A-Za-z])", " ", text)   # gee-loo: the English voice reads a space alike
        text = re.sub(r"-", " ", text)
        text = re.sub(r"(?<![A-Za-z])'|'(?![A-Za-z])", " ", text)
        text = text.replace("'", "")
        text = text.translate(TO_FULL_WIDTH)
        text = re.sub(r"\s*([，。、；：？！])\s*", r"\1", text)
        text = re.sub(r"([，。、；：？！])[，、]+|[，、]+(?=[，。、；：？！])", r"\1", text)   # a pause in a pause
        text = re.sub(r"^[，。、；：]+|[，、；：]+$", "", text.strip())
        text = re.sub(rf"(?<=[{CJK}{ZH_PUNCT}])\s+(?=[{CJK}{ZH_PUNCT}])", "", text)
        text = re.sub(rf"(?<=[{ZH_PUNCT}])\s+|\s+(?=[{ZH_PUNCT}])", "", text)
    else:
        text = re.sub(r"\s+([,.;:?!])", r"\1", text)
        text = re.sub(r"([,;:])(?:\s*,)+", r"\1", text)
        text = re.sub(r",(?=\s*[.;:?!])", "", text)
        text = re.sub(r"^[\s,.;:]+|[\s,;:]+$", "", text)
        text = re.sub(r"([,.;:?!])(?=[A-Za-z])", r"\1 ", text)
    return re.sub(r"\s+", " ", text).strip()


def layout(text: str, lang: str) -> str:
    text = "".join(FULL_WIDTH_ASCII.get(c, c) for c in text)
    if lang == "zh":
        text = re.sub(rf"(?<=[{CJK}{ZH_PUNCT}])\s*\n\s*(?=[{CJK}{ZH_PUNCT}])", "", text)
    return re.sub(r"\s*\n\s*", " ", text)


# A quoted punctuation mark is a word of the vocabulary on screen ("," is the top word): said by its name.
MARK_NAMES: dict[str, dict[str, str]] = {
    ".": {"en": "period", "zh": "句号"}, "。": {"en": "period", "zh": "句号"},
    ",": {"en": "comma", "zh": "逗号"}, "，": {"en": "comma", "zh": "逗号"},
    "、": {"en": "enumeration comma", "zh": "顿号"},
    "?": {"en": "question mark", "zh": "问号"}, "？": {"en": "question mark", "zh": "问号"},
    "!": {"en": "exclamation mark", "zh": "感叹号"}, "！": {"en": "exclamation mark", "zh": "感叹号"},
    ";": {"en": "semicolon", "zh": "分号"}, "；": {"en": "semicolon", "zh": "分号"},
    ":": {"en": "colon", "zh": "冒号"}, "：": {"en": "colon", "zh": "冒号"},
}
QUOTED_MARK = re.compile(r"(?<!\w)[\"“‘「『](?P<mark>[^\w\s\"“”‘’「」『』]+)[\"”’」』](?!\w)")


def terms(text: str, lang: str) -> str:
    def mark(m):
        names = [MARK_NAMES.get(c, {}).get(lang) for c in m["mark"]]
        return m[0] if None in names else " ".join(names)

    text = QUOTED_MARK.sub(mark, text)
    text = normalised(matrices(text, lang), lang)
    for word, said in TERMS.items():
        edge_l = r"(?<![\w<])" if word[0].isalnum() or word[0] == "<" else ""
        edge_r = r"(?![\w>])" if word[-1].isalnum() or word[-1] == ">" else ""
        text = re.sub(edge_l + re.escape(word) + edge_r, said.get(lang, said["en"]), text)
    return text


def spoken(text: str, lang: str) -> str:
    """The caption's spoken form in `lang` ("en" or "zh"): what the voice says for it."""
    if lang not in LANGUAGES:
        raise ValueError(f"no spoken form for language {lang!r}: {', '.join(LANGUAGES)}")
    text = layout(text, lang)
    text = terms(text, lang)
    text = numbers(text, lang)
    text = symbols(text, lang)
    return punctuation(text, lang)


# --- a caption's words for the ear: quoted tokens announced, long numbers said as a lecturer says them -------------
# A token quoted in a caption is announced as a word: read bare, "the query "was" brings its weights" is heard as
# grammar. The caption's template says which quotes hold a token: a quote whose whole content is one placeholder
# ("{word}", “{focus}”) is filled with a token; a quote written in the template ("look here", “是什么”) is a phrase,
# and stays as it is. announced() rewrites the template before it is filled:
#   en: "{w}"  -> the word "{w}" (the words, for a value of two or three words; a longer value is a quoted text and
#       gets a pause on each side), with a comma after it where the sentence goes on (the pause that keeps "was"
#       from being heard as the verb); P("{w}") -> the probability of the word "{w}"; after "query" or "key",
#       "of the word"; after "word", "token" or "words" nothing is added;
#   zh: “{w}” -> “{w}”这个词 (after 词, 词元 or before 这个词 nothing is added); P(“{w}”) -> “{w}”这个词的概率.
EN_QUOTED = re.compile(r'(?P<p>P\()?"\{(?P<name>\w+)\}"(?P<close>\))?')
ZH_QUOTED = re.compile(r"(?P<p>P\()?“\{(?P<name>\w+)\}”(?P<close>\))?")
EN_ANNOUNCED_BEFORE = re.compile(r"(?:\bwords?|\btokens?|\bnamed|\bas)\s*$", re.I)
EN_OF_BEFORE = re.compile(r"\b(?:query|key)\s*$", re.I)
ZH_ANNOUNCED_BEFORE = re.compile(r"(?:词|词元|token)\s*$")
TEXT_WORDS = 4   # a filled quote of this many words or more is a quoted text (a prompt), not a token


def announced(template: str, values: dict, lang: str) -> str:
    """The caption `template` filled with `values`, each quoted token announced as a word (see above): the text the
    voice reads (spoken() turns it into words). The caption on screen is the template filled as it is."""
    quoted = EN_QUOTED if lang == "en" else ZH_QUOTED

    def announce(m):
        name, before, after = m["name"], m.string[:m.start()], m.string[m.end():]
        value = str(values.get(name, ""))
        words = len(value.split()) if lang == "en" else 1
        if not value or words >= TEXT_WORDS:             # a quoted text (a prompt): read as it stands
            return m[0]
        whole = '"{' + name + '}"' if lang == "en" else "“{" + name + "}”"
        probability = bool(m["p"] and m["close"])        # P("{w}"): the probability of the word
        wrap = lambda said: (m["p"] or "") + said + (m["close"] or "")   # noqa: E731 - P( ... ) kept around it
        if lang == "zh":
            if probability:
                return f"{whole}这个词的概率"
            if ZH_ANNOUNCED_BEFORE.search(before) or after.startswith(("这个词", "一词")):
                return wrap(whole)
            return wrap(whole + "这个词")
        noun = "the words" if words > 1 else "the word"
        if probability:
            return f"the probability of {noun} {whole}"
        if EN_ANNOUNCED_BEFORE.search(before):
            said = whole
        elif EN_OF_BEFORE.search(before):
            said = f"of {noun} {whole}"
        else:
            said = f"{noun} {whole}"
        # a comma where the sentence goes on: the pause that keeps "was" from being heard as the verb
        return wrap(said) + ("," if re.match(r"\s*[A-Za-z0-9(]", after) else "")

    return quoted.sub(announce, template).format(**values)
