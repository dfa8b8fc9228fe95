"""Independent checks of the caption rules of mlp_fact and parameters (see tests/test_caption_rules.py): each
decides a rule's key again from the manifest's values (or the model), by code that does not call the scene's."""

from __future__ import annotations

import numpy as np
import pytest

from model import GPT3_175B
from model import language as model_language
from model.analysis.patching import MEAN_SAMPLE

from scene_checks import parameter_counts

_CACHE: dict = {}       # per model object: the people's last-name states and the sample's mean MLP outputs


def softmax(z) -> np.ndarray:
    z = np.asarray(z, np.float64)
    e = np.exp(z - z.max())
    return e / e.sum()


def language() -> model_language.Language:
    if "language" not in _CACHE:         # not setdefault: its argument, a whole Language, would be built every call
        _CACHE["language"] = model_language.Language()
    return _CACHE["language"]


# --- mlp_fact: the person, the tracing grid, the sport directions, the means -------------------------------------
def fact_person(v, gpt):
    """The person the prompt names (checked against the prompt's own tokens) and the prompt language's grammar."""
    tokens = list(gpt.trace(v["prompt"])["tokens"])
    assert list(v["tokens"]) == tokens, "the manifest's tokens are the prompt's"
    g = language().grammar(v["prompt_lang"])
    i = v["first_index"]
    assert v["last_index"] == i + 1 and list(v["person"]) == tokens[i:i + 2]
    assert tuple(tokens[i:i + 2]) in g.person, "a first name then a last name of the language"
    assert not any((a, b) in g.person for a, b in zip(tokens[:i], tokens[1:i + 1])), "the first person named"
    person = g.person[tuple(tokens[i:i + 2])]
    assert v["answer"] == g.t(person.sport) and v["answer_id"] == gpt.tokenizer.vocab[v["answer"]]
    return person, g, tokens


def with_names(gpt, tokens, first_index, names) -> list[int]:
    words = list(tokens)
    words[first_index:first_index + 2] = names
    return [gpt.tokenizer.vocab[w] for w in words]


def p_next(gpt, ids, patch=None) -> np.ndarray:
    return softmax(gpt.trace(ids, patch=patch)["logits"][-1])


def lookup_point(v) -> tuple[int, int]:
    """The MLP cell of the tracing grid with the largest restored share: layers in order, the first on a tie."""
    ct = v["causal_trace"]
    grid = np.asarray(ct["share"], np.float64)
    mlp_rows = [r for r, (_, c) in enumerate(ct["rows"]) if c == "mlp"]
    assert [ct["rows"][r][0] for r in mlp_rows] == sorted(ct["rows"][r][0] for r in mlp_rows)
    best = max(((grid[r, t], -k, -t) for k, r in enumerate(mlp_rows) for t in range(grid.shape[1])))
    layer, position = ct["rows"][mlp_rows[-best[1]]][0], -best[2]
    assert (v["lookup"]["layer"], v["lookup"]["position"]) == (layer, position), "the lookup is the largest MLP cell"
    return layer, position


def unit_sport_directions(gpt, lang: str, layer: int, held_out=None) -> dict:
    """Per sport: mean resid_post at the last name of "first last" over its people minus over everyone else, as a
    unit vector (the people's states traced here, once per model and language); without the person `held_out`."""
    key = ("people", id(gpt), lang)
    if key not in _CACHE:
        g = language().grammar(lang)
        _CACHE[key] = np.array([[lay["resid_post"][-1] for lay in gpt.trace(f"{g.t(p.first)} {g.t(p.last)}")["layers"]]
                                for p in language().people], np.float64)      # (people, layers, d)
    keep = [i for i, p in enumerate(language().people) if p != held_out]
    X = _CACHE[key][keep, layer]
    sports = np.array([language().people[i].sport for i in keep])
    out = {}
    for s in model_language.SPORTS:
        d = X[sports == s].mean(0) - X[sports != s].mean(0)
        out[s] = d / np.linalg.norm(d)
    return out


