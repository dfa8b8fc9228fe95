"""Independent checks of the caption rules of near_orthogonal, toy_superposition and superposition_in_gpt (see tests/test_caption_rules.py): each
decides a rule's key again from the manifest's values (or the model), by code that does not call the scene's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import betainc, betaincc


# --- near_orthogonal: the lab's recorded packing run and the room within 89-91 degrees ------------------------------
def share_89_91(snapshot, pairs: int) -> float:
    """The share of pairs in the bins [89, 90) and [90, 91), read from the histogram's counts."""
    counts = snapshot["counts"]
    assert sum(counts) == pairs, "the histogram holds every pair once"
    return (counts[89] + counts[90]) / pairs


def extreme_bins(snapshot) -> tuple[int, int]:
    filled = np.flatnonzero(snapshot["counts"])
    return int(filled[0]), int(filled[-1])


def check_packing_histogram(v, rule, gpt):
    first, last = v["snapshots"][0], v["snapshots"][-1]
    n = v["pack"]["n_vectors"]
    pairs = v["pairs"]
    assert pairs == n * (n - 1) // 2
    for s in (first, last):
        assert s["within_89_91"] == pytest.approx(share_89_91(s, pairs), abs=1e-12)
        lo, hi = extreme_bins(s)
        assert lo == min(math.floor(s["min_deg"]), 179) and hi == min(math.floor(s["max_deg"]), 179), \
            "the closest and the most opposed pair are in the histogram's outermost bins"
    i = rule["inputs"]
    assert (i["first_min_deg"], i["last_min_deg"]) == (first["min_deg"], last["min_deg"])
    assert (i["first_within"], i["last_within"]) == (first["within_89_91"], last["within_89_91"])
    if not last["min_deg"] > first["min_deg"]:
        return "no_gain"
    return "narrows" if share_89_91(last, pairs) - share_89_91(first, pairs) >= 0.01 else "tails"


def welch_levenshtein_band_deg(n: int, d: int) -> float:
    """The least distance from 90 degrees of the worst pair of n unit vectors in d dimensions."""
    welch = (n - d) / (d * (n - 1)) if n > d else 0.0
    levenshtein = (3 * n - d * d - 2 * d) / ((d + 2) * (n - d)) if n > d * (d + 1) / 2 else 0.0
    return math.degrees(math.asin(min(1.0, math.sqrt(max(welch, levenshtein)))))


def random_estimate(dim: int, eps_deg: float) -> float:
    """1 / (2 P(a random pair is outside 90 +- eps)): cos^2 of two random unit vectors in dim dimensions is
    Beta(1/2, (dim - 1)/2)."""
    outside = betaincc(0.5, (dim - 1) / 2, math.sin(math.radians(eps_deg)) ** 2)
    return max(1.0, 1 / (2 * outside))


def check_pair(v, rule, gpt):
    """The chance a random pair in d dimensions is within 90 +- 1 degrees, independently: cos^2 of two random unit
    vectors is Beta(1/2, (d - 1)/2), so the chance is the regularised incomplete beta I_{sin^2 1deg}(1/2, (d-1)/2)."""
    from scipy.special import betainc
    from model.config import GPT3_175B
    p = v["pair"]
    c2 = math.sin(math.radians(1)) ** 2
    exact = [float(betainc(0.5, (d - 1) / 2, c2)) for d in p["dims"]]
    assert p["within"] == pytest.approx(exact, abs=2e-4)
    assert p["dims"] == sorted(p["dims"]) and p["dims"][-1] >= GPT3_175B.n_embd and GPT3_175B.n_embd in p["dims"]
    assert p["gpt3_within"] == pytest.approx(betainc(0.5, (GPT3_175B.n_embd - 1) / 2, c2), abs=2e-4)
    assert p["run_within_at_start"] == v["snapshots"][0]["within_89_91"]
    assert rule["inputs"] == {"dims": p["dims"], "within": p["within"]}
    return "pair_grows" if all(np.diff(exact) > 0) else "pair_mixed"


