"""Course packaging (pipeline.packaging and its modules, run by render.py): caption and chapter tracks, the full
lecture, clean clips, and the course page opened in headless Chromium from file://, as a user opens it."""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, render_recipe, run_render

from pipeline import deck, lecture_join, packaging, page, plan, recipe, tracks
from scenes.positional_encoding import PositionalEncoding
from scenes.token_embedding import TokenEmbedding

# Two short clips: a whole scene (several beats, so its chapters seek somewhere) and one beat of another.
RECIPE = """
[lecture]
quality = "preview"
slides = true

[[scene]]
name = "token_embedding"

[[scene]]
name = "positional_encoding"
section = "title"
"""
CLIPS = ["token_embedding", "positional_encoding-section-title"]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The recipe rendered once at preview: clips, tracks, the lecture and the course page."""
    return render_recipe(tmp_path_factory.mktemp("course"), RECIPE)


def container_seconds(path: Path) -> float:
    """The video stream's length from its frames: their count over the frame rate."""
    import av
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        frames = sum(1 for _ in c.demux(s) if _.dts is not None)
        return frames / float(s.average_rate)


def manifest(path: Path) -> dict:
    return json.loads(recipe.manifest_path(path).read_text())


# --- caption times in the manifest ---------------------------------------------------------------------
def test_a_split_clip_times_its_captions_by_the_frames_of_the_plays_before_them():
    """split_timeline shifts each narration line like the beats: by the frames of the plays before it."""
    fps = 10
    plays = [[True, 0.5, 0.1], [True, 1.0, 0.1], [True, 0.3, 0.1], [True, 2.0, 0.1]]
    first = {"plays": [plays[0], plays[1], [False, 0.3, 0.0], [False, 2.0, 0.0]]}
    captions = [{"key": "a", "start": 9.0, "end": 9.0, "plays": [1, 2]}, {"key": "b", "start": 9.0, "end": 9.0,
                                                                           "plays": [3, 4]}]
    last = {"plays": [[False, 0.5, 0.0], [False, 1.0, 0.0], plays[2], plays[3]],
            "sections": [["title", 2], ["x", 2]],
            "record": {"sections": ["title", "x"], "captions": captions}}
    timeline, _ = plan.split_timeline([first, last], fps)
    assert timeline == [{"section": "title", "start": 0.0, "end": 1.5}, {"section": "x", "start": 1.5, "end": 3.8}]
    assert [(c["start"], c["end"]) for c in captions] == [(0.5, 1.5), (1.8, 3.8)]


@pytest.mark.slow
def test_the_manifest_has_every_narration_line_in_both_languages(made):
    m = manifest(made["dir"] / "token_embedding.mp4")
    caps = m["captions"]
    assert [c["key"] for c in caps][0] == "title_note" and len(caps) >= 4
    assert all(set(c["texts"]) == {"en", "zh"} and c["texts"]["en"] == c["text"] for c in caps)
    assert all(c["texts"]["zh"] != c["texts"]["en"] for c in caps)
    # The title card's note leaves with the card, at the first beat; each line leaves when the next comes in.
    assert caps[0]["end"] == m["timeline"][1]["start"]
    assert all(a["end"] <= b["start"] for a, b in zip(caps, caps[1:]))
    assert caps[-1]["end"] == m["timeline"][-1]["end"]
    beats = {b["section"]: b for b in m["timeline"]}
    assert all(beats[c["beat"]]["start"] <= c["start"] < beats[c["beat"]]["end"] for c in caps)


# --- caption and chapter tracks ------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", CLIPS + ["lecture"])
def test_caption_and_chapter_tracks_parse_fit_the_clip_and_do_not_overlap(made, name):
    import srt
    import webvtt
    clip = made["dir"] / f"{name}.mp4"
    m = manifest(clip)
    length = container_seconds(clip)
    assert abs(length - m["timeline"][-1]["end"]) < 1e-3
    for lang in ("en", "zh"):
        vtt = [(tracks.seconds_of(c.start), tracks.seconds_of(c.end), c.text)
               for c in webvtt.read(str(clip.with_name(f"{name}.{lang}.vtt")))]
        subs = [(s.start.total_seconds(), s.end.total_seconds(), s.content)
                for s in srt.parse(clip.with_name(f"{name}.{lang}.srt").read_text(encoding="utf-8"))]
        assert len(vtt) == len(subs) == len(m["captions"]) > 0
        assert [t for *_, t in vtt] == [c["texts"][lang] for c in m["captions"]]
        for cues in (vtt, subs):
            assert all(0 <= a < b <= length + 1e-3 for a, b, _ in cues)
            assert all(x[1] <= y[0] for x, y in zip(cues, cues[1:]))
    chapters = [(tracks.seconds_of(c.start), tracks.seconds_of(c.end), c.text) for c in
                webvtt.read(str(clip.with_name(f"{name}.chapters.vtt")))]
    assert chapters == [(b["start"], b["end"], b["title"]) for b in m["timeline"]]
    if name != "lecture":   # each beat named by the title its scene declares, in the clip's language (English)
        titles = TokenEmbedding.chapter_titles(m["params"])["en"] if name == CLIPS[0] else \
            PositionalEncoding.chapter_titles(m["params"])["en"]
        assert [t for *_, t in chapters] == [titles[b["section"]] for b in m["timeline"]]
        assert m["beat_titles"]["en"] == titles


def test_a_cue_is_held_until_it_can_be_read_or_the_next_line_comes():
    """Issue 44: a line's span in the manifest (its speech, or the clip's own language's hold) may be shorter than its
    text needs in a track (a fast voice; the other language's longer line): the cue stays up to MAX_READING_RATE,
    never into the next cue nor past the clip; a cue readable as it is keeps its span."""
    from scenes.lecture import LectureScene
    assert tracks.MAX_READING_RATE == LectureScene.TRACK_RATE == {"en": 20.0, "zh": 10.0}
    en = "x" * 44                                 # 2.2 s at 20 characters a second
    m = {"output": "x.mp4", "timeline": [{"section": "title", "start": 0.0, "end": 9.0}],
         "captions": [{"key": "a", "start": 1.0, "end": 3.0, "texts": {"en": en, "zh": "甲" * 10}},    # 22/s: held
                      {"key": "b", "start": 3.5, "end": 5.0, "texts": {"en": "y" * 10, "zh": "乙" * 30}},
                      {"key": "c", "start": 6.0, "end": 7.0, "texts": {"en": "z\n" * 30, "zh": "丙"}}]}
    assert tracks.caption_cues(m, "en") == [(1.0, 3.2, en), (3.5, 5.0, "y" * 10), (6.0, 7.5, "z\n" * 30)]
    assert tracks.caption_cues(m, "zh") == [(1.0, 3.0, "甲" * 10), (3.5, 6.0, "乙" * 30), (6.0, 7.0, "丙")]
    m["timeline"][0]["end"] = 7.2                 # the last cue: no further than the clip's end
    assert tracks.caption_cues(m, "en")[-1] == (6.0, 7.2, "z\n" * 30)


