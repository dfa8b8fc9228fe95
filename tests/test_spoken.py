"""The spoken form of a caption (speech/spoken.py): what the voice says for it, and that the voice can say it.

- the rule's examples, in English and Chinese, as exact strings;
- a listener follows it (issue 41 rule 4): every caption template of every scene's strings table, filled with sample
  values the lecture's formatters write (numbers with trailing zeros, percentages, "L2 attn"), is said with no zero
  after the point, no bracket, no subscript and no "attn", and names every indexed symbol it holds (about 40 s);
- the sweep: every scene of the catalog plays without drawing on the random prompts of tests/test_caption_rules.py
  (the same PROMPTS seeded prompts per scene, English and Chinese by turns, drawn by its valid_params, played
  through scene_checks.lean and run_dry as there), and every caption said (the title card's note too), as shown
  in the clip's language. Each one's spoken form must leave nothing its voice cannot say (unsayable), and in
  Chinese every Latin word of the caption must survive into the spoken form (the English voice splices it in),
  said as the pronunciation table says it. (A clip's caption track in the other language, render.caption_texts,
  is not narrated: the English track of a Chinese clip holds the prompt's Chinese words.)

The sweep costs what the caption-rules test's own runs cost: each scene is played once per session, when its first
test here asks (the module's `sweep` fixture); 20 to 120 s a scene, about 18 minutes for the module on two shared,
busy cores (the examples alone: about a second).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from speech.spoken import SAYABLE, SCALED, SPOKEN_VERSION, layout, spoken, terms, unsayable

EXAMPLES = {
    "en": {
        "99.8%": "ninety-nine point eight percent",
        "−∞": "minus infinity",
        "W_out": "the down-projection matrix",
        "√d_k": "the square root of d k",
        "T → 0": "T goes to zero",
        "+3.8": "plus three point eight",
        "−0.40": "minus zero point four",
        "T = 1.00": "T equals one",
        "0.000": "zero",
        "1.320": "one point three two",
        "53.0%": "fifty-three percent",
        "+12.3 pp": "plus twelve point three percentage points",
        "−1.0 pp": "minus one percentage point",
        "(Geva et al. 2023):": "Geva et al. twenty twenty-three",
        "(Elhage et al., 2022)": "Elhage et al., twenty twenty-two",
        "Dasgupta & Gupta (2003)": "Dasgupta and Gupta, two thousand three",
        "in 2048 dimensions": "in two thousand forty-eight dimensions",
        "L2 attn": "layer two's attention",
        "L2 attn.": "layer two's attention",
        "L3 MLP pushes": "layer three's MLP pushes",
        "the attn weights": "the attention weights",
        'L2 attn·"plays"': "layer two's attention at plays",
        "-2": "minus two",
        "1.4 × 10²¹": "one point four times ten to the twenty-first",
        "5.97×10⁵": "five point nine seven times ten to the fifth",
        "1.2×10⁻³": "one point two times ten to the minus third",
        "<0.1%": "less than zero point one percent",
        "(>99.9%)": "more than ninety-nine point nine percent",
        "12,288": "twelve thousand two hundred eighty-eight",
        "d = 12,288": "d equals twelve thousand two hundred eighty-eight",
        "ΔE": "delta E",
        "E′": "E prime",
        "E′ = E + ΔE": "E prime equals E plus delta E",
        "GPT, MLP and GELU": "GPT, MLP and gee-loo",
        "normalised by LayerNorm": "normalised by LayerNorm",
        "GELU(x)": "gee-loo of x",
        "E′ + MLP(LN(E′)).": "E prime plus MLP of LayerNorm of E prime.",
        'Zeroed, P("felt") goes': "Zeroed, the probability of felt goes",
        "falls from 99.8% to <0.1%; now": "falls from ninety-nine point eight percent to less than zero point one "
                                          "percent; now",
        "11 × 64 by 64 × 256.": "eleven by sixty-four by sixty-four by two hundred fifty-six.",
        "the top 5 44.3%": "the top five, forty-four point three percent",
        "(2/5 = 0.4)": "two over five equals zero point four",
        "ranks 3 / 318": "ranks three out of three hundred eighteen",
        "3.2× faster": "three point two times faster",
        "The MLPs hold 116.0 B of 174.6 B": "The MLPs hold one hundred sixteen billion of one hundred "
                                            "seventy-four point six billion",
        "3 MLPs": "three MLPs",
        "Feature i matters 0.9ⁱ; each": "Feature i matters zero point nine to the i; each",
        "Dᵢ: the share": "the dimensionality of feature i: the share",
        'MLP 0 at "jordan"': "MLP zero at jordan",
        "layer 2": "layer two",
        "layer 2's attention": "layer two's attention",
        "the 2nd head": "the second head",
        "89–91°": "eighty-nine to ninety-one degrees",
        "71–73°": "seventy-one to seventy-three degrees",
        "1°": "one degree",
        "90 ± 1.2°": "ninety plus or minus one point two degrees",
        "3 × 4": "three by four",
        "64 × 16 trained numbers": "sixty-four by sixteen trained numbers",
        "0.5 × 2": "zero point five times two",
        "q·k": "q dot k",
        "q·k ÷ √16": "q dot k divided by the square root of sixteen",
        "QKᵀ": "QK transpose",
        "x̂ = LN(E)": "the normalised vector x equals LayerNorm of E",
        "ε ≈ 0.00001": "epsilon is about zero point zero zero zero zero one",
        "x ≤ 3": "x is at most three",
        "x²": "x squared",
        "GPT-3 has 96 layers": "GPT-three has ninety-six layers",
        "a 318-word vocabulary": "a three hundred eighteen-word vocabulary",
        "the next word is <eos>": "the next word is end of text",
        "Step 1: add\nthem up.": "Step one: add them up.",
        'falls on "the" (6.1%).': "falls on the, six point one percent.",
        "Welch/Levenshtein": "Welch Levenshtein",
        "Add & Norm": "Add and Norm",
        '"," is the top word': "comma is the top word",
        'the vector for ".".': "the vector for period.",
        '"fish", "cat"': "fish, cat",
        "L1 #42": "layer one number forty-two",
        "+ 3 more": "plus three more",
        "n × n cells": "n by n cells",
        "GPT-3's 2,048 tokens": "GPT-three's two thousand forty-eight tokens",
    },
    "zh": {
        "99.8%": "百分之九十九点八",
        "−∞": "负无穷",
        "+3.8": "正三点八",
        "−0.5": "负零点五",
        "1.4 × 10²¹": "一点四乘以十的二十一次方",
        "12,288": "一万二千二百八十八",
        "√d_k": "根号 d k",
        "T → 0": "T 趋于零",
        "<0.1%": "不到百分之零点一",
        "（>99.9%）。": "超过百分之九十九点九。",
        "3 个": "三个",
        "2 个": "两个",
        "第2层": "第二层",
        "第 2 层": "第二层",
        "第 2 个": "第二个",
        "12 个": "十二个",
        "2 维": "二维",
        "W_q": "查询矩阵",
        "softmax": "softmax",
        "在 softmax 之前": "在 softmax 之前",
        "GELU 之后": "gee loo 之后",
        "89–91°": "八十九到九十一度",
        "ΔE": "delta E",
        "E′ = E + ΔE": "E prime 等于 E 加 delta E",
        "T = 0.1：": "T 等于零点一",
        "0 到 1": "零到一",
        "GPT-3 的流程": "GPT 三的流程",
        "每个模块之后的残差流：\n从第 1 层的 MLP 起，“了”一直排第一。":
            "每个模块之后的残差流：从第一层的 MLP 起，了一直排第一。",
        "因为 e 的 −∞ 次幂是 0。": "因为 e 的负无穷次幂是零。",
        "e ≈ 2.7 倍": "e 约等于二点七倍",
        "即 “。” 的向量": "即句号的向量",
        "查询“迈克尔”（位置 0）": "查询迈克尔，位置零",
        "L1 #42": "第一层四十二号",
        "0.000": "零",
        "T = 1.00": "T 等于一",
        "53.0%": "百分之五十三",
        "+12.3 pp": "正十二点三个百分点",
        "（Geva 等，2023）：": "Geva 等，二零二三年",
        "2023年": "二零二三年",
        "见 Geva 等人 2023 年的研究": "见 Geva 等人二零二三年的研究",
        "L2 注意力": "第二层的注意力",
        "L3 MLP": "第三层的 MLP",
        "Dᵢ 在 0.38 到 0.42 之间": "特征 i 的维度份额在零点三八到零点四二之间",
        "64 × 16 个数": "六十四乘十六个数",
        "4,194,304 个分数": "约四百一十九万个分数",
        "P(棒球) 从 >99.9% 降到 0.4%": "棒球的概率从超过百分之九十九点九降到百分之零点四",
        "x ≤ 3": "x 小于等于三",
        "MLP 占 174.6 B 中的 116.0 B：66.4%": "MLP 占一千七百四十六亿中的一千一百六十亿：百分之六十六点四",
        "1.25 B": "十二亿五千万",
        "0.5 M": "五十万",
        "重要性是 0.9ⁱ；": "重要性是零点九的 i 次方",
        "（2/5 = 0.4）": "五分之二等于零点四",
        "最大：MLP 0·“大坂” 0.74，注意力 2·“女选手” 0.60。": "最大：MLP 零，大坂，零点七四，注意力二，女选手，零点六。",
    },
}


@pytest.mark.parametrize("lang,text,said", [(lang, t, s) for lang, table in EXAMPLES.items()
                                            for t, s in table.items()])
def test_examples(lang, text, said):
    assert spoken(text, lang) == said
    assert unsayable(said, lang) == set()


def test_an_unknown_symbol_is_left_to_be_named():
    """A symbol the tables do not know is kept, never dropped, so that the sweep names it."""
    assert unsayable(spoken("a ☃ b", "en"), "en") == {"☃"}
    assert unsayable(spoken("一个☃", "zh"), "zh") == {"☃"}
    assert unsayable("3", "en") == {"3"} and unsayable("3", "zh") == {"3"}   # no digit is said as a digit


def test_whitelists_and_version():
    assert set(SAYABLE) == {"en", "zh"} and SPOKEN_VERSION
    assert unsayable("Hello, world; it's a gee-loo? yes!", "en") == set()
    assert unsayable("你好，世界。GPT 的 softmax、logit：对吗？对！", "zh") == set()
    assert unsayable("a.b", "zh") == {"."} and unsayable("一，二", "en") == {"一", "，", "二"}


# --- the sweep -----------------------------------------------------------------------------------------------------
def latin_words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+", text)


# --- for the ear (docs/teaching.md §7): quoted tokens announced as words, no number read out at a length no lecturer uses
EN_NUMBER_WORD = re.compile(r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
                            r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|"
                            r"seventy|eighty|ninety|hundred|thousand|million|billion|trillion|point)"
                            r"(?:-(?:one|two|three|four|five|six|seven|eight|nine))?")
MOST_NUMBER_WORDS = {"en": 8, "zh": 10}     # words of one number in English, numeral characters in Chinese
ZH_NUMERAL_RUN = re.compile("[零一二三四五六七八九十百千万亿两点]+")
QUOTE_MARKS = {"en": ('"', '"'), "zh": ("\u201c", "\u201d")}


# a formula read symbol by symbol: a transpose sign, x̂ as "hat", a function as "P of", "LN of"
SPELLED = re.compile(r"\b(?:transpose|hat|LN of|P of)\b")


def longest_number(said: str, lang: str) -> int:
    """The most number-words in a row (English) or numeral characters in a row (Chinese) in a spoken line."""
    if lang == "zh":
        return max((len(m) for m in ZH_NUMERAL_RUN.findall(said)), default=0)
    longest = run = 0
    for word in re.findall(r"[A-Za-z-]+|[,.;:!?]", said):     # a punctuation mark ends a number
        run = run + 1 if EN_NUMBER_WORD.fullmatch(word.lower()) else 0
        longest = max(longest, run)
    return longest


def exact_figure_words(lang: str) -> set[str]:
    from speech.spoken import EXACT_FIGURES
    return {spoken(f"{n:,}", lang) for n in EXACT_FIGURES}


def assert_for_the_ear(caption: dict, said: str, lang: str, where: str) -> None:
    """A token quoted on screen (a value the caption was filled with, inside quotes, of fewer than four words) is
    announced in the spoken line ("the word was", "the token was", "“是”这个词", "词元“的”"), no number is spoken
    longer than a lecturer would say it (MOST_NUMBER_WORDS), but for the figures whose digits are the point, and
    nothing is heard that a listener cannot follow (assert_heard: a trailing zero, a bracket, a subscript, "attn")."""
    text, values = caption["text"], caption.get("values") or {}
    opening, closing = QUOTE_MARKS[lang]
    for value in {str(v) for v in values.values() if isinstance(v, str) and v.strip()}:
        if f"{opening}{value}{closing}" not in text.replace("\n", " ") or len(value.split()) >= 4:
            continue
        word = spoken(value, lang)
        if lang == "en":
            announced = re.search(rf"\b(?:word|words|token|tokens|named|as) {re.escape(word)}\b", said)
        else:
            announced = f"{word}这个词" in said or re.search(rf"(?:词|词元|token) ?{re.escape(word)}", said)
        assert announced, f"{where} {caption['key']!r}: the quoted token {value!r} is not announced as a word: {said!r}"
    assert_heard(said, lang, f"{where} {caption['key']!r}")     # no trailing zero, bracket, subscript, "attn"
    spelled = SPELLED.search(said)
    assert not spelled, f"{where} {caption['key']!r}: a symbol spelled out ({spelled[0]!r}), not said by what it " \
                        f"means: {said!r}: give the caption a spoken version (say_{lang}) or the symbol a rule"
    left = said
    for figure in exact_figure_words(lang):
        left = left.replace(figure, "")
    assert longest_number(left, lang) <= MOST_NUMBER_WORDS[lang], \
        f"{where} {caption['key']!r}: a number no lecturer reads out whole: {said!r}"


def assert_sayable(captions: list[dict], lang: str, where: str) -> None:
    """Every caption said in a clip (as shown, in the clip's language) has a spoken form its voice can say whole,
    and in Chinese every Latin word survives into it (as the pronunciation table respells it; the letter of a
    count in billions, 174.6 B, is part of the number, said in Chinese numerals). test_caption_rules.py calls this
    on each of its random prompts, so the sweep costs no play of its own."""
    for c in captions:
        text = c["text"]
        said = spoken(c.get("say", text), lang)
        assert_for_the_ear(c, said, lang, where)
        left = unsayable(said, lang)
        assert not left, f"{where} {c['key']!r}: {text!r} -> {said!r}: the voice cannot say {sorted(left)}"
        if lang == "zh":
            # a function said by what it computes (P(x): x 的概率; LN(x): x 的 LayerNorm) keeps the Latin it says
            source = re.sub(r"(?<![A-Za-z])(P|LN)\(", lambda m: {"P": "(", "LN": "LayerNorm("}[m[1]],
                            c.get("say", text))
            expected = Counter(latin_words(SCALED.sub(lambda m: m["num"], terms(layout(source, "zh"), "zh"))))
            dropped = expected - Counter(latin_words(said))
            assert not dropped, f"{where} {c['key']!r}: {text!r} -> {said!r} drops {sorted(dropped)}"


# --- the words for the ear: the rule's examples --------------------------------------------------------------------
@pytest.mark.parametrize("lang, template, values, said", [
    ("en", 'The query "{focus}" brings its attention weights:', {"focus": "was"},
     "The query of the word was brings its attention weights"),
    ("en", 'Zeroed, P("{word}") drops', {"word": "orange"}, "Zeroed, the probability of the word orange drops"),
    ("en", 'We watch the token "{focus}".', {"focus": "was"}, "We watch the token was."),
    ("en", 'Largest: {a}·"{x}" {p}, then {b}·"{y}" {q}.', {"a": "L2 attn", "x": "plays", "p": "0.21", "b": "L1 MLP",
                                                          "y": "jordan", "q": "0.18"},
     "Largest: layer two's attention at the word plays, zero point two one, then layer one's MLP at the word jordan, "
     "zero point one eight."),
    ("en", 'reads\n"{prompt}"\nand says "{w}".', {"prompt": "a silky orange tiny frog", "w": "orange"},
     "reads a silky orange tiny frog and says the word orange."),
    ("en", '"look here" at "{w}"', {"w": "michael jordan"}, "look here at the words michael jordan"),
    ("zh", "也就是“{focus}”最关注的词", {"focus": "是"}, "也就是，是这个词，最关注的词"),
    ("zh", "每个词下面的柱子是“{word}”（第 {layer} 层）给它的", {"word": "是", "layer": "2"},
     "每个词下面的柱子是，是这个词，第二层，给它的"),
    ("zh", "最后一个词“{last}”留在原位", {"last": "是"}, "最后一个词，是这个词，留在原位"),
    ("zh", "最后一个词“{last}”留在原位", {"last": "青蛙"}, "最后一个词青蛙留在原位"),
    ("zh", "在“{last}”之后", {"last": "一只"}, "在一只这个词之后"),
    ("zh", "P(“{w}”) 降到 {p}", {"w": "橙色", "p": "53.0%"}, "橙色这个词的概率降到百分之五十三"),
    ("zh", "词元“{w}”与“是什么”", {"w": "的"}, "词元，的这个词，与是什么"),
    ("zh", "词元“{w}”与“是什么”", {"w": "青蛙"}, "词元青蛙与是什么"),
])
def test_quoted_tokens_are_announced_as_words(lang, template, values, said):
    from speech.spoken import announced
    assert spoken(announced(template, values, lang), lang) == said


@pytest.mark.parametrize("lang, text, said", [
    ("en", "174,604,259,328", "about one hundred seventy-five billion"),
    ("en", "38,654,705,664", "about thirty-nine billion"),
    ("en", "4,194,304", "about four point two million"),
    ("en", "1,048,576", "about one million"),
    ("en", "12,288", "twelve thousand two hundred eighty-eight"),      # an exact figure: its digits are the point
    ("en", "2,048", "two thousand forty-eight"),                        # four digits: said whole
    ("zh", "174,604,259,328", "约一千七百五十亿"),
    ("zh", "38,654,705,664", "约三百八十七亿"),
    ("zh", "4,194,304", "约四百一十九万"),
    ("zh", "50,257", "五万零二百五十七"),
])
def test_long_numbers_are_said_as_a_lecturer_says_them(lang, text, said):
    assert spoken(text, lang) == said
    assert longest_number(said, lang) <= MOST_NUMBER_WORDS[lang]


def test_the_ear_check_finds_a_spelled_formula():
    caption = {"key": "k", "text": "x", "values": {}}
    with pytest.raises(AssertionError, match="spelled out"):
        assert_for_the_ear(caption, "out equals W O transpose concat plus b O", "en", "test")
    assert_for_the_ear(caption, spoken("The head reads x̂ = LN(E) from W_qᵀ.", "en"), "en", "test")


def test_the_ear_check_finds_a_bare_token_and_a_long_number():
    bare = {"key": "k", "text": 'The query "was" brings', "values": {"focus": "was"}}
    with pytest.raises(AssertionError, match="not announced"):
        assert_for_the_ear(bare, spoken(bare["text"], "en"), "en", "test")
    long = {"key": "k", "text": "x", "values": {}}
    with pytest.raises(AssertionError, match="no lecturer"):
        assert_for_the_ear(long, "thirty-eight billion six hundred fifty-four million seven hundred five", "en", "t")


# --- a listener follows it (issue 41 rule 4): over every caption of every scene's strings table ----------------------
# Each caption template of every scene of the catalog (its `strings` table, with its say_en/say_zh spoken version where
# it has one), filled as the scenes fill them (announced(), then spoken()), with sample values the lecture's own
# formatters write: numbers with trailing zeros (style.signed, style.statistic, style.temperature, a three-decimal
# zero), percentages, a layer's short name ("L2 attn"), a quoted token. No spoken form may keep a zero after the
# point, a bracket, a subscript or an abbreviation, and no caption may hold an indexed symbol no table names.
def sample_values():
    from scenes import style
    return [style.signed(1.0, 2), style.signed(-0.4, 2), style.statistic(1.0), style.temperature(1.0),
            f"{0.0:.3f}", style.percent(0.53), style.percent(0.0012), style.signed(2.0, 1), "L2 attn", "was", "2"]


TRAILING_ZERO = {
    # "point" and its digits, the last of them "zero"
    "en": re.compile(r"\bpoint(?: (?:zero|one|two|three|four|five|six|seven|eight|nine))* zero\b"
                     r"(?! (?:zero|one|two|three|four|five|six|seven|eight|nine)\b)"),
    "zh": re.compile("点[零一二三四五六七八九]*零(?![零一二三四五六七八九])"),
}
READ_ALOUD = re.compile(r"[()\[\]{}（）【】₀-₉ᵢⱼₖₙₜₓ_]|\battn\b")


def caption_templates():
    """(scene, key, lang, template the voice reads) for every caption of every scene of the catalog."""
    import importlib
    from scenes.catalog import SCENES
    out = []
    for name, spec in SCENES.items():
        table = getattr(importlib.import_module(spec.module), spec.cls).strings.table
        for key, versions in table.items():
            for lang in ("en", "zh"):
                out.append((name, key, lang, versions.get(f"say_{lang}", versions[lang])))
    return out


def filled(template: str, sample: str) -> str | None:
    """The template with every placeholder given `sample` (a numeric format spec a number), or None where a
    placeholder indexes into its value (a table's rows)."""
    import string
    values = {}
    for _, field, spec, _ in string.Formatter().parse(template):
        if field is None:
            continue
        if not re.fullmatch(r"\w+", field):
            return None
        values[field] = 1.0 if spec else sample
    return values


def assert_heard(said: str, lang: str, where: str) -> None:
    zero = TRAILING_ZERO[lang].search(said)
    assert not zero, f"{where}: a trailing zero is said ({zero[0]!r}): {said!r}"
    aloud = READ_ALOUD.search(said)
    assert not aloud, f"{where}: a symbol is read aloud ({aloud[0]!r}): {said!r}"


def test_the_ear_check_finds_trailing_zeros_brackets_and_abbreviations():
    for said, lang in (("T equals one point zero zero", "en"), ("zero point four zero", "en"), ("百分之五十三点零", "zh"),
                       ("layer two attn", "en"), ("D ᵢ", "en"), ("（二）", "zh"), ("W_q", "en")):
        with pytest.raises(AssertionError):
            assert_heard(said, lang, "example")
    for said, lang in (("one point zero five", "en"), ("zero", "en"), ("零点零五", "zh"), ("point zero one", "en")):
        assert_heard(said, lang, "example")
    from speech.spoken import spelled_symbols
    assert spelled_symbols("x_i and E₁ and Dᵢ and W_q") == ["x_i", "E₁"]


def test_every_caption_of_every_scene_is_heard_as_a_listener_follows_it():
    from speech.spoken import announced, spelled_symbols
    samples, checked = sample_values(), 0
    for name, key, lang, template in caption_templates():
        where = f"{name} {key!r} ({lang})"
        symbols = spelled_symbols(re.sub(r"\{[^{}]*\}", "", template))      # the placeholders aside
        assert not symbols, f"{where}: {symbols} would be spelled: name them (speech/spoken.py NAMED_SYMBOLS)"
        for sample in samples:
            values = filled(template, sample)
            if values is None:
                continue
            said = spoken(announced(template, values, lang), lang)
            assert_heard(said, lang, f"{where} with {sample!r}")
            checked += 1
    assert checked > 1000, checked


# --- a common word followed in Chinese (issue 41 rule 4): over every caption template of every scene ----------------
# The quotes on screen are not heard. A token that is also a word of Chinese grammar (是, 一只, 的, ...) is announced
# (“是”这个词) wherever a template quotes it, and never glued to a 是 or 词 before it: "柱子是是这个词" and
# "最后一个词是留在原位" are heard as grammar.
def heard_as_grammar(said: str, word: str, quoted: int) -> str | None:
    """Why `word`, quoted `quoted` times in a Chinese caption, may be heard as grammar in its spoken line `said`: a
    quote not announced as “word”这个词, or one said right after 是 or 词; None if it is heard as a word."""
    if said.count(f"{word}这个词") < quoted:
        return f"{quoted} quoted, not all announced as {word}这个词"
    glued = re.search(rf"(?:是|词){re.escape(word)}这个词", said)
    return f"glued to the word before it ({glued[0]!r})" if glued else None


def test_a_common_chinese_word_is_always_announced_and_set_apart_in_every_caption():
    from speech.spoken import ZH_COMMON_WORDS, announced
    quoted_field = re.compile(r"“\{(\w+)\}”")
    checked = 0
    for name, key, lang, template in caption_templates():
        if lang != "zh" or not quoted_field.search(template):
            continue
        for word in ("是", "的", "一只"):
            assert word in ZH_COMMON_WORDS
            values = filled(template, "2")
            if values is None:
                continue
            for field in quoted_field.findall(template):
                values[field] = word
            said = spoken(announced(template, values, lang), lang)
            where = f"{name} {key!r} with {word!r}"
            why = heard_as_grammar(said, word, len(quoted_field.findall(template)))
            assert why is None, f"{where}: the word is heard as grammar, {why}: {said!r}"
            checked += 1
    assert checked > 100, checked


def test_the_common_word_check_finds_the_issues_examples():
    for said in ("柱子是是这个词给它的权重", "最后一个词是留在原位"):
        assert heard_as_grammar(said, "是", 1), said
    for said in ("柱子是，是这个词，给它的权重", "最后一个词，是这个词，留在原位", "在是这个词之后"):
        assert heard_as_grammar(said, "是", 1) is None, said
