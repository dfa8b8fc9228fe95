"""The course page's "Try it" panel: the shipped model running inside the page, offline, from file://.

What is written beside index.html, in course/tryit/:
- data.js: generated here at packaging time, never by hand: the model's config, vocabulary, pre-tokenizer and
  weights (float32, little-endian, one base64 blob) read from model/weights, and the visual language (colour scales,
  percentage format, layer/head counting, attention strings) read from scenes/style.py;
- engine.js: the forward pass, tokenizer and seeded sampler in plain JavaScript, written like model/numpy_gpt.py
  (pipeline/web/engine.js), and the page API window.gptLecture (pipeline/web/panel.js);
- panel.js: the panel (pipeline/web/panel.js).
Also the clips' poster frames (course/posters/): each clip's first beat's still, so the page shows pictures before
anything plays. Why plain JavaScript and not onnxruntime-web: docs/course.md ("Try it").
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from pathlib import Path

import numpy as np

from .tracks import write_text_atomic

WEB = Path(__file__).with_name("web")
SCRIPTS = ("data.js", "engine.js", "panel.js")   # in course/tryit/, loaded in this order
CODE = (Path(__file__), WEB / "engine.js", WEB / "panel.js")
POSTER_WIDTH = 960   # the player's widest (page.py: .player video max-width)

UI = {   # the panel's words, in both languages (merged into the page's UI dict)
    "en": {"try": "Try it: run the model yourself",
           "try_absent": "The Try-it panel runs the lecture's own small model inside the page. These clips come from "
                         "another checkpoint ({tokenizer} tokenizer, {mb} MB of weights), which the page does not run: "
                         "render the lecture with its own model for the panel.",
           "try_note": "The lecture's model runs in this page: type a prompt "
           "in English or Chinese (Chinese without spaces).", "prompt": "Prompt", "run": "Run",
           "next_word": "Next word", "temperature": "Temperature", "seed": "Seed", "draw": "Draw one word",
           "generate": "Generate step by step", "step": "Next step", "reset": "Back to the prompt",
           "attention": "Attention weights", "layer": "Layer", "head": "Head", "lens": "Logit lens: the prediction "
           "after every block", "neurons": "MLP neurons that push the predicted word most", "position": "Position",
           "try_scene": "Try this scene's numbers", "drawn": "u = {u}: drew “{word}” ({p})", "argmax":
           "T = 0: the most likely word, “{word}” ({p}), no draw", "lens_embeddings": "embeddings",
           "lens_attn": "after attention {l}", "lens_mlp": "after MLP {l}", "neuron": "neuron",
           "activation": "activation", "push": "push on the logit", "word": "word", "probability": "probability",
           "layer_n": "layer {n}", "head_n": "head {n}", "predicted": "predicted word at this position: “{word}”",
           "generated": "generated",
           "tokens_label": "The prompt's tokens: choose a position", "attention_scroll": "Attention weights (scrolls sideways)",
           "lens_where": "read after", "lens_top": "most likely words", "lens_target": "probability of “{word}”",
           "status_next": "Next word: {words}.", "status_position": "Position {t}, “{token}”: {predicted}.",
           "err_empty": "the prompt is empty",
           "err_unknown": "unknown word {word}: it is not in the model's {n}-word vocabulary{hint}",
           "err_hint": "; did you mean {words}?", "err_long": "the prompt is {n} tokens long, but the model's context is "
           "{max} tokens", "err_id": "no token id {id}: the vocabulary has {n} words",
           "err_temperature": "temperature must be a finite number >= 0, got {t}",
           "err_seed": "seed must be a whole number >= 0, got {seed}",
           "err_steps": "{prompt} prompt tokens and {steps} steps do not fit the model's context of {max}"},
    "zh": {"try": "动手试：自己运行模型",
           "try_absent": "“动手试”面板在本页中运行讲座自己的小模型。这些片段来自另一个检查点（{tokenizer} 分词器，"
                         "权重 {mb} MB），本页无法运行它：用讲座自己的模型渲染，才有这个面板。",
           "try_note": "讲座的模型就在本页中运行：输入中文或英文提示（中文不用空格）。",
           "prompt": "提示", "run": "运行", "next_word": "下一个词", "temperature": "温度", "seed": "种子",
           "draw": "抽一个词", "generate": "逐步生成", "step": "下一步", "reset": "回到提示",
           "attention": "注意力权重", "layer": "层", "head": "头", "lens": "逻辑透镜：每个模块之后的预测",
           "neurons": "最推动预测词的 MLP 神经元", "position": "位置", "try_scene": "试一试本片段的数",
           "drawn": "u = {u}：抽到“{word}”（{p}）", "argmax": "T = 0：取最可能的词“{word}”（{p}），不抽样",
           "lens_embeddings": "嵌入", "lens_attn": "第 {l} 层注意力之后", "lens_mlp": "第 {l} 层 MLP 之后",
           "neuron": "神经元", "activation": "激活值", "push": "对逻辑值的推动", "word": "词", "probability": "概率",
           "layer_n": "第 {n} 层", "head_n": "第 {n} 个头", "predicted": "此位置预测的词：“{word}”",
           "generated": "已生成",
           "tokens_label": "提示的词元：选一个位置", "attention_scroll": "注意力权重（可横向滚动）",
           "lens_where": "读取位置", "lens_top": "最可能的词", "lens_target": "“{word}”的概率",
           "status_next": "下一个词：{words}。", "status_position": "位置 {t}，“{token}”：{predicted}。",
           "err_empty": "提示是空的",
           "err_unknown": "未知的词 {word}：模型的 {n} 词词表里没有它{hint}",
           "err_hint": "；是不是 {words}？", "err_long": "提示有 {n} 个词元，但模型的上下文只有 {max} 个词元",
           "err_id": "没有编号为 {id} 的词元：词表只有 {n} 个词",
           "err_temperature": "温度必须是不小于 0 的有限数，而不是 {t}",
           "err_seed": "种子必须是不小于 0 的整数，而不是 {seed}",
           "err_steps": "{prompt} 个提示词元加 {steps} 步，超出了模型 {max} 个词元的上下文"},
}


# The page runs a model whose weights fit beside its clips (ours: 928 kB; the page's budget is 3 MB in all) and whose
# tokenizer its engine knows (our word-level one). A checkpoint of one's own (GPT-2 small: 498 MB, byte-level BPE)
# gets the page without the panel, and a note that says why (unsupported).
PAGE_MODEL_BYTES = 2_000_000


def page_pre_tokenizer(tok: dict) -> list | None:
    """tokenizer.json's pre-tokenizer as the page's engine runs it, or None if the engine does not know it: a
    Lowercase normaliser, then Split (isolated regex) and Whitespace steps (our word-level tokenizer)."""
    pre = tok.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    known = {"Split": lambda s: {"type": "Split", "pattern": s["pattern"]["Regex"]}
             if s.get("behavior") == "Isolated" and "Regex" in s.get("pattern", {}) else None,
             "Whitespace": lambda s: {"type": "Whitespace"}}
    exported = [known.get(s.get("type"), lambda s: None)(s) for s in steps]
    if not steps or None in exported or (tok.get("normalizer") or {}).get("type") != "Lowercase" \
            or (tok.get("model") or {}).get("type") != "WordLevel":
        return None
    return exported


def unsupported(model_dir: Path) -> dict | None:
    """Why the page cannot run this model ({"tokenizer": type, "bytes": n}), or None when it can."""
    model_dir = Path(model_dir)
    tok = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    size = (model_dir / "model.safetensors").stat().st_size
    if page_pre_tokenizer(tok) is not None and size <= PAGE_MODEL_BYTES:
        return None
    return {"tokenizer": (tok.get("model") or {}).get("type", "?"), "bytes": size}


def absent_note(lang: str, why: dict) -> str:
    """Why this page has no panel, in one language (the page's UI dict holds it for each, as "try_absent_note", so the
    language switch turns it too)."""
    return UI[lang]["try_absent"].format(tokenizer=why["tokenizer"], mb=f"{why['bytes'] / 1e6:,.0f}")


def absent_html(lang: str, why: dict) -> str:
    """In the panel's place: what the panel would do and why this page has none."""
    from html import escape as e
    return f"""<section class="tryit" id="try" aria-labelledby="try-h">
<h2 id="try-h" data-ui="try">{e(UI[lang]["try"])}</h2>
<p class="note" data-ui="try_absent_note">{e(absent_note(lang, why))}</p>
</section>"""


