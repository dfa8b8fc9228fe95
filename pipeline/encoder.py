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

**Ready for the web.** Every mp4 (and mov) the project writes has its index (the moov box) before the media data
(mdat), as ffmpeg's `-movflags +faststart` writes it: a browser plays it from its first bytes, without reading
its end first, and without HTTP Range requests too. `muxer_options(path)` is that option for our own writers (the
narration mux, the joined lecture, the deck's beats); `install()` and `install_faststart()` give it to ManimCE's
join of the partial movies (SceneFileWriter.combine_files, which opens its output with no options), the file
every clip is made from. tests/test_scorm.py reads the top-level boxes of every mp4 of a render, its course page
and its SCORM package.
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


FASTSTART = {"movflags": "+faststart"}      # libavformat's mov/mp4 muxer: moov moved before mdat when it closes
FASTSTART_SUFFIXES = (".mp4", ".mov")
_manim_combine_files = None


def muxer_options(path) -> dict:
    """The options an output container opened at `path` is written with: faststart for an mp4 or a mov."""
    return dict(FASTSTART) if str(path).lower().endswith(FASTSTART_SUFFIXES) else {}


class _FaststartAv:
    """The av module as ManimCE's scene_file_writer sees it during combine_files: an output it opens gets
    muxer_options; everything else is av's own."""

    def __init__(self, av_module):
        self._av = av_module

    def __getattr__(self, name):
        return getattr(self._av, name)

    def open(self, file, mode="r", **kwargs):
        if mode == "w":
            kwargs["options"] = {**muxer_options(file), **(kwargs.get("options") or {})}
        return self._av.open(file, mode, **kwargs)


def combine_files(self, input_files, output_file, *args, **kwargs):
    """SceneFileWriter.combine_files, its output written with muxer_options (faststart for mp4 and mov)."""
    import manim.scene.scene_file_writer as writer
    real = writer.av
    writer.av = _FaststartAv(real)
    try:
        return _manim_combine_files(self, input_files, output_file, *args, **kwargs)
    finally:
        writer.av = real


def install_faststart() -> None:
    """ManimCE's join of the partial movies writes its mp4 with moov first. Idempotent."""
    global _manim_combine_files
    from manim.scene.scene_file_writer import SceneFileWriter
    if SceneFileWriter.combine_files is not combine_files:
        _manim_combine_files = SceneFileWriter.combine_files
        SceneFileWriter.combine_files = combine_files


def install(preset: str | None = None) -> None:
    """Put the convert-once path into ManimCE's partial movie encoder, set libx264's preset for the partial
    movies opened from now on (None: ManimCE's), and join them with faststart (install_faststart). Idempotent; the
    preset can change between renders."""
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
    install_faststart()


def used() -> dict:
    """{codec: its options} of the partial movies opened since install(), as the manifest records them;
    libx264 without a preset option ran at its default, medium."""
    return {name: ({"preset": "medium", **options} if name == "libx264" else dict(options))
            for name, options in sorted(_used.items())}
