"""Benchmark the narration voices: load time, real-time factor, synthesis seconds per minute of speech, speaking
rate; writes docs/lab/voices.json and a spectrogram PNG of one line per language (drawn with numpy + PIL).

    .venv/bin/python benchmarks/bench_voices.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from speech import audio, voices  # noqa: E402

SENTENCES = {
    "en": [
        "A GPT model reads a sequence of tokens and predicts the next one.",
        "Each token is first turned into a vector by the embedding table.",
        "Attention lets every position look back at the positions before it.",
        "The query and key vectors decide how much each earlier token matters.",
        "A causal mask hides the future, so the model cannot peek ahead.",
        "After attention, the MLP transforms each position on its own.",
        "The GELU nonlinearity bends the hidden layer smoothly.",
        "Residual connections add each layer's output back to its input.",
        "Layer normalisation keeps the numbers in a comfortable range.",
        "Finally, a softmax turns the logits into next-token probabilities.",
    ],
    "zh": [
        "GPT模型读入一串词元，然后预测下一个词元。",
        "每个词元先由嵌入表变成一个向量。",
        "注意力让每个位置回看它之前的所有位置。",
        "查询向量和键向量决定每个先前词元有多重要。",
        "因果掩码遮住未来，模型无法偷看后面的内容。",
        "注意力之后，MLP分别变换每一个位置。",
        "GELU非线性让隐藏层平滑地弯曲。",
        "残差连接把每一层的输出加回它的输入。",
        "层归一化让数值保持在合适的范围里。",
        "最后，softmax把logits变成下一个词元的概率。",
    ],
}
SPECTROGRAM_LINE = {"en": 3, "zh": 5}


def spectrogram_png(x: np.ndarray, rate: int, path: Path, title: str) -> None:
    """Log-magnitude STFT (25 ms Hann window, 5 ms hop), 0-8 kHz, 80 dB range, drawn with PIL."""
    spectrogram_image(x, rate, title).save(path)


def spectrogram_image(x: np.ndarray, rate: int, title: str):
    """The spectrogram_png picture, as a PIL image (1260 x 450)."""
    from PIL import Image, ImageDraw
    from scipy.signal import stft
    nper = int(0.025 * rate)
    f, t, z = stft(x, rate, nperseg=nper, noverlap=nper - int(0.005 * rate), nfft=2048)
    keep = f <= 8000
    db = 20 * np.log10(np.abs(z[keep]) + 1e-10)
    db = np.clip((db - (db.max() - 80)) / 80, 0, 1)[::-1]  # low frequencies at the bottom
    # a simple dark-blue -> yellow colour map
    stops = np.array([[0, 0, 4], [60, 15, 110], [180, 55, 90], [250, 140, 40], [252, 250, 180]], float)
    pos = db * (len(stops) - 1)
    lo = np.floor(pos).astype(int).clip(0, len(stops) - 2)
    frac = (pos - lo)[..., None]
    rgb = (stops[lo] * (1 - frac) + stops[lo + 1] * frac).astype(np.uint8)
    img = Image.fromarray(rgb).resize((1200, 400), Image.BILINEAR)
    canvas = Image.new("RGB", (1260, 450), "white")
    canvas.paste(img, (50, 30))
    draw = ImageDraw.Draw(canvas)
    from PIL import ImageFont
    cjk = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")  # fonts-noto-cjk, from scripts/setup.sh
    font = ImageFont.truetype(str(cjk), 16) if cjk.exists() else None
    draw.text((50, 6), title, fill="black", font=font)
    for khz in range(0, 9, 2):
        y = 30 + int(400 * (1 - khz / 8))
        draw.text((5, min(y, 420) - 6), f"{khz} kHz", fill="black")
    seconds = x.size / rate
    for s in range(int(seconds) + 1):
        draw.text((50 + int(1200 * s / seconds), 433), f"{s} s", fill="black")
    return canvas


def bench(lang: str, runs: int) -> dict:
    v = voices.voice(lang)
    t0 = time.perf_counter()
    if lang == "zh":
        v.english._load()
    v._load()
    load = time.perf_counter() - t0
    totals, outputs = [], None
    for _ in range(runs):
        elapsed, outs = 0.0, []
        for s in SENTENCES[lang]:
            t = time.perf_counter()
            outs.append(v.synthesize(s))
            elapsed += time.perf_counter() - t
        totals.append(elapsed)
        if outputs is not None:
            assert all(np.array_equal(a, b) for a, b in zip(outputs, outs)), "not deterministic"
        outputs = outs
    trimmed = [audio.trim_silence(x, v.sample_rate) for x in outputs]
    speech = sum(x.size for x in trimmed) / v.sample_rate
    raw = sum(x.size for x in outputs) / v.sample_rate
    rtf = statistics.median(totals) / raw
    text = " ".join(SENTENCES[lang])
    result = {
        "voice": v.name, "licence": v.licence, "sample_rate": v.sample_rate, "sentences": len(SENTENCES[lang]),
        "load_seconds": round(load, 3), "audio_seconds": round(raw, 2), "speech_seconds_trimmed": round(speech, 2),
        "synthesis_seconds_median": round(statistics.median(totals), 3),
        "synthesis_seconds_runs": [round(t, 3) for t in totals],
        "real_time_factor": round(rtf, 4), "synthesis_seconds_per_minute_of_speech": round(rtf * 60, 2),
        "deterministic_over_runs": True,
    }
    if lang == "en":
        result["words_per_minute"] = round(len(re.findall(r"[A-Za-z'-]+", text)) / (speech / 60), 1)
    else:
        han = len(re.findall(r"[\u4e00-\u9fff]", text))
        result["chinese_characters_per_second"] = round(han / speech, 2)
        result["note"] = "characters per second counts Han characters over all the audio, Latin runs included"
        result["runs_of_spectrogram_line"] = v.runs(SENTENCES[lang][SPECTROGRAM_LINE[lang]])
    line = SENTENCES[lang][SPECTROGRAM_LINE[lang]]
    png = REPO / "docs" / "lab" / f"voice_spectrogram_{lang}.png"
    spectrogram_png(trimmed[SPECTROGRAM_LINE[lang]], v.sample_rate, png, f"{v.name}: {line}")
    result["spectrogram"] = str(png.relative_to(REPO))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    results = {"machine": {"cores": __import__("os").cpu_count(), "python": platform.python_version(),
                           "processor": platform.processor() or platform.machine()},
               "runs": args.runs}
    for lang in ("en", "zh"):
        results[lang] = bench(lang, args.runs)
        print(json.dumps({lang: results[lang]}, ensure_ascii=False, indent=1))
    (REPO / "docs" / "lab" / "voices.json").write_text(json.dumps(results, ensure_ascii=False, indent=2) + "\n",
                                               encoding="utf-8")


if __name__ == "__main__":
    main()
