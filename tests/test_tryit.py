"""The course page's "Try it" panel (pipeline/tryit.py, pipeline/web/): the shipped model running in the page, opened
from file:// in headless Chromium, checked against the NumPy model: seeded random prompts in both languages typed
into the panel, trace() within 1e-4, every drawn label equal to its rounding by scenes/style.py, the seeded draws
equal to model.generate's, the command line's messages, the scene buttons and the posters. One browser session."""

from __future__ import annotations

import json
import random
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from model import ModelError, probabilities
from model.analysis.mlp import neuron_readout
from model.analysis.lens import logit_lens
from model.generate import generate
from pipeline import page, packaging
from scenes import style

SEED = 20   # the prompts' generator
TOL = 1e-4


def write_clip(path: Path, colour: tuple[int, int, int], prompt: str, lang: str, layer: int, head: int) -> None:
    """A 2 s clip at 10 fps as render.py leaves one, and its manifest: two beats of 1 s, the scene's prompt, layer and
    head as its parameters. The first frame is black (a title fading in), the first beat's last frame all `colour`,
    the others grey."""
    import av
    with av.open(str(path), "w") as c:
        s = c.add_stream("libx264", rate=10)
        s.width, s.height, s.pix_fmt = 320, 180, "yuv420p"
        for i in range(20):
            rgb = np.zeros((180, 320, 3), np.uint8) + (np.array(colour, np.uint8) if i == 9 else 0 if i == 0 else 90)
            for packet in s.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                c.mux(packet)
        for packet in s.encode():
            c.mux(packet)
    manifest = {"scene": "queries_keys", "titles": {"en": "Queries and keys", "zh": "查询与键"},
                "beat_titles": {"en": {"grid": "The grid"}, "zh": {"grid": "网格"}},
                "params": {"prompt": prompt, "layer": layer, "head": head, "focus": "auto", "lang": lang},
                "output": path.name, "resolution": [320, 180], "cache_key": f"test-{lang}", "captions": [],
                "timeline": [{"section": "title", "start": 0.0, "end": 1.0}, {"section": "grid", "start": 1.0, "end": 2.0}],
                "values": {"prompt": prompt, "layer": layer, "head": head}}
    path.with_name(path.name + ".json").write_text(json.dumps(manifest, ensure_ascii=False))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    media = tmp_path_factory.mktemp("tryit")
    en, zh = media / "queries_keys.mp4", media / "queries_keys-lang-zh.mp4"
    write_clip(en, (200, 30, 30), "michael jordan plays", "en", 1, 2)
    write_clip(zh, (30, 30, 200), "迈克尔乔丹打", "zh", 2, 3)
    index = page.build_course([{"en": en, "zh": zh}], media / "course", "en", packaging.page_colours)
    return {"index": index, "folder": index.parent, "clips": {"en": en, "zh": zh}}


@pytest.fixture(scope="module")
def browser(course):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver, "scripts/setup.sh test installs Debian's chromium and chromium-driver"
    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--mute-audio"):
        options.add_argument(arg)   # nothing that loosens file://
    options.binary_location = chromium
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(options=options, service=Service(driver))
    d.set_window_size(1280, 900)
    d.get(course["index"].as_uri())
    yield d
    d.quit()


def js(d, script: str, *args):
    return d.execute_script(script, *args)


def trace_in_page(d, prompt: str) -> dict:
    return d.execute_async_script("const done = arguments[arguments.length - 1];"
                                  "gptLecture.trace(arguments[0]).then(done, e => done({error: e.message}));", prompt)


def type_prompt(d, prompt: str) -> None:
    from selenium.webdriver.common.by import By
    box = d.find_element(By.CSS_SELECTOR, ".try-prompt")
    box.clear()
    box.send_keys(prompt)
    d.find_element(By.CSS_SELECTOR, ".try-form button[type=submit]").click()


def random_prompts(gpt, n: int) -> list[tuple[str, str]]:
    """Seeded random prompts of 1..32 words, each language written as it is (Chinese without spaces)."""
    rng = random.Random(SEED)
    words = [w for w in gpt.tokenizer.words if w != "<|endoftext|>"]
    by_lang = {"en": [w for w in words if w.isascii()], "zh": [w for w in words if not w.isascii()]}
    out = []
    for i in range(n):
        lang = ("en", "zh")[i % 2]
        picked = rng.choices(by_lang[lang], k=rng.randint(1, gpt.config.n_positions))
        out.append((lang, ("" if lang == "zh" else " ").join(picked)))
    return out


