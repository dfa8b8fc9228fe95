"""The narration voices (speech/voices.py), audio helpers (speech/audio.py) and line cache
(speech/synth_cache.py): synthesis is audible, plausible and deterministic in both languages, Latin runs in
Chinese text are spoken, loudness is on target, the cache is hit and safe under a race."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("piper", reason="the voice extra is not installed (scripts/setup.sh)")
pytest.importorskip("ai_edge_litert", reason="the voice extra is not installed (scripts/setup.sh)")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from speech import audio, synth_cache, voices  # noqa: E402
from speech.audio import AudioError  # noqa: E402

EN_SENTENCE = "The attention layer mixes information between the tokens."
ZH_SENTENCE = "注意力层在词元之间交换信息。"


@pytest.fixture(scope="module", autouse=True)
def model_cache(tmp_path_factory):
    """Rewritten models go to a temporary folder, not the user's cache."""
    folder = tmp_path_factory.mktemp("models")
    old = os.environ.get("GPT_LECTURE_MODEL_CACHE")
    os.environ["GPT_LECTURE_MODEL_CACHE"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("GPT_LECTURE_MODEL_CACHE", None)
    else:
        os.environ["GPT_LECTURE_MODEL_CACHE"] = old


def _speech_checks(x, rate, low, high):
    assert x.dtype == np.float32 and x.ndim == 1
    seconds = x.size / rate
    assert low <= seconds <= high, seconds
    assert np.sqrt(np.mean(x.astype(np.float64) ** 2)) > 0.01
    assert np.isfinite(audio.loudness(x, rate))


def test_english_is_audible_plausible_and_deterministic():
    v = voices.voice("en")
    assert v.lang == "en" and v.name == "piper:en_US-joe-medium" and "CC0" in v.licence
    a, b = v.synthesize(EN_SENTENCE), v.synthesize(EN_SENTENCE)
    _speech_checks(a, v.sample_rate, 2.0, 6.0)  # 9 words at 100-250 words per minute
    assert np.array_equal(a, b)


def test_chinese_is_audible_plausible_and_deterministic():
    v = voices.voice("zh")
    assert v.lang == "zh" and "CC BY-NC-SA" in v.licence
    a, b = v.synthesize(ZH_SENTENCE), v.synthesize(ZH_SENTENCE)
    _speech_checks(a, v.sample_rate, 1.8, 6.0)  # 13 characters at 2.5-7 per second
    assert np.array_equal(a, b)


def test_voice_digest_is_stable_and_voice_is_shared():
    assert voices.voice("en") is voices.voice("en")
    assert len(voices.voice("zh").digest()) == 64
    assert voices.voice("zh").digest() == voices.ZhttsVoice().digest()
    with pytest.raises(voices.VoiceUnavailable):
        voices.voice("fr")
    assert set(voices.VOICES) == {voices.DEFAULT["en"], voices.DEFAULT["zh"]}


def test_the_english_pace_is_set_and_in_the_digest():
    """The English narration speaks at EN_LENGTH_SCALE (issue 41: at most 165 words a minute; docs/voices.md), which
    its digest (so every line's cache key) covers; the Chinese voice's Latin runs keep the voice's own pace, with the
    digest it always had, so Chinese lines are unchanged."""
    en = voices.voice("en")
    assert en.length_scale == voices.EN_LENGTH_SCALE > 1.0
    assert voices.voice("zh").english.length_scale == voices.LATIN_LENGTH_SCALE == 1.0
    plain = voices.PiperVoice()
    assert plain.digest() != en.digest() and plain.digest() == voices.voice("zh").english.digest()
    assert voices.PiperVoice(voices.EN_LENGTH_SCALE).digest() == en.digest()
    slow, normal = en.synthesize(EN_SENTENCE), plain.synthesize(EN_SENTENCE)
    ratio = audio.trim_silence(slow, en.sample_rate).size / audio.trim_silence(normal, en.sample_rate).size
    # slower, though by less than the scale: 1.2 made bench_voices' sentences 11.8% longer (docs/lab/voice-pace.md)
    assert 1.05 < ratio < voices.EN_LENGTH_SCALE + 0.02, ratio


@pytest.mark.parametrize("text, runs", [
    ("三层GPT模型", [("zh", "三层"), ("en", "GPT"), ("zh", "模型")]),
    ("把W q乘以x。", [("zh", "把"), ("en", "W q"), ("zh", "乘以"), ("en", "x"), ("zh", "。")]),
    ("MLP之后是GELU，再做softmax", [("en", "MLP"), ("zh", "之后是"), ("en", "GELU"), ("zh", "，再做"),
                                     ("en", "softmax")]),
    ("第2层有768维", [("zh", "第2层有768维")]),  # numbers alone stay Chinese: the normaliser reads them
    ("GPT 2模型", [("en", "GPT 2"), ("zh", "模型")]),
])
def test_runs_split_latin_from_chinese(text, runs):
    assert voices.split_runs(text) == runs
    # nothing is dropped: the runs hold every letter and digit of the text
    letters = [c for c in text if c.isalnum()]
    assert [c for _, r in runs for c in r if c.isalnum()] == letters


def test_latin_run_in_chinese_is_spoken():
    v = voices.voice("zh")
    segments = v.synthesize_runs("三层GPT模型")
    assert [(e, t) for e, t, _ in segments] == [("zh", "三层"), ("en", "GPT"), ("zh", "模型")]
    rms = [voices._active_rms(x, v.sample_rate) for _, _, x in segments]
    for (engine, text, x), level in zip(segments, rms):
        assert x.size / v.sample_rate > 0.2, (text, x.size)
        assert level > 0.01, (text, level)
    # loudness-matched: the English run within 3 dB of the Chinese runs
    zh = voices._active_rms(np.concatenate([segments[0][2], segments[2][2]]), v.sample_rate)
    assert abs(20 * np.log10(rms[1] / zh)) < 3
    whole = v.synthesize("三层GPT模型")
    assert whole.size >= sum(x.size for _, _, x in segments)


# Two lines of the Chinese lecture as spoken (narration/zh/script.csv: add_norm, mlp_steps): a Latin run inside a
# sentence, and one that opens it.
SPLICED_LINES = ["归一化：LayerNorm 先测量这个向量的六十四个数：它们的均值和方差。",
                 "MLP 对每个词元单独提出许多问题，再把答案对应的方向加回它的向量。"]


def _semitones(a, b):
    return 12 * np.log2(a / b)


@pytest.mark.parametrize("line", SPLICED_LINES)
def test_latin_runs_are_shifted_to_the_chinese_voice(line):
    """The English voice's words inside a Chinese line are said at the Chinese voice's pitch (median F0 within 2
    semitones of the line's Chinese speech, by Praat's To Pitch), at the same length; unshifted they sit more than
    10 semitones lower (so the check can fail)."""
    v = voices.voice("zh")
    shifted, plain = v.synthesize_runs(line), v.synthesize_runs(line, shift=False)
    assert [(e, t) for e, t, _ in shifted] == [(e, t) for e, t, _ in plain]
    chinese = np.concatenate([x for e, _, x in shifted if e == "zh"])
    zh = voices.median_f0(chinese, v.sample_rate)
    assert 200 < zh < 320, zh   # the Chinese voice: female, about 250 Hz
    latin = [(t, x, y) for (e, t, x), (_, _, y) in zip(shifted, plain) if e == "en"]
    assert latin
    for text, x, y in latin:
        assert x.size == y.size, text   # the speaking rate kept, to the sample
        before, after = voices.median_f0(y, v.sample_rate), voices.median_f0(x, v.sample_rate)
        assert _semitones(before, zh) < -10, (text, before, zh)
        assert abs(_semitones(after, zh)) <= 2, (text, after, zh)
        # loudness-matched to the Chinese runs, as before the shift
        level = voices._active_rms(x, v.sample_rate) / voices._active_rms(chinese, v.sample_rate)
        assert abs(20 * np.log10(level)) < 0.5, text


def test_shifted_line_is_deterministic_in_any_order():
    """Praat's PSOLA draws random pulse intervals in unvoiced stretches: seeded per shift, the samples depend on the
    run alone, not on what was shifted before."""
    v = voices.voice("zh")
    line = SPLICED_LINES[0]
    first = v.synthesize(line)
    run = v.synthesize_runs(line, shift=False)[1][2]
    alone = voices.shift_to_voice(run, v.sample_rate, 250.0)
    voices.shift_to_voice(v.synthesize_runs("GPT", shift=False)[0][2], v.sample_rate, 230.0)  # something else first
    assert np.array_equal(voices.shift_to_voice(run, v.sample_rate, 250.0), alone)
    assert np.array_equal(v.synthesize(line), first)


def test_voice_digest_and_line_key_cover_the_shift(monkeypatch):
    """Old cached audio is not reused when the shift's method, a parameter or the Praat version changes."""
    import parselmouth
    base = voices.ZhttsVoice(voices.voice("en"))
    key = synth_cache.line_key(base, SPLICED_LINES[0])
    changes = [(voices.SPLICE_SHIFT, "formant_shift_ratio", 1.1), (voices.SPLICE_SHIFT, "method", "WORLD"),
               (voices.SPLICE_SHIFT, "praat_random_seed", 1), (voices.SPLICE_SHIFT, "fallback_target_hz", 250.0)]
    seen = {base.digest()}
    for table, name, value in changes:
        with monkeypatch.context() as m:
            m.setitem(table, name, value)
            other = voices.ZhttsVoice(voices.voice("en"))
            assert other.digest() not in seen, name
            assert synth_cache.line_key(other, SPLICED_LINES[0]) != key
            seen.add(other.digest())
    for attr in ("__version__", "PRAAT_VERSION"):
        with monkeypatch.context() as m:
            m.setattr(parselmouth, attr, "0.0.0-test")
            assert voices.ZhttsVoice(voices.voice("en")).digest() not in seen, attr
    assert voices.ZhttsVoice(voices.voice("en")).digest() == base.digest()


def test_normalise_hits_target_loudness_and_true_peak():
    v = voices.voice("en")
    x = audio.resample(v.synthesize(EN_SENTENCE), v.sample_rate, audio.RATE)
    rng = np.random.default_rng(0)
    loud = (np.clip(rng.standard_normal(audio.RATE * 2), -3, 3) * 0.5).astype(np.float32)  # crest-heavy noise
    for signal in (x, loud, x * 0.01):
        y = audio.normalise(signal, audio.RATE)
        assert abs(audio.loudness(y, audio.RATE) - audio.TARGET_LUFS) <= 0.5
        assert audio.true_peak_db(y, audio.RATE) <= audio.TRUE_PEAK_DB
    with pytest.raises(AudioError):
        audio.normalise(np.zeros(audio.RATE, np.float32), audio.RATE)


def test_read_audio_errors_are_one_line(tmp_path):
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    corrupt = tmp_path / "corrupt.mp3"
    corrupt.write_bytes(b"RIFF\x00\x00junk" * 50)
    bad_flac = tmp_path / "bad.flac"
    bad_flac.write_bytes(os.urandom(3000))
    for path in (empty, corrupt, bad_flac, tmp_path / "missing.wav"):
        with pytest.raises(AudioError) as err:
            audio.read_audio(path)
        message = str(err.value)
        assert "\n" not in message and str(path.name) in message


def _tone(rate, seconds=1.0, freq=440.0):
    t = np.arange(int(rate * seconds)) / rate
    return (0.4 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def test_flac_and_mp3_round_trips(tmp_path):
    import av
    import soundfile as sf
    rate = 44100
    x = _tone(rate)
    sf.write(tmp_path / "a.flac", x, rate)
    y, r = audio.read_audio(tmp_path / "a.flac")
    assert r == rate and y.size == x.size and np.max(np.abs(y - x)) < 1e-3
    stereo = np.stack([x, x])  # PyAV: planar float, a stereo MP3 read back as mono
    with av.open(str(tmp_path / "a.mp3"), "w") as out:
        stream = out.add_stream("libmp3lame", rate=rate, layout="stereo")
        frame = av.AudioFrame.from_ndarray(stereo, format="fltp", layout="stereo")
        frame.sample_rate = rate
        for packet in stream.encode(frame):
            out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    y, r = audio.read_audio(tmp_path / "a.mp3")
    assert r == rate and abs(y.size - x.size) < 3000  # encoder delay and padding
    assert abs(20 * np.log10(np.sqrt(np.mean(y ** 2)) / np.sqrt(np.mean(x ** 2)))) < 0.5
    spectrum = np.abs(np.fft.rfft(y))
    assert abs(np.argmax(spectrum) * rate / (2 * (spectrum.size - 1)) - 440) < 3


class ToneVoice(voices.Voice):
    """A stand-in voice: tone bursts, counting its calls, slow enough to race."""
    name = "test:tones"
    lang = "en"
    licence = "test"
    sample_rate = 16000

    def __init__(self, delay=0.0):
        self.calls = 0
        self.delay = delay

    def digest(self):
        return "0" * 64

    def synthesize(self, text):
        self.calls += 1
        time.sleep(self.delay)
        x = np.zeros(self.sample_rate * 2, np.float32)
        x[4000:20000] = _tone(self.sample_rate, 1.0, 200 + 10 * len(text))
        return x


def test_cache_hits_without_calling_the_engine(tmp_path):
    v = ToneVoice()
    path, seconds = synth_cache.line_audio(v, "hello", tmp_path)
    again, seconds_again = synth_cache.line_audio(v, "hello", tmp_path)
    assert v.calls == 1 and again == path and seconds_again == pytest.approx(seconds)
    y, rate = audio.read_audio(path)
    assert rate == audio.RATE and y.size / rate == pytest.approx(seconds, abs=1e-6)
    assert 1.0 <= seconds <= 1.1  # the silence around the tone trimmed
    assert abs(audio.loudness(y, rate) - audio.TARGET_LUFS) < 0.5
    synth_cache.line_audio(v, "hello!", tmp_path)
    assert v.calls == 2  # other text, other key


def _race(cache_dir, barrier, queue):
    barrier.wait()
    path, seconds = synth_cache.line_audio(ToneVoice(delay=0.3), "a raced line", Path(cache_dir))
    queue.put((str(path), seconds, Path(path).read_bytes()))


def test_two_processes_racing_on_one_line(tmp_path):
    ctx = multiprocessing.get_context("fork")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(str(tmp_path), barrier, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    (p1, s1, b1), (p2, s2, b2) = results
    assert p1 == p2 and s1 == s2 and b1 == b2 == Path(p1).read_bytes()
    files = [f for f in tmp_path.rglob("*") if f.is_file()]
    assert files == [Path(p1)]  # no temporary files left


def test_interrupted_write_leaves_no_file(tmp_path, monkeypatch):
    import soundfile as sf

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(sf, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        synth_cache.line_audio(ToneVoice(), "interrupted", tmp_path)
    assert [f for f in tmp_path.rglob("*") if f.is_file()] == []


def test_speech_onsets_of_tone_bursts():
    rate = 48000
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(rate * 4) * 1e-4).astype(np.float32)
    starts = [0.3137, 1.2501, 2.0, 3.1234]
    for i, s in enumerate(starts):
        n = int(0.4 * rate)
        burst = _tone(rate, 0.4, 300 + 100 * i) * np.hanning(n).astype(np.float32) ** 0.25
        x[int(s * rate):int(s * rate) + n] += burst
    # a 100 ms pause inside the last burst is no new onset (min_gap 0.25 s)
    x[int(3.3 * rate):int(3.4 * rate)] = 0
    found = audio.speech_onsets(x, rate)
    assert len(found) == len(starts)
    assert max(abs(f - s) for f, s in zip(found, starts)) <= 0.010


def test_a_soft_onset_is_found_at_the_same_moment_alone_and_in_a_louder_clip():
    """The narrator lays a line by the onset it finds in the line's WAV; the audit finds it again in the clip's
    sound, beside louder lines. A threshold relative to the loudest frame moves with what else is there (a 26 ms
    disagreement on a soft Chinese onset); the narration's absolute level does not."""
    rate = audio.RATE
    attack = int(0.06 * rate)    # 60 ms rising from -50 to -30 dBFS (a breathy consonant), then a vowel
    ramp = 10 ** (np.linspace(-50, -30, attack) / 20) * np.sin(2 * np.pi * 3000 * np.arange(attack) / rate)
    line = np.concatenate([np.zeros(int(0.1 * rate)), ramp, 0.4 * _tone(rate, 0.8, 200)]).astype(np.float32)
    louder = 0.9 * _tone(rate, 0.8, 300)
    clip = np.concatenate([louder, np.zeros(int(0.7 * rate), np.float32), line])
    alone = audio.narration_onsets(line, rate)[0]
    in_clip = audio.narration_onsets(clip, rate)[1] - (louder.size + int(0.7 * rate)) / rate
    assert alone == pytest.approx(in_clip, abs=1e-4)
    relative_alone = audio.speech_onsets(line, rate)[0]
    relative_in_clip = audio.speech_onsets(clip, rate, min_gap=0.5)[1] - (louder.size + int(0.7 * rate)) / rate
    assert abs(relative_alone - relative_in_clip) > 0.005   # what the absolute level is for


def test_trim_silence_both_ends():
    rate = 16000
    x = np.zeros(rate * 3, np.float32)
    x[rate:2 * rate] = _tone(rate)
    y = audio.trim_silence(x, rate)
    assert 1.0 <= y.size / rate <= 1.1
    assert audio.trim_silence(np.zeros(rate, np.float32), rate).size == 0


def test_synthesis_opens_no_socket(model_cache):
    """Both voices, in a fresh process whose socket module refuses, and without a network namespace where
    unshare works (root)."""
    code = (
        "import socket, sys\n"
        "def refuse(*a, **k): raise RuntimeError('network use')\n"
        "socket.socket = refuse; socket.create_connection = refuse; socket.getaddrinfo = refuse\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        "from speech.voices import voice\n"
        "assert voice('en').synthesize('GPT and MLP.').size > 0\n"
        "assert voice('zh').synthesize('三层GPT模型').size > 0\n"
        "print('ok')\n"
    )
    cmd = [sys.executable, "-c", code]
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        cmd = [unshare, "-n", *cmd]
    env = dict(os.environ, GPT_LECTURE_MODEL_CACHE=str(model_cache))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
