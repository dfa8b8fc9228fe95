"""`python -m model`, used as a lecturer would: outputs that can be cited, errors that are one line."""

import json
import shutil

import numpy as np
import pytest

from model import NumpyGPT
from model.weights import DEFAULT_DIR

from helpers import assert_clean_error, run_cli


def test_trace_json_holds_every_number(tmp_path):
    result = run_cli("trace", "a fluffy blue fox roamed the", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    gpt = NumpyGPT.load()
    T, V, H = 6, gpt.config.vocab_size, gpt.config.n_head
    assert out["tokens"] == ["a", "fluffy", "blue", "fox", "roamed", "the"]
    assert out["token_ids"] == gpt.encode("a fluffy blue fox roamed the")
    assert np.array(out["logits"]).shape == (T, V)
    assert len(out["attention"]) == gpt.config.n_layer
    assert np.array(out["attention"][0]).shape == (H, T, T)
    masked = out["layers"][0]["attn"]["masked"][0]
    assert masked[0][1] is None and masked[1][0] is not None   # null marks -inf (the future)
    np.testing.assert_allclose(out["logits"], gpt.trace("a fluffy blue fox roamed the")["logits"], atol=1e-6)
    assert sum(out["next_token"]["probabilities"]) == pytest.approx(1.0)


@pytest.mark.parametrize("prompt, top", [("michael jordan plays", "basketball"), ("迈克尔乔丹打", "篮球")])
def test_trace_human_output_names_the_top_words(prompt, top):
    result = run_cli("trace", prompt)
    assert result.returncode == 0, result.stderr
    assert top in result.stdout.split("next word")[1].splitlines()[1]


@pytest.mark.slow
def test_eval_json_reports_each_language_the_circuit_and_the_directions():
    result = run_cli("eval", "--json", "--shuffles", "20")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    for lang in ("en", "zh"):
        m = out[lang]
        assert {"val_loss", "entropy_floor", "relations", "recall_accuracy"} <= set(m)
        assert m["val_loss"] > m["entropy_floor"] > 0.5
    circuits = out["circuits"]
    assert circuits["sample"]["partners_per_person"] == 1
    assert set(circuits["lookup"]) == {"both", "first", "last"}
    for swap in circuits["lookup"].values():
        assert {"last_name_mlp", "relation_mlp", "relation_attn", "largest"} <= set(swap)
    template = circuits["templates"]["en.filler"]["swaps"]["both"]
    assert template["positions"] == ["F", "L", ",", "famously", ",", "plays"]
    assert len(template["share"]) == NumpyGPT.load().config.n_layer
    for name in ("habitat", "size", "gender"):
        d = out["directions"]["embedding"][name]
        assert {"held_out_accuracy", "parallelogram_accuracy", "null"} <= set(d)
        assert d["null"]["shuffles"] == 20
    assert set(out["directions"]["stream"]) == {"en", "zh"}


@pytest.mark.parametrize("args, needles", [
    (["trace", "michael jordn plays"], ["unknown word 'jordn'", "'jordan'"]),
    (["trace", " ".join(["the"] * 40)], ["40 tokens", "context is 32"]),
    (["trace", "the", "--temperature", "-1"], ["temperature"]),
    (["trace", "the", "--temperature", "nan"], ["temperature"]),
    (["trace", ""], ["empty"]),
    (["trace", "the", "--weights", "/nonexistent/dir"], ["missing", "/nonexistent/dir"]),
    (["params", "gpt5"], ["unknown model 'gpt5'"]),
    (["train", "--steps", "0", "--out", "/tmp/never-written"], ["--steps"]),
    (["eval", "--partners", "0"], ["--partners"]),
    (["eval", "--shuffles", "0"], ["--shuffles"]),
    (["trace", "迈克尔乔丹跑"], ["unknown word '跑'"]),
])
def test_bad_input_is_one_clear_line(args, needles):
    assert_clean_error(run_cli(*args), *needles)


@pytest.fixture
def weights_copy(tmp_path):
    return shutil.copytree(DEFAULT_DIR, tmp_path / "weights")


def test_missing_file(weights_copy):
    (weights_copy / "model.safetensors").unlink()
    assert_clean_error(run_cli("trace", "the", "--weights", str(weights_copy)), "missing file", "model.safetensors")


def test_corrupt_safetensors(weights_copy):
    data = (weights_copy / "model.safetensors").read_bytes()
    (weights_copy / "model.safetensors").write_bytes(data[: len(data) // 2])
    assert_clean_error(run_cli("trace", "the", "--weights", str(weights_copy)), "model.safetensors", "not a readable")


def test_wrong_shape_in_config(weights_copy):
    config = json.loads((weights_copy / "config.json").read_text())
    config["n_embd"] *= 2
    config["n_inner"] = 4 * config["n_embd"]
    (weights_copy / "config.json").write_text(json.dumps(config))
    assert_clean_error(run_cli("trace", "the", "--weights", str(weights_copy)), "has shape", "config.json")


def test_bad_config_values(weights_copy):
    config = json.loads((weights_copy / "config.json").read_text())
    config["n_head"] = 5
    (weights_copy / "config.json").write_text(json.dumps(config))
    assert_clean_error(run_cli("trace", "the", "--weights", str(weights_copy)), "divisible by n_head")
    (weights_copy / "config.json").write_text("{not json")
    assert_clean_error(run_cli("trace", "the", "--weights", str(weights_copy)), "not valid JSON")


def test_params_json():
    result = run_cli("params", "gpt3-175b", "--json")
    assert result.returncode == 0, result.stderr
    split = json.loads(result.stdout)
    assert split["total"] == sum(split[k] for k in ("embedding", "attention", "mlp", "unembedding", "layernorm"))
