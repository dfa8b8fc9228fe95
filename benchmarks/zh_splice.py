"""The Latin runs of the Chinese narration, before and after they are shifted to the Chinese voice
(speech/voices.py, SPLICE_SHIFT): pitch, formants, joins, loudness and speaking rate over every Chinese lecture
line that has a Latin run; writes docs/lab/zh_splice.json and docs/lab/zh_splice_spectrogram.png.

    .venv/bin/python render.py narration export --config lecture.toml --lang zh --narration /tmp/narration
    .venv/bin/python benchmarks/zh_splice.py /tmp/narration/zh/script.csv [--candidates]

The lines are the spoken forms of the lecture's captions (script.csv's `spoken` column); nothing is rendered.
"Before" is the same line with the shift turned off (ZhttsVoice.synthesize_runs(shift=False)), everything else
equal. With --candidates (needs pyworld, which the project does not install), the WORLD vocoder is measured as the
other candidate on the same lines.

Figures (all on the line as ZhttsVoice.synthesize makes it, 24 kHz, unless said):

* F0: Praat To Pitch (ac), 75-600 Hz, voiced frames (10 ms steps) pooled over the lecture; also pyworld's Harvest
  (60-600 Hz, 5 ms) where pyworld is importable, as an estimator the shift does not use. The gap in semitones is
  12 log2(Latin / Chinese); per line, the same with the line's own frames.
* Joins: each Latin run has two, where it meets the silence before and after it (its first and end sample). "Jump":
  the largest sample-to-sample difference |x[n+1] - x[n]| within 10 ms of the join, over the 99.9th percentile of
  the differences inside the run's interior (more than 10 ms from either end), in dB. "HF burst": the largest RMS of
  the 4-12 kHz band (4th-order Butterworth, zero phase) in 5 ms windows (1 ms hop) within 10 ms of the join, over
  the 99th percentile of the same inside the run's interior, in dB. A click is a step or an impulse: it would show as
  a jump or a burst louder than the speech's own (0 dB or more).
* Loudness: each line as the line cache makes it (trim, 48 kHz, EBU R128 -16 LUFS, -2 dBTP), pyloudnorm; and the
  Latin runs' level against the Chinese runs' (RMS of the speech frames, voices._active_rms).
* Speaking rate: each run's length in samples before and after, and the lag (within +-50 ms, 1 ms steps) that best
  aligns the 10 ms RMS envelopes of the run before and after.
* Timbre: median F1, F2, F3 (Praat To Formant (burg), 5 formants under 5500 Hz, voiced frames) and the distance of
  the long-term third-octave spectrum (100 Hz-8 kHz, each mean-removed) of the Latin runs to the Chinese runs'.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from speech import audio, voices  # noqa: E402

JOIN_S = 0.010
RATE = voices.ZhttsVoice.sample_rate


def semitones(a: float, b: float) -> float:
    return float(12 * np.log2(a / b)) if a > 0 and b > 0 else float("nan")


def praat_f0(x: np.ndarray) -> np.ndarray:
    if x.size < int(3 / 75 * RATE) + 2:
        return np.zeros(0)
    import parselmouth
    f0 = parselmouth.Sound(x.astype(np.float64), RATE).to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0) \
        .selected_array["frequency"]
    return f0[f0 > 0]


def harvest_f0(x: np.ndarray) -> np.ndarray | None:
    try:
        import pyworld
    except ImportError:
        return None
    if x.size < RATE // 20:
        return np.zeros(0)
    f0, _ = pyworld.harvest(x.astype(np.float64), RATE, f0_floor=60.0, f0_ceil=600.0, frame_period=5.0)
    return f0[f0 > 0]


def formants(x: np.ndarray) -> np.ndarray:
    """[F1, F2, F3] per voiced 10 ms frame."""
    if x.size < int(0.15 * RATE):
        return np.zeros((0, 3))
    import parselmouth
    sound = parselmouth.Sound(x.astype(np.float64), RATE)
    pitch = sound.to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0)
    track = sound.to_formant_burg(time_step=0.01, max_number_of_formants=5, maximum_formant=5500)
    rows = []
    for t in np.arange(0.03, sound.duration - 0.03, 0.01):
        f0 = pitch.get_value_at_time(t)
        if f0 == f0 and f0 > 0:
            rows.append([track.get_value_at_time(i, t) for i in (1, 2, 3)])
    return np.array(rows).reshape(-1, 3)


THIRDS = [(lo, lo * 2 ** (1 / 3)) for lo in 100 * 2 ** (np.arange(18) / 3)]   # 100 Hz .. 6.4-8.1 kHz


def ltas(x: np.ndarray) -> np.ndarray:
    from scipy.signal import welch
    f, p = welch(x.astype(np.float64), RATE, nperseg=1024)
    bands = np.array([10 * np.log10(p[(f >= lo) & (f < hi)].mean() + 1e-20) for lo, hi in THIRDS])
    return bands - bands.mean()


def _high_band(x: np.ndarray) -> np.ndarray:
    from scipy.signal import butter, sosfiltfilt
    sos = butter(4, [4000, 11999], btype="bandpass", fs=RATE, output="sos")
    return sosfiltfilt(sos, x.astype(np.float64))


def _window_rms(x: np.ndarray, width: int) -> np.ndarray:
    if x.size < width:
        return np.sqrt(np.mean(x ** 2, keepdims=True))
    w = np.lib.stride_tricks.sliding_window_view(x, width)[::RATE // 1000]
    return np.sqrt(np.mean(w * w, axis=1))


def joins(line: np.ndarray, spans) -> list[dict]:
    """The jump and HF-burst figures of both joins of each Latin run (see the module's doc)."""
    out = []
    d = np.abs(np.diff(line.astype(np.float64)))
    hb = _high_band(line)
    w, width = int(JOIN_S * RATE), int(0.005 * RATE)
    for engine, text, start, end in spans:
        if engine != "en" or end - start <= 4 * w:
            continue
        inner_jump = np.percentile(d[start + w:end - w], 99.9)
        inner_hf = np.percentile(_window_rms(hb[start + w:end - w], width), 99)
        for where, at in (("start", start), ("end", end)):
            lo, hi = max(0, at - w), min(line.size - 1, at + w)
            jump = d[lo:hi].max()
            hf = _window_rms(hb[max(0, lo - width // 2):hi + width // 2], width).max()
            out.append({"run": text, "join": where,
                        "jump_db": round(20 * np.log10(max(jump, 1e-12) / inner_jump), 2),
                        "hf_burst_db": round(20 * np.log10(max(hf, 1e-12) / inner_hf), 2),
                        "jump_abs": float(jump)})
    return out


def envelope_lag_ms(a: np.ndarray, b: np.ndarray) -> int:
    """The lag (ms) of b against a that best aligns their 10 ms RMS envelopes (1 ms hop), within +-50 ms."""
    ea, eb = _window_rms(a.astype(np.float64), RATE // 100), _window_rms(b.astype(np.float64), RATE // 100)
    n = min(ea.size, eb.size)
    ea, eb = ea[:n] - ea[:n].mean(), eb[:n] - eb[:n].mean()
    best = max(range(-50, 51), key=lambda k: float(np.dot(ea[max(0, -k):n - max(0, k)], eb[max(0, k):n - max(0, -k)])))
    return best


def cached_lufs(x: np.ndarray) -> float:
    """The line as synth_cache.line_audio stores it: trimmed, 48 kHz, normalised."""
    y = audio.normalise(audio.resample(audio.trim_silence(x, RATE), RATE, audio.RATE), audio.RATE)
    return audio.loudness(y, audio.RATE)


def world_shift(x: np.ndarray, rate: int, target_hz: float) -> np.ndarray:
    """The other candidate: WORLD (Harvest F0, CheapTrick envelope, D4C aperiodicity), F0 scaled so that its median
    is the target, envelope and aperiodicity stretched along frequency by the same formant ratio as Praat's."""
    import pyworld
    x64 = x.astype(np.float64)
    f0, t = pyworld.harvest(x64, rate, f0_floor=60.0, f0_ceil=300.0, frame_period=5.0)
    sp = pyworld.cheaptrick(x64, f0, t, rate)
    ap = pyworld.d4c(x64, f0, t, rate)
    voiced = f0[f0 > 0]
    scale = target_hz / np.median(voiced) if voiced.size else 1.0
    bins = np.arange(sp.shape[1])
    src = bins / voices.SPLICE_SHIFT["formant_shift_ratio"]
    sp = np.stack([np.interp(src, bins, row) for row in sp])
    ap = np.stack([np.interp(src, bins, row) for row in ap])
    y = pyworld.synthesize(f0 * scale, sp, ap, rate, 5.0).astype(np.float32)
    return np.pad(y, (0, max(0, x.size - y.size)))[:x.size]


def spectrogram(before, after, title: str, path: Path) -> None:
    """Two spectrograms (bench_voices' drawing) of the line, before and after, with the Latin runs marked and the
    Praat F0 track drawn in a strip under each (60-400 Hz, log scale)."""
    from PIL import Image, ImageDraw, ImageFont
    from bench_voices import spectrogram_image
    cjk = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
    font = ImageFont.truetype(str(cjk), 15) if cjk.exists() else None
    panels = []
    for (x, spans), label in ((before, "before: Latin runs as the English voice says them"),
                              (after, "after: Latin runs shifted (Praat Change gender)")):
        img = spectrogram_image(x, RATE, f"{title}    [{label}]")
        strip = Image.new("RGB", (1260, 125), "white")
        draw = ImageDraw.Draw(strip)
        import parselmouth
        pitch = parselmouth.Sound(x.astype(np.float64), RATE).to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0)
        lo, hi = np.log(60), np.log(400)

        def y_of(hz):
            return 10 + int(80 * (1 - (np.log(hz) - lo) / (hi - lo)))
        for hz in (100, 200, 300):
            draw.line([(50, y_of(hz)), (1250, y_of(hz))], fill=(220, 220, 220))
            draw.text((5, y_of(hz) - 6), f"{hz} Hz", fill="black")
        seconds = x.size / RATE
        for t, f in zip(pitch.xs(), pitch.selected_array["frequency"]):
            if f > 0:
                px, py = 50 + int(1200 * t / seconds), y_of(min(max(f, 60), 400))
                draw.ellipse([px - 1, py - 1, px + 1, py + 1], fill="black")
        for engine, text, start, end in spans:
            if engine == "en":
                x0, x1 = 50 + int(1200 * start / x.size), 50 + int(1200 * end / x.size)
                draw.rectangle([x0, 92, x1, 96], fill=(200, 40, 40))
                draw.text((x0, 100), f"{text} (Latin run)", fill=(200, 40, 40), font=font)
        panel = Image.new("RGB", (1260, 575), "white")
        panel.paste(img, (0, 0))
        panel.paste(strip, (0, 450))
        panels.append(panel)
    canvas = Image.new("RGB", (1260, 1150), "white")
    canvas.paste(panels[0], (0, 0))
    canvas.paste(panels[1], (0, 575))
    canvas.save(path)


def pick_spectrogram_line(lines: list[str]) -> str:
    """The shortest line with a Latin run of 5 or more letters between two Chinese runs."""
    def fits(line):
        runs = voices.split_runs(line)
        return any(e == "en" and len(t) >= 5 and 0 < i < len(runs) - 1 for i, (e, t) in enumerate(runs))
    return min((line for line in lines if fits(line)), key=len, default=lines[0])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("script", type=Path, help="narration/zh/script.csv from `render.py narration export --lang zh`")
    p.add_argument("--candidates", action="store_true", help="also measure the WORLD vocoder (needs pyworld)")
    p.add_argument("--limit", type=int, default=0, help="only the first N lines (a quick look)")
    p.add_argument("--json", type=Path, default=REPO / "docs" / "lab" / "zh_splice.json")
    p.add_argument("--png", type=Path, default=REPO / "docs" / "lab" / "zh_splice_spectrogram.png")
    args = p.parse_args(argv)
    import parselmouth
    rows = list(csv.DictReader(args.script.open(encoding="utf-8")))
    said = [r["spoken"] for r in rows if any(e == "en" for e, _ in voices.split_runs(r["spoken"]))]
    lines = list(dict.fromkeys(said))
    if args.limit:
        lines = lines[:args.limit]
    v = voices.voice("zh")
    methods = {"praat": voices.shift_to_voice}
    if args.candidates:
        methods["world"] = world_shift
    harvest = harvest_f0(np.zeros(RATE)) is not None

    pooled = {k: [] for k in ("zh", "before", *methods)}
    pooled_h = {k: [] for k in pooled}
    forms = {k: [] for k in pooled}
    spectra = {k: [] for k in pooled}
    per_line, join_rows, runs_rate = [], {k: [] for k in ("before", *methods)}, []
    lufs = {k: [] for k in ("before", *methods)}
    level_gap = {k: [] for k in ("before", *methods)}
    seconds = {k: 0.0 for k in methods}
    n_runs = 0
    original = voices.shift_to_voice
    for i, line in enumerate(lines, 1):
        before = v.synthesize_runs(line, shift=False)
        made = {"before": before}
        for name, fn in methods.items():
            timed = []

            def timing(x, rate, target, fn=fn, timed=timed):
                t0 = time.perf_counter()
                y = fn(x, rate, target)
                timed.append(time.perf_counter() - t0)
                return y
            voices.shift_to_voice = timing
            try:
                made[name] = v.synthesize_runs(line)
            finally:
                voices.shift_to_voice = original
            seconds[name] += sum(timed)
        chinese = np.concatenate([x for e, _, x in before if e == "zh"] or [np.zeros(0, np.float32)])
        zh_f0 = praat_f0(chinese)
        pooled["zh"].append(zh_f0)
        forms["zh"].append(formants(chinese))
        spectra["zh"].append(chinese)
        if harvest:
            pooled_h["zh"].append(harvest_f0(chinese))
        row = {"line": line, "chinese_f0_hz": round(float(np.median(zh_f0)), 1) if zh_f0.size else None}
        for name, segs in made.items():
            latin = [x for e, _, x in segs if e == "en"]
            f0 = np.concatenate([praat_f0(x) for x in latin])
            pooled[name].append(f0)
            if harvest:
                pooled_h[name].append(np.concatenate([harvest_f0(x) for x in latin]))
            forms[name].append(np.concatenate([formants(x) for x in latin]))
            spectra[name].append(np.concatenate(latin))
            row[f"latin_f0_hz_{name}"] = round(float(np.median(f0)), 1) if f0.size else None
            row[f"gap_st_{name}"] = (round(semitones(np.median(f0), np.median(zh_f0)), 2)
                                     if f0.size and zh_f0.size else None)
            x, spans = v.assemble(segs)
            gain = 10 ** ((audio.TARGET_LUFS - audio.loudness(x, RATE)) / 20)
            for j in joins(x, spans):
                j["jump_abs_at_minus16_lufs"] = round(j.pop("jump_abs") * gain, 5)
                j["line"] = i - 1
                join_rows[name].append(j)
            lufs[name].append(cached_lufs(x))
            if chinese.size:
                level_gap[name].append(20 * np.log10(voices._active_rms(np.concatenate(latin), RATE)
                                                     / voices._active_rms(chinese, RATE)))
        for k, (e, text, x) in enumerate(before):
            if e != "en":
                continue
            n_runs += 1
            y = made["praat"][k][2]
            runs_rate.append({"run": text, "samples_before": int(x.size), "samples_after": int(y.size),
                              "envelope_lag_ms": envelope_lag_ms(x, y)})
        per_line.append(row)
        print(f"[{i}/{len(lines)}] " + " ".join(f"{k}={v_}" for k, v_ in row.items() if k.startswith("gap")),
              flush=True)

    def med(frames):
        f = np.concatenate(frames) if frames else np.zeros(0)
        return float(np.median(f)) if f.size else float("nan")
    zh_ltas = ltas(np.concatenate(spectra["zh"]))
    summary = {"chinese_f0_median_hz": round(med(pooled["zh"]), 1)}
    if harvest:
        summary["chinese_f0_median_hz_harvest"] = round(med(pooled_h["zh"]), 1)
    zh_formants = np.nanmedian(np.concatenate(forms["zh"]), axis=0)
    summary["chinese_formants_median_hz"] = [round(float(f)) for f in zh_formants]
    for name in ("before", *methods):
        s = {"latin_f0_median_hz": round(med(pooled[name]), 1),
             "gap_semitones": round(semitones(med(pooled[name]), med(pooled["zh"])), 2)}
        if harvest:
            s["latin_f0_median_hz_harvest"] = round(med(pooled_h[name]), 1)
            s["gap_semitones_harvest"] = round(semitones(med(pooled_h[name]), med(pooled_h["zh"])), 2)
        gaps = [r[f"gap_st_{name}"] for r in per_line if r[f"gap_st_{name}"] is not None]
        s["per_line_gap_semitones"] = {"median": round(statistics.median(gaps), 2),
                                       "min": min(gaps), "max": max(gaps),
                                       "lines_within_2": sum(abs(g) <= 2 for g in gaps), "lines": len(gaps)}
        fm = np.nanmedian(np.concatenate(forms[name]), axis=0)
        s["latin_formants_median_hz"] = [round(float(f)) for f in fm]
        s["f3_ratio_to_chinese"] = round(float(fm[2] / zh_formants[2]), 3)
        s["ltas_distance_db"] = round(float(np.sqrt(np.mean((ltas(np.concatenate(spectra[name])) - zh_ltas) ** 2))), 2)
        js = join_rows[name]
        s["joins"] = {"count": len(js), "worst_jump_db": max(j["jump_db"] for j in js),
                      "median_jump_db": round(statistics.median(j["jump_db"] for j in js), 2),
                      "worst_hf_burst_db": max(j["hf_burst_db"] for j in js),
                      "median_hf_burst_db": round(statistics.median(j["hf_burst_db"] for j in js), 2),
                      "worst_jump_abs_at_minus16_lufs": max(j["jump_abs_at_minus16_lufs"] for j in js)}
        s["line_lufs"] = {"min": round(min(lufs[name]), 2), "max": round(max(lufs[name]), 2)}
        s["latin_level_vs_chinese_db"] = {"min": round(float(min(level_gap[name])), 2),
                                          "max": round(float(max(level_gap[name])), 2)}
        if name in seconds:
            s["shift_seconds_per_run"] = round(seconds[name] / n_runs, 4)
        summary[name] = s
    diffs = [r["samples_after"] - r["samples_before"] for r in runs_rate]
    summary["speaking_rate"] = {"runs": len(runs_rate), "max_length_difference_samples": int(max(map(abs, diffs))),
                                "max_envelope_lag_ms": max(abs(r["envelope_lag_ms"]) for r in runs_rate)}
    again = v.synthesize(lines[0])
    summary["deterministic"] = bool(np.array_equal(again, v.synthesize(lines[0])))

    pick = pick_spectrogram_line(lines)
    spectrogram(v.assemble(v.synthesize_runs(pick, shift=False)), v.assemble(v.synthesize_runs(pick)), pick, args.png)

    report = {"what": __doc__.split("\n\n")[0].replace("\n", " "),
              "script": str(args.script), "script_lines": len(rows), "lines_with_latin_runs": len(said),
              "distinct_lines_measured": len(lines), "latin_runs": n_runs,
              "shift": voices.SPLICE_SHIFT, "parselmouth": parselmouth.__version__, "praat": parselmouth.PRAAT_VERSION,
              "voice_digest": v.digest(), "summary": summary, "spectrogram": {"line": pick, "png": str(
                  args.png.relative_to(REPO)) if args.png.is_relative_to(REPO) else str(args.png)},
              "per_line": per_line, "joins": join_rows, "runs": runs_rate}
    if args.candidates:
        import pyworld
        report["pyworld"] = pyworld.__version__
        report["install"] = {
            "praat": "praat-parselmouth 0.4.7: a manylinux wheel for CPython 3.11",
            "world": "pyworld 0.3.5: no wheel for CPython 3.11 on Linux, built here from its sdist (gcc, Cython); "
                     "its __init__ imports pkg_resources, so it also needs setuptools < 81 at run time"}
    args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(summary, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