def drawn(d, selector: str) -> list[str]:
    return js(d, f"return [...document.querySelectorAll({json.dumps(selector)})].map(e => e.textContent)")


def test_typed_prompts_trace_and_draw_the_numpy_models_numbers(gpt, browser):
    d = browser
    for lang, prompt in random_prompts(gpt, 8):
        t = gpt.trace(prompt)
        got = trace_in_page(d, prompt)
        assert got["tokens"] == t["tokens"] and got["token_ids"] == t["token_ids"], prompt
        assert np.abs(np.array(got["logits"]) - t["logits"]).max() < TOL
        for layer, heads in zip(t["layers"], got["attention"]):
            assert np.abs(np.array(heads) - layer["attn"]["weights"]).max() < TOL
        type_prompt(d, prompt)
        assert drawn(d, ".try-token") == [style.token_label(w) for w in t["tokens"]]
        # next word at T = 1: the top words and their labels, rounded as the video rounds
        p = probabilities(t["logits"][-1], 1.0)
        top = np.argsort(-p, kind="stable")[:8]
        assert drawn(d, ".try-next .w") == [style.token_label(gpt.tokenizer.words[i]) for i in top]
        assert drawn(d, ".try-next .p") == [style.percent(p[i]) for i in top]
        # attention of the shown layer and head: a row per key, a column per query, the future masked
        layer, head = map(int, js(d, "return [document.querySelector('.try-layer').value, "
                                     "document.querySelector('.try-head').value]"))
        w = t["layers"][layer]["attn"]["weights"][head]
        T = len(t["tokens"])
        cells = drawn(d, ".try-grid td")
        assert cells == [style.MASK_TEXT if k > q else style.percent(w[q, k]) for k in range(T) for q in range(T)]
        # the logit lens at the last position: every point's top words
        lens = logit_lens(gpt, t, T - 1)
        want = [style.percent(pt["probabilities"][i]) for pt in lens
                for i in np.argsort(-pt["probabilities"], kind="stable")[:3]]
        assert drawn(d, ".try-lens td:not(.target) .p") == want
        # the neurons that push the predicted word most: act_i × neuron_readout's per-unit push on its logit
        word = int(np.argmax(t["logits"][-1]))
        rows = sorted(((t["layers"][l]["mlp"]["act"][T - 1][n] *
                        neuron_readout(gpt, t, l, n, T - 1)["per_word"][word], l, n)
                       for l in range(gpt.config.n_layer) for n in range(gpt.config.n_inner)), key=lambda r: -r[0])[:8]
        assert drawn(d, ".try-neurons td.push") == [style.signed(v) for v, _, _ in rows]
        assert drawn(d, ".try-neurons td:nth-child(2)") == [str(n) for _, _, n in rows]


def test_probabilities_temperature_and_the_video_formats_match_python(gpt, browser):
    d = browser
    row = gpt.trace("the")["logits"][-1]
    for T in (0.0, 0.05, 0.5, 1.0, 3.0):
        got = np.array(js(d, "return gptLecture.probabilities(arguments[0], arguments[1])", row.tolist(), T))
        assert np.abs(got - probabilities(row, T)).max() < 1e-12
    tie = js(d, "return gptLecture.probabilities([1, 3, 3, 0], 0)")
    assert tie == probabilities([1, 3, 3, 0], 0).tolist()
    # the slider at 0: the argmax alone
    js(d, "const s = document.querySelector('.try-temperature'); s.value = 0; s.dispatchEvent(new Event('input'))")
    assert drawn(d, ".try-next .p")[:2] == ["100.0%", "0%"]
    js(d, "const s = document.querySelector('.try-temperature'); s.value = 1; s.dispatchEvent(new Event('input'))")
    # percentages and signed numbers: boundaries, exact ties and random values, as scenes/style.py writes them
    rng = np.random.default_rng(0)
    ps = [0, 1e-9, 0.0004999, 0.0005, 0.00125, 0.0025, 0.0075, 0.9994, 0.9995, 0.99999, 1 - 1e-9, 1.0,
          float(Fraction(1, 4) / 100), 0.5, 0.123456] + rng.random(200).tolist() + (rng.random(100) * 1e-3).tolist()
    assert js(d, "return arguments[0].map(gptLecture.percent)", ps) == [style.percent(p) for p in ps]
    xs = [0.0, -0.001, 0.005, -0.005, 0.125, -0.125, 1.005, 2.675] + (rng.normal(size=200) * 3).tolist()
    assert js(d, "return arguments[0].map(gptLecture.signed)", xs) == [style.signed(x) for x in xs]
    # the attention scale: the colour of style.attention_colour, to the unit of a channel
    ws = rng.random(50).tolist() + [0.0, 1.0]
    for got, w in zip(js(d, "return arguments[0].map(gptLecture.attentionColour)", ws), ws):
        want = style.attention_colour(w).to_hex()
        assert max(abs(int(got[i:i + 2], 16) - int(want[i:i + 2], 16)) for i in (1, 3, 5)) <= 1, (w, got, want)


