"""Issue 44: a lecturer's own checkpoint renders every scene that takes `--model`. Not GPT-2's shape nor its tokenizer:
3 layers, 6 heads, 96 wide, random weights, and a byte-level BPE trained on a few sentences of long words
(gpt2_checkpoints.make_own_checkpoint), so that captions and labels name long tokens ("␣counterrevolutionary").
Each scene is rendered through render.py with `model = "DIR"` in one recipe, at preview quality, as its last frame
only (--format png: the whole scene played, one frame drawn): the cheapest render that still plays every beat and
caption. A text that does not fit is fitted (scenes/components/text.py fit_caption), never a crash."""

from __future__ import annotations

import json

import pytest

from conftest import run_render

from scenes.catalog import CHECKPOINT_SCENES

# a prompt whose last token (the focus) and the word before are long tokens of the checkpoint's own BPE: the issue's
# queries_keys caption ("Here "␣coun…" matches "␣extr…" best: …") was a LayoutError at this checkpoint
LONG_TOKENS = "The fox was extraordinarily counterrevolutionary"


@pytest.mark.slow
def test_every_model_scene_renders_at_a_checkpoint_of_another_shape_with_long_tokens(tmp_path):
    from gpt2_checkpoints import OWN, make_own_checkpoint
    from model import NumpyGPT
    from model.weights import checkpoint_digests
    own = make_own_checkpoint(tmp_path / "own")
    gpt = NumpyGPT.load(own)
    c = gpt.config
    assert (c.n_layer, c.n_head, c.n_embd) == (OWN["n_layer"], OWN["n_head"], OWN["n_embd"]) == (3, 6, 96)
    assert gpt.tokenizer.kind == "bpe" and len(gpt.tokenizer) < 1000          # its own vocabulary, not GPT-2's
    assert max(len(w) for w in gpt.tokenizer.words) >= 20                      # whole long words are tokens
    assert [len(w) > 10 for w in gpt.tokenizer.decode(gpt.encode(LONG_TOKENS))][-2:] == [True, True]

    entries = [(name, lang, {}) for name in CHECKPOINT_SCENES for lang in ("en", "zh")]
    entries.append(("queries_keys", "en", {"prompt": LONG_TOKENS}))
    recipe = tmp_path / "own.toml"
    recipe.write_text(f'[lecture]\nquality = "preview"\nformat = "png"\nmodel = "{own}"\n' + "".join(
        f'[[scene]]\nname = "{name}"\nlang = "{lang}"\n' + "".join(f'{k} = {json.dumps(v)}\n' for k, v in extra.items())
        for name, lang, extra in entries))
    media = tmp_path / "media"
    r = run_render("--config", recipe, "--jobs", "2", media=media, timeout=300 + 60 * len(entries))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "Traceback" not in r.stderr and "LayoutError" not in r.stdout + r.stderr

    from PIL import Image
    stills = sorted((media / "preview").glob("*.png"))
    manifests = [json.loads(s.with_name(s.name + ".json").read_text()) for s in stills]
    assert sorted((m["scene"], m["params"]["lang"]) for m in manifests) == \
        sorted((name, lang) for name, lang, _ in entries)
    digest = checkpoint_digests(own)["model.safetensors"]
    for still, m in zip(stills, manifests):
        with Image.open(still) as image:
            assert image.size == (854, 480), still.name
        assert m["model"]["weights_sha256"] == digest, still.name
    # the long-token render: its manifest keeps the tokens whole (the captions cut them: test_components.py)
    [qk] = [m for m in manifests if m["scene"] == "queries_keys" and m["params"].get("prompt") == LONG_TOKENS]
    text = json.dumps(qk, ensure_ascii=False)
    assert "\u2423counterrevolutionary" in text and "\u2423extraordinarily" in text
