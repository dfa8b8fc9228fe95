"""render.py: discovery, parameters, bad input, the cache, and atomic outputs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, run_render

import render
from scenes.catalog import SCENES, SOFTMAX_TEMPERATURE, find, stop_section_names, sweep_stops
from scenes.params import AUTO, Choice, Int, Param, ParamError, SceneSpec, Temperatures, Text, model_index

SCENE = "softmax_temperature"
CHEAP = ["--format", "png", "--section", "title"]   # the quickest real render: one still


# --- discovery ---------------------------------------------------------------------------
def test_list_shows_every_scene_with_its_parameters():
    r = run_render("list")
    assert r.returncode == 0, r.stderr
    blocks = {}
    for line in r.stdout.splitlines():
        if not line.startswith(" "):
            blocks[line.split()[0]] = []
        else:
            blocks[list(blocks)[-1]].append(line.strip())
    assert list(blocks) == list(SCENES)
    for spec in SCENES.values():
        for p in spec.params:
            line = next(line for line in blocks[spec.name] if line.startswith(p.name + " "))
            assert p.kind.name in line and p.show_default() in line and p.help[:30] in line
    assert "t0.5" in r.stdout  # the sections, as they follow from the default sweep


# --- bad input: one clear line, exit 2, no traceback ------------------------------------------
BAD_INPUTS = [
    (["no_such_scene"], "unknown scene 'no_such_scene'; known scenes: "),
    ([SCENE, "--set", "colour=red"], "has no parameter 'colour'; its parameters are: prompt, temperatures, top_k"),
    ([SCENE, "--layer", "1"], "has no parameter for --layer; its parameters are: prompt"),
    ([SCENE, "--set", "top_k=three"], "top_k: expected an integer, got 'three'"),
    ([SCENE, "--set", "top_k=9"], "top_k: must be between 1 and 6, got 9"),
    ([SCENE, "--temperature", "1,-0.5"], "temperatures: a temperature must be >= 0, got -0.5"),
    ([SCENE, "--temperature", "1,nan"], "temperatures: a temperature must be >= 0, got nan"),
    ([SCENE, "--temperature", "warm"], "temperatures: expected numbers separated by commas, got 'warm'"),
    ([SCENE, "--lang", "fr"], "lang: must be one of en, zh, got 'fr'"),
    ([SCENE, "--prompt", "a fluffy zebra"], "prompt: unknown word 'zebra'"),
    ([SCENE, "--prompt", " ".join(["the"] * 40)], "prompt: the prompt is 40 tokens long, but the model's context is 32"),
    ([SCENE, "--prompt", "   "], "prompt: must not be empty"),
    ([SCENE, "--set", "prompt"], "--set expects KEY=VALUE, got 'prompt'"),
    ([SCENE, "--section", "nowhere"], "no section 'nowhere'; the sections are: title, prompt, logits"),
    ([SCENE, "--transparent"], "--transparent needs --format mov, webm, png"),
    ([SCENE, "--quality", "ultra"], "argument --quality: invalid choice: 'ultra'"),
    ([SCENE, "--jobs", "0"], "--jobs must be at least 1"),
    ([SCENE, "--model", "/nonexistent/weights"], "model: missing weights directory: /nonexistent/weights"),
    ([], "name a scene (see `python render.py list`) or give --config lecture.toml"),
    (["values_update", "--set", "focus=40"], "focus: the model's context has 32 positions (0..31), got 40"),
    (["values_update", "--set", "focus=20"], "focus: the prompt has 12 tokens (positions 0..11), got 20"),
    (["queries_keys", "--prompt", "michael jordan plays", "--set", "focus=3", "--dry-run"],
     "focus: the prompt has 3 tokens (positions 0..2), got 3"),
]


def assert_one_clear_line(r: subprocess.CompletedProcess, expected: str):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert expected in lines[0], lines[0]


@pytest.mark.parametrize("args,expected", BAD_INPUTS, ids=[" ".join(a)[:40] for a, _ in BAD_INPUTS])
def test_bad_input_is_one_clear_line(args, expected, tmp_path):
    assert_one_clear_line(run_render(*args, media=tmp_path), expected)
    assert not (tmp_path / "preview").exists()


BAD_RECIPES = [
    ('[lecture]\nquality = "high"\n[[scene]\nname = "x"\n', "not valid TOML"),
    ('[lecture]\nquality = "ultra"\n[[scene]]\nname = "softmax_temperature"\n',
     "lecture.quality must be one of preview, medium, high, 4k, got 'ultra'"),
    ('[lecture]\ncolour = "red"\n[[scene]]\nname = "softmax_temperature"\n',
     "lecture.colour is neither a render setting"),
    ('[lecture]\nquality = "high"\n', "expected at least one [[scene]] table"),
    ('[[scene]]\nprompt = "a fox"\n', "scene[1] needs name = \"<scene>\""),
    ('[[scene]]\nname = "softmax_temperature"\n[[scene]]\nname = "fourier"\n',
     "scene[2]: unknown scene 'fourier'"),
    ('[[scene]]\nname = "softmax_temperature"\ntop_k = "five"\n', "scene[1]: top_k: expected an integer, got 'five'"),
    ('[[scene]]\nname = "softmax_temperature"\ntemperatures = [1, -2]\n',
     "scene[1]: temperatures: a temperature must be >= 0, got -2"),
    ('[[scene]]\nname = "softmax_temperature"\nheat = 2\n', "scene[1]: softmax_temperature has no parameter 'heat'"),
    ('[[scene]]\nname = "softmax_temperature"\n[[scene]]\nname = "softmax_temperature"\n',
     "scene[2]: the same render is asked for twice"),
    ('soup = 1\n[[scene]]\nname = "softmax_temperature"\n', "unknown top-level key 'soup'"),
]


@pytest.mark.parametrize("text,expected", BAD_RECIPES, ids=[e[:30] for _, e in BAD_RECIPES])
def test_bad_recipe_names_the_file_and_key(text, expected, tmp_path):
    recipe = tmp_path / "lecture.toml"
    recipe.write_text(text)
    r = run_render("--config", recipe, media=tmp_path)
    assert_one_clear_line(r, expected)
    assert str(recipe) in r.stderr


def test_command_line_values_override_the_recipe(tmp_path):
    recipe = tmp_path / "lecture.toml"
    recipe.write_text('[lecture]\nlang = "en"\n[[scene]]\nname = "softmax_temperature"\ntop_k = 4\n')
    r = run_render("--config", recipe, "--lang", "zh", "--set", "top_k=3", "--dry-run", media=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "softmax_temperature-top_k-3-lang-zh" in r.stdout


def test_shipped_recipe_is_valid():
    r = run_render("--config", REPO / "lecture.toml", "--dry-run", media=REPO / "media")
    assert r.returncode == 0, r.stderr
    assert "softmax_temperature" in r.stdout


# --- parameter parsing and validation ----------------------------------------------------------
def test_text_and_typed_values_parse_alike():
    spec = SOFTMAX_TEMPERATURE
    from_cli = spec.resolve(text={"temperatures": "1, 3,0", "top_k": "4", "lang": "zh", "prompt": "  a  fox "})
    from_toml = spec.resolve({"temperatures": [1, 3.0, 0], "top_k": 4, "lang": "zh", "prompt": "a fox"})
    assert from_cli == from_toml == {"temperatures": (1.0, 3.0, 0.0), "top_k": 4, "lang": "zh", "prompt": "a fox"}
    assert spec.resolve({"top_k": 2, "lang": "zh"}, {"top_k": "3"}) == {**spec.defaults(), "top_k": 3, "lang": "zh"}
    assert spec.resolve() == spec.defaults()
    assert spec.defaults()["prompt"] == AUTO


def test_kinds_reject_what_they_should():
    with pytest.raises(ParamError, match="expected an integer"):
        Int(1, 3).coerce(True)
    with pytest.raises(ParamError, match="between 1 and 3"):
        Int(1, 3).parse("0")
    with pytest.raises(ParamError, match="expected 1 to 3 temperatures"):
        Temperatures(0.05, 100, 3).parse("1,2,3,4")
    with pytest.raises(ParamError, match="0 or between 0.05 and 100"):
        Temperatures(0.05, 100, 3).parse("0.01")
    with pytest.raises(ParamError, match="expected a number"):
        Temperatures(0.05, 100, 3).coerce(["hot"])
    with pytest.raises(ParamError, match="one of a, b"):
        Choice("a", "b").coerce("c")
    with pytest.raises(ParamError, match="expected text"):
        Text().coerce(3)
    assert Temperatures(0.05, 100, 8).show((1.0, 0.5, 0.0)) == "1,0.5,0"


def test_layer_and_head_are_checked_against_the_model(gpt):
    spec = SceneSpec("probe", "Probe", "a scene that reads one head", (
        Param("layer", Int(0, 999), 0, "layer", model_index("n_layer", "layers")),
        Param("head", Int(0, 999), 0, "head", model_index("n_head", "heads")),
    ))
    assert spec.resolve(text={"layer": "1", "head": "3"}, model=gpt) == {"layer": 1, "head": 3}
    with pytest.raises(ParamError, match=rf"layer: the model has {gpt.config.n_layer} layers \(0..1\), got 2"):
        spec.resolve(text={"layer": "2"}, model=gpt)
    with pytest.raises(ParamError, match=rf"head: the model has {gpt.config.n_head} heads"):
        spec.resolve(text={"head": "4"}, model=gpt)


def test_sweep_sections_follow_the_temperatures():
    assert sweep_stops([1, 2, 0]) == [2, 0]
    assert sweep_stops([2, 1, 0]) == [2, 1, 0]
    assert stop_section_names([1, 2, 0.5, 2, 0]) == ["t2", "t0.5", "t2-2", "t0"]
    assert find("SoftmaxTemperature") is find("softmax_temperature")


def job(**params):
    j = render.Job(SOFTMAX_TEMPERATURE, {}, {}, "preview", "mp4", False, None)
    j.params = {**SOFTMAX_TEMPERATURE.defaults(), **params}
    return j


def test_variant_names_are_stable_readable_and_safe(tmp_path):
    assert render.variant_name(job()) == "softmax_temperature"
    assert render.variant_name(job(lang="zh", top_k=3)) == "softmax_temperature-top_k-3-lang-zh"
    assert render.variant_name(job(temperatures=(1.0, 0.5, 0.0))) == "softmax_temperature-temperatures-1,0.5,0"
    name = render.variant_name(job(prompt="../../etc/passwd . the"))
    assert "/" not in name and ".." not in name
    long = render.variant_name(job(prompt=" ".join(["the"] * 30)))
    assert len(long) <= 100 and long != render.variant_name(job(prompt=" ".join(["the"] * 31)))
    assert render.manifest_path(tmp_path / "a.mp4") != render.manifest_path(tmp_path / "a.gif")
    j = job(prompt="../../x")
    j.name = render.variant_name(j)
    assert render.output_path(tmp_path, j).parent == (tmp_path / "preview").resolve()


# --- the cache ---------------------------------------------------------------------------------
def statuses(stdout: str) -> dict[str, str]:
    out = {}
    for line in stdout.splitlines():
        if line.startswith("["):
            name, _, status = line.split("]", 1)[1].strip().partition("  ")
            out[name] = status.strip().split(" ")[0]
    return out


def test_second_render_is_skipped(tmp_path):
    """The no-op rerun's speed is measured by benchmarks/bench_render.py, not asserted here."""
    first = run_render(SCENE, *CHEAP, media=tmp_path)
    assert first.returncode == 0, first.stderr
    out = tmp_path / "preview" / "softmax_temperature-section-title.png"
    stamp = out.stat().st_mtime_ns
    second = run_render(SCENE, *CHEAP, media=tmp_path)
    assert second.returncode == 0
    assert statuses(second.stdout) == {"softmax_temperature-section-title": "skipped"}
    assert out.stat().st_mtime_ns == stamp
    forced = run_render(SCENE, *CHEAP, "--force", "--dry-run", media=tmp_path)
    assert statuses(forced.stdout) == {"softmax_temperature-section-title": "would"}

    # The key covers exactly the sources the render used: the scene, the shared scene modules, the model code.
    manifest_file = render.manifest_path(out)
    manifest = json.loads(manifest_file.read_text())
    used = set(manifest["sources"])
    assert {"scenes/softmax_temperature.py", "scenes/style.py", "scenes/components/text.py", "scenes/catalog.py",
            "model/numpy_gpt.py", "model/language.py"} <= used
    assert "model/torch_gpt.py" not in used  # training code: editing it must not re-render the lecture
    for path in ("scenes/softmax_temperature.py", "scenes/components/charts.py", "model/numpy_gpt.py"):
        edited = {**manifest, "sources": {**manifest["sources"], path: "0" * 64}}  # as if the file had changed
        manifest_file.write_text(json.dumps(edited))
        again = run_render(SCENE, *CHEAP, "--dry-run", media=tmp_path)
        assert statuses(again.stdout) == {"softmax_temperature-section-title": "would"}, path
    manifest_file.write_text(json.dumps(manifest))
    assert statuses(run_render(SCENE, *CHEAP, "--dry-run", media=tmp_path).stdout) == \
        {"softmax_temperature-section-title": "skipped"}


