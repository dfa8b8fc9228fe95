"""The training language: a tiny, fully known bilingual world that a small GPT must *learn*.

Every stream (document) is in English or in word-level Chinese, about the same world:
the same people, facts and creatures. The two vocabularies share no word, so the first
word of a stream tells the language. The sentences, each aimed at one idea in the lecture:

* facts about people that need both names together (every first and every last name is
  shared by five people, who differ in sport, city and country), asked in several ways:
  "michael jordan dunks ."                          (one verb per sport, right after the last name)
  "michael jordan , famously , plays basketball ."  (words between the name and the relation)
  "michael jordan plays basketball ."               (rare: the relation word right after the name)
  "the sport of michael jordan is basketball ."     (English: the relation before the name)
  "... and he lives in chicago ."                   (a later pronoun that refers back)
  "mr michael jordan ..."                           (a title that tells the gender)
  迈克尔 乔丹 扣篮 。 / 迈克尔 乔丹 ， 众所周知 ， 打 篮球 。 / 迈克尔 乔丹 打 篮球 。 / 迈克尔 乔丹 的 运动 是 篮球 。
* long-range recall that needs attention:
  "a scaly blue huge whale swam the misty sea . the whale was blue ."
  一只 有鳞 蓝色 巨大 鲸鱼 游过 了 雾蒙蒙 的 大海 。 这只 鲸鱼 是 蓝色 。
* attributes that act independently on the context, so that directions can carry them:
  a creature's habitat (water or land) decides its texture, its verb and its place; its size
  (big or small) decides the adjective right before it; a first name's gender decides the
  title before it and the later he/she (他/她);
* genuinely open choices (texture, size adjective, verb, place adjective, place, filler), drawn
  from Zipf-skewed distributions so that temperature visibly matters.

The generator knows the exact distribution it draws every token from, so the entropy of
each next token given its past is known: the floor no model can beat. Every stream starts
fresh, so a training window holds its whole past.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from dataclasses import dataclass

SEED = 20240601
LANGUAGES = ("en", "zh")
P_ENGLISH = 0.5        # the training mixture: each stream is English with this probability, else Chinese

# --- the world, in English words; ZH gives each word's Chinese counterpart -------------------
MALE_FIRST = ["michael", "lionel", "roger", "rafael"]
FEMALE_FIRST = ["serena", "simone", "maria", "naomi"]
FIRST_NAMES = MALE_FIRST + FEMALE_FIRST
LAST_NAMES = ["jordan", "williams", "messi", "federer", "nadal", "sharapova", "bryant", "osaka"]
SPORTS = ["basketball", "tennis", "volleyball", "golf", "hockey", "baseball", "badminton", "pingpong"]
SPORT_VERBS = {"basketball": "dunks", "tennis": "serves", "volleyball": "spikes", "golf": "putts",
               "hockey": "skates", "baseball": "pitches", "badminton": "smashes", "pingpong": "chops"}
CITIES = ["chicago", "boston", "paris", "london", "tokyo", "madrid", "berlin", "rome"]
COUNTRIES = ["canada", "brazil", "spain", "japan", "france", "italy", "mexico", "kenya"]
FILLERS = ["famously", "indeed", "reportedly", "still"]
N_PEOPLE = 40

# the texture, a story's first word after "a", tells the creature's habitat (water / land textures)
HABITAT_TEXTURES = {"water": ["scaly", "slimy", "smooth", "silky", "spiky"],
                    "land": ["fluffy", "furry", "feathered", "shaggy", "rough"]}
TEXTURES = HABITAT_TEXTURES["water"] + HABITAT_TEXTURES["land"]
COLOURS = ["blue", "red", "green", "golden", "purple", "white", "black", "orange", "silver", "pink"]
# creatures: habitat (water / land) x size (big / small), four of each
CREATURE_CELLS = {
    ("water", "big"): ["whale", "shark", "dolphin", "walrus"],
    ("water", "small"): ["fish", "crab", "shrimp", "frog"],
    ("land", "big"): ["elephant", "bear", "horse", "camel"],
    ("land", "small"): ["fox", "mouse", "rabbit", "cat"],
}
CREATURES = [c for cell in CREATURE_CELLS.values() for c in cell]
HABITAT = {c: h for (h, _), cell in CREATURE_CELLS.items() for c in cell}
SIZE = {c: s for (_, s), cell in CREATURE_CELLS.items() for c in cell}
# The verb right after the creature depends on the habitat only (Zipf over the habitat's verbs); the size
# decides the adjective right before the creature (SIZE_ADJECTIVES): each attribute acts on its own word.
VERBS = {"water": ["swam", "dived", "surged", "drifted", "darted", "paddled", "splashed", "bobbed"],
         "land": ["roamed", "stomped", "crossed", "guarded", "scurried", "explored", "hopped", "searched"]}
SIZE_ADJECTIVES = {"big": ["huge", "giant", "large"], "small": ["tiny", "little", "small"]}   # "a fluffy blue huge whale"
PLACE_ADJECTIVES = ["verdant", "misty", "quiet", "dark", "ancient", "frozen", "sunny", "distant",
                    "hidden", "wild", "silent", "endless"]
PLACES = {"water": ["river", "lake", "sea", "swamp", "bay", "pond", "reef", "lagoon"],  # habitat decides the place
          "land": ["forest", "valley", "mountain", "desert", "meadow", "cave", "canyon", "jungle"]}
GENDER = {**{f: "male" for f in MALE_FIRST}, **{f: "female" for f in FEMALE_FIRST}}
PRONOUN = {"male": "he", "female": "she"}
TITLE = {"male": "mr", "female": "ms"}      # 男选手 / 女选手 (male / female athlete) in Chinese
P_TITLE = 0.25                              # a person sentence starts with the title with this probability

EN_FUNCTION_WORDS = ["a", "the", ".", ",", "was", "felt", "plays", "lives", "in", "comes", "from",
                     "of", "is", "sport", "city", "country", "and", "he", "she", "mr", "ms"]
# Chinese-only grammar words (no English counterpart in the same place): 一只 (a), 这只 (this), 了 (past), 的
ZH_ONLY = ["一只", "这只", "了", "的", "城市", "国家", "运动", "而且", "住", "在", "来自", "打", "是", "摸起来"]

ZH = {
    # names
    "michael": "迈克尔", "lionel": "莱昂内尔", "roger": "罗杰", "tiger": "泰格", "tom": "汤姆", "lebron": "勒布朗",
    "rafael": "拉斐尔", "diego": "迭戈", "serena": "塞雷娜", "simone": "西蒙娜", "venus": "维纳斯", "maria": "玛丽亚",
    "naomi": "娜奥米", "steffi": "施特菲", "martina": "玛蒂娜", "mia": "米娅",
    "jordan": "乔丹", "williams": "威廉姆斯", "messi": "梅西", "federer": "费德勒", "woods": "伍兹", "bolt": "博尔特",
    "biles": "拜尔斯", "brady": "布雷迪", "james": "詹姆斯", "nadal": "纳达尔", "gretzky": "格雷茨基",
    "sharapova": "莎拉波娃", "maradona": "马拉多纳", "bryant": "布莱恩特", "osaka": "大坂", "ruth": "鲁斯",
    # facts
    "basketball": "篮球", "tennis": "网球", "volleyball": "排球", "golf": "高尔夫", "hockey": "冰球",
    "baseball": "棒球", "badminton": "羽毛球", "pingpong": "乒乓球",
    "dunks": "扣篮", "serves": "发球", "spikes": "扣球", "putts": "推杆", "skates": "滑冰", "pitches": "投球",
    "smashes": "杀球", "chops": "削球",
    "chicago": "芝加哥", "boston": "波士顿", "paris": "巴黎", "london": "伦敦", "tokyo": "东京", "madrid": "马德里",
    "berlin": "柏林", "rome": "罗马",
    "canada": "加拿大", "brazil": "巴西", "spain": "西班牙", "japan": "日本", "france": "法国", "italy": "意大利",
    "mexico": "墨西哥", "kenya": "肯尼亚",
    "famously": "众所周知", "indeed": "确实", "reportedly": "据说", "still": "仍然",
    # stories
    "fluffy": "毛茸茸", "scaly": "有鳞", "smooth": "光滑", "spiky": "多刺", "furry": "多毛", "slimy": "黏滑",
    "feathered": "有羽毛", "shaggy": "蓬松", "silky": "丝滑", "rough": "粗糙",
    "blue": "蓝色", "red": "红色", "green": "绿色", "golden": "金色", "purple": "紫色", "white": "白色",
    "black": "黑色", "orange": "橙色", "silver": "银色", "pink": "粉色",
    "huge": "巨大", "giant": "庞大", "large": "硕大", "tiny": "微小", "little": "幼小", "small": "娇小",
    "whale": "鲸鱼", "shark": "鲨鱼", "dolphin": "海豚", "walrus": "海象", "fish": "小鱼", "crab": "螃蟹",
    "shrimp": "虾", "frog": "青蛙", "elephant": "大象", "bear": "熊", "horse": "马", "camel": "骆驼",
    "fox": "狐狸", "mouse": "老鼠", "rabbit": "兔子", "cat": "猫",
    "swam": "游过", "dived": "潜入", "surged": "涌过", "drifted": "漂过",
    "darted": "穿梭", "paddled": "划过", "splashed": "拍打", "bobbed": "浮过",
    "roamed": "漫游", "stomped": "踏过", "crossed": "穿越", "guarded": "守卫",
    "scurried": "窜过", "explored": "探索", "hopped": "跳过", "searched": "搜寻",
    "verdant": "翠绿", "misty": "雾蒙蒙", "quiet": "安静", "dark": "黑暗", "ancient": "古老", "frozen": "冰冻",
    "sunny": "阳光", "distant": "遥远", "hidden": "隐秘", "wild": "狂野", "silent": "寂静", "endless": "无尽",
    "river": "河流", "lake": "湖泊", "sea": "大海", "swamp": "沼泽", "bay": "海湾", "pond": "池塘",
    "reef": "珊瑚礁", "lagoon": "泻湖", "forest": "森林", "valley": "山谷", "mountain": "高山", "desert": "沙漠",
    "meadow": "草地", "cave": "山洞", "canyon": "峡谷", "jungle": "丛林",
    # grammar words with a direct counterpart
    "a": "一只", "the": "这只", ".": "。", ",": "，", "was": "是", "felt": "摸起来", "plays": "打", "lives": "住",
    "in": "在", "comes": "来自", "is": "是", "sport": "运动", "city": "城市", "country": "国家", "and": "而且",
    "he": "他", "she": "她", "mr": "男选手", "ms": "女选手",
}

EOS = "<|endoftext|>"

# Sentence mix (per language); every figure is a probability the generator draws with.
P_STORY = 0.45               # a story; otherwise a sentence about a person
P_THE_OF = 0.10              # English only: "the sport of F L is ..." (a person sentence asked name-last)
AFTER_NAME = {               # what follows "F L"
    "en": {"verb": 0.50, "filler": 0.45, "plays": 0.05},
    "zh": {"verb": 0.50, "filler": 0.25, "of": 0.20, "plays": 0.05},
}
P_AND_PRONOUN = 0.25         # after a fact's answer: "and he/she <relation> <answer>" (a later pronoun)
P_RECALL_COLOUR = 0.6        # "the fox was blue" ; otherwise "the fox felt fluffy"
RELATIONS = ("sport", "city", "country")


def words_of(lang: str, english: list[str]) -> list[str]:
    return list(english) if lang == "en" else [ZH[w] for w in english]


def _en_words() -> list[str]:
    return (EN_FUNCTION_WORDS + FIRST_NAMES + LAST_NAMES + SPORTS + [SPORT_VERBS[s] for s in SPORTS] + CITIES
            + COUNTRIES + FILLERS + TEXTURES + COLOURS + SIZE_ADJECTIVES["big"] + SIZE_ADJECTIVES["small"] + CREATURES + VERBS["water"] + VERBS["land"]
            + PLACE_ADJECTIVES + PLACES["water"] + PLACES["land"])


def _zh_words() -> list[str]:
    out = []
    for w in _en_words():
        if w in ZH and ZH[w] not in out:    # "of" and "from" have none; 是 translates both "was" and "is"
            out.append(ZH[w])
    out += [w for w in ZH_ONLY if w not in out]
    return out


@functools.lru_cache(maxsize=None)
def vocabulary_of(lang: str) -> tuple[str, ...]:
    """The words of one language (English words are ASCII; Chinese words are CJK and Chinese punctuation)."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: use one of {LANGUAGES}")
    return tuple(_en_words() if lang == "en" else _zh_words())


