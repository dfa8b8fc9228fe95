"""The lab (model/lab.py): its switches, its measures, and its committed record (model/snapshots/lab.json)."""

from __future__ import annotations

import json
from dataclasses import asdict, fields

import numpy as np
import pytest
import torch

from helpers import assert_clean_error, run_cli
from model import lab
from model.analysis import no_position_attn_change
from model.data import TRAIN_SEED, make_split
from model.language import LANGUAGES, Language
from model.torch_gpt import Parts, TorchGPT
from model.train import TrainConfig
from model.weights import DEFAULT_DIR

RECORD = json.loads(lab.RECORD.read_text()) if lab.RECORD.is_file() else None
needs_record = pytest.mark.skipif(RECORD is None, reason="no lab record yet")


def tiny(parts: Parts = Parts(), heads: int = 4) -> TorchGPT:
    tc = TrainConfig(n_layer=2, n_embd=16, n_head=heads, context=8)
    torch.manual_seed(0)
    return TorchGPT(tc.model_config(), tc.embedding_std, parts)


IDS = torch.tensor([[3, 7, 11, 5, 9, 2, 4, 8, 6]])


def test_every_switch_changes_the_model_and_no_switch_changes_a_parameter():
    base = tiny()
    shapes = {k: v.shape for k, v in base.state_dict().items()}
    with torch.no_grad():
        reference = base(IDS[:, :-1])
        for f in fields(Parts):
            model = tiny(Parts(**{f.name: False}))
            assert {k: v.shape for k, v in model.state_dict().items()} == shapes, f.name
            assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), base.state_dict().values()))
            assert not torch.allclose(model(IDS[:, :-1]), reference), f.name
        one = tiny(heads=1)
        assert {k: v.shape for k, v in one.state_dict().items()} == shapes   # one head of 16: the same parameters
        assert not torch.allclose(one(IDS[:, :-1]), reference)


def test_the_standard_parts_are_the_shipped_models(gpt):
    """Parts() is the standard model: the shipped weights in Torch give NumpyGPT's logits."""
    config, tensors = gpt.config, {k: np.asarray(v, dtype=np.float32) for k, v in gpt.params.items()}
    model = TorchGPT.from_tensors(config, tensors)
    assert model.parts == Parts()
    ids = gpt.encode("michael jordan plays")
    with torch.no_grad():
        logits = model(torch.tensor([ids]))[0].double().numpy()
    assert np.allclose(logits, gpt.trace(ids)["logits"], atol=1e-3)


def test_word_by_word_loss_is_the_window_loss_under_the_mask_and_not_without_it():
    ids = torch.randint(0, 40, (4, 9), generator=torch.Generator().manual_seed(1))
    masked, unmasked = tiny(), tiny(Parts(causal_mask=False))
    assert lab.generating_loss(masked, ids) == pytest.approx(lab.held_out_loss(masked, ids), abs=1e-5)
    assert abs(lab.generating_loss(unmasked, ids) - lab.held_out_loss(unmasked, ids)) > 1e-4
    # with the mask switched on, the unmasked model's whole-window loss is its masked loss
    assert lab.held_out_loss(unmasked, ids, causal=True) == pytest.approx(lab.held_out_loss(masked, ids), abs=1e-6)


def test_attention_entropy_is_within_its_bounds():
    ids = torch.randint(0, 40, (4, 9), generator=torch.Generator().manual_seed(2))
    for parts, causal in ((Parts(), True), (Parts(causal_mask=False), False)):
        h = lab.attention_entropy(tiny(parts), ids)
        assert len(h) == 2 and all(0 < x <= lab.uniform_entropy(8, causal) + 1e-6 for x in h)


def test_the_zeroed_position_table_leaves_layer_0_unmoved_and_the_mask_leaks_order(gpt):
    from scenes.prompts import lookback_prompt
    for lang in LANGUAGES:
        ids = gpt.encode(lookback_prompt(lang)["prompt"])
        change = no_position_attn_change(gpt, ids)["attn_change"]
        assert len(change) == gpt.config.n_layer
        assert change[0] < 1e-9                      # the last query sees the same keys, reordered
        assert max(change[1:]) > 0.1                 # later layers: the earlier tokens saw different pasts
        if RECORD is not None:
            assert RECORD["no_position"][lang]["token_ids"] == ids
            assert RECORD["no_position"][lang]["attn_change"] == pytest.approx(change, abs=1e-9)


