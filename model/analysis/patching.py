"""Interventions on the residual stream: activation patching, causal tracing (ROME-style), mean-ablation.

Every function runs NumpyGPT.trace with its `patch` hook: a (layer, component, position) state is
replaced and the rest of the model re-runs on top of it. Components, per layer:
"attn" (the attention layer's output), "mlp" (the MLP's output), "resid_post" (the stream leaving
the layer); "resid_pre" (the stream entering it) is also allowed.
"""

from __future__ import annotations

import random

import numpy as np

from ..errors import ModelError
from ..memo import per_model
from ..numpy_gpt import NumpyGPT, probabilities

COMPONENTS = ("attn", "mlp", "resid_post")


def state(trace: dict, layer: int, component: str) -> np.ndarray:
    """The (T × d_model) state a patch of `component` at `layer` replaces, as the trace holds it."""
    lay = trace["layers"][layer]
    if component in ("attn", "mlp"):
        return lay[component]["out"]
    if component in ("resid_pre", "resid_post", "resid_mid"):
        return lay[component]
    raise ModelError(f"no component {component!r}: use attn, mlp, resid_pre or resid_post")


def answer_probability(trace: dict, answer_id: int, position: int = -1) -> float:
    return float(probabilities(trace["logits"][position])[answer_id])


def patch_effect(gpt: NumpyGPT, ids: list[int], patch: dict, answer_id: int) -> dict:
    """Activation patching: P(answer next) without and with the patch."""
    before = answer_probability(gpt.trace(ids), answer_id)
    after = answer_probability(gpt.trace(ids, patch=patch), answer_id)
    return {"p_before": before, "p_after": after}


def causal_trace(gpt: NumpyGPT, clean_ids: list[int], corrupt_ids: list[int], answer_id: int,
                 components: tuple[str, ...] = COMPONENTS, positions: list[int] | None = None) -> dict:
    """ROME-style causal tracing (Meng et al. 2022).

    Run the clean prompt and the corrupted one (the same length, the subject swapped or noised), then
    re-run the corrupted prompt once per (layer, component, position) with that one state restored from the
    clean run. restored share = (P_restored − P_corrupt) / (P_clean − P_corrupt), P = P(answer next).
    Returns `share` and `p_restored`, each (layers × components × positions), and the three probabilities.
    """
    if len(clean_ids) != len(corrupt_ids):
        raise ModelError(f"causal tracing needs prompts of one length, got {len(clean_ids)} and {len(corrupt_ids)}")
    clean, corrupt = gpt.trace(clean_ids), gpt.trace(corrupt_ids)
    T = len(clean_ids)
    positions = list(range(T)) if positions is None else list(positions)
    p_clean, p_corrupt = answer_probability(clean, answer_id), answer_probability(corrupt, answer_id)
    restored = np.zeros((gpt.config.n_layer, len(components), len(positions)))
    for layer in range(gpt.config.n_layer):
        for ci, component in enumerate(components):
            clean_state = state(clean, layer, component)
            for pi, position in enumerate(positions):
                run = gpt.trace(corrupt_ids, patch={(layer, component, position): clean_state[position]})
                restored[layer, ci, pi] = answer_probability(run, answer_id)
    gap = p_clean - p_corrupt
    return {"p_clean": p_clean, "p_corrupt": p_corrupt, "p_restored": restored,
            "share": (restored - p_corrupt) / gap if gap != 0 else np.full_like(restored, np.nan),
            "components": list(components), "positions": positions}


def noised_ids_patch(gpt: NumpyGPT, ids: list[int], positions: list[int], scale: float, seed: int) -> dict:
    """A corruption by noise (ROME's original): a patch adding Gaussian noise (std = scale) to the embeddings
    entering layer 0 at `positions`, seeded."""
    rng = np.random.default_rng(seed)
    x = gpt.trace(ids)["embeddings"]
    return {(0, "resid_pre", p): x[p] + rng.normal(0.0, scale, gpt.config.n_embd) for p in positions}


BPE_WINDOW = 16   # tokens per window of a checkpoint of one's own (sample_states)


@per_model
def sample_states(gpt: NumpyGPT, language, n_streams: int, seed: int, lang: str | None = None,
                  context: int | None = None) -> dict:
    """Run a seeded sample of the training language (n_streams fresh windows) and keep, per layer and component,
    every position's state, and every MLP activation. Used for mean-ablation and for neurons' top contexts."""
    context = context or gpt.config.n_positions
    words = {w: i for i, w in enumerate(gpt.tokenizer.words)}
    streams = language.corpus(n_streams, context, seed, lang)
    out = {"streams": [[t.word for t in s] for s in streams], "states": {}, "mlp_act": []}
    if getattr(gpt.tokenizer, "kind", "word") == "bpe":
        # a checkpoint of one's own reads the same seeded text through its own tokenizer; every window is cut to
        # the shortest one's token count, at most BPE_WINDOW tokens (a GPT-2-sized sample stays in memory)
        texts = [(" " if (lang or "en") == "en" else "").join(t.word for t in s) for s in streams]
        encoded = [gpt.tokenizer.encode(t) for t in texts]
        n = min(min(len(e) for e in encoded), context, BPE_WINDOW)
        id_streams = [e[:n] for e in encoded]
        out["streams"] = [gpt.tokenizer.decode(e) for e in id_streams]
    else:
        id_streams = [[words[t.word] for t in s] for s in streams]
    per = {(l, c): [] for l in range(gpt.config.n_layer) for c in ("resid_pre", "attn", "mlp", "resid_post")}
    acts = [[] for _ in range(gpt.config.n_layer)]
    for ids in id_streams:
        trace = gpt.trace(ids)
        for (l, c), rows in per.items():
            rows.append(state(trace, l, c))
        for l in range(gpt.config.n_layer):
            acts[l].append(trace["layers"][l]["mlp"]["act"])
    out["states"] = {k: np.stack(v) for k, v in per.items()}          # (streams, T, d)
    out["mlp_act"] = [np.stack(a) for a in acts]                       # per layer (streams, T, d_mlp)
    return out


MEAN_SAMPLE = {"n_streams": 200, "seed": 7}   # the documented sample for mean-ablation


@per_model
def mean_states(gpt: NumpyGPT, language, n_streams: int = MEAN_SAMPLE["n_streams"],
                seed: int = MEAN_SAMPLE["seed"], lang: str | None = None) -> dict:
    """Per (layer, component): the mean state over every position of a seeded sample of the language
    (the training mixture unless `lang`)."""
    sample = sample_states(gpt, language, n_streams, seed, lang)
    return {k: v.reshape(-1, v.shape[-1]).mean(0) for k, v in sample["states"].items()}


def mean_ablation(gpt: NumpyGPT, ids: list[int], answer_id: int, layer: int, component: str, position: int,
                  means: dict) -> dict:
    """P(answer next) with one (layer, component, position) state replaced by its mean over the sample."""
    if (layer, component) not in means:
        raise ModelError(f"no mean for layer {layer} component {component!r}")
    return patch_effect(gpt, ids, {(layer, component, position): means[layer, component]}, answer_id)


def seeded_choice(items: list, k: int, seed: int) -> list:
    """k items in a seeded random order (all of them if there are at most k)."""
    items = list(items)
    random.Random(seed).shuffle(items)
    return items[:k]