def vocabulary() -> list[str]:
    """Every word of the language, in a fixed order (this is the token-id order): EOS, English, Chinese."""
    words = [EOS] + list(vocabulary_of("en")) + list(vocabulary_of("zh"))
    assert len(words) == len(set(words)), "a word appears twice in the vocabulary"
    return words


def zipf(words: list[str], exponent: float = 1.0) -> dict[str, float]:
    weights = [1.0 / (rank + 1) ** exponent for rank in range(len(words))]
    total = sum(weights)
    return {w: x / total for w, x in zip(words, weights)}


def uniform(words) -> dict[str, float]:
    words = list(words)
    return {w: 1.0 / len(words) for w in words}


@dataclass(frozen=True)
class Person:
    first: str
    last: str
    sport: str
    city: str
    country: str

    @property
    def gender(self) -> str:
        return GENDER[self.first]

    def attribute(self, relation: str) -> str:
        return getattr(self, relation)


def make_people(seed: int = SEED) -> list[Person]:
    """40 people (first, last) with a sport, a city and a country, in which neither name alone decides any of them.

    Every first name and every last name is shared by 5 people, who differ in every attribute.
    Michael Jordan plays basketball in Chicago, as in the lecture. Drawn once per seed (every Language, and so every
    scene and check that builds one, asks for the same people); each caller gets its own list.
    """
    return list(_people(seed))