def model_data(model_dir: Path) -> dict:
    """The model as the page needs it: config, vocabulary, pre-tokenizer and every tensor as float32."""
    from safetensors.numpy import load_file

    from model import NumpyGPT
    gpt = NumpyGPT.load(model_dir)   # validates the directory (shapes, config, tokenizer) as every user of it does
    model_dir = Path(model_dir)
    raw = load_file(str(model_dir / "model.safetensors"))
    names = sorted(raw)
    tensors, offset, blobs = {}, 0, []
    for name in names:
        a = np.ascontiguousarray(raw[name], dtype="<f4")
        key = name if name.startswith("transformer.") else "transformer." + name
        tensors[key] = {"shape": list(a.shape), "offset": offset, "size": int(a.size)}
        offset += a.size
        blobs.append(a.tobytes())
    tok = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    exported = page_pre_tokenizer(tok)
    if exported is None:
        raise ValueError("tokenizer.json: the page's tokenizer knows Lowercase, Split (isolated regex) and Whitespace")
    c = gpt.config
    return {"config": {"n_layer": c.n_layer, "n_head": c.n_head, "n_embd": c.n_embd, "n_positions": c.n_positions,
                       "vocab_size": c.vocab_size, "layer_norm_epsilon": c.layer_norm_epsilon},
            "words": gpt.tokenizer.words, "eos": tok["model"]["unk_token"], "preTokenizer": exported,
            "tensors": tensors, "weights": base64.b64encode(b"".join(blobs)).decode("ascii")}