def check_largest(v, rule, gpt):
    person, g, tokens = fact_person(v, gpt)
    ct = v["causal_trace"]
    grid = np.asarray(ct["share"], np.float64)
    rows = [tuple(r) for r in ct["rows"]]
    assert rows == [(l, c) for l in range(gpt.config.n_layer) for c in ("attn", "mlp")]
    assert grid.shape == (len(rows), len(tokens))
    order = np.argsort(-grid, axis=None, kind="stable")[:2]
    largest = [np.unravel_index(i, grid.shape) for i in order]
    said = rule["inputs"]["largest"]
    assert [(c["row"], c["position"]) for c in said] == [(int(r), int(t)) for r, t in largest]
    assert [c["share"] for c in said] == pytest.approx([grid[r, t] for r, t in largest], abs=1e-12)
    assert [(c["layer"], c["component"]) for c in said] == [rows[r] for r, _ in largest]
    # the largest cell's share again, with the patch hook: both names swapped for every other person of the
    # language with another sport and the same gender, that one state restored from the real run
    partners = [[g.t(q.first), g.t(q.last)] for q in language().people
                if q.sport != person.sport and q.gender == person.gender]
    assert ct["partners"] == partners
    (r, t), answer = largest[0], v["answer_id"]
    layer, comp = rows[r]
    clean_ids = [gpt.tokenizer.vocab[w] for w in tokens]
    clean = gpt.trace(clean_ids)
    p_clean = softmax(clean["logits"][-1])[answer]
    state = clean["layers"][layer][comp]["out"][t]
    shares = []
    for names in partners:
        ids = with_names(gpt, tokens, v["first_index"], names)
        p_corrupt = p_next(gpt, ids)[answer]
        p_restored = p_next(gpt, ids, {(layer, comp, t): state})[answer]
        shares.append((p_restored - p_corrupt) / (p_clean - p_corrupt))
    assert grid[r, t] == pytest.approx(float(np.mean(shares)), rel=1e-6, abs=1e-9)
    return "largest_over" if grid[r, t] > 1 else "largest_one" if grid[r, t] >= 0.5 else "largest_spread"


def check_lookup(v, rule, gpt):
    person, g, tokens = fact_person(v, gpt)
    layer, position = lookup_point(v)
    mlp_out = np.asarray(gpt.trace(v["prompt"])["layers"][layer]["mlp"]["out"][position], np.float64)
    unit = unit_sport_directions(gpt, v["prompt_lang"], layer, held_out=person)     # the person held out
    delta = {s: float(mlp_out @ u) for s, u in unit.items()}        # after − before = the MLP's output on it
    p = v["projections"]
    assert p["sports"] == list(model_language.SPORTS)
    assert p["delta"] == pytest.approx([delta[s] for s in p["sports"]], abs=1e-6)
    assert [a - b for a, b in zip(p["after"], p["before"])] == pytest.approx(p["delta"], abs=1e-9)
    assert rule["inputs"]["deltas"] == pytest.approx(delta, abs=1e-6) and rule["inputs"]["sport"] == person.sport
    others = [s for s in model_language.SPORTS if s != person.sport]
    top_other = max(delta[s] for s in others)
    assert delta[rule["inputs"]["best_other"]] == top_other, "the other sport named is the one that rises most"
    key = lookup_from(delta, person.sport)
    if "story" not in v:       # a lecturer's own prompt: the rule on that prompt alone
        return key
    return across_languages(v, key, "lookup", lambda e: lookup_from(e["deltas"], e["sport"]), delta=delta)


def lookup_from(delta: dict, sport: str) -> str:
    own = delta[sport]
    top_other = max(delta[s] for s in model_language.SPORTS if s != sport)
    if top_other > own:
        return "lookup_not"
    return "lookup_clean" if top_other < own / 2 else "lookup_most"


