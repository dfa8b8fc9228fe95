"""The partial movies' encoder: libx264's preset, and a frame that stays on screen converted once.

**The preset.** ManimCE encodes every partial movie with libx264 at its default preset (medium) and crf 23,
and gives no option for it. At 1080p60 that encoder took about half of a render's CPU time
(docs/lab/rendering-measurements.md). `install(preset)` sets the preset of the libx264 partial movies; render.py chooses it
per quality (pipeline.worker.ENCODER_PRESETS). A faster preset changes the encoded pixels: benchmarks/encoder_presets.py
measures each preset's CPU time, file size and fidelity to the drawn frames (docs/lab/encoder_presets.json), and
render.py uses the fastest one whose frames are at least as close to the drawn frames as ManimCE's own
(mean and worst-frame PSNR) with files at most twice the size. tests/test_render.py holds a high-quality
render.py clip to plain `manim render`'s within the tolerance stated there.

**A frozen frame.**
When nothing moves (a `wait()` with no updaters), ManimCE hands its encoder one frame to be written N times,
and the encoder thread makes a new `av.VideoFrame` from the RGBA array N times, and the codec converts each
to yuv420p again (`_PartialMovieEncodeJob._encode_and_write_frame`). Our scenes hold every caption until it
can be read, so these frozen frames are about two fifths of a clip's frames.

`install()` keeps ManimCE's path for the first of the N frames (the codec opens and converts it exactly as
before), converts it once more with the reformatter and settings the codec uses, and hands the other N - 1
to the codec as ready yuv420p frames. The codec receives the same pixels in the same order, so the encoded
bytes are the same (tests/test_encoder.py compares the files; tests/test_render.py compares a whole clip
with plain `manim render` frame by frame).
"""

from __future__ import annotations

import av
from av.video.reformatter import VideoReformatter

_manim_encode_and_write_frame = None
_manim_open_partial_movie_stream = None
_preset: str | None = None       # None: ManimCE's (libx264's default, medium)
_used: dict = {}                 # codec name -> its options, for every partial movie opened since install()


def open_partial_movie_stream(self, file_path=None) -> None:
    """SceneFileWriter.open_partial_movie_stream, with the preset set on a libx264 stream (before the codec
    opens at the first frame)."""
    _manim_open_partial_movie_stream(self, file_path)
    stream = self._current_encode_job.stream
    codec = stream.codec_context
    if _preset is not None and codec.name == "libx264":
        codec.options = {**codec.options, "preset": _preset}
    _used[codec.name] = {k: v for k, v in codec.options.items() if k != "an"}


def encode_and_write_frame(self, frame, num_frames: int) -> None:
    """_PartialMovieEncodeJob._encode_and_write_frame, with a repeated frame converted once."""
    if num_frames <= 1:
        return _manim_encode_and_write_frame(self, frame, num_frames)
    _manim_encode_and_write_frame(self, frame, 1)     # opens the codec on a clip's first frame
    codec = self.stream.codec_context
    if codec.format is None or codec.format.name != "yuv420p":   # transparent clips: ManimCE's way
        return _manim_encode_and_write_frame(self, frame, num_frames - 1)
    # what the codec does to an RGBA frame (av/video/codeccontext.py, _prepare_frames_for_encode)
    converted = VideoReformatter().reformat(av.VideoFrame.from_ndarray(frame, format="rgba"), codec.width,
                                            codec.height, codec.format, threads=codec.thread_count)
    planes = converted.to_ndarray()
    for _ in range(num_frames - 1):
        # a frame of its own each time (no pts: the codec numbers it), as ManimCE's loop makes
        for packet in self.stream.encode(av.VideoFrame.from_ndarray(planes, format="yuv420p")):
            self.container.mux(packet)


def install(preset: str | None = None) -> None:
    """Put the convert-once path into ManimCE's partial movie encoder, and set libx264's preset for the partial
    movies opened from now on (None: ManimCE's). Idempotent; the preset can change between renders."""
    global _manim_encode_and_write_frame, _manim_open_partial_movie_stream, _preset
    from manim.scene.scene_file_writer import SceneFileWriter, _PartialMovieEncodeJob
    _preset = preset
    _used.clear()
    if _PartialMovieEncodeJob._encode_and_write_frame is not encode_and_write_frame:
        _manim_encode_and_write_frame = _PartialMovieEncodeJob._encode_and_write_frame
        _PartialMovieEncodeJob._encode_and_write_frame = encode_and_write_frame
    if SceneFileWriter.open_partial_movie_stream is not open_partial_movie_stream:
        _manim_open_partial_movie_stream = SceneFileWriter.open_partial_movie_stream
        SceneFileWriter.open_partial_movie_stream = open_partial_movie_stream


def used() -> dict:
    """{codec: its options} of the partial movies opened since install(), as the manifest records them;
    libx264 without a preset option ran at its default, medium."""
    return {name: ({"preset": "medium", **options} if name == "libx264" else dict(options))
            for name, options in sorted(_used.items())}