def test_a_one_beat_clip_has_that_beat_alone_in_its_timeline(tmp_path):
    import av
    r = run_render(SCENE, "--section", "prompt", "--quality", "preview", media=tmp_path)
    assert r.returncode == 0, r.stderr
    clip = tmp_path / "preview" / "softmax_temperature-section-prompt.mp4"
    marks = json.loads(render.manifest_path(clip).read_text())["timeline"]
    assert [m["section"] for m in marks] == ["prompt"] and marks[0]["start"] == 0.0
    with av.open(str(clip)) as video:
        assert abs(marks[0]["end"] - video.duration / 1e6) <= 2 / 15 + 0.05


def test_changing_one_parameter_rerenders_only_that_scene(tmp_path):
    recipe = tmp_path / "lecture.toml"
    entries = '[[scene]]\nname = "softmax_temperature"\nsection = "title"\n'
    recipe.write_text('[lecture]\nformat = "png"\nquality = "preview"\n' + entries
                      + entries.replace('"title"', '"prompt"'))
    first = run_render("--config", recipe, "--jobs", "2", media=tmp_path)
    assert first.returncode == 0, first.stderr
    assert set(statuses(first.stdout).values()) == {"done"}
    title = tmp_path / "preview" / "softmax_temperature-section-title.png"
    stamp = title.stat().st_mtime_ns
    recipe.write_text(recipe.read_text().replace('section = "prompt"', 'section = "prompt"\ntop_k = 3'))
    second = run_render("--config", recipe, media=tmp_path)
    assert second.returncode == 0, second.stderr
    assert statuses(second.stdout) == {"softmax_temperature-section-title": "skipped",
                                       "softmax_temperature-top_k-3-section-prompt": "done"}
    assert title.stat().st_mtime_ns == stamp
    manifest = json.loads((tmp_path / "preview" / "softmax_temperature-top_k-3-section-prompt.png.json").read_text())
    assert manifest["params"]["top_k"] == 3 and manifest["section"] == "prompt"