def _first_change(f, lo: float, hi: float) -> float:
    """The smallest float in (lo, hi] where f differs from f(lo) (f changes once on the interval)."""
    start = f(lo)
    while math.nextafter(lo, hi) < hi:
        mid = lo + (hi - lo) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if f(mid) == start else (lo, mid)
    return hi


def style_data() -> dict:
    """The visual language as the page uses it, read from scenes/style.py: each colour scale by its ends (every scale
    there interpolates linearly between two colours), the percentage format by its labels and thresholds, the
    attention chart's strings."""
    from manim import ManimColor

    from scenes import style
    hexa = lambda c: ManimColor(c).to_hex()   # noqa: E731
    p = style.percent
    half = p(0.5)
    near_probe = 1 - 10 * style.FLOAT32_SUM   # inside the band that reads ">99.9%" (below 1 by more than a float32 sum)
    tiny_label, near_label = p(1e-12), p(near_probe)
    near = _first_change(lambda x: p(x) == near_label, 0.5, near_probe)
    return {
        "colours": {k: hexa(getattr(style, k.upper())) for k in
                    ("background", "text", "muted", "prob", "logit", "temperature", "masked", "mask_accent",
                     "cell_outline", "query", "key")},
        "tokenPalette": [hexa(c) for c in style.TOKEN_PALETTE],
        "scales": {"attention": [hexa(style.attention_colour(0.0)), hexa(style.attention_colour(1.0))],
                   "share": [hexa(style.share_colour(0.0)), hexa(style.share_colour(1.0))],
                   "positive": [hexa(style.weight_colour(0.0, 1.0)), hexa(style.weight_colour(1.0, 1.0))],
                   "negative": [hexa(style.weight_colour(-0.0, 1.0)), hexa(style.weight_colour(-1.0, 1.0))],
                   "neuron": [hexa(style.neuron_colour(1e-300, 0.0, 1.0)), hexa(style.neuron_colour(1.0, 0.0, 1.0))],
                   "neuronInactive": hexa(style.NEURON_INACTIVE)},
        "percent": {"zero": p(0.0), "tiny": tiny_label, "near": near_label,
                    "decimals": len(half.rstrip("%").split(".")[1]) if "." in half else 0,
                    "tinyBelow": _first_change(lambda x: p(x) == tiny_label, 1e-12, 0.5),
                    "nearFrom": near, "nearBelow": _first_change(lambda x: p(x) == near_label, near_probe, 1.0)},
        "signed": {"decimals": len(style.signed(1.0).split(".")[1]), "plus": style.signed(1.0)[0],
                   "minus": style.MINUS},
        "shownOffset": style.shown(0),   # a layer's or head's index as counted on screen
        "maskText": style.MASK_TEXT,
        "attention": style.ATTENTION.table,
        "eosLabel": style.token_label("<|endoftext|>"),
    }


def write_assets(folder: Path, model_dir: Path) -> list[str]:
    """course/tryit/: data.js (generated), engine.js and panel.js; returns their paths relative to `folder`."""
    out = folder / "tryit"
    out.mkdir(parents=True, exist_ok=True)
    data = {**model_data(model_dir), "style": style_data()}
    text = "window.GPT_LECTURE_DATA = " + json.dumps(data, ensure_ascii=False, separators=(",", ":")) + ";\n"
    write_text_atomic(out / "data.js", "// Generated by pipeline/tryit.py from model/weights and scenes/style.py.\n"
                      + text)
    for name in ("engine.js", "panel.js"):
        write_text_atomic(out / name, (WEB / name).read_text(encoding="utf-8"))
    return [f"tryit/{name}" for name in SCRIPTS]


