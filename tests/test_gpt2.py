"""A lecturer's own GPT-2 checkpoint: GPT-2's byte-level BPE tokenizer (built from js-tiktoken's ranks, checked
against tiktoken's own encoder), loading a GPT2LMHeadModel directory into the NumPy model (checked against
transformers on random prompts), the cached checkpoint digest, and the bad inputs (one line, exit 2)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
import shutil

import numpy as np
import pytest

from conftest import run_render
from helpers import assert_clean_error

R50K_URL = "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken"
TEXTS = ["Hello world", " leading spaces   and two trailing  ", "I'm sure they'll've done it, don't you?",
         "你好，世界！机器学习很有趣。", "emoji 🎉🚀👩‍👩‍👧 ok", "12345 3.14159 1,000,000 and 2024-05-01",
         "tab\tnew\nline\r\n  indented", "Ünïcödé café naïve Ελληνικά русский", "Michael Jordan plays basketball"]


@pytest.fixture(scope="module")
def tiktoken_gpt2(tmp_path_factory):
    """tiktoken's own GPT-2 encoder (r50k_base, GPT-2's ranks), read from a cache file written from js-tiktoken's
    ranks: tiktoken checks the file against the sha256 OpenAI publishes, so the ranks are GPT-2's own."""
    from gpt2_checkpoints import js_tiktoken_ranks
    from model.bpe import read_js_tiktoken_ranks
    ranks, _ = read_js_tiktoken_ranks(js_tiktoken_ranks())
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    (cache / hashlib.sha1(R50K_URL.encode()).hexdigest()).write_bytes(
        b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(ranks)))
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    try:
        import tiktoken
        import tiktoken.registry
        tiktoken.registry.ENCODINGS.pop("r50k_base", None)
        return tiktoken.get_encoding("r50k_base")
    finally:
        os.environ.pop("TIKTOKEN_CACHE_DIR") if old is None else os.environ.__setitem__("TIKTOKEN_CACHE_DIR", old)


@pytest.fixture(scope="module")
def bpe(gpt2_tokenizer_dir):
    from model.bpe import BPETokenizer
    return BPETokenizer.load(gpt2_tokenizer_dir)


def random_texts(n, seed):
    """Random strings over letters, digits, punctuation, spaces, CJK and emoji (the test draws them)."""
    rng = random.Random(seed)
    alphabet = list("abcdefgxyzABCXYZ0123456789 ',.!?-'\n") + list("的一是在不了有和人这中大为上") + ["🎉", "😀", "é", "ß"]
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(n)]


def test_tokenizer_encodes_as_tiktoken(bpe, tiktoken_gpt2):
    assert len(bpe) == 50257 and bpe.words[50256] == "<|endoftext|>"
    for text in TEXTS + random_texts(200, seed=7):
        ids = bpe.encode(text)
        assert ids == tiktoken_gpt2.encode(text, disallowed_special=()), text
        assert bpe.text(ids) == text


def test_vocab_and_merges_files_load_the_same(bpe, tmp_path):
    from model.bpe import BPETokenizer
    bpe.tokenizer.model.save(str(tmp_path))          # vocab.json + merges.txt, the original release's files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["merges.txt", "vocab.json"]
    vocab = json.loads((tmp_path / "vocab.json").read_text())
    vocab["<|endoftext|>"] = 50256                     # GPT-2's vocab.json lists its end-of-text token
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    old = BPETokenizer.load(tmp_path)
    assert len(old) == len(bpe)
    for text in TEXTS:
        assert old.encode(text) == bpe.encode(text)


def test_tokens_are_shown_honestly(bpe):
    words = bpe.decode(bpe.encode(" Jordan plays"))
    assert words == ["\u2423Jordan", "\u2423plays"]
    chinese = bpe.decode(bpe.encode("你"))          # one character, three bytes, two tokens: neither is valid UTF-8
    assert "".join(chinese) == "<0xE4><0xBD><0xA0>" and len(chinese) == 2
    assert bpe.decode(bpe.encode("a\nb")) == ["a", "<0x0A>", "b"]
    assert bpe.decode(bpe.encode(" café")) == ["\u2423café"]


def trace_against_transformers(directory, prompts, atol):
    import torch
    from transformers import GPT2LMHeadModel

    from model import NumpyGPT
    gpt = NumpyGPT.load(directory)
    hf = GPT2LMHeadModel.from_pretrained(directory, attn_implementation="eager").eval()
    for prompt in prompts:
        tr = gpt.trace(prompt)
        with torch.no_grad():
            out = hf(torch.tensor([tr["token_ids"]]), output_hidden_states=True, output_attentions=True)
        np.testing.assert_allclose(tr["logits"], out.logits[0].double().numpy(), atol=atol, err_msg=prompt)
        for i, layer in enumerate(tr["layers"]):
            np.testing.assert_allclose(layer["attn"]["weights"], out.attentions[i][0].double().numpy(), atol=1e-5)
            np.testing.assert_allclose(layer["resid_pre"], out.hidden_states[i][0].double().numpy(), atol=atol)
    return gpt


@pytest.mark.slow
def test_small_checkpoint_matches_transformers_on_random_prompts(gpt2_small):
    gpt = trace_against_transformers(gpt2_small, [t for t in random_texts(6, seed=11) if t.strip()], atol=1e-4)
    assert gpt.tokenizer.kind == "bpe" and gpt.config.position_encoding == "learned"
    assert gpt.dtype == np.float32 and gpt.trace("Hello")["logits"].dtype == np.float32   # a checkpoint: float32


