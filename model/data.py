"""Token-id batches from the training language, with the entropy floor and task labels."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .language import Language, vocabulary

TRAIN_SEED = 1
VAL_SEED = 2


@dataclass
class Split:
    ids: np.ndarray       # (n, T + 1) token ids; inputs are [:, :-1], targets [:, 1:]
    entropy: np.ndarray   # (n, T) H(target | its past) under the generator, nats
    logp: np.ndarray      # (n, T) log-probability the generator gave each target
    kind: np.ndarray      # (n, T) what each target tests: "" / "sport" / "city" / ... / "recall" (Token.kind)
    template: np.ndarray  # (n, T) how a fact's answer was asked (Token.template), "" elsewhere
    lang: np.ndarray      # (n,) each stream's language, "en" or "zh"

    @property
    def entropy_floor(self) -> float:
        return float(self.entropy.mean())


def make_split(n_streams: int, context: int, seed: int, language: Language | None = None,
               lang: str | None = None) -> Split:
    """n_streams windows of context + 1 words; lang None is the training mixture, "en"/"zh" one language."""
    language = language or Language()
    index = {w: i for i, w in enumerate(vocabulary())}
    streams = language.corpus(n_streams, context + 1, seed, lang)
    ids = np.array([[index[t.word] for t in s] for s in streams], dtype=np.int64)
    # the first word of a stream has no past to predict it from: targets start at word 1
    entropy = np.array([[t.entropy for t in s[1:]] for s in streams])
    logp = np.array([[t.logp for t in s[1:]] for s in streams])
    kind = np.array([[t.kind for t in s[1:]] for s in streams])
    template = np.array([[t.template for t in s[1:]] for s in streams])
    langs = np.array([s[0].lang for s in streams])
    return Split(ids, entropy, logp, kind, template, langs)
