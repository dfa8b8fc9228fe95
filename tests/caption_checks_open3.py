"""Independent checks of the caption rules of softmax_temperature and embedding_space (see
tests/test_caption_rules.py): each decides a rule's key again from the manifest's values (or the model), by code that
does not call the scene's. The thresholds and rules are stated here again, not imported."""

from __future__ import annotations

import numpy as np

from model import language as model_language


def softmax_row(z) -> np.ndarray:
    z = np.asarray(z, np.float64)
    e = np.exp(z - z.max())
    return e / e.sum()


# --- softmax_temperature -----------------------------------------------------------------------------------------
def check_sweep(v, rule, gpt):
    """A line of the one-beat sweep: said of the hottest stop above 1 (sweep hot), the coldest below 1 (sweep cold),
    or of T = 1 where every stop is 1 (sweep); its key from the stop's probabilities against T = 1's."""
    t = rule["inputs"]["T"]
    stops = [e["T"] for e in v["temperatures"][1:]]          # the first entry is T = 1, where temperature is introduced
    side = {"sweep hot": [s for s in stops if s > 1], "sweep cold": [s for s in stops if s < 1]}
    name = next(n for n, r in v["caption_rules"].items() if r is rule)
    if name == "sweep":
        assert t == 1 and all(s == 1 for s in stops)
    else:
        assert t == (max if name == "sweep hot" else min)(side[name]), "said of the side's furthest stop"
    [entry] = {e["T"]: e for e in v["temperatures"] if e["T"] == t}.values()
    top_at_t, top_at_1 = entry["probabilities"][0], v["softmax_steps"]["probabilities"][0]
    logits = np.asarray(gpt.trace(v["prompt"])["logits"][-1], np.float64)
    assert v["candidates"][0]["logit"] == logits.max(), "the first bar is the largest logit"
    tied = int((logits == logits.max()).sum())
    if t == 0:
        assert sorted(entry["argmax"]) == sorted(gpt.tokenizer.words[i] for i in np.flatnonzero(logits == logits.max()))
        return "zero" if tied == 1 else "zero_tie"
    if t == 1:
        return "neutral"
    if t > 1 and top_at_t < top_at_1:
        return "hotter"
    if t < 1 and top_at_t > top_at_1:
        return "colder" if tied == 1 else "colder_tie"
    return "unchanged"


def check_write(v, rule, gpt):
    """The texts written at a low, a medium and a high T, drawn again here from the model's logits with the seed's
    own generator (one u per step, the words most probable first); then, for our model, the words of each text that
    belong to the other language than the prompt's (model.language's vocabularies; CJK in the prompt: Chinese),
    else the different words of each."""
    w = v["write"]
    assert [s["T"] for s in w["samples"]] == sorted(s["T"] for s in w["samples"]), "lowest T first"
    for s in w["samples"]:
        rng, ids, written = np.random.default_rng(w["seed"]), list(w["prompt_ids"]), []
        for _ in range(w["steps"]):
            p = softmax_row(np.asarray(gpt.trace(ids)["logits"][-1], np.float64) / s["T"])
            ranked = sorted(range(len(p)), key=lambda i: (-p[i], i))
            edges = np.cumsum([p[i] for i in ranked])
            token = ranked[min(int(np.searchsorted(edges, rng.random() * edges[-1], side="right")), len(p) - 1)]
            written.append(token)
            ids.append(token)
        assert written == s["generated_ids"], f"the text at T = {s['T']} is the seed's draw"
        assert s["distinct"] == len(set(written))
    if getattr(gpt.tokenizer, "kind", "word") == "bpe":
        assert "other_lang" not in w
        first, last = w["samples"][0]["distinct"], w["samples"][-1]["distinct"]
        return "write_wanders" if first < last else "write_alike"
    cjk = any("\u2e80" <= ch <= "\u9fff" or "\u3000" <= ch <= "\u303f" for t in v["tokens"] for ch in t)
    other = "en" if cjk else "zh"
    assert w["other_lang"] == other
    theirs = set(model_language.vocabulary_of(other))
    counts = [sum(gpt.tokenizer.words[i] in theirs for i in s["generated_ids"]) for s in w["samples"]]
    assert counts == [s["other_words"] for s in w["samples"]]
    lo, mid, hi = counts
    if lo == 0 and mid == 0 and hi > 0:
        return "write_mixes"
    return "write_mixes_more" if lo < hi else "write_alike_mix"


# --- token_embedding ---------------------------------------------------------------------------------------------
def check_vectors(v, rule, gpt):
    """The vectors beat frames a token's two strips when a token stands at two shown positions: the first token met a
    second time reading from the left, at its first two positions; the strips are the token's own embedding row."""
    ids = [v["token_ids"][p] for p in v["positions_shown"]]
    assert v["strips"]["token_ids"] == ids
    again = next((i for n, i in enumerate(ids) if i in ids[:n]), None)
    if again is None:
        assert rule["inputs"]["repeated"] == []
        return "vectors"
    first_two = [p for p in v["positions_shown"] if v["token_ids"][p] == again][:2]
    assert rule["inputs"]["repeated"] == first_two
    return "vectors_repeat"


SWEEP_KEYS = {"zero", "zero_tie", "neutral", "hotter", "colder", "colder_tie", "unchanged"}
WRITE_KEYS = {"write_wanders", "write_alike", "write_mixes", "write_mixes_more", "write_alike_mix"}

OPEN3_CHECKS = {
    "softmax_temperature": {"sweep*": (SWEEP_KEYS, check_sweep), "write": (WRITE_KEYS, check_write)},
    "token_embedding": {"vectors": ({"vectors", "vectors_repeat"}, check_vectors)},
}