def across_languages(v, own_key: str, rule: str, decide, **own) -> str:
    """The default lecture: the rule decided again on each language's recorded numbers (the scene's own language's
    checked against `own`, recomputed here). The scene says its own language's key; where the two languages' keys
    differ, both are recorded in values["languages_differ"][rule] (the course page's note), never said."""
    keys = {}
    for lang, e in v["story"].items():
        if lang in ("en", "zh"):
            if e["prompt"] == v["prompt"] and "delta" in own:
                assert e["deltas"] == pytest.approx(own["delta"], abs=1e-6)
            keys[lang] = decide(e)
            assert e[f"{rule}_key"] == keys[lang]
    assert own_key in keys.values()
    differ = v.get("languages_differ", {}).get(rule)
    assert (differ is not None) == (len(set(keys.values())) > 1), f"{rule}: a difference by language is recorded"
    if differ:
        assert (differ["en"], differ["zh"]) == (keys["en"], keys["zh"])
    return own_key


def check_readout(v, rule, gpt):
    person, g, tokens = fact_person(v, gpt)
    layer, position = lookup_point(v)
    trace = gpt.trace(v["prompt"])
    out = np.asarray(trace["layers"][layer]["mlp"]["out"][position], np.float64)
    final = np.asarray(trace["layers"][-1]["resid_post"][position], np.float64)   # ln_f's scale, frozen
    scale = np.sqrt(final.var() + gpt.config.layer_norm_epsilon)
    added = ((out - out.mean()) / scale * gpt.p("ln_f.weight")) @ gpt.W_E.T
    ids = sorted(gpt.tokenizer.vocab[w] for w in model_language.vocabulary_of(v["prompt_lang"]))
    ranked = sorted(ids, key=lambda i: (-added[i], i))
    top = gpt.tokenizer.words[ranked[0]]
    r = v["readout"]
    assert [t["word"] for t in r["top"]] == [gpt.tokenizer.words[i] for i in ranked[:len(r["top"])]]
    assert [t["logit"] for t in r["top"]] == pytest.approx([added[i] for i in ranked[:len(r["top"])]], abs=1e-6)
    assert r["n_words"] == len(ids) and r["ranks"][str(v["answer_id"])] == ranked.index(v["answer_id"]) + 1
    sport, verb = g.t(person.sport), g.t(model_language.SPORT_VERBS[person.sport])
    assert r["verb"] == verb and rule["inputs"] == {"top": top, "sport": sport, "verb": verb}
    return "readout_sport" if top == sport else "readout_verb" if top == verb else "readout_other"


def check_spread(v, rule, gpt):
    person, g, tokens = fact_person(v, gpt)
    layer, position = lookup_point(v)
    unit = unit_sport_directions(gpt, v["prompt_lang"], layer, held_out=person)
    contrast = unit[person.sport] - np.mean([u for s, u in unit.items() if s != person.sport], axis=0)
    act = np.asarray(gpt.trace(v["prompt"])["layers"][layer]["mlp"]["act"][position], np.float64)
    push = act * (gpt.p(f"h.{layer}.mlp.c_proj.weight") @ contrast)
    np.testing.assert_allclose(v["push_all"], push, atol=1e-6)
    push = np.asarray(v["push_all"], np.float64)    # as checked: its signs decide the counts exactly
    # the lecture's one share of the push: over the summed push of every neuron that pushes toward the sport
    towards, against = push[push > 0], push[push < 0]
    ranked = np.sort(towards)[::-1]
    sums = {k: float(ranked[:k].sum()) for k in (1, 5, 20)}
    assert v["spread_towards"] == {"sum": pytest.approx(float(towards.sum()), abs=1e-6), "n": len(towards)}
    assert v["spread_against"] == {"sum": pytest.approx(float(against.sum()), abs=1e-6), "n": len(against)}
    assert v["spread_total"] == pytest.approx(float(push.sum()), abs=1e-6)
    assert (rule["inputs"]["n_towards"], rule["inputs"]["n_against"]) == (len(towards), len(against))
    for k, s in sums.items():
        assert v["spread_sums"][str(k)] == pytest.approx(s, abs=1e-6)
        assert rule["inputs"]["shares"][str(k)] == v["spread"][str(k)]
        if len(towards):
            assert v["spread"][str(k)] == pytest.approx(s / towards.sum(), abs=1e-6) and 0 < v["spread"][str(k)] <= 1
        else:
            assert v["spread"][str(k)] is None
    if not len(towards):    # no neuron pushes toward the sport: no share to give
        return "spread_none"
    return "spread_many" if sums[1] / towards.sum() < 0.5 else "spread_one"