def test_the_seeded_draw_and_generation_are_model_generates(gpt, browser):
    from selenium.webdriver.common.by import By
    d = browser
    for prompt, T, seed in (("a fluffy blue fox", 1.0, 7), ("迈克尔乔丹打", 0.5, 12345), ("the", 0.0, 3)):
        type_prompt(d, prompt)
        js(d, "const s = document.querySelector('.try-temperature'); s.value = arguments[0];"
              "s.dispatchEvent(new Event('input'));"
              "const n = document.querySelector('.try-seed'); n.value = arguments[1]; n.dispatchEvent(new Event('change'))",
           T, seed)
        d.find_element(By.CSS_SELECTOR, ".try-draw").click()
        d.find_element(By.CSS_SELECTOR, ".try-step").click()
        d.find_element(By.CSS_SELECTOR, ".try-step").click()
        records = generate(gpt, prompt, steps=3, temperature=T, seed=seed)
        ui = page.UI["en"]
        want = [ui["argmax"].format(word=r["sampled"]["word"], p=style.percent(r["sampled"]["probability"]))
                if r["u"] is None else ui["drawn"].format(u=f"{r['u']:.4f}", word=r["sampled"]["word"],
                                                          p=style.percent(r["sampled"]["probability"]))
                for r in records]
        assert drawn(d, ".try-steps li") == want
        n = js(d, "return gptLecture.split(arguments[0]).length", prompt)
        assert n + 3 == len(drawn(d, ".try-token"))
        # a new seed starts the draws again, from the prompt
        js(d, "const n = document.querySelector('.try-seed'); n.value = 1; n.dispatchEvent(new Event('change'))")
        assert drawn(d, ".try-steps li") == [] and len(drawn(d, ".try-token")) == n
    js(d, "const s = document.querySelector('.try-temperature'); s.value = 1; s.dispatchEvent(new Event('input'))")


@pytest.mark.parametrize("prompt", ["michael jordn plays", "迈克x打", "fox ' quick", "the " * 33, "   "])
def test_bad_prompts_get_the_command_lines_message(gpt, browser, prompt):
    with pytest.raises(ModelError) as e:
        gpt.trace(prompt)
    assert trace_in_page(browser, prompt) == {"error": str(e.value)}
    type_prompt(browser, prompt)
    assert js(browser, "const e = document.querySelector('.try-error'); return e.hidden ? null : e.textContent") \
        == str(e.value)


