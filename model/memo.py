"""Analyses of a model that do not depend on a prompt, computed once per model in a process.

Several scenes (and every dry run of them) ask the same questions of the same weights: the mean state over a seeded
sample of the language (mean-ablation), every person's last-name states, the causal head scores on the default
prompts, a head census. `per_model` keeps each answer keyed by what the model *is*, not by which Python object holds
it: the digest of its configuration, tokenizer and weights (model_digest). So a second scene that loads the same
checkpoint reuses the answer, another checkpoint never sees it, and a model that is freed cannot hand its entry to a
new one that happens to get the same id().

Answers are shared, so they are made read-only: every NumPy array in them is frozen (writing into one raises), and
each caller gets its own copy of the dicts and lists around the arrays.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import OrderedDict

import numpy as np

ENTRIES = 16        # answers kept per function (least recently used dropped first): a few models, both languages


def model_digest(gpt) -> str:
    """sha256 of the model's configuration, tokenizer, compute precision and weights; computed once per object
    (5 ms for ours; about a second for GPT-2 small's 124M weights)."""
    digest = getattr(gpt, "_digest", None)
    if digest is None:
        h = hashlib.sha256()
        h.update(json.dumps(gpt.config.__dict__, sort_keys=True, default=str).encode())
        h.update(np.dtype(gpt.dtype).str.encode())
        h.update("\x00".join(gpt.tokenizer.words).encode())
        for name in sorted(gpt.params):
            h.update(name.encode())
            h.update(np.ascontiguousarray(gpt.params[name]).tobytes())
        digest = gpt._digest = h.hexdigest()
    return digest


def _key_part(x):
    """An argument as part of a key: a Language by its seed (it is built from the seed alone), anything else as is
    (it must be hashable: a list argument is a mistake here)."""
    from .language import Language
    if isinstance(x, Language):
        return ("Language", x.seed)
    return x


def _frozen(x):
    if isinstance(x, np.ndarray):
        x.setflags(write=False)
    elif isinstance(x, dict):
        for v in x.values():
            _frozen(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _frozen(v)
    return x


def _containers_copied(x):
    """x with its dicts and lists copied and its arrays (read-only) shared."""
    if isinstance(x, dict):
        return {k: _containers_copied(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_containers_copied(v) for v in x]
    return x


def per_model(fn):
    """fn(gpt, *args, **kwargs), remembered per (model_digest(gpt), args, kwargs); see the module's docstring."""
    cache: OrderedDict = OrderedDict()

    @functools.wraps(fn)
    def remembered(gpt, *args, **kwargs):
        key = (model_digest(gpt), tuple(_key_part(a) for a in args),
               tuple(sorted((k, _key_part(v)) for k, v in kwargs.items())))
        if key in cache:
            cache.move_to_end(key)
        else:
            cache[key] = _frozen(fn(gpt, *args, **kwargs))
            while len(cache) > ENTRIES:
                cache.popitem(last=False)
        return _containers_copied(cache[key])

    remembered.cache = cache
    return remembered