def check_and(v, rule, gpt):
    person, g, tokens = fact_person(v, gpt)
    people = language().people
    # the person, then the first (language order) with the same last name, another first name and another sport,
    # then the first with the same first name, another last name and another sport; the same gender as the person
    variants = [person]
    for keep, change in (("last", "first"), ("first", "last")):
        variants += [q for q in people if getattr(q, keep) == getattr(person, keep) and
                     getattr(q, change) != getattr(person, change) and q.sport != person.sport and
                     q.gender == person.gender][:1]
    said = v["and"]
    assert [s["names"] for s in said] == [[g.t(q.first), g.t(q.last)] for q in variants]
    right = 0
    for s, q in zip(said, variants):
        p = p_next(gpt, with_names(gpt, tokens, v["first_index"], [g.t(q.first), g.t(q.last)]))
        prediction = gpt.tokenizer.words[int(np.argmax(p))]
        assert s["prediction"] == prediction and s["p"] == pytest.approx(float(p.max()), abs=1e-9)
        right += prediction == g.t(q.sport)
    assert rule["inputs"] == {"right": right, "n": len(variants)}
    return "and_yes" if right == len(variants) == 3 else "and_partly"


def mean_out(gpt, layer: int, component: str) -> np.ndarray:
    """An attention ("attn") or MLP ("mlp") output's mean over every position of the documented sample (its size
    and seed), traced here: both components' means from one pass over the sample."""
    key = ("means", id(gpt))
    if key not in _CACHE:
        vocab = gpt.tokenizer.vocab
        streams = language().corpus(MEAN_SAMPLE["n_streams"], gpt.config.n_positions, MEAN_SAMPLE["seed"])
        sums, n = {c: np.zeros((gpt.config.n_layer, gpt.config.n_embd)) for c in ("attn", "mlp")}, 0
        for s in streams:
            layers = gpt.trace([vocab[t.word] for t in s])["layers"]
            for c in sums:
                sums[c] += np.array([lay[c]["out"].sum(0) for lay in layers])
            n += len(s)
        _CACHE[key] = {c: total / n for c, total in sums.items()}
    return _CACHE[key][component][layer]


def attention_pushes(gpt, trace, answer_id: int, lang: str) -> list[float]:
    """Each attention layer's output at the last position through ln_f (its scale frozen) onto the answer's
    unembedding minus the other sports' mean."""
    g = language().grammar(lang)
    others = [gpt.tokenizer.vocab[g.t(s)] for s in model_language.SPORTS if gpt.tokenizer.vocab[g.t(s)] != answer_id]
    direction = gpt.W_E[answer_id] - gpt.W_E[others].mean(0)
    final = np.asarray(trace["layers"][-1]["resid_post"][-1], np.float64)
    scale = np.sqrt(final.var() + gpt.config.layer_norm_epsilon)
    out = []
    for lay in trace["layers"]:
        a = np.asarray(lay["attn"]["out"][-1], np.float64)
        out.append(float(((a - a.mean()) / scale * gpt.p("ln_f.weight")) @ direction))
    return out