def test_each_clip_opens_the_panel_on_its_numbers_and_shows_its_first_beats_still(course, browser):
    from selenium.webdriver.common.by import By
    from PIL import Image
    d = browser
    for lang, (prompt, layer, head) in (("zh", ("迈克尔乔丹打", 2, 3)), ("en", ("michael jordan plays", 1, 2))):
        d.find_element(By.CSS_SELECTOR, f".langs button[data-lang='{lang}']").click()
        d.find_element(By.CSS_SELECTOR, f".variant[data-variant='{lang}'] button.try-scene").click()
        assert js(d, "return document.querySelector('.try-prompt').value") == prompt
        assert js(d, "return [+document.querySelector('.try-layer').value, +document.querySelector('.try-head').value]") \
            == [layer, head]
        assert drawn(d, ".try-layer option:checked") == [str(style.shown(layer))]   # counted from 1 on screen
        poster = js(d, "return document.querySelector('#lesson-1 video').getAttribute('poster')")
        assert poster == f"posters/{course['clips'][lang].stem}.webp"
        pixels = np.asarray(Image.open(course["folder"] / poster).convert("RGB"), float)
        assert np.abs(pixels.mean((0, 1)) - ((200, 30, 30) if lang == "en" else (30, 30, 200))).max() < 12
    assert js(d, "return document.querySelector('#try h2').textContent") == page.UI["en"]["try"]
    errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def test_the_panel_fits_a_phone_and_fetches_nothing(course, browser):
    browser.set_window_size(390, 844)
    try:
        assert js(browser, "return document.documentElement.scrollWidth") <= 390
    finally:
        browser.set_window_size(1280, 900)
    for f in course["folder"].rglob("*"):
        if f.suffix in (".html", ".js"):
            text = f.read_text(encoding="utf-8")
            assert "http://" not in text and "https://" not in text, f


# --- accessibility: focus, announcements, the page's language, contrast --------------------------------------------
def wait_js(d, script: str, timeout: float = 10.0):
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(d, timeout, poll_frequency=0.05).until(lambda drv: drv.execute_script(script))


def contrast(a: str, b: str) -> float:
    """WCAG 2.1's contrast ratio of two CSS colours "rgb(r, g, b)" (written here apart from the page's own)."""
    def lum(css):
        r, g, b = (float(x) / 255 for x in css[css.index("(") + 1:css.index(")")].split(",")[:3])
        lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    x, y = sorted((lum(a), lum(b)), reverse=True)
    return (x + 0.05) / (y + 0.05)


