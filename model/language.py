"""The training language: a tiny, fully known English that a small GPT must *learn*.

Three kinds of sentence, each aimed at one idea in the lecture:

* facts that need two tokens together:  "michael jordan plays basketball ."
  (a first name alone, or a last name alone, does not decide the sport);
* long-range agreement that needs attention:
  "a fluffy blue fox roamed the misty forest . the fox was blue ."
  (the last word can only come from looking back);
* genuinely open choices (verb, place adjective, place), drawn from skewed
  distributions so that temperature visibly matters.

The generator knows the exact distribution it draws every token from, so the
entropy of each next token given its past is known: the floor no model can beat.
Every stream starts fresh, so a training window holds its whole past.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from dataclasses import dataclass

SEED = 20240601

FIRST_NAMES = [
    "michael", "serena", "lionel", "roger", "tiger", "usain", "simone", "tom",
    "lebron", "rafael", "wayne", "venus", "diego", "maria", "kobe", "naomi",
]
LAST_NAMES = [
    "jordan", "williams", "messi", "federer", "woods", "bolt", "biles", "brady",
    "james", "nadal", "gretzky", "sharapova", "maradona", "bryant", "osaka", "ruth",
]
SPORTS = ["basketball", "tennis", "soccer", "golf", "hockey", "baseball", "swimming", "boxing"]
N_PEOPLE = 40

TEXTURES = ["fluffy", "scaly", "smooth", "spiky", "furry", "slimy", "feathered", "shaggy", "silky", "rough"]
COLOURS = ["blue", "red", "green", "golden", "purple", "white", "black", "orange", "silver", "pink"]
CREATURES = [
    "creature", "dragon", "fox", "owl", "cat", "wolf", "beetle", "fish",
    "bear", "rabbit", "snake", "eagle", "frog", "horse", "mouse", "deer",
]
VERBS = ["roamed", "crossed", "explored", "guarded", "left", "watched", "searched", "visited",
         "found", "circled", "climbed", "loved"]
PLACE_ADJECTIVES = ["verdant", "misty", "quiet", "dark", "ancient", "frozen", "sunny", "distant",
                    "hidden", "wild", "silent", "endless"]
PLACES = ["forest", "river", "valley", "mountain", "desert", "meadow", "cave", "lake",
          "island", "swamp", "canyon", "village", "garden", "castle", "glacier", "jungle"]

FUNCTION_WORDS = ["a", "the", ".", "was", "felt", "plays"]
EOS = "<|endoftext|>"

P_STORY = 0.5          # otherwise a fact sentence
P_RECALL_COLOUR = 0.6  # "the fox was blue" ; otherwise "the fox felt fluffy"


def vocabulary() -> list[str]:
    """Every word of the language, in a fixed order (this is the token-id order)."""
    words = [EOS] + FUNCTION_WORDS + FIRST_NAMES + LAST_NAMES + SPORTS + TEXTURES + COLOURS \
        + CREATURES + VERBS + PLACE_ADJECTIVES + PLACES
    assert len(words) == len(set(words)), "a word appears in two word classes"
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


def make_people(seed: int = SEED) -> list[Person]:
    """40 (first, last) -> sport facts in which neither name alone decides the sport.

    Every first name and every last name is shared by 2-3 people, who play at
    least two different sports. Michael Jordan plays basketball, as in the lecture.
    """
    rng = random.Random(seed)
    while True:
        firsts = (FIRST_NAMES * 3)[:N_PEOPLE]
        lasts = (LAST_NAMES * 3)[:N_PEOPLE]
        rng.shuffle(lasts)
        pairs = list(zip(firsts, lasts))
        if len(set(pairs)) < N_PEOPLE:
            continue
        sports = [rng.choice(SPORTS) for _ in pairs]
        people = [Person(f, l, s) for (f, l), s in zip(pairs, sports)]
        if ("michael", "jordan") in pairs:
            people = [Person(p.first, p.last, "basketball") if (p.first, p.last) == ("michael", "jordan") else p
                      for p in people]
        else:
            continue
        if _neither_name_decides(people):
            return people


def _neither_name_decides(people: list[Person]) -> bool:
    for attr in ("first", "last"):
        groups: dict[str, set[str]] = {}
        for p in people:
            groups.setdefault(getattr(p, attr), set()).add(p.sport)
        if any(len(sports) < 2 for sports in groups.values()):
            return False
    return True


class Dist:
    """A next-word distribution: words, probabilities, and its entropy (nats)."""

    def __init__(self, probs: dict[str, float]):
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


@dataclass
class Token:
    """One emitted word, the distribution it was drawn from, and what it tests."""
    word: str
    entropy: float          # nats: H(next word | everything before it)
    logp: float             # log-probability the generator gave this very word
    kind: str = ""          # "sport" (a fact's answer) or "recall" (a long-range adjective)


class Language:
    """The generator. All distributions are built once; a stream is a walk through the grammar."""

    def __init__(self, seed: int = SEED):
        self.seed = seed
        self.people = make_people(seed)
        rng = random.Random(seed + 1)
        self.place_given_creature = {}
        for creature in CREATURES:  # each creature has its own favourite places
            order = PLACES[:]
            rng.shuffle(order)
            self.place_given_creature[creature] = Dist(zipf(order, 1.2))
        start = {"a": P_STORY}
        for p in self.people:
            start[p.first] = start.get(p.first, 0.0) + (1 - P_STORY) / len(self.people)
        self.sentence_start = Dist(start)
        self.last_given_first = {f: Dist(uniform(p.last for p in self.people if p.first == f))
                                 for f in {p.first for p in self.people}}
        self.sport = {(p.first, p.last): p.sport for p in self.people}
        self.texture, self.colour, self.creature = Dist(uniform(TEXTURES)), Dist(uniform(COLOURS)), Dist(uniform(CREATURES))
        self.verb, self.place_adjective = Dist(zipf(VERBS)), Dist(zipf(PLACE_ADJECTIVES, 0.8))
        self.recall = Dist({"was": P_RECALL_COLOUR, "felt": 1 - P_RECALL_COLOUR})

    # --- the grammar, one next-word distribution at a time -------------------
    def stream(self, n_tokens: int, rng: random.Random) -> list[Token]:
        """A fresh stream of exactly n_tokens words (the last sentence may be cut)."""
        out: list[Token] = []

        def say(dist: Dist, kind: str = "") -> str:
            word = dist.sample(rng)
            out.append(Token(word, dist.entropy, dist.logp[word], kind))
            if len(out) >= n_tokens:
                raise _Full
            return word

        try:
            while True:
                first = say(self.sentence_start)
                if first == "a":
                    texture = say(self.texture)
                    colour = say(self.colour)
                    creature = say(self.creature)
                    say(self.verb)
                    say(certain("the"))
                    say(self.place_adjective)
                    say(self.place_given_creature[creature])
                    say(certain("."))
                    say(certain("the"))
                    say(certain(creature))
                    if say(self.recall) == "was":
                        say(certain(colour), kind="recall")
                    else:
                        say(certain(texture), kind="recall")
                    say(certain("."))
                else:
                    last = say(self.last_given_first[first])
                    say(certain("plays"))
                    say(certain(self.sport[first, last]), kind="sport")
                    say(certain("."))
        except _Full:
            return out

    def corpus(self, n_streams: int, n_tokens: int, seed: int) -> list[list[Token]]:
        rng = random.Random(seed)
        return [self.stream(n_tokens, rng) for _ in range(n_streams)]

    def sport_of(self, first: str, last: str) -> str | None:
        return self.sport.get((first, last))


class _Full(Exception):
    pass