def carry_from(reads_most: int, last_index: int, before: float, after: float) -> str:
    if not before > 0:
        return "carry_none"
    if reads_most != last_index:
        return "carry_other"
    return "carry_lookup" if after < before / 2 else "carry_kept"


def check_carry(v, rule, gpt):
    person, g, tokens = fact_person(v, gpt)
    layer, position = lookup_point(v)
    ids = [gpt.tokenizer.vocab[w] for w in tokens]
    trace = gpt.trace(ids)
    pushes = attention_pushes(gpt, trace, v["answer_id"], v["prompt_lang"])
    carrier = int(np.argmax(pushes))
    c = v["path"]["carrier"]
    assert c["layer"] == carrier and c["push"] == pytest.approx(pushes[carrier], abs=1e-6)
    reads = trace["layers"][carrier]["attn"]["weights"][c["head"], -1]
    assert c["reads"] == pytest.approx(list(reads), abs=1e-12) and c["reads_most"] == int(np.argmax(reads))
    patched = gpt.trace(ids, patch={(layer, "mlp", v["last_index"]): mean_out(gpt, layer, "mlp")})
    after = attention_pushes(gpt, patched, v["answer_id"], v["prompt_lang"])[carrier]
    t = v["path"]["through_lookup"]
    assert t["push_after"] == pytest.approx(after, abs=1e-6)
    key = carry_from(c["reads_most"], v["last_index"], pushes[carrier], after)
    assert rule["inputs"]["push_after"] == pytest.approx(after, abs=1e-6)
    if "story" not in v:
        return key
    return across_languages(v, key, "carry", lambda e: carry_from(e["carrier"]["reads_most"], e["last_index"],
                                                                   e["through_lookup"]["push_before"],
                                                                   e["through_lookup"]["push_after"]))


def check_and_neuron(v, rule, gpt):
    person, g, tokens = fact_person(v, gpt)
    layer, position = lookup_point(v)
    firsts = [f for f in model_language.FIRST_NAMES if model_language.GENDER[f] == person.gender]
    pairs = [(f, l) for f in firsts for l in model_language.LAST_NAMES]
    acts = np.array([gpt.trace(with_names(gpt, tokens, v["first_index"], [g.t(f), g.t(l)]))["layers"][layer]["mlp"]
                     ["act"][v["last_index"]] for f, l in pairs])
    t = pairs.index((person.first, person.last))
    margin = acts[t] - np.delete(acts, t, axis=0).max(0)
    n = int(np.argmax(margin))
    a = v["and_neuron"]
    assert a["neuron"] == n and a["margin"] == pytest.approx(margin[n], abs=1e-9)
    one = [i for i, (f, l) in enumerate(pairs) if (f == person.first) != (l == person.last)]
    same_first = max(acts[i, n] for i, (f, l) in enumerate(pairs) if f == person.first and l != person.last)
    same_last = max(acts[i, n] for i, (f, l) in enumerate(pairs) if l == person.last and f != person.first)
    threshold = a["threshold"]
    if acts[t, n] > threshold and max(acts[i, n] for i in one) <= threshold and margin[n] > 0:
        return "andn_yes"
    if not acts[t, n] > threshold:
        return "andn_none"
    return "andn_sum" if same_first > threshold and same_last > threshold else "andn_one"


def map_sites(v, gpt) -> list[dict]:
    """Every (layer, component, position) of the prompt with its state replaced by the sample's mean (traced here):
    P(answer) after and its drop from the clean run; and P(any sport of the prompt's language) after and its drop."""
    ids = [gpt.tokenizer.vocab[w] for w in v["tokens"]]
    answer = v["answer_id"]
    g = language().grammar(v["prompt_lang"])
    sports = [gpt.tokenizer.vocab[g.t(s)] for s in model_language.SPORTS]
    clean = p_next(gpt, ids)
    out = []
    for layer in range(gpt.config.n_layer):
        for comp, name in (("attn", "attention"), ("mlp", "mlp")):
            for t in range(len(ids)):
                after = p_next(gpt, ids, {(layer, comp, t): mean_out(gpt, layer, comp)})
                out.append({"site": f"{name}:{layer}@{t}", "component": comp, "position": t, "layer": layer,
                            "p_after": after[answer], "drop": clean[answer] - after[answer],
                            "any_after": after[sports].sum(), "any_drop": clean[sports].sum() - after[sports].sum(),
                            "at_name": t in (v["first_index"], v["last_index"])})
    return out