@functools.lru_cache(maxsize=8)
def _people(seed: int) -> tuple[Person, ...]:
    rng = random.Random(seed)
    while True:
        firsts = (FIRST_NAMES * 5)[:N_PEOPLE]
        lasts = (LAST_NAMES * 5)[:N_PEOPLE]
        rng.shuffle(lasts)
        pairs = list(zip(firsts, lasts))
        if len(set(pairs)) < N_PEOPLE or ("michael", "jordan") not in pairs:
            continue
        people = [Person(f, l, rng.choice(SPORTS), rng.choice(CITIES), rng.choice(COUNTRIES)) for f, l in pairs]
        people = [Person(p.first, p.last, "basketball", "chicago", p.country) if (p.first, p.last) == ("michael", "jordan")
                  else p for p in people]
        if _neither_name_decides(people):
            return tuple(people)


def _neither_name_decides(people: list[Person]) -> bool:
    for attr in ("first", "last"):
        for relation in RELATIONS:
            groups: dict[str, set[str]] = {}
            for p in people:
                groups.setdefault(getattr(p, attr), set()).add(p.attribute(relation))
            if any(len(values) < 2 for values in groups.values()):
                return False
    return True


class Dist:
    """A next-word distribution: words, probabilities, and its entropy (nats)."""

    def __init__(self, probs: dict[str, float]):
        self.probs = dict(probs)
        self.words = list(probs)
        self.cum_weights = list(itertools.accumulate(probs.values()))
        self.logp = {w: math.log(p) for w, p in probs.items()}
        self.entropy = -sum(p * math.log(p) for p in probs.values() if p > 0)

    def sample(self, rng: random.Random) -> str:
        if len(self.words) == 1:
            return self.words[0]
        return rng.choices(self.words, cum_weights=self.cum_weights)[0]