def test_the_panel_keeps_and_moves_focus_and_announces_its_results(gpt, course, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    d = browser
    d.find_element(By.CSS_SELECTOR, ".langs button[data-lang='en']").click()
    prompt = "michael jordan plays"
    type_prompt(d, prompt)
    t = gpt.trace(prompt)
    p = probabilities(t["logits"][-1], 1.0)
    top = np.argsort(-p, kind="stable")[:3]
    words = ", ".join(f"“{style.token_label(gpt.tokenizer.words[i])}” {style.percent(p[i])}" for i in top)
    ui = page.UI["en"]
    assert wait_js(d, "return document.querySelector('.try-status').textContent") == ui["status_next"].format(words=words)
    assert js(d, "const s = document.querySelector('.try-status'); return [s.getAttribute('role'), "
                 "s.getAttribute('aria-live')]") == ["status", "polite"]
    # a token pressed from the keyboard keeps the focus, is pressed, and the prediction there is announced
    js(d, "document.querySelectorAll('.try-token')[1].focus()")
    ActionChains(d).send_keys(Keys.ENTER).perform()
    assert js(d, "return [...document.querySelectorAll('.try-token')].indexOf(document.activeElement)") == 1
    assert js(d, "return [...document.querySelectorAll('.try-token')].map(b => b.getAttribute('aria-pressed'))") == \
        ["false", "true", "false"]
    predicted = style.token_label(gpt.tokenizer.words[int(np.argmax(t["logits"][1]))])
    want = ui["status_position"].format(t=1, token=t["tokens"][1], predicted=ui["predicted"].format(word=predicted))
    assert wait_js(d, f"return document.querySelector('.try-status').textContent === {json.dumps(want)}")
    # a draw is announced as the list of steps writes it
    d.find_element(By.CSS_SELECTOR, ".try-draw").click()
    step = drawn(d, ".try-steps li")[-1]
    assert wait_js(d, f"return document.querySelector('.try-status').textContent === {json.dumps(step)}")
    # "Try this scene's numbers" takes the focus into the panel: its heading, so that Tab goes on inside it
    d.find_element(By.CSS_SELECTOR, ".variant[data-variant='en'] button.try-scene").click()
    assert js(d, "return document.activeElement.id") == "try-h"
    ActionChains(d).send_keys(Keys.TAB).perform()
    assert js(d, "return document.activeElement.classList.contains('try-prompt')")


def test_every_label_and_message_follows_the_page_language(gpt, browser):
    from selenium.webdriver.common.by import By
    d = browser
    for lang in ("zh", "en"):
        d.find_element(By.CSS_SELECTOR, f".langs button[data-lang='{lang}']").click()
        ui = page.UI[lang]
        for prompt in ("michael jordn plays", "the " * 33, "   "):
            with pytest.raises(ModelError) as e:
                gpt.trace(prompt)
            english = str(e.value)
            if english.startswith("unknown word"):
                word = english.split(" ")[2].rstrip(":")
                close = english.split("; did you mean ")[1].rstrip("?") if "did you mean" in english else ""
                want = ui["err_unknown"].format(word=word, n=len(gpt.tokenizer.words),
                                                hint=ui["err_hint"].format(words=close) if close else "")
            elif "tokens long" in english:
                want = ui["err_long"].format(n=33, max=gpt.config.n_positions)
            else:
                want = ui["err_empty"]
            if lang == "en":
                assert want == english   # the English page words it as the command line does
            type_prompt(d, prompt)
            assert js(d, "return document.querySelector('.try-error').textContent") == want
        type_prompt(d, "michael jordan plays")
        labels = js(d, "return ['.try-tokens', '.try-attention', '.try-lens', '.try-neurons'].map("
                       "s => document.querySelector(s).getAttribute('aria-label'))")
        assert labels == [ui["tokens_label"], ui["attention_scroll"], ui["lens"], ui["neurons"]]
        heads = drawn(d, ".try-lens thead th") + drawn(d, ".try-neurons thead th")
        assert heads[:2] == [ui["lens_where"], ui["lens_top"]] and heads[3:] == [ui["layer"], ui["neuron"],
                                                                                ui["activation"], ui["push"]]
        assert js(d, "return [...document.querySelectorAll('.try-lens thead th, .try-neurons thead th')]"
                     ".every(th => th.getAttribute('scope'))")
        assert js(d, "return [...document.querySelectorAll('.try-grid th:not(.axis)')].every(th => th.scope)")


@pytest.mark.slow
def test_every_cell_text_and_control_border_has_enough_contrast(gpt, course, browser):
    """Each attention cell's text against its background >= 4.5:1 (the page picks the text colour by the measured
    ratio), on a 32-word prompt at every layer and head; the masked cells too; each control's border >= 3:1 against
    what is around it (1.4.11); text sized in rem, never px, so the reader's text size applies."""
    import re
    d = browser
    (_, prompt), = [x for x in random_prompts(gpt, 8) if len(gpt.tokenizer.encode(x[1])) >= 20][:1]
    type_prompt(d, prompt)
    worst = 21.0
    for layer in range(gpt.config.n_layer):
        for head in range(gpt.config.n_head):
            js(d, "for (const [sel, v] of [['.try-layer', arguments[0]], ['.try-head', arguments[1]]]) {"
                  "const s = document.querySelector(sel); s.value = v; s.dispatchEvent(new Event('change')); }", layer, head)
            pairs = js(d, "return [...document.querySelectorAll('.try-grid td, .try-grid th, .try-neurons td')].map(c => "
                          "[getComputedStyle(c).color, getComputedStyle(c).backgroundColor])")
            for fg, bg in pairs:
                bg = bg if not bg.startswith("rgba(0, 0, 0, 0)") else "rgb(17, 17, 17)"   # the panel's #111
                worst = min(worst, contrast(fg, bg))
    assert worst >= 4.5
    borders = js(d, "return [...document.querySelectorAll('.tryit input, .tryit select, .tryit button, .langs button, "
                    ".beats button, button.copy, textarea')].map(c => [getComputedStyle(c).borderTopColor, "
                    "getComputedStyle(c).backgroundColor, c.className])")
    assert len(borders) > 10
    for border, bg, name in borders:
        for around in ("rgb(0, 0, 0)", "rgb(17, 17, 17)"):   # the page and the panels
            assert contrast(border, around) >= 3.0, name
    css = "".join(re.findall(r"<style>(.*?)</style>", course["index"].read_text(encoding="utf-8"), re.S))
    assert not re.search(r"font(-size)?:[^;}]*\d+px", css)