def test_our_model_computes_in_float64(gpt):
    tr = gpt.trace("the")
    assert gpt.dtype == np.float64 and tr["logits"].dtype == np.float64
    assert tr["layers"][-1]["attn"]["weights"].dtype == np.float64


def test_captions_name_a_checkpoint_by_its_config(gpt, gpt2_small):
    """One rule names the model in every title note: ours in the lecture's words, a checkpoint from its config; each
    form sayable by the voices (speech/spoken.py)."""
    from model import NumpyGPT
    from scenes.prompts import MODEL_WORDS, model_words
    from speech.spoken import spoken, unsayable
    small = NumpyGPT.load(gpt2_small)
    assert model_words(gpt, "en") == "our own small trained GPT" and model_words(gpt, "zh") == "本项目训练的小型 GPT"
    assert model_words(small, "en") == "a 2-layer GPT-2 checkpoint" and model_words(small, "zh") == "2 层的 GPT-2 检查点"
    assert model_words(small, "en", "vocabulary", n="50,257") == "a 50,257-token vocabulary"
    assert spoken(model_words(small, "en"), "en") == "a two-layer GPT-two checkpoint"
    for form in MODEL_WORDS:
        for model in (gpt, small):
            for lang in ("en", "zh"):
                words = model_words(model, lang, form, n=318)
                assert not unsayable(spoken(words, lang), lang), words
                assert ("our" in words.lower() or "我们" in words or "本项目" in words) == (model is gpt) or form == "vocabulary"


@pytest.mark.slow
def test_gpt2_small_shape_matches_transformers(gpt2_full):
    gpt = trace_against_transformers(gpt2_full, ["The quick brown fox jumps over the lazy dog, 你好 🎉"], atol=2e-4)
    c = gpt.config
    assert (c.n_layer, c.n_embd, c.n_head, c.n_positions, c.vocab_size, c.n_inner) == (12, 768, 12, 1024, 50257, 3072)
    assert gpt.n_params == 124_439_808


def test_checkpoint_digest_is_hashed_once(gpt2_small, tmp_path, monkeypatch):
    from model import weights
    ckpt = tmp_path / "ckpt"
    shutil.copytree(gpt2_small, ckpt)
    (ckpt / weights.DIGEST_MEMO).unlink(missing_ok=True)   # an earlier test's render may have remembered them
    calls = []
    real = weights.hashlib.sha256
    # a file's hash starts empty and is fed block by block (sha256() without data): count those
    monkeypatch.setattr(weights.hashlib, "sha256", lambda *a: (None if a else calls.append(1)) or real(*a))
    first = weights.checkpoint_digests(ckpt)
    assert len(calls) == 3 and (ckpt / weights.DIGEST_MEMO).is_file()
    calls.clear()
    assert weights.checkpoint_digests(ckpt) == first and calls == []      # remembered: no file read again
    os.utime(ckpt / "config.json", ns=(1, 1))                              # a changed time: hashed again
    assert weights.checkpoint_digests(ckpt) == first and len(calls) == 1
    assert first["model.safetensors"] == hashlib.sha256((ckpt / "model.safetensors").read_bytes()).hexdigest()


def broken(src, dst, config=None, drop_tokenizer=False, pickle_only=False):
    shutil.copytree(src, dst)
    if config:
        c = json.loads((dst / "config.json").read_text())
        c.update(config)
        (dst / "config.json").write_text(json.dumps(c))
    if pickle_only:
        (dst / "model.safetensors").rename(dst / "pytorch_model.bin")
    return dst


@pytest.mark.parametrize("change, needles", [
    ({"config": {"n_layer": 3}}, ["missing tensor", "3-layer"]),
    ({"config": {"n_embd": 96, "n_head": 4}}, ["shape", "config.json implies"]),
    ({"config": {"vocab_size": 50000}}, ["50257 tokens", "vocab_size 50000"]),
    ({"config": {"model_type": "llama", "architectures": ["LlamaForCausalLM"]}}, ["LlamaForCausalLM", "only GPT-2"]),
    ({"config": {"scale_attn_by_inverse_layer_idx": True}}, ["scale_attn_by_inverse_layer_idx"]),
    ({"pickle_only": True}, ["pytorch_model.bin", "never loaded"]),
])
def test_bad_checkpoints_are_one_line(gpt2_small, tmp_path, change, needles):
    bad = broken(gpt2_small, tmp_path / "bad", **change)
    result = run_render("next_token", "--model", bad, "--dry-run", media=tmp_path / "media")
    assert result.returncode == 2
    assert_clean_error(result, "model:", *needles)


def test_more_context_than_the_scenes_draw_is_refused(tmp_path, gpt2_tokenizer_dir):
    from gpt2_checkpoints import make_checkpoint
    big = make_checkpoint(tmp_path / "long", dict(n_layer=1, n_embd=32, n_head=2, n_positions=2048),
                          tokenizer_dir=gpt2_tokenizer_dir)
    result = run_render("next_token", "--model", big, "--dry-run", media=tmp_path / "media")
    assert result.returncode == 2
    assert_clean_error(result, "2048 positions", "1024")