def identity(model_dir: Path) -> str:
    """What the panel is made from: its code, the weights and the style; the page is made again when it changes."""
    from importlib.util import find_spec

    from model.weights import checkpoint_digests
    style = Path(find_spec("scenes.style").origin)   # its path only: importing it would import manim (3 s)
    files = [*CODE, style] + sorted(p for p in Path(model_dir).glob("*.json") if not p.name.startswith("."))
    weights = checkpoint_digests(model_dir)             # the weights' sha256, remembered by size and time
    return hashlib.sha256(b"".join(f.read_bytes() for f in files if f.is_file())
                          + json.dumps(weights, sort_keys=True).encode()).hexdigest()


def scene_numbers(manifest: dict) -> dict | None:
    """What "try this scene's numbers" opens the panel on: the clip's prompt, layer, head, position, temperature
    and seed, from its manifest's parameters (resolved) or, where a parameter was left to a rule, its values. None
    when the clip runs no prompt through the model."""
    params, values = manifest.get("params") or {}, manifest.get("values") or {}

    def pick(*keys):
        for source in (params, values):
            for k in keys:
                v = source.get(k)
                if v is not None and v != "auto":
                    return v
        return None
    prompt = pick("prompt")
    if not isinstance(prompt, str) or not prompt:
        return None
    out = {"prompt": prompt}
    for key, names in (("layer", ("layer",)), ("head", ("head",)), ("position", ("focus",)),
                       ("temperature", ("temperature",)), ("seed", ("seed",))):
        v = pick(*names)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[key] = v
    return out


def write_poster(clip: Path, manifest: dict, dest: Path) -> None:
    """The clip's first beat's still, as a WebP picture at most POSTER_WIDTH wide: the beat's last frame, as the project's
    stills are (`render.py --format png --section <beat>`); its first frame is the black before the title fades in."""
    import av
    beat = (manifest.get("timeline") or [{}])[0]
    end = float(beat.get("end", 0.0))
    with av.open(str(clip)) as c:
        stream = c.streams.video[0]
        rate = float(stream.average_rate or 0) or 30.0
        if end > 2.0:
            c.seek(int((end - 2.0) / stream.time_base), stream=stream, backward=True)
        image = None
        for f in c.decode(stream):
            if image is not None and f.time is not None and f.time > end - 0.5 / rate:
                break
            image = f.to_image()
        if image is None:
            raise ValueError(f"{clip.name}: no frame to make a poster of")
    if image.width > POSTER_WIDTH:
        image = image.resize((POSTER_WIDTH, round(image.height * POSTER_WIDTH / image.width)))
    tmp = dest.with_name(f".{dest.name}.tmp")
    image.save(tmp, "WEBP", quality=80)   # half a JPEG's bytes at the same look (a title card: text on black)
    tmp.replace(dest)


def panel_html(lang: str, lessons: list[dict]) -> str:
    """The panel's markup (its words carry data-ui, so the page's language switch changes them); panel.js fills it.
    It opens on the first clip's numbers in the page's language; on a page without one, on the softmax scene's
    default prompt in that language (scenes.prompts.uncertain_prompt, chosen by rule)."""
    from html import escape as e

    from scenes.prompts import uncertain_prompt
    u = UI[lang]
    if not any((lesson["variants"].get(lang) or {}).get("try") for lesson in lessons):
        prompt = f' data-prompt="{e(uncertain_prompt(lang)["prompt"])}"'
    else:
        prompt = ""

    def words(key, tag="span"):
        return f'<{tag} data-ui="{key}">{e(u[key])}</{tag}>'
    return f"""<section class="tryit" id="try" aria-labelledby="try-h"{prompt}>
<h2 id="try-h" data-ui="try" tabindex="-1">{e(u["try"])}</h2>
<p class="note" data-ui="try_note">{e(u["try_note"])}</p>
<form class="try-form"><label>{words("prompt")}<input class="try-prompt" type="text" autocomplete="off"
 spellcheck="false"></label><button type="submit" data-ui="run">{e(u["run"])}</button></form>
<p class="try-error" role="alert" hidden></p>
<p class="try-status sr-only" role="status" aria-live="polite"></p>
<div class="try-tokens" role="group" aria-label="{e(u["tokens_label"])}" data-ui-label="tokens_label"></div>
<div class="try-cols">
<div class="try-box"><h3 data-ui="next_word">{e(u["next_word"])}</h3>
<label class="try-slider">{words("temperature")} <input class="try-temperature" type="range" min="0" max="3" step="0.05"
 value="1"> <output class="try-temperature-value"></output></label>
<div class="try-next"></div>
<div class="try-sampling"><label>{words("seed")} <input class="try-seed" type="number" min="0" step="1" value="0"></label>
<button type="button" class="try-draw" data-ui="draw">{e(u["draw"])}</button>
<button type="button" class="try-step" data-ui="step">{e(u["step"])}</button>
<button type="button" class="try-reset" data-ui="reset">{e(u["reset"])}</button></div>
<ol class="try-steps"></ol><p class="try-generated"></p></div>
<div class="try-box"><h3 data-ui="attention">{e(u["attention"])}</h3>
<label>{words("layer")} <select class="try-layer"></select></label>
<label>{words("head")} <select class="try-head"></select></label>
<div class="try-attention table" tabindex="0" role="region" aria-label="{e(u["attention_scroll"])}"
 data-ui-label="attention_scroll"></div></div>
<div class="try-box"><h3 data-ui="neurons">{e(u["neurons"])}</h3><div class="try-neurons table" tabindex="0" role="region"
 aria-label="{e(u["neurons"])}" data-ui-label="neurons"></div></div>
<div class="try-box wide"><h3 data-ui="lens">{e(u["lens"])}</h3><div class="try-lens table" tabindex="0" role="region"
 aria-label="{e(u["lens"])}" data-ui-label="lens"></div></div>
</div></section>"""


