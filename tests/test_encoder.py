"""pipeline/encoder.py: a frozen frame converted once gives the same encoded bytes as ManimCE's frame-by-frame loop."""

import hashlib

import av
import numpy as np
import pytest
from manim.scene.scene_file_writer import _PartialMovieEncodeJob

from pipeline import encoder

MANIM = _PartialMovieEncodeJob._encode_and_write_frame


def frames(width: int, height: int) -> list[tuple[int, np.ndarray]]:
    """(repeats, RGBA frame): moving frames and frames held for a while, as a scene hands them over."""
    rng = np.random.default_rng(3)
    out = []
    for i, repeats in enumerate([1, 1, 7, 1, 1, 12, 1, 3]):
        f = np.zeros((height, width, 4), np.uint8)
        f[..., 3] = 255
        f[: height // 2, : width // 3, 0] = 30 * i
        f[height // 3:, width // 2:, :3] = rng.integers(0, 255, size=(height - height // 3, width - width // 2, 3))
        out.append((repeats, f))
    return out


def encode(path, method, width=320, height=180, codec="libx264", pix_fmt="yuv420p") -> str:
    """Encode through _PartialMovieEncodeJob as ManimCE does (its options), with this frame method."""
    _PartialMovieEncodeJob._encode_and_write_frame = method
    try:
        container = av.open(str(path), mode="w")
        options = {"an": "1", "crf": "23"} if codec == "libx264" else {}
        stream = container.add_stream(codec, rate=60, options=options)
        stream.pix_fmt, stream.width, stream.height = pix_fmt, width, height
        held = frames(width, height)
        job = _PartialMovieEncodeJob(path, 0, container, stream, frame_queue_size=0)
        try:
            for repeats, frame in held:
                job.put(repeats, frame)
        finally:
            job.seal()        # the encoder thread ends even when a put fails
            job.join()
    finally:
        _PartialMovieEncodeJob._encode_and_write_frame = MANIM
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module", autouse=True)
def installed():
    encoder.install()
    _PartialMovieEncodeJob._encode_and_write_frame = MANIM   # each test picks its method
    yield


def decoded(path) -> list[np.ndarray]:
    with av.open(str(path)) as c:
        return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]


def test_held_frames_encode_to_the_same_bytes(tmp_path):
    assert encode(tmp_path / "manim.mp4", MANIM) == encode(tmp_path / "once.mp4", encoder.encode_and_write_frame)
    assert len(decoded(tmp_path / "once.mp4")) == sum(r for r, _ in frames(320, 180)) == 27


def test_transparent_clips_keep_manims_loop(tmp_path):
    """qtrle (a transparent .mov) is not yuv420p: the frames go through ManimCE's loop, the bytes are the same."""
    kw = {"codec": "qtrle", "pix_fmt": "argb"}
    a = encode(tmp_path / "manim.mov", MANIM, **kw)
    b = encode(tmp_path / "once.mov", encoder.encode_and_write_frame, **kw)
    assert a == b


def test_the_comparison_can_fail(tmp_path):
    """A held frame written one time too few is seen."""
    def one_short(self, frame, num_frames):
        return encoder.encode_and_write_frame(self, frame, max(1, num_frames - 1))
    assert encode(tmp_path / "manim.mp4", MANIM) != encode(tmp_path / "short.mp4", one_short)


@pytest.mark.parametrize("quality, record_file", [("high", "encoder_presets.json"), ("4k", "encoder_presets_4k.json")])
def test_the_preset_is_the_one_the_measurement_chose(quality, record_file):
    """worker.ENCODER_PRESETS follows the recorded benchmark of its quality (docs/lab/encoder_presets.json at 1080p60,
    docs/lab/encoder_presets_4k.json at 2160p60) by its stated rule."""
    import json
    import sys

    from conftest import REPO
    from pipeline import worker
    sys.path.insert(0, str(REPO / "benchmarks"))
    import encoder_presets
    record = json.loads((REPO / "docs" / "lab" / record_file).read_text())
    assert record["quality"] == quality
    assert "medium" in record["presets"] and len(record["presets"]) >= 4
    assert record["chosen"] == encoder_presets.choose(record["presets"])
    assert worker.ENCODER_PRESETS[quality] == record["chosen"]
    assert worker.ENCODER_PRESETS["preview"] is None and worker.ENCODER_PRESETS["medium"] is None
