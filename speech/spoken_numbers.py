"""Step 3 of speech/spoken.py: every number of a caption into words of the language (see spoken.py's docstring).

A number is said as a listener follows it: trailing zeros after the point dropped ("1.00" is "one", "0.40" is "zero
point four"), a year as a year (2023: "twenty twenty-three", 二零二三年), a difference of percentages written "+12.3 pp"
as percentage points (个百分点), a long number rounded as a lecturer says it.
"""

from __future__ import annotations

import re
from decimal import Decimal

from cn2an import an2cn
from num2words import num2words

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
# a difference of two percentages, written "+12.3 pp" (percentage points; also "p.p.", and 个百分点 in Chinese)
POINTS = re.compile(rf"(?P<num>{_SIGNED})\s*(?:pp|p\.p\.|个百分点)(?![A-Za-z])")
# a year: four digits (1500-2099, no separator) where a year stands, after "et al.", "in", "since" or an opening
# bracket, or 等， (Elhage 等，2022), and before a closing bracket, punctuation or the end; or before 年
YEAR = re.compile(r"(?<![0-9.,])(?P<y>1[5-9][0-9]{2}|20[0-9]{2})(?![0-9])")
YEAR_BEFORE = re.compile(r"(?:\bet al\.,?|\bin|\bsince|[(（]|等[，,])\s*$")
YEAR_AFTER = re.compile(r"\s*(?:[)）.,;:，。；：!?！？]|$)")


def en_year(year: int) -> str:
    """2023 -> 'twenty twenty-three', 2003 -> 'two thousand three', 1998 -> 'nineteen ninety-eight'."""
    return num2words(year, to="year").replace(" and ", " ")


def zh_year(year: int) -> str:
    """2023 -> '二零二三年' (digit by digit; 零 rather than 〇, which the voice's frontend cannot read)."""
    return "".join(ZH_DIGITS[int(d)] for d in str(year)) + "年"


def _parts(number: str) -> tuple[str, str, str]:
    """'−12,288.50' -> ('−', '12288', '5'): the fraction without its trailing zeros, which say nothing to the ear
    ("1.00" is "one", "0.000" is "zero", "0.40" is "zero point four")."""
    sign = number[0] if number[0] in "+" + MINUS_SIGNS else ""
    body = number[len(sign):].replace(",", "")
    whole, _, fraction = body.partition(".")
    return sign, whole, fraction.rstrip("0")


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
        """116.0 B: "one hundred sixteen billion"; in Chinese the number itself (一千一百六十亿)."""
        if en:
            return f"{say(m['num'])} {SCALES[m['scale']][0]}"
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

    def year(m):
        before, after = m.string[:m.start()], m.string[m.end():]
        if after.lstrip(" ").startswith("年"):                       # 2023年, 2023 年: the 年 is said with it
            return zh_year(int(m["y"]))[:-1]
        if not (YEAR_BEFORE.search(before) and YEAR_AFTER.match(after)):
            return m[0]
        return en_year(int(m["y"])) if en else zh_year(int(m["y"]))

    def points(m):
        words = say(m["num"])
        if en:
            one = _parts(m["num"])[1:] == ("1", "")
            return f"{words} percentage {'point' if one else 'points'}"
        return f"{words}个百分点"

    text = YEAR.sub(spaced(year), text)
    text = SCIENTIFIC.sub(spaced(scientific), text)
    text = POWER.sub(spaced(power), text)
    text = POINTS.sub(spaced(points), text)
    text = RANGE.sub(spaced(ranged), text)
    text = COMPARED.sub(compared, text)
    text = FRACTION.sub(spaced(fraction), text)
    text = SHAPE.sub(lambda m: m["a"] + (" by " if en else " 乘 "), text)
    text = SCALED.sub(spaced(scaled), text)
    text = NUMBERED.sub(spaced(numbered), text)
    if en:
        text = ORDINAL.sub(spaced(ordinal), text)
    return NUMBER.sub(spaced(number), text)