PANEL_CSS = """
.tryit { margin: 0 0 2.5rem; padding-bottom: 1.5rem; border-bottom: 1px solid var(--line); }
.tryit h3 { font-size: 1.05rem; margin: 0 0 .5rem; }
.tryit .note { color: var(--muted); margin: .3rem 0; }
.try-form { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; }
.try-form label { flex: 1 1 16rem; display: flex; flex-direction: column; }
.tryit input[type=text], .tryit input[type=number], .tryit select { font: inherit; color: var(--text);
  background: #000; border: 1px solid var(--edge); border-radius: .3rem; padding: .35rem .5rem; min-height: 2.5rem; }
.tryit input[type=number] { width: 7rem; }
.tryit button { font: inherit; color: var(--text); background: var(--panel); border: 1px solid var(--edge);
  border-radius: .4rem; padding: .35rem .8rem; cursor: pointer; min-height: 2.5rem; }
.try-error { color: var(--mask-accent); font-weight: bold; }
.try-tokens { display: flex; flex-wrap: wrap; gap: .3rem; margin: .7rem 0; }
.tryit .try-token { border-width: 2px; padding: .2rem .5rem; min-height: 2.2rem; }
.tryit .try-token[aria-pressed="true"] { background: #222; outline: 2px solid var(--focus); }
.tryit .table:focus-visible { outline: 3px solid var(--focus); }
.try-cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 26rem), 1fr)); gap: 1rem; }
.try-box { background: var(--panel); border: 1px solid var(--line); border-radius: .4rem; padding: .6rem .8rem;
  min-width: 0; }
.try-box.wide { grid-column: 1 / -1; }
.try-slider { display: flex; align-items: center; gap: .5rem; }
.try-slider input { flex: 1; }
.try-bars { list-style: none; padding: 0; margin: .5rem 0; }
.try-bars li { display: grid; grid-template-columns: minmax(4rem, 8rem) 1fr 4.2rem; gap: .5rem; align-items: center; }
.try-bars .p, .tryit .num, .try-lens .p { font-variant-numeric: tabular-nums; text-align: right; }
.tryit .bar { display: block; height: .9rem; background: #1a1a1a; min-width: 3rem; }
.tryit .bar > span { display: block; height: 100%; }
.try-sampling { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.try-steps { margin: .4rem 0; padding-left: 1.4rem; }
.try-grid { border-collapse: separate; border-spacing: 2px; font-size: .75rem; }
.try-grid td { min-width: 3.1rem; text-align: center; padding: .2rem .25rem; border: 1px solid var(--cell-outline); }
.try-grid th.current { text-decoration: underline; }
.try-grid td.current { outline: 2px solid var(--focus); outline-offset: -2px; }
.try-grid th.axis { color: var(--muted); font-size: .6875rem; }
.try-grid th[scope=row], .try-grid th.axis { position: sticky; left: 0; background: var(--panel); z-index: 1; }
.try-lens td, .try-lens th, .try-neurons td { white-space: nowrap; }
.try-lens table, .try-neurons table { font-size: .8125rem; }
.try-lens td.hit .w { color: var(--focus); font-weight: bold; }
.try-lens td.target > div { display: flex; gap: .4rem; align-items: center; }
.try-lens td.target .bar { width: 4rem; min-width: 4rem; }
.try-grid td { min-width: 2.9rem; }
"""
