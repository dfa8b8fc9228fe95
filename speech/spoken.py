"""What the voice says for a caption: the caption as written for the eye, turned into words a TTS voice can say.

    spoken("T → 0: 99.8% of it", "en")  ->  "T goes to zero: ninety-nine point eight percent of it"
    spoken("T → 0：99.8%", "zh")         ->  "T 趋于零：百分之九十九点八"

English is read by piper (en_US-joe-medium); Chinese by a FastSpeech2 voice that drops Latin letters, so a Latin run
inside Chinese text stays Latin and is spliced in with the English voice. The rule, in order:

1. layout: a line break is a space (nothing between two Chinese characters); full-width Latin letters, digits and
   signs (ＡＢ１２％＋) are their ASCII forms;
2. terms: a small pronunciation table for words the voices misread (GELU -> "gee-loo", <eos>, "attn" ->
   "attention", ...), whole words only; a quoted punctuation mark (a word of the vocabulary: "," is the top word) by
   its name; a weight matrix (W_q), an indexed symbol (Dᵢ, d_model) and a layer's short label ("L2 attn": "layer
   two's attention", 第二层的注意力) by what they name, never spelled;
3. numbers, every one of them, into words (speech/spoken_numbers.py; num2words for English, cn2an for Chinese
   numerals): signs (+, −, -), thousands separators, decimals (the digits after the point one by one, trailing zeros
   dropped: "0.40" is "zero point four", "1.00" is "one", "0.000" is "zero"), a year as a year (Geva et al. 2023:
   "twenty twenty-three", 二零二三年), a difference of percentages written "+12.3 pp" in percentage points
   (个百分点), percents, degrees, ranges (89–91°), powers of ten (1.4×10²¹), comparisons in front of a number
   (<0.1%, >99.9%), shapes (64 × 16: "sixty-four by sixteen"), counts in B/M/K (116.0 B: "one hundred sixteen
   billion", 一千一百六十亿), English ordinals (2nd), #42; a number touching a letter is set apart
   (GPT3: "GPT three"); in Chinese 两 for a lone 2 before a measure word (2 个 -> 两个, but 第 2 层 -> 第二层); a comma
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

from .spoken_numbers import (  # noqa: F401 - step 3 (numbers), and what the tests use of it
    SUPERSCRIPT_DIGITS, SUBSCRIPT_DIGITS, FROM_SUPERSCRIPT, MINUS_SIGNS, EN_DIGITS, ZH_DIGITS, QUOTES, ZH_NUMERALS,
    ZH_MEASURE, _SUP, SCALED, SCALES, EXACT_FIGURES, LONG_DIGITS, en_number, zh_number, en_power, zh_power,
    en_ordinal, en_year, zh_year, lecturer_number, significant_digits, numbers, POINTS, YEAR)

SPOKEN_VERSION = "5"

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
    "attn.": {"en": "attention", "zh": "注意力"},
    "attn": {"en": "attention", "zh": "注意力"},
}

# A label's short form of a layer's component, said whole: "L2 attn" is "layer 2's attention", "L2 MLP" "layer 2's
# MLP", a bare "L1" (L1 #42) "layer 1"; in Chinese 第2层的注意力, 第2层的 MLP, 第1层 (the numbers are said next).
LAYER = re.compile(r"(?<![A-Za-z0-9_])L(?P<n>[0-9]+)(?:[ \u00a0]*(?P<part>attn\.?|attention|MLP|注意力)(?![A-Za-z]))?"
                   r"(?![A-Za-z0-9])")
LAYER_PARTS = {"en": {"attn": "attention", "attn.": "attention", "attention": "attention", "MLP": "MLP",
                      "注意力": "attention"},
               "zh": {"attn": "注意力", "attn.": "注意力", "attention": "注意力", "MLP": " MLP", "注意力": "注意力"}}


def layers(text: str, lang: str) -> str:
    def said(m):
        part = LAYER_PARTS[lang].get(m["part"] or "")
        if lang == "en":
            return f"layer {m['n']}'s {part}" if part else f"layer {m['n']}"
        return f"第{m['n']}层的{part}" if part else f"第{m['n']}层"
    return LAYER.sub(said, text)


# A symbol with an index, said by what it names where a caption writes it (the screen keeps the symbol): Dᵢ, the
# toy model's dimensionality of feature i, not "D i". spelled_symbols() finds an indexed symbol no table names.
NAMED_SYMBOLS: dict[str, dict[str, str]] = {
    "D\u1d62": {"en": "the dimensionality of feature i", "zh": "特征 i 的维度份额"},
    "d_model": {"en": "the model width", "zh": "模型宽度"},
    "d_head": {"en": "the head width", "zh": "头宽度"},
    "b_O": {"en": "the output bias", "zh": "输出偏置"},
}
INDEXED = re.compile(r"(?<![A-Za-z])(?:[A-Za-zΔ]+_[A-Za-z0-9]+|[A-Za-zΔ][₀-₉ᵢⱼₖₙₜₓ]+)(?![A-Za-z0-9_])")


def spelled_symbols(text: str) -> list[str]:
    """The indexed symbols of a caption (x_i, E₁, Dᵢ) that no table says by name (MATRICES, NAMED_SYMBOLS): the
    voice would spell them."""
    return [m[0] for m in INDEXED.finditer(text) if m[0] not in NAMED_SYMBOLS and not MATRIX.fullmatch(m[0])]

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
        if lang == "en" and re.search(r"\b(?:the|its|this|each|every|a|own|same)(?: head's)?\s*$", before, re.I):
            return bare                                 # "its W_k", "the head's own W_k"
        return words
    return MATRIX.sub(said, text)


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
    (r"\s*[·⋅]\s*(?=the words? |[\"“])", " at ", "，"),     # L2 attn·“plays”: a component at a token
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
    for symbol, said in NAMED_SYMBOLS.items():
        text = re.sub(rf"(?<![A-Za-z]){re.escape(symbol)}(?![A-Za-z0-9_])", said[lang], text)
    text = layers(text, lang)
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
#       gets a pause on each side), a comma after it only before a number ("the word plays, 0.21"): before the
#       rest of a sentence "the word" announces it, and a pause would break the sentence (issue 41); P("{w}") -> the probability of the word "{w}"; after "query" or "key",
#       "of the word"; after "word", "token" or "words" nothing is added;
#   zh: “{w}” -> “{w}”这个词 (after 词, 词元 or before 这个词 nothing is added); P(“{w}”) -> “{w}”这个词的概率.
#       A token that is also a common word of Chinese grammar (ZH_COMMON_WORDS: 是, 一只, 了, 的, ...) is always
#       announced, after 词 too (the quotes are not heard: "最后一个词“是”留在原位" would be heard as "the last word
#       is staying in place"), and after 是 or 词 it is set off by a pause on each side, so that it cannot be heard as
#       grammar: 柱子是“是”给它的 -> 柱子是，是这个词，给它的 (issue 41 rule 4).
EN_QUOTED = re.compile(r'(?P<p>P\()?"\{(?P<name>\w+)\}"(?P<close>\))?')
ZH_QUOTED = re.compile(r"(?P<p>P\()?“\{(?P<name>\w+)\}”(?P<close>\))?")
EN_ANNOUNCED_BEFORE = re.compile(r"(?:\bwords?|\btokens?|\bnamed|\bas)\s*$", re.I)
EN_OF_BEFORE = re.compile(r"\b(?:query|key)\s*$", re.I)
ZH_ANNOUNCED_BEFORE = re.compile(r"(?:词|词元|token)\s*$")
# The Chinese tokens of the model's vocabulary that are also everyday words of grammar (a verb, a particle, a
# measure word, a pronoun, a connective): said bare after "是" or "词" they are heard as the sentence's own grammar.
ZH_COMMON_WORDS = frozenset({"是", "只", "一", "一只", "这只", "在", "了", "的", "打", "住", "他", "她", "来自",
                             "而且", "确实", "据说", "仍然", "和", "有", "不", "也", "就", "都"})
ZH_GLUED_BEFORE = re.compile(r"(?:是|词|词元)\s*$")    # a common word right after these is set off by pauses
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
            common = value.strip() in ZH_COMMON_WORDS
            if after.startswith(("这个词", "一词")) or (ZH_ANNOUNCED_BEFORE.search(before) and not common):
                said = whole
            else:
                said = whole + "这个词"
            if common and ZH_GLUED_BEFORE.search(before) and not m["p"]:
                said = "，" + said + ("，" if re.match(rf"\s*[{CJK}A-Za-z0-9{{“]", after)
                                     and not after.startswith(("这个词", "一词")) else "")
            return wrap(said)
        noun = "the words" if words > 1 else "the word"
        if probability:
            return f"the probability of {noun} {whole}"
        if EN_ANNOUNCED_BEFORE.search(before):
            said = whole
        elif EN_OF_BEFORE.search(before):
            said = f"of {noun} {whole}"
        else:
            said = f"{noun} {whole}"
        # a pause before a number that follows (the word plays, 0.21), never before the rest of the sentence
        return wrap(said) + ("," if re.match(r"\s*[+\u2212-]?[0-9{]", after) else "")

    return quoted.sub(announce, template).format(**values)