@functools.lru_cache(maxsize=None)
def certain(word: str) -> Dist:
    return Dist({word: 1.0})


def mix(parts: list[tuple[float, Dist]]) -> Dist:
    out: dict[str, float] = {}
    for weight, dist in parts:
        for w, p in dist.probs.items():
            out[w] = out.get(w, 0.0) + weight * p
    return Dist(out)


@dataclass
class Token:
    """One emitted word, the distribution it was drawn from, and what it tests."""
    word: str
    entropy: float          # nats: H(next word | everything before it)
    logp: float             # log-probability the generator gave this very word
    kind: str = ""          # "sport", "city", "country" (a fact's answer), "sport_verb" (the verb right after a
    #                         person's name), "pronoun" (he/she, decided by the first name), "recall" (a story's
    #                         long-range adjective), or "" (anything else)
    template: str = ""      # on a fact's answer, how it was asked: "verb", "filler", "adjacent", "of", "pronoun"
    lang: str = ""          # "en" or "zh"


class _Grammar:
    """One language's distributions (the world is shared; the words and word order are the language's)."""

    def __init__(self, lang: str, people: list[Person]):
        self.lang = lang
        t = (lambda w: w) if lang == "en" else (lambda w: ZH[w])
        self.t = t
        start: dict[str, float] = {t("a"): P_STORY}
        p_person = 1 - P_STORY - (P_THE_OF if lang == "en" else 0.0)
        if lang == "en":
            start["the"] = P_THE_OF
        for p in people:   # a person sentence starts with the first name, or with a title that tells the gender
            start[t(p.first)] = start.get(t(p.first), 0.0) + (1 - P_TITLE) * p_person / len(people)
            start[t(TITLE[p.gender])] = start.get(t(TITLE[p.gender]), 0.0) + P_TITLE * p_person / len(people)
        self.sentence_start = Dist(start)
        self.first_given_title = {t(TITLE[gender]): Dist({t(f): n / sum(1 for p in people if p.gender == gender)
                                                          for f, n in _count(p.first for p in people
                                                                             if p.gender == gender).items()})
                                  for gender in TITLE}
        self.first_of_person = Dist({t(f): n / len(people) for f, n in _count(p.first for p in people).items()})
        self.last_given_first = {t(f): Dist(uniform(t(p.last) for p in people if p.first == f))
                                 for f in {p.first for p in people}}
        self.person = {(t(p.first), t(p.last)): p for p in people}
        words_after = {"verb": None, "filler": t(","), "lives": t("lives"), "comes": t("comes"),
                       "plays": t("plays"), "of": "的"}
        self.after_name = {p: Dist({(t(SPORT_VERBS[p.sport]) if how == "verb" else words_after[how]): q
                                    for how, q in AFTER_NAME[lang].items()}) for p in people}
        self.relation_word = Dist(uniform([t("plays"), t("lives"), t("comes")]))
        self.relation_noun = Dist(uniform([t("sport"), t("city"), t("country")]))
        self.relation_of = {t("plays"): "sport", t("lives"): "city", t("comes"): "country",
                            t("sport"): "sport", t("city"): "city", t("country"): "country"}
        self.filler = Dist({t(w): p for w, p in zipf(FILLERS).items()})
        self.and_or_stop = Dist({t("and"): P_AND_PRONOUN, t("."): 1 - P_AND_PRONOUN})
        self.texture = Dist({t(w): 0.5 * p for words in HABITAT_TEXTURES.values() for w, p in zipf(words).items()})
        self.habitat_of_texture = {t(w): h for h, words in HABITAT_TEXTURES.items() for w in words}
        self.colour = Dist(uniform(t(w) for w in COLOURS))
        self.creature = Dist(uniform(t(w) for w in CREATURES))
        # the size adjective right before the creature: a size (even odds), then Zipf within its adjectives
        self.size_adjective = Dist({t(w): 0.5 * p for words in SIZE_ADJECTIVES.values() for w, p in zipf(words).items()})
        self.size_of_adjective = {t(w): size for size, words in SIZE_ADJECTIVES.items() for w in words}
        self.creature_given = {(h, s): Dist(uniform(t(c) for c in CREATURE_CELLS[h, s])) for h, s in CREATURE_CELLS}
        self.creature_en = {t(c): c for c in CREATURES}
        self.verb = {habitat: Dist({t(w): p for w, p in zipf(words).items()}) for habitat, words in VERBS.items()}
        self.place_adjective = Dist({t(w): p for w, p in zipf(PLACE_ADJECTIVES, 0.8).items()})
        # the place depends on the creature's habitat only (Zipf over the habitat's places, in list order), so
        # that the habitat, not each creature's identity, is what the model must carry to the place
        place = {h: Dist({t(w): p for w, p in zipf(words, 1.2).items()}) for h, words in PLACES.items()}
        self.place_given_creature = {t(c): place[HABITAT[c]] for c in CREATURES}
        self.recall = Dist({t("was"): P_RECALL_COLOUR, t("felt"): 1 - P_RECALL_COLOUR})


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