def check_map(v, gpt) -> list[dict]:
    """The map rule (issue 43): a site is lit only if its mean-ablation drops P(answer) by at least 25 percentage
    points, and every site at a name position that drops it by 50 points or more is lit; values["where"]["lit"]
    records the lit sites as "attention:L@P" / "mlp:L@P", and the map's boxes are exactly their layers' parts."""
    sites = map_sites(v, gpt)
    drops = {s["site"]: s["drop"] for s in sites}
    lit = v["where"]["lit"]
    assert all(drops[s] >= 0.25 - 1e-9 for s in lit), "only a site dropping P(answer) by 25 points is lit"
    assert all(s["site"] in lit for s in sites if s["at_name"] and s["drop"] >= 0.5), \
        "every name site dropping P(answer) by 50 points is lit"
    assert lit == [s["site"] for s in sites if s["drop"] >= 0.25], "the lit sites: every drop of 25 points or more"
    assert v["where"]["boxes"] == sorted({s.split("@")[0] for s in lit}), "the map lights exactly their parts"
    return [s for s in sites if s["site"] in lit]


def check_conclusion(v, rule, gpt):
    lit = check_map(v, gpt)
    assert rule["inputs"]["lit"] == v["where"]["lit"]
    # the map's second finding is said exactly when a lit site away from the names leaves no sport at all
    kinds = [s for s in lit if s["any_drop"] >= 0.25]
    assert v["where"]["kinds"] == [s["site"] for s in kinds], "the kind sites: P(any sport) drops 25 points or more"
    assert ("kind" in v["caption_rules"]) == any(not s["at_name"] for s in kinds), "a kind site away from the names"
    at_name = [s for s in lit if s["at_name"]]
    if not at_name:
        return "conclusion_elsewhere"
    key = max(at_name, key=lambda s: s["drop"])
    assert rule["inputs"]["key_site"]["site"] == key["site"]
    return "conclusion_attention" if key["component"] == "attn" else "conclusion_mlp"


def check_kind(v, rule, gpt):
    """The kind site named: away from the names, the lowest P(any sport) after (the first on a tie); kind_which when
    no lit site at a name is a kind site."""
    lit = check_map(v, gpt)
    away = [s for s in lit if s["any_drop"] >= 0.25 and not s["at_name"]]
    named = min(away, key=lambda s: s["any_after"])
    assert rule["inputs"]["site"] == named["site"]
    assert abs(rule["inputs"]["p_any_after"] - named["any_after"]) < 1e-9
    return "kind_only" if any(s["any_drop"] >= 0.25 for s in lit if s["at_name"]) else "kind_which"