def test_new_weights_invalidate_the_cache(tmp_path):
    from safetensors.numpy import load_file, save_file

    from model import DEFAULT_DIR
    weights = tmp_path / "weights"
    shutil.copytree(DEFAULT_DIR, weights)
    media = tmp_path / "media"
    r = run_render(SCENE, *CHEAP, "--model", weights, media=media)
    assert r.returncode == 0, r.stderr
    assert statuses(run_render(SCENE, *CHEAP, "--model", weights, "--dry-run", media=media).stdout) \
        == {"softmax_temperature-section-title": "skipped"}
    tensors = load_file(str(weights / "model.safetensors"))
    name = "transformer.ln_f.bias" if "transformer.ln_f.bias" in tensors else "ln_f.bias"
    tensors[name] = tensors[name] + np.float32(0.01)
    save_file(tensors, str(weights / "model.safetensors"), metadata={"format": "pt"})
    again = run_render(SCENE, *CHEAP, "--model", weights, "--dry-run", media=media)
    assert statuses(again.stdout) == {"softmax_temperature-section-title": "would"}


def test_the_key_covers_parameters_model_quality_and_manim():
    params = {**SOFTMAX_TEMPERATURE.defaults()}
    j1, j2 = job(**params), job(**{**params, "top_k": 4})
    keys = {render.cache_key(j, {"w": "1"}, "0.21.0") for j in (j1, j2)}
    keys.add(render.cache_key(j1, {"w": "2"}, "0.21.0"))
    keys.add(render.cache_key(j1, {"w": "1"}, "0.22.0"))
    j3 = job(**params)
    j3.quality = "high"
    keys.add(render.cache_key(j3, {"w": "1"}, "0.21.0"))
    assert len(keys) == 5