@pytest.mark.slow
def test_bad_input_is_one_line_and_exit_2():
    for args, needle in ((("lab", "bogus"), "invalid choice"), (("lab", "record", "--seeds", "0"), "--seeds"),
                         (("lab", "record", "--variants", "no_brain"), "no_brain"),
                         (("lab", "show", "--record", "/nonexistent/lab.json"), "no lab record")):
        result = run_cli(*args, timeout=60)
        assert result.returncode == 2, args
        assert_clean_error(result, needle)


@needs_record
def test_the_record_is_whole_and_uses_the_shipped_recipe():
    shipped = json.loads((DEFAULT_DIR / "metrics.json").read_text())["train_config"]
    recipe = {k: v for k, v in RECORD["recipe"].items() if k != "record_mechanisms"}
    assert recipe == {k: v for k, v in shipped.items() if k != "record_mechanisms"}
    assert RECORD["recipe"] == asdict(TrainConfig())
    assert set(RECORD["variants"]) == set(lab.VARIANTS)
    assert RECORD["seeds"][0] == shipped["seed"]
    for name, v in RECORD["variants"].items():
        assert v["parts"] == asdict(lab.VARIANTS[name][0]) and v["n_head"] == lab.VARIANTS[name][1]
        seeds = [r["seed"] for r in v["runs"]]
        assert seeds == RECORD["seeds"][:len(seeds)], name
        if RECORD["complete"]:
            assert seeds == RECORD["seeds"], name
        if not seeds:                      # an unfinished recording: the record says so
            assert not RECORD["complete"] and name != "baseline" and "summary" not in v
            continue
        for r in v["runs"]:
            c = r["curve"]
            assert r["steps"] == shipped["steps"]
            assert c["step"] == [*range(0, shipped["steps"], RECORD["every"]), shipped["steps"] - 1]
            assert all(len(c[k]) == len(c["step"]) for k in c)
            f = r["final"]
            assert set(f["facts_known"]) == set(LANGUAGES) and all(f["facts_known"][g]["total"] == 40
                                                                  for g in LANGUAGES)
            assert ("generating_loss" in f) == (name in lab.GENERATION)
        assert v["summary"]["seeds"] == seeds


@needs_record
def test_the_baseline_from_seed_0_retraces_the_shipped_training():
    """The baseline's seed-0 run starts as the shipped training did (same data, initialisation, batches and schedule:
    its batch loss at steps 0-400 is the shipped training log's to the log's 5 decimals) and ends where it did
    (held-out loss per language within 0.002 nat of the shipped model's, every fact known). It is not the shipped
    model bit for bit: from about step 500 its batch losses drift from the log by up to 0.008 (float rounding on
    another machine, amplified by training), so the lab compares variants with its own baseline, not with the
    shipped weights."""
    log = {r["step"]: r["loss"] for r in json.loads((DEFAULT_DIR / "training_log.json").read_text())}
    shipped = json.loads((DEFAULT_DIR / "metrics.json").read_text())
    run = RECORD["variants"]["baseline"]["runs"][0]
    assert run["seed"] == 0
    for step, loss in zip(run["curve"]["step"], run["curve"]["batch_loss"]):
        if step <= 400:
            assert loss == pytest.approx(log[step], abs=1e-5), step
    for lang in LANGUAGES:
        assert run["final"][lang]["val_loss"] == pytest.approx(shipped[lang]["val_loss"], abs=2e-3)
        assert run["final"]["facts_known"][lang]["known"] == shipped["facts_known"][lang]["facts_known"]