def check_neuron_kind(v, rule, gpt):
    """mlp_steps' followed neuron, named by its stated rule: the one kind of word (model/language.py's lists, in the
    prompt's language) at which every listed top context ends; else none (contexts_mixed)."""
    c = v["contexts"]
    words = [x["token"] for x in c["top"]]
    assert rule["inputs"]["words"] == words
    from scenes.prompts import own_language
    if not own_language(gpt):
        assert c["kind"] is None
        return "contexts_mixed"
    L = model_language
    g = language().grammar(v["contexts"]["sample"]["lang"])
    lists = {"first_names": L.FIRST_NAMES, "last_names": L.LAST_NAMES, "sports": L.SPORTS,
             "sport_verbs": list(L.SPORT_VERBS.values()), "cities": L.CITIES, "countries": L.COUNTRIES,
             "animals": L.CREATURES, "colours": L.COLOURS, "textures": L.TEXTURES,
             "places": [w for ws in L.PLACES.values() for w in ws],
             "motion_verbs": [w for ws in L.VERBS.values() for w in ws]}
    kinds = {next((k for k, ws in lists.items() if w in {g.t(x) for x in ws}), None) for w in words}
    kind = kinds.pop() if len(kinds) == 1 and None not in kinds else None
    assert c["kind"] == kind and rule["inputs"]["kind"] == kind
    return "contexts_named" if kind else "contexts_mixed"


# --- parameters: the counts from each config's shape (scene_checks.parameter_counts) ---------------------------
def mlp_share(v, key: str, config) -> float:
    want = parameter_counts(config)
    total = sum(want.values())
    assert {p: v[key][p] for p in want} == want and v[key]["total"] == total, f"{key}: the counts of its shape"
    return want["mlp"] / total


def check_split(v, rule, gpt):
    share = mlp_share(v, "gpt3", GPT3_175B)
    assert rule["inputs"]["mlp_share"] == pytest.approx(share, abs=1e-15)
    fractions = {"frac_1_4": 0.25, "frac_1_3": 1 / 3, "frac_1_2": 0.5, "frac_2_3": 2 / 3, "frac_3_4": 0.75}
    nearest = sorted(fractions, key=lambda k: (abs(fractions[k] - share), fractions[k]))[0]
    assert rule["inputs"]["fraction"] == nearest, "the fraction said is the nearest simple one"
    return "split"


def check_ours(v, rule, gpt):
    ours, gpt3 = mlp_share(v, "ours", gpt.config), mlp_share(v, "gpt3", GPT3_175B)
    embedding = parameter_counts(gpt.config)["embedding"] / v["ours"]["total"]
    assert rule["inputs"] == pytest.approx({"ours": ours, "gpt3": gpt3, "ours_embedding": embedding}, abs=1e-15)
    return "ours_less" if ours < gpt3 else "ours_more"


def held_out_hits(gpt, lang: str, layer: int) -> int:
    """How many people's own sport rises most through `layer`'s MLP at their last name, on sport directions measured
    on the other people (each held out in turn), traced here."""
    g = language().grammar(lang)
    people = language().people
    traces = [gpt.trace(f"{g.t(p.first)} {g.t(p.last)}")["layers"][layer] for p in people]
    X = np.array([t["resid_post"][-1] for t in traces])
    outs = np.array([t["mlp"]["out"][-1] for t in traces])
    sports = np.array([p.sport for p in people])
    hits = 0
    for i in range(len(people)):
        keep = np.arange(len(people)) != i
        rise = {}
        for s in model_language.SPORTS:
            d = X[keep & (sports == s)].mean(0) - X[keep & (sports != s)].mean(0)
            rise[s] = outs[i] @ d / np.linalg.norm(d)
        hits += max(rise, key=rise.get) == sports[i]
    return hits


def name_site_drops(gpt, lang: str) -> dict:
    """`lang`'s default fact prompt: P(answer) intact, and by how much it drops when one attention or MLP output at
    one of the two names is replaced by its sample mean (recomputed here by patching the trace), per site
    ("attention:L@P" / "mlp:L@P", as mlp_fact's map names them). Once per model and language."""
    from model import probabilities
    from model.analysis import mean_states
    from scenes.prompts import sport_fact_prompt
    if (id(gpt), lang) in _DROPS:
        return _DROPS[id(gpt), lang]
    chosen = sport_fact_prompt(lang, gpt)
    ids = [int(i) for i in gpt.encode(chosen["prompt"])]
    means = mean_states(gpt, model_language.Language())     # 200 windows through the model: once per model
    answer = gpt.tokenizer.vocab[chosen["answer"]]

    def p_answer(trace) -> float:
        return float(probabilities(trace["logits"][-1])[answer])

    clean = p_answer(gpt.trace(ids))
    drops = {}
    for layer in range(gpt.config.n_layer):
        for component, name in (("attn", "attention"), ("mlp", "mlp")):
            for t in (chosen["first_index"], chosen["first_index"] + 1):
                patched = gpt.trace(ids, patch={(layer, component, t): means[layer, component]})
                drops[f"{name}:{layer}@{t}"] = clean - p_answer(patched)
    _DROPS[id(gpt), lang] = {"p_clean": clean, "drops": drops}
    return _DROPS[id(gpt), lang]