def cue_rates(folder: Path) -> list[tuple[str, float, float, float]]:
    """Every caption cue of every track in `folder` (clips and lecture, VTT and SRT): (file, start, characters a
    second, the limit of the track's language)."""
    out = []
    for path in sorted(folder.glob("*.*.vtt")) + sorted(folder.glob("*.*.srt")):
        lang = path.suffixes[-2].lstrip(".")
        if lang == "chapters":
            continue
        parse = tracks.parsed_vtt if path.suffix == ".vtt" else tracks.parsed_srt
        for a, b, text in parse(path.read_text(encoding="utf-8")):
            out.append((path.name, a, len(text.replace("\n", "")) / (b - a), tracks.MAX_READING_RATE[lang]))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("run", ["made", "made_zh"])
def test_no_cue_reads_faster_than_a_subtitle_may(request, run):
    """Issue 44: in every caption track the tests build (English and Chinese clips, the lectures, both languages'
    tracks of each), no cue faster than 20 characters a second in English, 10 in Chinese."""
    rates = cue_rates(request.getfixturevalue(run)["dir"])
    assert len({r[0] for r in rates}) >= 4 * 3 and len(rates) > 20
    assert [r for r in rates if r[2] > r[3] + 1e-6] == []


def test_tracks_of_a_broken_manifest_are_one_line_and_nothing_written(tmp_path):
    clip = tmp_path / "x.mp4"
    clip.write_bytes(b"")
    m = {"output": "x.mp4", "timeline": [{"section": "title", "start": 0.0, "end": 2.0}],
         "captions": [{"key": "a", "start": 1.0, "end": 3.0, "text": "a", "texts": {"en": "a", "zh": "甲"}}]}
    recipe.manifest_path(clip).write_text(json.dumps(m))
    with pytest.raises(tracks.PackagingError, match="does not fit the 2.000 s clip"):
        tracks.write_tracks(clip)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.mp4", "x.mp4.json"]


# --- the full lecture ------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_lecture_joins_the_clips_with_a_chapter_at_each(made):
    import av
    lecture = made["dir"] / "lecture.mp4"
    clips = [made["dir"] / f"{n}.mp4" for n in CLIPS]
    lengths = [container_seconds(c) for c in clips]
    assert abs(container_seconds(lecture) - sum(lengths)) < 1e-6
    m = manifest(lecture)
    assert m["joined"] == "joined without re-encoding"
    assert [c["output"] for c in m["clips"]] == [c.name for c in clips]
    offsets = [c["offset"] for c in m["clips"]]
    assert offsets == [0.0, round(lengths[0], 3)]
    with av.open(str(lecture)) as c:
        marks = c.chapters()
        # the frames are the clips' own packets: the first frame of the second clip is its first frame
        first_packets = [bytes(p) for p in c.demux(c.streams.video[0]) if p.dts is not None]
    assert [round(float(ch["start"] * ch["time_base"]), 3) for ch in marks] == offsets
    assert [ch["metadata"]["title"] for ch in marks] == ["Tokens and embeddings", "Positional encoding"]
    with av.open(str(clips[1])) as c:
        second = [bytes(p) for p in c.demux(c.streams.video[0]) if p.dts is not None]
    assert first_packets[-len(second):] == second
    assert f"lecture: joined without re-encoding (2 clips, {sum(lengths):.1f} s)" in made["stdout"]


@pytest.mark.slow
def test_the_lecture_is_rebuilt_only_when_a_clip_changed(made, tmp_path):
    lecture = made["dir"] / "lecture.mp4"
    stamp = lecture.stat().st_mtime_ns
    again = run_render("--config", made["recipe"], media=made["media"])
    assert again.returncode == 0, again.stderr
    assert "lecture: up to date" in again.stdout and lecture.stat().st_mtime_ns == stamp

    # Clips whose streams differ (here one at half the size) cannot be joined packet for packet: that is said,
    # and they are re-encoded into one stream of the first one's size.
    import av
    small = tmp_path / "small.mp4"
    with av.open(str(made["dir"] / f"{CLIPS[1]}.mp4")) as src, av.open(str(small), "w") as out:
        stream = out.add_stream("libx264", rate=src.streams.video[0].average_rate)
        stream.width, stream.height, stream.pix_fmt = 426, 240, "yuv420p"
        for frame in src.decode(video=0):
            for packet in stream.encode(frame.reformat(width=426, height=240, format="yuv420p")):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    first = made["dir"] / f"{CLIPS[1]}.mp4"
    status = lecture_join.join_clips([first, small], tmp_path / "joined.mp4", [(0.0, 1.0, "a"), (1.0, 2.0, "b")])
    assert status.startswith("re-encoded: the clips' streams differ (") and "width" in status
    assert abs(container_seconds(tmp_path / "joined.mp4") - container_seconds(first) - container_seconds(small)) < 1e-6


