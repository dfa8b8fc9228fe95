"""Issue 44: a lecturer's own checkpoint plays every scene that takes `--model`. Not GPT-2's shape nor its tokenizer:
3 layers, 6 heads, 96 wide, random weights, and a byte-level BPE trained on a few sentences of long words
(gpt2_checkpoints.make_own_checkpoint), so that captions and labels name long tokens ("␣counterrevolutionary").

Every scene plays through every beat in both languages as manim's dry run (no frames: the model's numbers and the
layout), each scene × language its own test so pytest-xdist spreads them, and is legible (scene_checks). One scene,
at the long-token prompt, goes through render.py with `model = "DIR"` in a recipe (the lecturer's path), at preview
quality as its last frame only (--format png). A text that does not fit is fitted (scenes/components/text.py
fit_caption), never a crash. It once rendered all 27 through render.py: 1,636 s under load, now dry."""

from __future__ import annotations

import json

import pytest

from conftest import run_render
from scene_checks import play_at_checkpoint

from scenes.catalog import CHECKPOINT_SCENES

# a prompt whose last token (the focus) and the word before are long tokens of the checkpoint's own BPE: the issue's
# queries_keys caption ("Here "␣coun…" matches "␣extr…" best: …") was a LayoutError at this checkpoint
# faults found here and not yet mended (strict: the entry fails once the fault is gone, and is removed with it)
KNOWN_LAYOUT_FAULTS = {
    "add_norm": "the why beat's drift chart: at this checkpoint its numbers read in hundred-thousandths ('0.00089'), "
                "and the rightmost reaches past the title-safe area; clamped, it lands on the next bar (found "
                "2026-12-06 after ColumnBars.numbers_above; the chart needs room for long numbers)",
}

LONG_TOKENS = "The fox was extraordinarily counterrevolutionary"


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    from gpt2_checkpoints import make_own_checkpoint
    return make_own_checkpoint(tmp_path_factory.mktemp("own"))


@pytest.fixture(scope="module")
def tex_cache(tmp_path_factory):
    """One tex/text cache for every scene's run here (the same labels recur: compiled once per worker)."""
    return tmp_path_factory.mktemp("own-scenes")


def test_the_checkpoint_is_another_shape_with_its_own_long_tokens(own):
    from gpt2_checkpoints import OWN
    from model import NumpyGPT
    gpt = NumpyGPT.load(own)
    c = gpt.config
    assert (c.n_layer, c.n_head, c.n_embd) == (OWN["n_layer"], OWN["n_head"], OWN["n_embd"]) == (3, 6, 96)
    assert gpt.tokenizer.kind == "bpe" and len(gpt.tokenizer) < 1000          # its own vocabulary, not GPT-2's
    assert max(len(w) for w in gpt.tokenizer.words) >= 20                      # whole long words are tokens
    assert [len(w) > 10 for w in gpt.tokenizer.decode(gpt.encode(LONG_TOKENS))][-2:] == [True, True]


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN_LAYOUT_FAULTS[n], strict=True))
                                  if n in KNOWN_LAYOUT_FAULTS else n for n in CHECKPOINT_SCENES])
def test_every_model_scene_plays_at_a_checkpoint_of_another_shape(name, lang, own, tex_cache, monkeypatch):
    scene = play_at_checkpoint(name, lang, own, tex_cache, monkeypatch)
    assert scene.gpt.config.n_head == 6


@pytest.mark.slow
def test_a_recipe_with_the_checkpoint_renders_the_long_token_prompt(own, tmp_path):
    """The lecturer's path: render.py with `model = "DIR"` in a recipe; the manifest names the checkpoint's weights
    and keeps the long tokens whole (the captions cut them: test_components.py)."""
    from PIL import Image
    from model.weights import checkpoint_digests
    recipe = tmp_path / "own.toml"
    recipe.write_text(f'[lecture]\nquality = "preview"\nformat = "png"\nmodel = "{own}"\n'
                      f'[[scene]]\nname = "queries_keys"\nlang = "en"\nprompt = {json.dumps(LONG_TOKENS)}\n')
    media = tmp_path / "media"
    r = run_render("--config", recipe, media=media, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "Traceback" not in r.stderr and "LayoutError" not in r.stdout + r.stderr
    [still] = sorted((media / "preview").glob("*.png"))
    m = json.loads(still.with_name(still.name + ".json").read_text())
    with Image.open(still) as image:
        assert image.size == (854, 480)
    assert (m["scene"], m["params"]["lang"], m["params"]["prompt"]) == ("queries_keys", "en", LONG_TOKENS)
    assert m["model"]["weights_sha256"] == checkpoint_digests(own)["model.safetensors"]
    text = json.dumps(m, ensure_ascii=False)
    assert "\u2423counterrevolutionary" in text and "\u2423extraordinarily" in text