@needs_record
def test_the_baseline_answers_the_order_question_as_the_shipped_model(gpt):
    from model.analysis import order_prediction
    run = RECORD["variants"]["baseline"]["runs"][0]
    for lang in LANGUAGES:
        shipped = order_prediction(gpt, RECORD["prompts"][lang]["token_ids"])
        mine = run["final"]["order_test"][lang]
        assert mine["word"] == shipped["word"]               # the same answer, its probability near the shipped
        assert mine["p_as_written"] == pytest.approx(shipped["as_written"]["p_word"], abs=0.01)
        assert mine["p_reversed"] == pytest.approx(shipped["reversed"]["p_word"], abs=0.01)


@needs_record
@pytest.mark.slow
def test_a_short_retraining_matches_the_record():
    """SHORT's variant retrained for SHORT's steps from the shipped recipe's data gives the recorded losses."""
    short = RECORD["short_run"]
    assert {k: short[k] for k in lab.SHORT} == lab.SHORT
    tc = TrainConfig()
    language = Language()
    train_ids = make_split(tc.train_streams, tc.context, TRAIN_SEED, language).ids
    again = lab.short_run(train_ids, lab.curve_ids(tc, language))
    assert again["train_loss"] == pytest.approx(short["train_loss"], abs=1e-5)
    assert again["held_out_loss"] == pytest.approx(short["held_out_loss"], abs=1e-5)
    assert again["train_loss"][-1] < again["train_loss"][0] - 1.0     # it learns in those steps


@needs_record
@pytest.mark.slow
def test_lab_show_prints_every_variant():
    result = run_cli("lab", "show", timeout=60)
    assert result.returncode == 0, result.stderr
    for name in lab.VARIANTS:
        assert name in result.stdout


@needs_record
def test_why_reads_the_record_and_refuses_what_it_lacks():
    from model.errors import ModelError
    done = [v for v, e in RECORD["variants"].items() if e["runs"] and v != "baseline"]
    w = lab.why(done[0], "held_out_loss", RECORD)
    base = RECORD["variants"]["baseline"]["runs"]
    assert w["curve_with"][0] == pytest.approx(np.mean([r["curve"]["held_out_loss"][0] for r in base]))
    assert w["with"] == w["curve_with"][-1] and len(w["curve_without"]) == len(w["steps"])
    w = lab.why(done[0], "accuracy_en", RECORD)
    assert w["without"] == RECORD["variants"][done[0]]["summary"]["accuracy_en"]["mean"]
    for variant, metric in (("baseline", "held_out_loss"), ("no_brain", "held_out_loss"), (done[0], "iq")):
        with pytest.raises(ModelError):
            lab.why(variant, metric, RECORD)


@needs_record
def test_resume_adds_a_seed_or_a_variant_and_drops_nothing_recorded(tmp_path, monkeypatch):
    """`lab record --resume --seeds N --variants V` trains only V at the seeds it lacks and keeps every other run of
    the record (it once kept only the variants and seeds it was given: `--resume --variants no_mlp` emptied the
    record of the other eight). Training is replaced by a copy of the recorded run, under the new seed."""
    path = tmp_path / "lab.json"
    path.write_text(lab.RECORD.read_text())
    trained = []

    def fake_run(variant, seed, *args, **kwargs):
        trained.append((variant, seed))
        return {**RECORD["variants"][variant]["runs"][0], "seed": seed}

    monkeypatch.setattr(lab, "run", fake_run)
    new = max(RECORD["seeds"]) + 1                              # a seed the record lacks
    rec = lab.record(path, seeds=(0, new), variants=("one_head",), progress=None, resume=True)
    assert trained == [("one_head", new)]                      # seed 0 is recorded: only the new seed is trained
    assert list(rec["variants"]) == [v for v in lab.VARIANTS if v in RECORD["variants"]]
    for name, entry in RECORD["variants"].items():
        want = [r["seed"] for r in entry["runs"]] + ([new] if name == "one_head" else [])
        assert [r["seed"] for r in rec["variants"][name]["runs"]] == sorted(set(want)), name
    assert rec["seeds"] == sorted(set(RECORD["seeds"]) | {new}) and rec["complete"] is False
    assert json.loads(path.read_text()) == json.loads(json.dumps(rec))        # written as returned