@pytest.mark.slow
def test_a_clip_with_one_short_frame_is_still_joined_without_re_encoding(made, tmp_path):
    """ManimCE's join of partial movies leaves a frame a few ticks short now and then, which moves a clip's
    average frame rate off 60 (mlp_steps at 1080p60: one frame 251 ticks of 1/15360 s, not 256): the clips are
    still the same stream and are joined packet for packet."""
    import av
    first = made["dir"] / f"{CLIPS[1]}.mp4"
    short = tmp_path / "short.mp4"
    with av.open(str(first)) as src, av.open(str(short), "w") as out:
        stream = src.streams.video[0]
        ostream = out.add_stream_from_template(stream)
        packets = [p for p in src.demux(stream) if p.dts is not None]
        step = int(min(b.pts - a.pts for a, b in zip(sorted(packets, key=lambda p: p.pts),
                                                      sorted(packets, key=lambda p: p.pts)[1:])))
        cut = len(packets) // 2
        for i, packet in enumerate(packets):
            if i >= cut:                       # every later frame a few ticks earlier: one short frame
                packet.pts -= max(1, step // 50)
                packet.dts -= max(1, step // 50)
            packet.stream = ostream
            out.mux(packet)
    with av.open(str(first)) as a, av.open(str(short)) as b:
        assert a.streams.video[0].average_rate != b.streams.video[0].average_rate
        assert a.streams.video[0].base_rate == b.streams.video[0].base_rate
    status = lecture_join.join_clips([first, short], tmp_path / "joined.mp4", [(0.0, 1.0, "a"), (1.0, 2.0, "b")])
    assert status == "joined without re-encoding"


@pytest.mark.slow
def test_a_beat_after_a_short_frame_is_still_cut_on_its_key_frame(made, tmp_path):
    """The preview lecture failed at its deck ("architecture.mp4: the beat at 43.198 s starts on no key frame"):
    every beat starts on a key frame (each play is its own partial movie), but a frame left a few ticks short by a
    join moves every later frame's timestamp a few ticks before its nominal time. The deck finds a beat's first
    frame within half a frame of its start, and each beat's segment holds exactly that beat's frames."""
    import av
    clip = made["dir"] / f"{CLIPS[0]}.mp4"
    m = manifest(clip)
    shifted = tmp_path / clip.name
    with av.open(str(clip)) as src, av.open(str(shifted), "w") as out:
        stream = src.streams.video[0]
        ostream = out.add_stream_from_template(stream)
        tick = 1 / (float(stream.average_rate) * stream.time_base)
        cut = round(m["timeline"][2]["start"] * float(stream.average_rate) * tick)
        for packet in [p for p in src.demux(stream) if p.dts is not None]:
            if packet.pts >= cut:          # from the third beat on, every frame 5 ticks early
                packet.pts -= 5
                packet.dts -= 5
            packet.stream = ostream
            out.mux(packet)
    recipe.manifest_path(shifted).write_text(json.dumps(m))
    segments = deck.beat_segments(shifted, m, tmp_path / "beats")
    fps = 15
    assert len(segments) == len(m["timeline"])
    for beat, segment in zip(m["timeline"], segments):
        with av.open(str(segment)) as c:
            packets = sorted((p for p in c.demux(c.streams.video[0]) if p.dts is not None), key=lambda p: p.pts)
        assert packets[0].is_keyframe
        assert len(packets) == round(beat["end"] * fps) - round(beat["start"] * fps), beat["section"]


@pytest.mark.slow
def test_an_artifact_that_cannot_be_made_does_not_take_the_others_with_it(made, tmp_path):
    """The deck cannot be written (reveal.js missing): the lecture, the course page and every track still are, the
    run names what failed in one line and exits 1."""
    media = tmp_path / "media"
    shutil.copytree(made["media"], media, symlinks=True)
    out = media / "preview"
    for f in [*out.glob("*.vtt"), *out.glob("*.srt"), out / "lecture.mp4", out / "lecture.slides.html"]:
        f.unlink()
    shutil.rmtree(out / "course")
    shutil.rmtree(media / ".cache" / "slides", ignore_errors=True)
    r = run_render("--config", made["recipe"], media=media, env={"GPT_LECTURE_REVEALJS": str(tmp_path / "none")})
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [f"render.py: packaging failed: reveal.js is not at {tmp_path / 'none'} "
                                             f"(scripts/setup.sh unpacks it there)"]
    assert not (out / "lecture.slides.html").exists()
    assert (out / "lecture.mp4").is_file() and (out / "course" / "index.html").is_file()
    for name in [*CLIPS, "lecture"]:
        for suffix in (".en.vtt", ".en.srt", ".zh.vtt", ".zh.srt", ".chapters.vtt"):
            assert (out / f"{name}{suffix}").is_file(), f"{name}{suffix}"


@pytest.mark.slow
@pytest.mark.parametrize("quality, scene", [("preview", "architecture"), ("high", "token_embedding")])
def test_a_recipe_of_one_scene_packages_its_deck_page_and_tracks(tmp_path, quality, scene):
    """A clip rendered in two parts, as the lecture renders it, then packaged: at preview, architecture, the scene
    whose deck failed (its last beat's key frame a few ticks early after the join of its two parts); at 1080p60, the
    quick start's quality, the shortest scene (half architecture's length: the same join, half the render)."""
    recipe_file = tmp_path / "lecture.toml"
    recipe_file.write_text(f'[lecture]\nquality = "{quality}"\nslides = true\n[[scene]]\nname = "{scene}"\n')
    media = tmp_path / "media"
    r = run_render("--config", recipe_file, "--jobs", "2", media=media, timeout=1200)
    assert r.returncode == 0, r.stderr
    assert "in this process" in r.stdout and "in a second" in r.stdout, r.stdout     # two parts, joined
    out = media / quality
    assert (out / "lecture.slides.html").is_file() and (out / "course" / "index.html").is_file()
    for name in (scene, "lecture"):
        for suffix in (".en.vtt", ".en.srt", ".zh.vtt", ".zh.srt", ".chapters.vtt"):
            assert (out / f"{name}{suffix}").is_file(), f"{name}{suffix}"
    beats = len(manifest(out / f"{scene}.mp4")["timeline"])
    assert f"slides: {beats} -> " in r.stdout


# --- clean clips for voice-over ---------------------------------------------------------------------
@pytest.mark.slow
def test_a_clean_clip_has_the_same_timeline_numbers_and_tracks_without_the_narration_line(made):
    args = ["positional_encoding", "--section", "title", "--clean", "--quality", "preview"]
    r = run_render(*args, media=made["media"])
    assert r.returncode == 0, r.stderr
    clean = made["dir"] / "positional_encoding-section-title-clean.mp4"
    plain = made["dir"] / "positional_encoding-section-title.mp4"
    a, b = manifest(plain), manifest(clean)
    assert b["clean"] is True and a["clean"] is False and a["cache_key"] != b["cache_key"]
    for key in ("timeline", "captions", "values", "sections"):
        assert a[key] == b[key], key
    for suffix in ("en.vtt", "zh.srt", "chapters.vtt"):
        assert clean.with_name(f"{clean.stem}.{suffix}").read_text() == \
            plain.with_name(f"{plain.stem}.{suffix}").read_text()
    # The last frame: the title card's note is drawn in the captioned clip only (its lines are the only
    # difference, in the lower half where the note sits).
    import av
    import numpy as np

    def last_frame(path):
        with av.open(str(path)) as c:
            return [f.to_ndarray(format="gray") for f in c.decode(video=0)][-1].astype(int)
    x, y = last_frame(plain), last_frame(clean)
    diff = np.abs(x - y) > 40
    assert diff.any() and diff[: x.shape[0] // 2].sum() == 0
    assert statuses_of(run_render(*args, media=made["media"]).stdout) == ["skipped"]


def statuses_of(stdout: str) -> list[str]:
    return [line.split("  ")[-1].split(" ")[0] for line in stdout.splitlines() if line.startswith("[")]


@pytest.mark.parametrize("key", ["clean", "slides"])
@pytest.mark.parametrize("value", ['"yes"', "1"])
def test_a_bad_clean_or_slides_setting_is_one_line(tmp_path, key, value):
    recipe_file = tmp_path / "r.toml"
    recipe_file.write_text(f"[lecture]\n{key} = {value}\n[[scene]]\nname = \"token_embedding\"\n")
    r = run_render("--config", recipe_file, "--dry-run", media=tmp_path / "m")
    assert r.returncode == 2 and r.stderr.strip() == f"render.py: error: {recipe_file}: lecture.{key} must be true or false"
    assert not (tmp_path / "m").exists() or not any((tmp_path / "m").rglob("*.mp4"))


def test_slides_need_mp4(tmp_path):
    r = run_render("token_embedding", "--slides", "--format", "gif", "--dry-run", media=tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == "render.py: error: --slides needs --format mp4 (got gif)"


@pytest.mark.slow
def test_a_clip_that_cannot_be_packaged_is_one_line(made, tmp_path):
    """A manifest whose narration runs past the clip's end: the run says so in one line and exits 1."""
    media = tmp_path / "media"
    shutil.copytree(made["media"], media, symlinks=True)
    path = recipe.manifest_path(media / "preview" / f"{CLIPS[1]}.mp4")
    m = json.loads(path.read_text())
    m["captions"][-1]["end"] += 5
    path.write_text(json.dumps(m))
    r = run_render("--config", made["recipe"], media=media)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [f"render.py: packaging failed: {CLIPS[1]}.mp4: en captions: cue "
                                             f"{m['captions'][-1]['start']:.3f}-{m['captions'][-1]['end']:.3f} s "
                                             f"does not fit the {m['timeline'][-1]['end']:.3f} s clip after the cue "
                                             f"ending at 0.000 s"]


# --- the course page in a real browser ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver, "scripts/setup.sh test installs Debian's chromium and chromium-driver"
    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--mute-audio"):
        options.add_argument(arg)   # no flag that loosens file:// (e.g. --allow-file-access-from-files)
    options.binary_location = chromium
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(options=options, service=Service(driver))
    yield d
    d.quit()


def wait_for(d, script: str, timeout: float = 20.0):
    """Poll a JavaScript expression until it is truthy (the page loads media asynchronously)."""
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(d, timeout, poll_frequency=0.1).until(lambda drv: drv.execute_script(script))


@pytest.mark.slow
def test_the_course_page_works_from_file_in_chromium(made, browser, tmp_path):
    from selenium.webdriver.common.by import By
    page_file = made["dir"] / "course" / "index.html"
    assert page_file.is_file()
    html = page_file.read_text()
    assert "http://" not in html and "https://" not in html   # nothing from the network
    browser.set_window_size(1280, 900)
    browser.get(page_file.as_uri())
    wait_for(browser, "return [...document.querySelectorAll('video')].every(v => v.readyState >= 1)")
    videos = browser.execute_script("return [...document.querySelectorAll('video')].map(v => v.duration)")
    manifests = [manifest(made["dir"] / f"{n}.mp4") for n in CLIPS]
    assert len(videos) == 2
    for seconds, m in zip(videos, manifests):
        assert abs(seconds - m["timeline"][-1]["end"]) < 1e-3
    # Captions on by default: the page's language, drawn by the browser (WCAG 1.2.2); over a clip that shows its own
    # line at the bottom, at the top, clear of it.
    showing = "return [...document.querySelector('video').textTracks].filter(t => t.mode === 'showing').map(t => t.language)"
    assert browser.execute_script(showing) == ["en"]
    assert browser.execute_script("return [...document.querySelector('video').querySelectorAll('track')]"
                                  ".map(t => [t.srclang, t.default])") == [["en", True], ["zh", False], ["en", False]]
    lines = wait_for(browser, "const t = [...document.querySelector('video').textTracks].find(t => t.language === 'en');"
                              "return t.cues && t.cues.length ? [...t.cues].map(c => c.line) : null")
    assert lines == [0] * len(manifest(made["dir"] / f"{CLIPS[0]}.mp4")["captions"])
    # every track loads (a disabled one is not fetched: hidden loads it without drawing it)
    browser.execute_script("document.querySelectorAll('video').forEach(v => { for (const t of v.textTracks) "
                           "if (t.mode === 'disabled') t.mode = 'hidden'; })")
    counts = wait_for(browser, """
        const all = [...document.querySelectorAll('video')].map(v => [...v.textTracks].map(
            t => [t.kind, t.language, t.cues ? t.cues.length : -1]));
        return all.flat().every(t => t[2] > 0) ? all : null;""")
    for tracks, m in zip(counts, manifests):
        assert sorted(tracks) == sorted([["captions", "en", len(m["captions"])], ["captions", "zh", len(m["captions"])],
                                         ["chapters", "en", len(m["timeline"])]])
    # the chapter menu seeks
    beats = browser.find_elements(By.CSS_SELECTOR, "#lesson-1 .beats button")
    assert len(beats) == len(manifests[0]["timeline"])
    target = manifests[0]["timeline"][2]["start"]
    beats[2].click()
    wait_for(browser, f"return Math.abs(document.querySelector('#lesson-1 video').currentTime - {target}) < 0.05")
    # the language switch: the page, its chapter names and the captions shown
    browser.find_element(By.CSS_SELECTOR, ".langs button[data-lang='zh']").click()
    assert browser.execute_script("return document.documentElement.lang") == "zh"
    assert browser.find_element(By.CSS_SELECTOR, "nav.toc a").text == manifests[0]["titles"]["zh"]
    names = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#lesson-1 .beats button")]
    assert names == [f"{i}. {manifests[0]['beat_titles']['zh'][b['section']]} · {int(b['start'] // 60)}:"
                     f"{int(b['start'] % 60):02d}" for i, b in enumerate(manifests[0]["timeline"], 1)]
    # no Chinese clip here: the English one, with the Chinese captions at the top, clear of its own line
    assert browser.execute_script(showing) == ["zh"]
    lines = wait_for(browser, "const t = [...document.querySelector('video').textTracks].find(t => t.language === 'zh');"
                              "return t.cues && t.cues.length ? [...t.cues].map(c => c.line) : null")
    assert lines == [0] * len(manifests[0]["captions"])
    # the embed snippet: a text box of the clip's <video> and <track> tags, and a button that copies it
    lesson = browser.find_element(By.ID, "lesson-1")
    lesson.find_element(By.CSS_SELECTOR, ".variant:not([hidden]) details.embed summary").click()
    snippet = lesson.find_element(By.CSS_SELECTOR, ".variant:not([hidden]) textarea").get_attribute("value")
    assert snippet.startswith(f'<video controls preload="metadata" width="854" src="{CLIPS[0]}.mp4">')
    assert f'src="{CLIPS[0]}.zh.vtt"' in snippet and f'src="{CLIPS[0]}.chapters.vtt"' in snippet
    assert all((made["dir"] / "course" / "clips" / name).is_file() for name in
               [f"{CLIPS[0]}.mp4", f"{CLIPS[0]}.en.vtt", f"{CLIPS[0]}.zh.vtt", f"{CLIPS[0]}.chapters.vtt"])
    lesson.find_element(By.CSS_SELECTOR, ".variant:not([hidden]) button.copy").click()
    wait_for(browser, f"return document.querySelector('#lesson-1 .variant:not([hidden]) button.copy').textContent"
                      f" === {json.dumps(page.UI['zh']['copied'])}")
    browser.save_screenshot(str(tmp_path / "desktop.png"))
    browser.set_window_size(390, 844)
    time.sleep(0.3)
    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= 390, "no sideways scrolling on a phone"
    browser.save_screenshot(str(tmp_path / "phone.png"))
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


# --- the slide deck ------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_deck_is_one_offline_file_with_one_slide_per_beat(made, browser):
    import re
    deck_file = made["dir"] / "lecture.slides.html"
    text = deck_file.read_text(encoding="utf-8")
    beats = sum(len(manifest(made["dir"] / f"{n}.mp4")["timeline"]) for n in CLIPS)
    assert text.count("data-background-video=\"data:video/mp4;base64,") == beats == 7
    assert not re.search(r'<(script|link|img|video|source)[^>]+(src|href)="https?:', text)   # nothing to fetch
    assert f"slides: {beats} -> " in made["stdout"]
    browser.set_window_size(1280, 720)
    browser.get(deck_file.as_uri())
    assert wait_for(browser, "return window.Reveal && Reveal.isReady() && Reveal.getTotalSlides()") == beats
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_setup_unpacks_the_reveal_js_that_manim_slides_names():
    from manim_slides.convert import RevealJS
    text = (REPO / "scripts" / "setup.sh").read_text()
    assert f"npm_unpack reveal.js {RevealJS.model_fields['reveal_version'].default} " in text
    assert (deck.reveal_assets() / "dist" / "reveal.js").is_file()


@pytest.mark.slow
def test_the_course_page_of_clean_clips_shows_the_captions(made, browser, tmp_path):
    """A clean clip shows no line of its own: the page draws the captions of its language over it."""
    args = ["positional_encoding", "--section", "title", "--clean", "--quality", "preview"]
    assert run_render(*args, media=made["media"]).returncode == 0   # rendered by the clean-clip test, else now
    clean = made["dir"] / "positional_encoding-section-title-clean.mp4"
    index = page.build_course([{"en": clean}], tmp_path / "course-clean", "en", packaging.page_colours)
    browser.set_window_size(1280, 900)
    browser.get(index.as_uri())
    wait_for(browser, "return document.querySelector('video').readyState >= 1")
    showing = "return [...document.querySelector('video').textTracks].filter(t => t.mode === 'showing').map(t => t.language)"
    assert browser.execute_script(showing) == ["en"]
    cues = wait_for(browser, "const t = [...document.querySelector('video').textTracks].find(t => t.mode === 'showing');"
                             "return t.cues && t.cues.length ? [...t.cues].map(c => c.text) : null")
    assert cues == [c["texts"]["en"] for c in manifest(clean)["captions"]]
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_cue_text_is_escaped_for_webvtt_and_reads_back():
    """"<0.1% … >99.9%" is text: WebVTT escapes &, < and > (a browser would read "<0.1% to >" as a tag)."""
    text = tracks.vtt_text([(1.0, 2.0, "grows from <0.1% to >99.9% & more")])
    assert "&lt;0.1% to &gt;99.9% &amp; more" in text
    assert tracks.parsed_vtt(text) == [(1.0, 2.0, "grows from <0.1% to >99.9% & more")]


# --- a Chinese lecture: its chapters in Chinese ----------------------------------------------------------------
@pytest.fixture(scope="module")
def made_zh(made, tmp_path_factory):
    """The same recipe in Chinese (--lang zh), beside a copy of the English run: the clips, the lecture, the deck
    and the course page, whose lessons then hold both languages."""
    media = tmp_path_factory.mktemp("course-zh") / "media"
    shutil.copytree(made["media"], media, symlinks=True)
    r = run_render("--config", made["recipe"], "--lang", "zh", "--jobs", "2", media=media, timeout=900)
    assert r.returncode == 0, r.stderr
    return {"media": media, "dir": media / "preview", "stdout": r.stdout}


ZH_CLIPS = ["token_embedding-lang-zh", "positional_encoding-lang-zh-section-title"]


@pytest.mark.slow
def test_a_chinese_clip_and_lecture_name_their_chapters_in_chinese(made_zh):
    import av
    import webvtt
    declared = {"token_embedding": TokenEmbedding, "positional_encoding": PositionalEncoding}
    lecture_names = []
    for name in ZH_CLIPS:
        clip = made_zh["dir"] / f"{name}.mp4"
        m = manifest(clip)
        titles = declared[m["scene"]].chapter_titles(m["params"])["zh"]   # as the scene declares them
        chapters = [(tracks.seconds_of(c.start), tracks.seconds_of(c.end), c.text)
                    for c in webvtt.read(str(clip.with_name(f"{name}.chapters.vtt")))]
        assert chapters == [(b["start"], b["end"], titles[b["section"]]) for b in m["timeline"]]
        assert all(re.search(r"[\u4e00-\u9fff]", t) for *_, t in chapters)
        assert [b["title"] for b in m["timeline"]] == [t for *_, t in chapters]
        lecture_names += [titles["title"] if b["section"] == "title" else f"{titles['title']}——{titles[b['section']]}"
                          for b in m["timeline"]]
    lecture = made_zh["dir"] / "lecture-lang-zh.mp4"
    cues = [c.text for c in webvtt.read(str(lecture.with_name("lecture-lang-zh.chapters.vtt")))]
    assert cues == lecture_names and "词元与嵌入——切分成词元" in cues
    with av.open(str(lecture)) as c:
        assert [ch["metadata"]["title"] for ch in c.chapters()] == ["词元与嵌入", "位置编码"]
    # the deck's speaker notes: each slide's chapter name first
    deck = (made_zh["dir"] / "lecture-lang-zh.slides.html").read_text(encoding="utf-8")
    assert all(f"### {n}" in deck for n in lecture_names)


@pytest.mark.slow
def test_the_chinese_course_page_names_the_chapters_in_the_page_language(made_zh, browser):
    from selenium.webdriver.common.by import By
    page_file = made_zh["dir"] / "course" / "index.html"
    browser.set_window_size(1280, 900)
    browser.get(page_file.as_uri())
    wait_for(browser, "return [...document.querySelectorAll('video')].every(v => v.readyState >= 1)")
    zh, en = manifest(made_zh["dir"] / f"{ZH_CLIPS[0]}.mp4"), manifest(made_zh["dir"] / f"{CLIPS[0]}.mp4")
    buttons = "return [...document.querySelectorAll('#lesson-1 .beats button')].map(b => b.textContent)"
    assert [t.split(". ", 1)[1].rsplit(" · ", 1)[0] for t in browser.execute_script(buttons)] == \
        [zh["beat_titles"]["zh"][b["section"]] for b in zh["timeline"]]
    # the Chinese clip's chapter track, as the player loads it
    cues = wait_for(browser, """
        const t = [...document.querySelector('#lesson-1 video').textTracks].find(t => t.kind === 'chapters');
        if (t.mode === 'disabled') t.mode = 'hidden';
        return t.cues && t.cues.length ? [t.language, [...t.cues].map(c => c.text)] : null;""")
    assert cues == ["zh", [b["title"] for b in zh["timeline"]]]
    # switched to English: the English clip, and its beats named in English
    browser.find_element(By.CSS_SELECTOR, ".langs button[data-lang='en']").click()
    assert [t.split(". ", 1)[1].rsplit(" · ", 1)[0] for t in browser.execute_script(buttons)] == \
        [en["beat_titles"]["en"][b["section"]] for b in en["timeline"]]
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


@pytest.mark.slow
def test_a_clip_in_the_other_language_rendered_by_older_code_is_left_off_the_page(made_zh, tmp_path):
    """Its manifest may lack what the page shows (beat titles, say): the page goes without it, and says so."""
    media = tmp_path / "media"
    shutil.copytree(made_zh["media"], media, symlinks=True)
    path = recipe.manifest_path(media / "preview" / f"{CLIPS[0]}.mp4")
    m = json.loads(path.read_text())
    m["sources"] = {**m["sources"], "scenes/lecture.py": "0" * 64}   # as if rendered before scenes/lecture.py changed
    m.pop("beat_titles")
    path.write_text(json.dumps(m))
    recipe_file = tmp_path / "lecture.toml"
    recipe_file.write_text(RECIPE)
    r = run_render("--config", recipe_file, "--lang", "zh", media=media)
    assert r.returncode == 0, r.stderr
    assert f"course page: {media / 'preview' / CLIPS[0]}.mp4 left out: its code has changed since it was rendered " \
           f"(render the recipe with --lang en)" in r.stdout
    data = (media / "preview" / "course" / "index.html").read_text(encoding="utf-8")
    course_data = json.loads(data.split('<script id="course-data" type="application/json">')[1].split("</script>")[0]
                             .replace("<\\/", "</"))
    assert list(course_data["lessons"][0]["variants"]) == ["zh"]
    assert list(course_data["lessons"][1]["variants"]) == ["en", "zh"]


@pytest.mark.slow
def test_a_checkpoints_course_page_has_no_try_it_panel_and_says_why(made, browser, gpt2_small, tmp_path):
    """The page runs only a model it can carry and tokenize (ours); a GPT-2 checkpoint's lecture gets the page
    without the panel, without "try this scene's numbers" buttons, and a note naming the tokenizer and the weights'
    size, with no error in the browser."""
    from selenium.webdriver.common.by import By

    from pipeline import tryit
    assert tryit.unsupported(REPO / "model" / "weights") is None
    why = tryit.unsupported(gpt2_small)
    assert why == {"tokenizer": "BPE", "bytes": (gpt2_small / "model.safetensors").stat().st_size}
    args = ["positional_encoding", "--section", "title", "--quality", "preview"]
    assert run_render(*args, media=made["media"]).returncode == 0
    clip = made["dir"] / "positional_encoding-section-title.mp4"
    folder = tmp_path / "course"
    (folder / "tryit").mkdir(parents=True)      # a panel from an earlier build of the same folder goes
    index = page.build_course([{"en": clip}], folder, "en", packaging.page_colours, model_dir=gpt2_small)
    assert not (folder / "tryit").exists()
    browser.get(index.as_uri())
    wait_for(browser, "return document.querySelector('video').readyState >= 1")
    note = browser.find_element("css selector", "#try .note").text
    assert "BPE" in note and f"{why['bytes'] / 1e6:,.0f} MB" in note
    assert browser.find_elements("css selector", ".try-scene, .try-form") == []
    browser.find_element(By.CSS_SELECTOR, ".langs button[data-lang='zh']").click()     # the note turns with the page
    assert browser.find_element("css selector", "#try .note").text == tryit.absent_note("zh", why)
    assert browser.find_element("css selector", "#try h2").text == tryit.UI["zh"]["try"]
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


# --- accessibility (WCAG 2.1 AA): axe-core in Chromium, the keyboard, transcripts -----------------------------------
AXE = Path(sys.prefix) / "share" / "axe-core-4.14.1" / "axe.min.js"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]   # the WCAG 2.0 and 2.1 A and AA rules


def axe(d, context: str = "document") -> dict:
    """axe-core's WCAG 2.0/2.1 A and AA rules run on the page as it is (`context`: a CSS selector or the document):
    {"violations": [[rule, [element, ...]], ...], "passes": {rule: elements checked}, "version"}."""
    if not d.execute_script("return !!window.axe"):
        d.execute_script(AXE.read_text(encoding="utf-8"))
    where = "document" if context == "document" else json.dumps(context)
    got = d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        f"axe.run({where}, {{runOnly: {{type: 'tag', values: {json.dumps(WCAG_TAGS)}}}}})"
        ".then(r => done({version: axe.version, violations: r.violations.map(v => [v.id, v.nodes.map("
        "n => n.target.join(' ') + ': ' + n.failureSummary)]), passes: Object.fromEntries(r.passes.map("
        "p => [p.id, p.nodes.length]))}), e => done({error: String(e)}))")
    assert "error" not in got, got
    return got


def test_setup_unpacks_the_pinned_axe_core():
    text = (REPO / "scripts" / "setup.sh").read_text()
    assert re.search(r"npm_unpack axe-core 4\.14\.1 axe\.min\.js ", text)
    assert AXE.is_file(), "scripts/setup.sh test unpacks axe-core"


def test_axe_reports_a_violation_it_is_shown(browser, tmp_path):
    """The checker is live: a page with an image without a text alternative and no language fails."""
    bad = tmp_path / "bad.html"
    gif = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"
    bad.write_text(f'<!doctype html><html><head><title>x</title></head><body><img src="{gif}"></body></html>')
    browser.get(bad.as_uri())
    got = axe(browser)
    browser.get_log("browser")   # this page's messages are not the next test's
    assert got["version"] == "4.14.1"
    assert {rule for rule, _ in got["violations"]} >= {"image-alt", "html-has-lang"}


@pytest.mark.slow
def test_axe_finds_no_wcag_violation_on_the_course_page(made, browser):
    """In the page's first state, after the language switch, and with Try-it run on the longest prompt of the page's
    lessons, every layer and head of its attention shown."""
    from selenium.webdriver.common.by import By
    browser.set_window_size(1280, 900)
    browser.get((made["dir"] / "course" / "index.html").as_uri())
    wait_for(browser, "return [...document.querySelectorAll('video')].every(v => v.readyState >= 1) && "
                      "window.gptLecture && gptLecture.firstAnswer")
    first = axe(browser)
    assert first["violations"] == [] and first["passes"].get("color-contrast", 0) > 50
    browser.find_element(By.CSS_SELECTOR, ".langs button[data-lang='zh']").click()
    assert axe(browser)["violations"] == []
    prompts = browser.execute_script("return [...document.querySelectorAll('button.try-scene')]"
                                     ".map(b => JSON.parse(b.dataset.try).prompt)")
    longest = max(prompts, key=lambda p: browser.execute_script("return gptLecture.split(arguments[0]).length", p))
    box = browser.find_element(By.CSS_SELECTOR, ".try-prompt")
    box.clear()
    box.send_keys(longest)
    browser.find_element(By.CSS_SELECTOR, ".try-form button[type=submit]").click()
    tokens = browser.execute_script("return gptLecture.split(arguments[0]).length", longest)
    assert len(browser.find_elements(By.CSS_SELECTOR, ".try-token")) == tokens > 8
    layers, heads = browser.execute_script("return [document.querySelector('.try-layer').options.length, "
                                           "document.querySelector('.try-head').options.length]")
    for layer in range(layers):
        for head in range(heads):
            browser.execute_script(
                "for (const [sel, v] of [['.try-layer', arguments[0]], ['.try-head', arguments[1]]]) {"
                "const s = document.querySelector(sel); s.value = v; s.dispatchEvent(new Event('change')); }", layer, head)
            assert len(browser.find_elements(By.CSS_SELECTOR, ".try-grid td")) == tokens * tokens
            got = axe(browser, "#try")
            assert got["violations"] == [], (layer, head)
            assert got["passes"]["color-contrast"] >= tokens * (tokens + 1) // 2   # every weight's cell checked
    assert axe(browser)["violations"] == []
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


@pytest.mark.slow
def test_every_clip_has_a_transcript_in_the_page_language(made, browser):
    """Under each clip: per beat its title, what it draws and its narration lines with their times, in the page's
    language, switching with it; part of the page's text; linking to the clip's caption files."""
    from selenium.webdriver.common.by import By
    course = made["dir"] / "course"
    browser.get((course / "index.html").as_uri())
    for lang in ("en", "zh"):
        browser.find_element(By.CSS_SELECTOR, f".langs button[data-lang='{lang}']").click()
        for n, name in enumerate(CLIPS, 1):
            m = manifest(made["dir"] / f"{name}.mp4")
            shown = browser.find_elements(By.CSS_SELECTOR, f"#lesson-{n} .transcript:not([hidden])")
            assert len(shown) == 1 and shown[0].get_attribute("lang") == lang
            text = shown[0].text
            for c in m["captions"]:   # every line, in order, with its time
                assert f"{page.clock(c['start'])} {c['texts'][lang].replace(chr(10), ' ' if lang == 'en' else '')}" \
                    in text
            beats = shown[0].find_elements(By.CSS_SELECTOR, "ol.beats-said > li")
            assert len(beats) == len(m["timeline"])
            for li, beat in zip(beats, m["timeline"]):
                assert page.beat_title(m, beat["section"], lang) in li.find_element(By.CSS_SELECTOR, ".beat").text
                assert li.find_element(By.CSS_SELECTOR, ".drawn").text == \
                    page.beat_description(m, beat["section"], lang)
            links = [a.get_attribute("href") for a in shown[0].find_elements(By.CSS_SELECTOR, ".files a")]
            assert links == [(course / "clips" / f"{name}.{l}.{x}").as_uri() for l in ("en", "zh") for x in ("vtt", "srt")]
            assert all((course / "clips" / f"{name}.{l}.{x}").is_file() for l in ("en", "zh") for x in ("vtt", "srt"))
    # a beat's numbers, from its manifest: the token ids of token_embedding's "ids" beat, in words
    m = manifest(made["dir"] / f"{CLIPS[0]}.mp4")
    assert "token ids: [" + ", ".join(map(str, m["values"]["token_ids"][:6])) in page.beat_description(m, "ids", "en")


@pytest.mark.slow
def test_the_keyboard_walk_never_drops_focus_to_the_body(made, browser):
    """Tab through the page from its top, pressing Enter on every button and summary on the way: focus stays on an
    element of the page (never <body>); "Try this scene's numbers" takes it to the panel's heading, a token button
    keeps it."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    browser.set_window_size(1280, 900)
    browser.get((made["dir"] / "course" / "index.html").as_uri())
    wait_for(browser, "return window.gptLecture && gptLecture.firstAnswer")
    active = ("const a = document.activeElement; return a === document.body || !a ? null : "
              "[a.tagName, a.className, a.id, a.textContent.slice(0, 30), [...a.parentElement.children].indexOf(a)]")
    operated, kinds = 0, set()
    for _ in range(600):
        ActionChains(browser).send_keys(Keys.TAB).perform()
        here = browser.execute_script(active)
        if here is None:   # past the last stop
            break
        tag, cls, _, _, index = here
        if tag not in ("BUTTON", "SUMMARY"):
            continue
        ActionChains(browser).send_keys(Keys.ENTER).perform()
        operated += 1
        after = browser.execute_script(active)
        assert after is not None, f"focus fell to <body> after pressing Enter on {here}"
        if "try-scene" in cls:
            assert after[2] == "try-h", after
            kinds.add("try-scene")
        elif "try-token" in cls:
            assert after[1].startswith("try-token") and after[4] == index
            assert browser.execute_script("return document.activeElement.getAttribute('aria-pressed')") == "true"
            kinds.add("token")
    else:
        pytest.fail("the walk did not reach the end of the page")
    assert operated > 20 and kinds == {"try-scene", "token"}


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_deck_is_readable_captioned_zoomable_and_still_under_reduced_motion(made, browser, request, lang):
    """The deck in each language: <html lang>, zoom allowed, each slide a named group holding its chapter name,
    what it draws and its narration, its video captioned by default in the deck's language, axe-core clean on its
    first slides; under prefers-reduced-motion nothing plays until the visible play button is pressed."""
    from selenium.webdriver.common.by import By
    folder = made["dir"] if lang == "en" else request.getfixturevalue("made_zh")["dir"]
    deck_file = folder / ("lecture.slides.html" if lang == "en" else "lecture-lang-zh.slides.html")
    clips = [folder / f"{n}.mp4" for n in (CLIPS if lang == "en" else ZH_CLIPS)]
    beats = [(manifest(c), b) for c in clips for b in manifest(c)["timeline"]]
    browser.set_window_size(1280, 720)
    browser.get(deck_file.as_uri())
    wait_for(browser, "return window.Reveal && Reveal.isReady()")
    assert browser.execute_script("return document.documentElement.lang") == lang
    viewport = browser.execute_script("return document.querySelector('meta[name=viewport]').content")
    assert "user-scalable" not in viewport and "maximum-scale" not in viewport
    for i in range(3):
        m, beat = beats[i]
        slide = browser.execute_script("const s = Reveal.getCurrentSlide(); return [s.getAttribute('role'), "
                                       "s.getAttribute('aria-label'), s.querySelector('.deck-text').textContent]")
        assert slide[0] == "group" and slide[1] == deck.DECK_UI[lang]["slide"].format(
            n=i + 1, total=len(beats), title=tracks.lecture_chapter(m, beat["section"], lang))
        assert page.beat_description(m, beat["section"], lang) in slide[2]
        for c in m["captions"]:
            if c["beat"] == beat["section"]:
                assert c["texts"][lang].replace("\n", " " if lang == "en" else "") in slide[2]
        cues = wait_for(browser, "const v = Reveal.getCurrentSlide().slideBackgroundContentElement.querySelector('video');"
                                 "const t = v && [...v.textTracks].find(t => t.mode === 'showing');"
                                 "return t && t.cues && t.cues.length ? [t.language, t.cues.length] : null")
        assert cues[0] == lang and cues[1] >= 1
        assert axe(browser)["violations"] == [], i
        browser.execute_script("Reveal.next()")
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia",
                            {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
    try:
        browser.get(deck_file.as_uri())
        wait_for(browser, "return window.Reveal && Reveal.isReady() && "
                          "Reveal.getCurrentSlide().slideBackgroundContentElement.querySelector('video')")
        time.sleep(0.5)
        video = "return Reveal.getCurrentSlide().slideBackgroundContentElement.querySelector('video').paused"
        button = browser.find_element(By.CSS_SELECTOR, ".deck-pause")
        assert browser.execute_script(video) is True and button.text == deck.DECK_UI[lang]["play"]
        assert button.is_displayed()
        button.click()
        wait_for(browser, video.replace("return ", "return !"))
        wait_for(browser, f"return document.querySelector('.deck-pause').textContent === "
                          f"{json.dumps(deck.DECK_UI[lang]['pause'])}")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def test_a_deck_html_that_is_not_manim_slides_template_is_one_line():
    """The deck is made accessible by editing manim-slides' HTML; HTML it does not know (another manim-slides
    version) is a PackagingError naming what is missing, and a deck whose slide count differs is one too."""
    with pytest.raises(tracks.PackagingError, match=r"^slides: manim-slides' HTML has no '<html>'"):
        deck.accessible("<!doctype html><html lang=en><body></body></html>", [], "en")
    template = ('<html><head><meta content="width=device-width, initial-scale=1.0, maximum-scale=1.0, '
                'user-scalable=no" name="viewport"/></head><body><div class="reveal"><div class="slides">'
                '<section data-background-color="black"></section></div></div><script>autoPlayMedia: null, '
                'controls: false,</script></body></html>')
    with pytest.raises(tracks.PackagingError, match=r"^slides: manim-slides' HTML has 1 slides, not 2$"):
        deck.accessible(template, [{}, {}], "en")