def test_a_changed_source_file_invalidates(tmp_path):
    (tmp_path / "scenes").mkdir()
    shared = tmp_path / "scenes" / "style.py"
    shared.write_text("TEAL = 1\n")
    recorded = {"scenes/style.py": render.file_digest(shared)}
    assert render.sources_unchanged(recorded, tmp_path)
    shared.write_text("TEAL = 2\n")
    assert not render.sources_unchanged(recorded, tmp_path)
    shared.unlink()
    assert not render.sources_unchanged(recorded, tmp_path)
    assert not render.sources_unchanged({}, tmp_path)  # a manifest that names no sources proves nothing


# --- atomic outputs ------------------------------------------------------------------------------
def start_render(media: Path, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(REPO / "render.py"), SCENE, *args, "--media", str(media)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_worker(media: Path, timeout: float = 60) -> int:
    """The pid of the render process render.py started for `media`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                try:
                    cmd = (proc / "cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if b"--worker" in cmd and any(str(media).encode() in c for c in cmd):
                    return int(proc.name)
        time.sleep(0.1)
    raise AssertionError("the worker never started")


def previous_good(media: Path, name: str) -> tuple[Path, bytes]:
    out = media / "preview" / name
    out.parent.mkdir(parents=True)
    out.write_bytes(b"the previous good clip")
    out.with_name(out.name + ".json").write_text('{"cache_key": "stale"}')
    return out, out.read_bytes()


@pytest.mark.parametrize("how", ["ctrl-c", "worker killed"])
def test_interrupted_render_leaves_the_previous_file_and_no_partial_one(tmp_path, how):
    out, before = previous_good(tmp_path, "softmax_temperature.mp4")
    proc = start_render(tmp_path, "--jobs", "1")
    worker = wait_for_worker(tmp_path)
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".work/*/partial/**/*.mp4")):  # mid-render: clips are being encoded
        assert time.monotonic() < deadline and proc.poll() is None, "the render never got going"
        time.sleep(0.1)
    if how == "ctrl-c":
        proc.send_signal(signal.SIGINT)
    else:
        os.kill(worker, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == (130 if how == "ctrl-c" else 1), (stdout, stderr)
    assert "Traceback" not in stderr
    assert out.read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "preview").iterdir()) == ["softmax_temperature.mp4",
                                                                       "softmax_temperature.mp4.json"]
    assert not any((tmp_path / ".work").iterdir()) if (tmp_path / ".work").exists() else True
    if how == "worker killed":
        assert "FAILED" in stdout and "failed: softmax_temperature" in stderr
        assert (tmp_path / ".logs").is_dir()


def test_a_long_render_reports_its_progress(tmp_path, capsys):
    job = render.Job(spec=SOFTMAX_TEMPERATURE, typed={}, text={}, quality="high", format="mp4", transparent=False,
                     section=None, name="softmax_temperature")
    job.index = 1
    (tmp_path / "partial").mkdir()
    for i in range(3):
        (tmp_path / "partial" / f"uncached_{i:05}.mp4").write_bytes(b"")
    now = time.monotonic()
    reported: dict = {}
    render.report_progress(job, 2, 20, tmp_path, now - 5, reported)          # too soon: quiet
    assert capsys.readouterr().out == ""
    render.report_progress(job, 2, 20, tmp_path, now - 95, reported)
    assert capsys.readouterr().out.strip() == \
        "[1/2] softmax_temperature   still rendering: 3 animation(s) written, 1m35s"
    render.report_progress(job, 2, 20, tmp_path, now - 95, reported)         # and not again at once
    assert capsys.readouterr().out == ""