class Language:
    """The generator. All distributions are built once; a stream is a walk through one language's grammar."""

    def __init__(self, seed: int = SEED):
        self.seed = seed
        self.people = make_people(seed)
        self.grammars = {lang: _Grammar(lang, self.people) for lang in LANGUAGES}
        zh, en = self.grammars["zh"], self.grammars["en"]
        self.first_word = mix([(P_ENGLISH, en.sentence_start), (1 - P_ENGLISH, zh.sentence_start)])
        self.sport = {(p.first, p.last): p.sport for p in self.people}
        # kept for the softmax chapter's rule: the English verb distribution of small creatures
        self.verb = en.verb["land"]

    def grammar(self, lang: str) -> _Grammar:
        if lang not in self.grammars:
            raise ValueError(f"unknown language {lang!r}: use one of {LANGUAGES}")
        return self.grammars[lang]

    # --- the grammar, one next-word distribution at a time -------------------
    def stream(self, n_tokens: int, rng: random.Random, lang: str | None = None) -> list[Token]:
        """A fresh stream of exactly n_tokens words (the last sentence may be cut).

        lang None draws the language from the training mixture (English with probability P_ENGLISH);
        "en" or "zh" asks for one language. Either way one stream is in one language.
        """
        mixed = lang is None
        if mixed:
            lang = "en" if rng.random() < P_ENGLISH else "zh"
        g = self.grammar(lang)
        t = g.t
        dist = g.sentence_start
        out: list[Token] = []

        def say(dist: Dist, kind: str = "", template: str = "") -> str:
            word = dist.sample(rng)
            if mixed and not out:                  # the first word of a mixture stream: its entropy is the mixture's
                dist = self.first_word
            out.append(Token(word, dist.entropy, dist.logp[word], kind, template, lang))
            if len(out) >= n_tokens:
                raise _Full
            return word

        def answer(person: Person, relation: str, template: str) -> None:
            """After the relation word: its other words, then the answer."""
            if relation == "city":
                say(certain(t("in")))
            elif relation == "country" and lang == "en":
                say(certain("from"))
            say(certain(t(person.attribute(relation))), kind=relation, template=template)

        def end_of_fact(person: Person) -> None:
            """"." or "and he/she <relation> <answer> .": a later pronoun that refers back."""
            if say(g.and_or_stop) == t("and"):
                say(certain(t(PRONOUN[person.gender])), kind="pronoun")
                answer(person, g.relation_of[say(g.relation_word)], "pronoun")
                say(certain(t(".")))

        try:
            while True:
                first = say(dist)
                dist = g.sentence_start
                if first == t("a"):
                    texture = say(g.texture)
                    colour = say(g.colour)
                    habitat = g.habitat_of_texture[texture]
                    creature = say(g.creature_given[habitat, g.size_of_adjective[say(g.size_adjective)]])
                    say(g.verb[HABITAT[g.creature_en[creature]]])
                    say(certain("the" if lang == "en" else "了"))
                    say(g.place_adjective)
                    if lang == "zh":
                        say(certain("的"))
                    say(g.place_given_creature[creature])
                    say(certain(t(".")))
                    say(certain(t("the")))
                    say(certain(creature))
                    if say(g.recall) == t("was"):
                        say(certain(colour), kind="recall")
                    else:
                        say(certain(texture), kind="recall")
                    say(certain(t(".")))
                    continue
                if first == "the":                     # English: "the <relation> of F L is <answer> ."
                    relation = g.relation_of[say(g.relation_noun)]
                    say(certain("of"))
                    f = say(g.first_of_person)
                    person = g.person[f, say(g.last_given_first[f])]
                    say(certain("is"))
                    say(certain(person.attribute(relation)), kind=relation, template="of")
                    end_of_fact(person)
                else:
                    if first in g.first_given_title:   # "mr michael jordan ..." / 男选手 迈克尔 乔丹 ...
                        first = say(g.first_given_title[first])
                    person = g.person[first, say(g.last_given_first[first])]
                    how = say(g.after_name[person])
                    if how == t(SPORT_VERBS[person.sport]):      # "F L dunks ."
                        out[-1].kind = "sport_verb"
                        say(certain(t(".")))
                        continue
                    if how == t(","):                  # "F L , famously , plays basketball"
                        say(g.filler)
                        say(certain(t(",")))
                        answer(person, g.relation_of[say(g.relation_word)], "filler")
                    elif how == "的":                  # Chinese: F L 的 <relation> 是 <answer>
                        relation = g.relation_of[say(g.relation_noun)]
                        say(certain("是"))
                        say(certain(t(person.attribute(relation))), kind=relation, template="of")
                    else:                              # plays / lives / comes right after the name
                        answer(person, g.relation_of[how], "adjacent")
                    end_of_fact(person)
                # after a fact the next sentence starts as usual
        except _Full:
            return out

    def corpus(self, n_streams: int, n_tokens: int, seed: int, lang: str | None = None) -> list[list[Token]]:
        rng = random.Random(seed)
        return [self.stream(n_tokens, rng, lang) for _ in range(n_streams)]

    def sport_of(self, first: str, last: str) -> str | None:
        return self.sport.get((first, last))

    def person(self, first: str, last: str) -> Person | None:
        """The person with these names, in either language (None if no one has them)."""
        for g in self.grammars.values():
            if (first, last) in g.person:
                return g.person[first, last]
        return None


class _Full(Exception):
    pass