def check_where(v, rule, gpt):
    from model.config import GPT3_175B
    g, eps = v["band"]["gpt3"], v["band"]["eps_deg"]
    assert g["dim"] == GPT3_175B.n_embd, "GPT-3's width from its config"
    estimate = random_estimate(g["dim"], eps)
    assert g["random_estimate"] == pytest.approx(estimate, rel=1e-3)
    reach = v["band"]["random_reaches"]
    assert random_estimate(reach["dim"] - 1, eps) < reach["count"] <= random_estimate(reach["dim"], eps) * (1 + 1e-3), \
        "the first width where random vectors give the count"
    assert rule["inputs"] == {"random_estimate": g["random_estimate"], "dim": g["dim"]}
    return "where_slow" if estimate < g["dim"] else "where_fast"


def check_room(v, rule, gpt):
    """The wide band (85-95 degrees): the random-vector estimate at GPT-3's width and along the chart, from the Beta
    distribution of cos^2, independently of the lab's integral."""
    from model.config import GPT3_175B
    w = v["wide"]
    assert w["deg"] == 5 and w["gpt3_dim"] == GPT3_175B.n_embd
    estimate = random_estimate(w["gpt3_dim"], 5)
    assert w["gpt3_random_estimate"] == pytest.approx(estimate, rel=1e-3)
    assert w["random_estimate"] == pytest.approx([random_estimate(d, 5) for d in w["dims"]], rel=1e-3)
    assert w["random_estimate"][-1] > w["chart_top"] >= max(w["random_estimate"][:-1]), \
        "the curve is drawn up to the first width past the chart's top"
    assert rule["inputs"] == {"random_estimate": w["gpt3_random_estimate"], "dim": w["gpt3_dim"]}
    return "room_explodes" if estimate > w["gpt3_dim"] else "room_small"


# --- toy_superposition: W (2 x 5) at each sparsity ------------------------------------------------------------------
REPRESENTED = 0.5


def toy_geometry(W) -> dict:
    """Norms, D_i and angles of W's columns, and the polar angles in the plane."""
    W = np.asarray(W, np.float64)
    norms = np.linalg.norm(W, axis=0)
    unit = W / np.maximum(norms, 1e-12)
    D = norms ** 2 / np.maximum(((unit.T @ W) ** 2).sum(1), 1e-12)
    angles = np.degrees(np.arccos(np.clip(unit.T @ unit, -1, 1)))
    polar = np.degrees(np.arctan2(W[1], W[0])) % 360
    return {"norms": norms, "D": D, "angles": angles, "polar": polar}


def toy_kind(run) -> tuple[str, list[int], np.ndarray]:
    g = toy_geometry(run["W"])
    assert np.allclose(g["norms"], run["norms"], atol=1e-5) and np.allclose(g["D"], run["dims_per_feature"], atol=1e-4)
    rep = [i for i in range(len(g["norms"])) if g["norms"][i] > REPRESENTED]
    polar = np.sort(g["polar"][rep])
    gaps = np.diff(np.append(polar, polar[0] + 360)) if len(rep) > 1 else np.zeros(0)
    a, D = g["angles"], g["D"][rep]
    if len(rep) == 2 and abs(a[rep[0], rep[1]] - 90) <= 5:
        kind = "orthogonal"
    elif len(rep) == 5 and np.all(np.abs(gaps - 72) <= 5) and np.all(np.abs(D - 0.4) <= 0.05):
        kind = "pentagon"
    elif len(rep) in (4, 6) and np.all(np.abs(gaps - 360 / len(rep)) <= 5) and \
            all(abs(max(a[i, j] for j in rep if j != i) - 180) <= 5 for i in rep):
        kind = "antipodal"
    else:
        kind = "other"
    return kind, rep, gaps