_DROPS: dict = {}


def lit_mlp_at_name(gpt, lang: str, layer: int) -> list[str]:
    """The sites of MLP `layer` at the two names of `lang`'s default fact prompt whose mean-ablation drops
    P(answer) by 25 points or more (name_site_drops)."""
    return [site for site, d in name_site_drops(gpt, lang)["drops"].items()
            if site.startswith(f"mlp:{layer}@") and d >= 0.25]


def check_parameters_summary(v, rule, gpt):
    ours, gpt3 = mlp_share(v, "ours", gpt.config), mlp_share(v, "gpt3", GPT3_175B)
    inputs = {k: x for k, x in rule["inputs"].items() if k not in ("p_values", "lit_at_name", "lang")}
    assert inputs == pytest.approx({"ours": ours, "gpt3": gpt3}, abs=1e-15)
    from scenes.prompts import own_language
    if min(ours, gpt3) <= 0.5:
        return "summary_not"
    if not own_language(gpt):
        return "summary_checkpoint"
    finding = v["mlp_finding"]      # the chapter's lookup layer per language; the held-out count recomputed here
    for lang, e in finding.items():
        assert e["hits"] == held_out_hits(gpt, lang, e["layer"])
        assert rule["inputs"]["p_values"][lang] == e["p_value"]
        assert rule["inputs"]["lit_at_name"][lang] == e["lit_at_name"] == lit_mlp_at_name(gpt, lang, e["layer"])
    lang = rule["inputs"]["lang"]    # its own language's finding; the other's is the course page's note
    found = {l: e["p_value"] < 0.05 and bool(e["lit_at_name"]) for l, e in finding.items()}
    differ = found["en"] != found["zh"] or finding["en"]["layer"] != finding["zh"]["layer"]
    assert ("mlp_finding" in v.get("languages_differ", {})) == differ
    return "summary" if found[lang] else "summary_untraced"


# scene -> rule name -> (every key the rule may choose, check(values, rule, gpt) -> the key)
MLP_CHAPTER_CHECKS: dict = {
    "mlp_fact": {"largest": ({"largest_one", "largest_spread", "largest_over"}, check_largest),
                 "lookup": ({"lookup_clean", "lookup_most", "lookup_not"}, check_lookup),
                 "readout": ({"readout_sport", "readout_verb", "readout_other"}, check_readout),
                 "spread": ({"spread_many", "spread_one", "spread_none"}, check_spread),
                 "and": ({"and_yes", "and_partly"}, check_and),
                 "carry": ({"carry_lookup", "carry_kept", "carry_other", "carry_none"}, check_carry),
                 "and_neuron": ({"andn_yes", "andn_sum", "andn_one", "andn_none"}, check_and_neuron),
                 "conclusion": ({"conclusion_attention", "conclusion_mlp", "conclusion_elsewhere"},
                                check_conclusion),
                 "kind": ({"kind_which", "kind_only"}, check_kind)},
    "parameters": {"split": ({"split"}, check_split),
                   "ours": ({"ours_less", "ours_more"}, check_ours),
                   "summary": ({"summary", "summary_checkpoint", "summary_not", "summary_untraced"},
                               check_parameters_summary)},
}
