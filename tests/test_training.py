"""Training works from scratch, and the shipped weights meet the targets."""

import json

import pytest

from model.evaluate import evaluate_dir
from model.train import TrainConfig, train
from model.weights import DEFAULT_DIR


def test_a_tiny_model_learns(tmp_path):
    tc = TrainConfig(n_layer=1, n_embd=32, steps=40, batch_size=16, train_streams=300, warmup=5, log_every=1,
                     record_mechanisms=False)
    _, metrics = train(tc, out=tmp_path / "w", progress=None)
    log = json.loads((tmp_path / "w" / "training_log.json").read_text())
    first, last = sum(r["loss"] for r in log[:5]) / 5, sum(r["loss"] for r in log[-5:]) / 5
    assert last < first - 1.0
    assert {"model.safetensors", "config.json", "tokenizer.json", "metrics.json"} <= {p.name for p in (tmp_path / "w").iterdir()}
    assert metrics["val_loss"] > metrics["entropy_floor"]


@pytest.mark.slow
def test_training_is_deterministic(tmp_path):
    tc = TrainConfig(n_layer=1, n_embd=32, steps=5, batch_size=8, train_streams=50, record_mechanisms=False)
    a = train(tc, out=tmp_path / "a", progress=None)[1]["val_loss"]
    b = train(tc, out=tmp_path / "b", progress=None)[1]["val_loss"]
    assert a == b
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == (tmp_path / "b" / "model.safetensors").read_bytes()


@pytest.fixture(scope="module")
def shipped_metrics():
    return evaluate_dir(DEFAULT_DIR, with_mechanisms=False)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_shipped_model_is_within_five_hundredths_of_a_nat_of_the_floor(shipped_metrics, lang):
    m = shipped_metrics[lang]
    assert m["val_loss"] - m["entropy_floor"] <= 0.05
    assert m["n_val_tokens"] >= 60_000


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_shipped_model_knows_every_relation(shipped_metrics, lang):
    m = shipped_metrics[lang]
    assert set(m["relations"]) == {"sport", "city", "country", "sport_verb", "pronoun"}
    for relation, accuracy in m["relations"].items():
        assert accuracy >= 0.98, relation
        assert m["n_relation_tokens"][relation] > 300, relation
    assert all(a >= 0.98 for a in m["sport_by_template"].values())
    assert shipped_metrics["facts_known"][lang]["facts_known"] == 40


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_shipped_model_looks_back(shipped_metrics, lang):
    assert shipped_metrics[lang]["recall_accuracy"] >= 0.95
    assert shipped_metrics[lang]["n_recall_tokens"] > 1000


def test_shipped_metrics_file_is_current(shipped_metrics):
    recorded = json.loads((DEFAULT_DIR / "metrics.json").read_text())
    assert recorded["val_loss"] == pytest.approx(shipped_metrics["val_loss"], abs=1e-4)
    for lang in ("en", "zh"):
        assert recorded[lang]["val_loss"] == pytest.approx(shipped_metrics[lang]["val_loss"], abs=1e-4)
    # the mechanisms measured at training time, on the larger sample
    assert recorded["circuits"]["sample"]["partners_per_person"] >= 5
    assert recorded["directions"]["embedding"]["habitat"]["null"]["shuffles"] >= 1000