def toy_loss(run) -> float:
    """The importance-weighted error of x' = ReLU(W^T W x + b) on the run's evaluation batch (drawn by the lab's
    sampler with its documented seed)."""
    import torch
    from model.superposition import sample_features
    x = sample_features(65536, run["n_features"], run["sparsity"],
                        torch.Generator().manual_seed(run["seed"] + 1)).double().numpy()
    W, b = np.asarray(run["W"], np.float64), np.asarray(run["b"], np.float64)
    out = np.maximum(x @ W.T @ W + b, 0)
    return float((np.asarray(run["importance"]) * (x - out) ** 2).sum(1).mean())


def check_toy_dims(v, rule, gpt):
    runs = v["runs"]
    sparsities = [r["sparsity"] for r in runs]
    assert sparsities == sorted(sparsities) and len(set(sparsities)) == len(sparsities), "runs by rising sparsity"
    losses = [r["loss"] for r in runs]
    for r in runs:
        assert r["loss"] == min(r["instance_losses"]) == r["instance_losses"][r["instance"]], "the kept copy is the best"
        assert r["loss"] == pytest.approx(toy_loss(r), rel=1e-4)
    assert rule["inputs"] == {"sparsities": sparsities, "losses": losses}
    return "dims_falls" if all(np.diff(losses) < 0) else "dims_mixed"


def check_toy_geometry(v, rule, gpt):
    runs = v["runs"]
    assert runs[-1]["sparsity"] == max(r["sparsity"] for r in runs), "the last run is the sparsest"
    kinds = [toy_kind(r) for r in runs]
    assert rule["inputs"]["kinds"] == [k for k, _, _ in kinds] == [r["geometry"]["kind"] for r in runs], \
        "every panel's geometry label"
    kind, rep, gaps = kinds[-1]
    assert rule["inputs"]["gaps_deg"] == pytest.approx(gaps.tolist(), abs=1e-3)
    dense_rep = kinds[0][1]
    assert rule["inputs"]["dense_represented"] == dense_rep
    if kind == "pentagon":       # the caption: "Dense: only the top {k} get a direction"
        assert dense_rep == list(range(len(dense_rep))), "the dense run's directions go to the most important features"
        return "pentagon_pairs" if "antipodal" in [k for k, _, _ in kinds[1:-1]] else "pentagon"
    return "no_pentagon"


def check_toy_define(v, rule, gpt):
    """The definition is drawn on the sparsest run: its neighbour gaps in the caption when it is a pentagon."""
    runs = v["runs"]
    kind, rep, gaps = toy_kind(runs[-1])
    assert v["define"]["run"] == len(runs) - 1 and v["define"]["sparsity"] == max(r["sparsity"] for r in runs)
    assert rule["inputs"]["kind"] == kind and rule["inputs"]["represented"] == rep
    assert rule["inputs"]["gaps_deg"] == pytest.approx(gaps.tolist(), abs=1e-3)
    a = toy_geometry(runs[-1]["W"])["angles"]
    assert v["define"]["dropped"] == [j for j in range(1, 5) if a[0, j] < 90 and j in rep], \
        "a dashed drop from every represented feature less than 90 degrees from feature 1"
    return "define_pentagon" if kind == "pentagon" else "define_plain"


# --- superposition_in_gpt: the model's embeddings, a neuron over the sample, a fact per neuron ---------------------
def check_embeddings(v, rule, gpt):
    E = np.asarray(gpt.W_E, np.float64)
    n, d = E.shape
    cos = (E @ E.T) / np.outer(np.linalg.norm(E, axis=1), np.linalg.norm(E, axis=1))
    angles = np.degrees(np.arccos(np.clip(cos[np.triu_indices(n, 1)], -1, 1)))
    within = float(np.mean((angles >= 85) & (angles < 95)))
    e = v["embeddings"]
    assert (e["words"], e["dim"], e["pairs"]) == (n, d, n * (n - 1) // 2)
    assert e["within_85_95"] == pytest.approx(within, abs=1e-12)
    assert e["min_deg"] == pytest.approx(angles.min(), abs=1e-9)
    random = betainc(0.5, (d - 1) / 2, math.sin(math.radians(5)) ** 2)    # P(|cos| < sin 5 degrees)
    assert e["random_within_85_95"] == pytest.approx(random, abs=1e-4)
    k = v["packed"]
    assert (k["n"], k["dim"]) == (n, d) and sum(k["counts"]) == n * (n - 1) // 2
    assert k["rms_cos"] == pytest.approx(math.sqrt((n - d) / (d * (n - 1))), rel=1e-3), "packed to Welch's floor"
    assert k["within_85_95"] == pytest.approx(sum(k["counts"][85:95]) / sum(k["counts"]), abs=1e-12)
    assert rule["inputs"] == {"within": e["within_85_95"], "random": e["random_within_85_95"],
                              "packed": k["within_85_95"]}
    low, high = min(random, k["within_85_95"]), max(random, k["within_85_95"])
    return "less_random" if within < low - 0.02 else "more_random" if within > high + 0.02 else "like_random"


def check_gpt_summary(v, rule, gpt):
    n, d = np.asarray(gpt.W_E).shape
    e = v["embeddings"]
    top = v["fact"]["top"][0]["share"]
    assert (e["words"], e["dim"]) == (n, d)
    assert rule["inputs"] == {"words": n, "dim": d, "polysemantic": len(v["neuron"]["topics"]) >= 3, "top_share": top}
    if n > d and len(v["neuron"]["topics"]) >= 3 and top < 0.5:
        return "summary_reading"
    return "summary" if n > d else "summary_fewer"


def word_topic(word: str) -> str:
    from model.analysis.superposition import FUNCTION, TOPICS
    from model.language import ZH
    names = {topic: set(words) | {ZH.get(w) for w in words} for topic, words in TOPICS.items()}
    return next((topic for topic, words in names.items() if word in words), FUNCTION)


def check_neuron(v, rule, gpt):
    from model.analysis.patching import MEAN_SAMPLE
    from model.analysis.superposition import POLYSEMANTIC_TOPICS, TOP_CONTEXTS
    from model.language import Language
    p, lang = v["neuron"], v["prompt_lang"]
    assert v["sample"] == {**MEAN_SAMPLE, "lang": lang}
    streams = Language().corpus(MEAN_SAMPLE["n_streams"], gpt.config.n_positions, MEAN_SAMPLE["seed"], lang)
    contexts = p["contexts"]
    assert len(contexts) == TOP_CONTEXTS and len({tuple(c["context"]) for c in contexts}) == len(contexts)
    acts = [c["activation"] for c in contexts]
    assert acts == sorted(acts, reverse=True)
    for c in contexts:                      # each context's activation, from the model on its whole stream
        words = [t.word for t in streams[c["stream"]]]
        assert words[c["position"]] == c["token"] and words[:c["position"] + 1][-len(c["context"]):] == c["context"]
        act = gpt.trace([gpt.tokenizer.vocab[w] for w in words])["layers"][p["layer"]]["mlp"]["act"]
        assert act[c["position"], p["neuron"]] == pytest.approx(c["activation"], abs=1e-9)
        assert c["topic"] == word_topic(c["token"])
    topics = sorted({word_topic(c["token"]) for c in contexts})
    assert rule["inputs"] == {"topics": topics, "layer": p["layer"], "neuron": p["neuron"]}
    return "polysemantic" if len(topics) >= POLYSEMANTIC_TOPICS else "monosemantic"


def check_spread(v, rule, gpt):
    from model.language import SPORTS, Language, make_people
    lang, (first, last) = v["prompt_lang"], v["person"]
    g = Language().grammar(lang)
    [person] = [q for q in make_people() if (g.t(q.first), g.t(q.last)) == (first, last)]
    f = v["fact"]
    assert f["answer"] == g.t(person.sport)
    words = [first, last, g.t("plays")]
    trace = gpt.trace(gpt.encode((" " if lang == "en" else "").join(words)))
    answer = gpt.tokenizer.vocab[g.t(person.sport)]
    others = [gpt.tokenizer.vocab[g.t(s)] for s in SPORTS if g.t(s) != g.t(person.sport)]
    direction = gpt.W_E[answer] - gpt.W_E[others].mean(0)
    stream = np.asarray(trace["layers"][-1]["resid_post"][-1], np.float64)
    scale = np.sqrt(stream.var() + gpt.config.layer_norm_epsilon)       # the final LayerNorm of this run, frozen
    push = []
    for l, layer in enumerate(trace["layers"]):
        W_out = gpt.p(f"h.{l}.mlp.c_proj.weight")
        through = (W_out - W_out.mean(1, keepdims=True)) / scale * gpt.p("ln_f.weight") @ direction
        push += [(float(a * t), l, i) for i, (a, t) in enumerate(zip(layer["mlp"]["act"][-1], through))]
    positive = sorted((x for x in push if x[0] > 0), reverse=True)
    total = sum(x[0] for x in positive)
    share = positive[0][0] / total
    assert f["positive_neurons"] == len(positive) and f["neurons"] == len(push)
    assert (f["top"][0]["layer"], f["top"][0]["neuron"]) == positive[0][1:]
    assert f["top"][0]["share"] == pytest.approx(share, abs=1e-6)
    cum = np.cumsum([x[0] for x in positive]) / total
    assert (f["for_half"], f["for_90"]) == (int((cum < 0.5).sum()) + 1, int((cum < 0.9).sum()) + 1)
    assert rule["inputs"] == {"top_share": f["top"][0]["share"], "for_half": f["for_half"], "for_90": f["for_90"]}
    return "spread" if share < 0.5 else "concentrated"


def jl_k(n: int, eps: float) -> int:
    """Dasgupta and Gupta's dimension: the least integer k >= 4 ln n / (eps^2/2 - eps^3/3)."""
    bound = 4 * math.log(n) / (eps ** 2 / 2 - eps ** 3 / 3)
    k = math.floor(bound)
    return k if k >= bound - 1e-9 else k + 1


def check_lemma(v, rule, gpt):
    j = v["jl"]
    n, rows = j["n_points"], j["rows"]
    assert n == v["pack"]["n_vectors"], "the lemma's N is the packing run's N"
    assert j["max_dim"] == v["band"]["gpt3"]["dim"], "eps is halved while the lemma's k fits GPT-3's width"
    eps = [0.5 / 2 ** i for i in range(len(rows))]
    assert [r["eps"] for r in rows] == eps, "eps: 1/2, halved again and again"
    assert all(jl_k(n, e) <= j["max_dim"] for e in eps) and jl_k(n, eps[-1] / 2) > j["max_dim"], \
        "halved while the lemma's k fits the width"
    for r in rows:
        assert r["dim"] == jl_k(n, r["eps"]) == r["projection"]["dim"]
        p = r["projection"]
        assert p["pairs"] == n * (n - 1) // 2 and p["worst_distortion"] == max(1 - p["min_ratio"], p["max_ratio"] - 1)
    worst = [r["projection"]["worst_distortion"] for r in rows]
    assert rule["inputs"] == {"eps": eps, "worst": worst}
    return "lemma_near" if all(w <= 1.05 * e for w, e in zip(worst, eps)) else "lemma_far"


def check_angle(v, rule, gpt):
    """The closing caption's band, 85-95 degrees, as the lemma's distortion: lengths distorted too, a perpendicular
    pair's |cos| can reach 2 eps / (1 - eps), so the band needs 2 eps / (1 - eps) = sin 5 degrees; the lemma's k for
    the chapter's N at that eps, against GPT-3's width from its config."""
    from model.config import GPT3_175B
    n = v["jl"]["n_points"]
    s = math.sin(math.radians(5))
    eps = s / (2 + s)
    assert 2 * eps / (1 - eps) == pytest.approx(s, rel=1e-12)
    assert rule["inputs"]["eps"] == pytest.approx(eps, rel=1e-12)
    assert rule["inputs"]["dim"] == jl_k(n, eps) and rule["inputs"]["gpt3_dim"] == GPT3_175B.n_embd
    return "angle_beyond" if jl_k(n, eps) > GPT3_175B.n_embd else "angle_within"


def toy_eval(run):
    """The run's evaluation batch (the lab's sampler, its documented seed), the model's outputs on it (numpy, float64)
    and each input's importance-weighted error."""
    import torch
    from model.superposition import sample_features
    x = sample_features(65536, run["n_features"], run["sparsity"],
                        torch.Generator().manual_seed(run["seed"] + 1)).double().numpy()
    W, b = np.asarray(run["W"], np.float64), np.asarray(run["b"], np.float64)
    out = np.maximum(x @ W.T @ W + b, 0)
    return x, out, (np.asarray(run["importance"]) * (x - out) ** 2).sum(1), W


def check_toy_collide(v, rule, gpt):
    run = v["runs"][-1]
    x, out, _, W = toy_eval(run)
    on = (x > 0).sum(1)
    unit = W / np.linalg.norm(W, axis=0)
    two = [i for i in np.flatnonzero(on == 2)]
    near = [i for i in two if unit[:, np.flatnonzero(x[i])[0]] @ unit[:, np.flatnonzero(x[i])[1]] > 0]
    pick = (near or two)[0]
    f = np.flatnonzero(x[pick]).tolist()
    ex = v["collisions"]["example"]
    assert (ex["index"], ex["features"]) == (int(pick), f), "the first input with two neighbours on"
    assert ex["out"] == pytest.approx(out[pick].tolist(), abs=1e-5)
    assert rule["inputs"] == {"features": f, "x": [ex["x"][i] for i in f], "out": [ex["out"][i] for i in f]}
    return "collide_over" if all(out[pick, i] > x[pick, i] for i in f) else "collide_mixed"


def check_toy_rare(v, rule, gpt):
    run = v["runs"][-1]
    x, _, per, _ = toy_eval(run)
    on = (x > 0).sum(1)
    c = v["collisions"]
    assert c["inputs"] == {"0": int((on == 0).sum()), "1": int((on == 1).sum()), "2+": int((on >= 2).sum())}
    assert c["loss"] == pytest.approx(per.mean(), rel=1e-4) == pytest.approx(run["loss"], rel=1e-4)
    assert c["loss_share_2plus"] == pytest.approx(per[on >= 2].sum() / per.sum(), rel=1e-4)
    keep = (np.asarray(run["importance"])[2:] * x[:, 2:] ** 2).sum(1).mean()   # features 1, 2 exact, 3-5 lost
    assert c["keep_two_loss"] == pytest.approx(keep, rel=1e-5)
    assert rule["inputs"]["loss"] == c["loss"] and rule["inputs"]["keep_two_loss"] == c["keep_two_loss"]
    return "rare_pays" if per.mean() < keep else "rare_costs"


# scene -> rule name -> (every key the rule may choose, check(values, rule, gpt) -> the key)
SUPERPOSITION_CHECKS: dict = {
    "near_orthogonal": {"histogram": ({"no_gain", "narrows", "tails"}, check_packing_histogram),
                        "pair": ({"pair_grows", "pair_mixed"}, check_pair),
                        "where": ({"where_slow", "where_fast"}, check_where),
                        "room": ({"room_explodes", "room_small"}, check_room),
                        "lemma": ({"lemma_near", "lemma_far"}, check_lemma),
                        "angle": ({"angle_beyond", "angle_within"}, check_angle)},
    "toy_superposition": {"define": ({"define_pentagon", "define_plain"}, check_toy_define),
                          "dims": ({"dims_falls", "dims_mixed"}, check_toy_dims),
                          "geometry": ({"pentagon_pairs", "pentagon", "no_pentagon"}, check_toy_geometry),
                          "collide": ({"collide_over", "collide_mixed"}, check_toy_collide),
                          "rare": ({"rare_pays", "rare_costs"}, check_toy_rare)},
    "superposition_in_gpt": {"embeddings": ({"like_random", "less_random", "more_random"}, check_embeddings),
                             "neuron": ({"polysemantic", "monosemantic"}, check_neuron),
                             "spread": ({"spread", "concentrated"}, check_spread),
                             "summary": ({"summary_reading", "summary", "summary_fewer"}, check_gpt_summary)},
}
