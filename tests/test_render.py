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

from scenes.prompts import lookback_prompt
import pytest

from conftest import REPO, run_render, statuses
from helpers import decoded_frames, picture_differences

from pipeline import cache, plan, recipe, run, worker
from scenes.catalog import SCENES, SOFTMAX_TEMPERATURE, find, sweep_stops
from scenes.params import AUTO, Choice, Int, Param, ParamError, SceneSpec, Temperature, Temperatures, Text, model_index

SCENE = "softmax_temperature"
CHEAP = ["--format", "png", "--section", "title"]   # the quickest real render: one still


# --- discovery ---------------------------------------------------------------------------
def test_list_shows_every_scene_with_its_parameters(gpt):
    r = run_render("list")
    assert r.returncode == 0, r.stderr
    header, *lines = r.stdout.splitlines()
    c = gpt.config
    assert header.startswith(f"model: model/weights ({c.n_layer} layers, {c.n_head} heads, {c.n_positions} positions")
    blocks = {}
    for line in lines:
        if not line.startswith(" "):
            blocks[line.split()[0]] = []
        else:
            blocks[list(blocks)[-1]].append(line.strip())
    voices = blocks.pop("voices")   # last: which voice speaks each language, and its licence as found
    assert list(blocks) == list(SCENES)
    assert [v.split()[0] for v in voices] == ["en", "zh"] and all("licence: " in v for v in voices)
    assert "GPL-3.0" in voices[0] and "CC BY-NC-SA 4.0 (non-commercial)" in voices[1]
    for spec in SCENES.values():
        for p in spec.params:
            line = next(line for line in blocks[spec.name] if line.startswith(p.name + " "))
            assert p.kind_name(gpt) in line and p.show_default() in line and p.help[:30] in line
    assert "temperature, sweep, write" in r.stdout  # the sections, as they follow from the default sweep

    # Indices show the loaded model's real ranges, not the declared bounds (0..63 layers, 0..1023 positions).
    real = {"layer": f"integer 0..{c.n_layer - 1}", "head": f"integer 0..{c.n_head - 1}",
            "focus": f"integer 0..{c.n_positions - 1}"}
    seen = set()
    for name, block in blocks.items():
        for line in block:
            param = line.split()[0]
            if param in real:
                assert real[param] + " " in line, (name, line)
                seen.add(param)
    assert seen == set(real)
    assert "0..63" not in r.stdout and "0..1023" not in r.stdout


def test_list_reads_the_model_a_render_would_use(tmp_path):
    r = run_render("list", "--model", tmp_path / "nowhere")
    assert_one_clear_line(r, "model: missing weights directory")
    r = run_render("list", env={"GPT_LECTURE_MODEL": str(tmp_path / "nowhere")})
    assert_one_clear_line(r, "model: missing weights directory")
    recipe_file = tmp_path / "lecture.toml"
    recipe_file.write_text('[lecture]\nmodel = "elsewhere"\n[[scene]]\nname = "softmax_temperature"\n')
    r = run_render("list", "--config", recipe_file)
    assert_one_clear_line(r, f"model: missing weights directory: {tmp_path / 'elsewhere'}")


def test_list_into_a_pipe_whose_reader_has_gone_prints_no_traceback():
    """`render.py list | head`: head exits after its lines and the pipe has no reader. Here the read end is
    closed before render.py writes a byte, so every write meets a broken pipe, whatever the timing."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, str(REPO / "render.py"), "list"], cwd=REPO, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert proc.stderr == "", proc.stderr
    assert proc.returncode == recipe.EXIT_BROKEN_PIPE


def test_list_piped_into_head():
    r = subprocess.run(f"'{sys.executable}' render.py list | head -n 2", shell=True, cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert len(r.stdout.splitlines()) == 2 and r.stdout.startswith("model: ")


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
    (["values_update", "--set", "focus=20"], f"focus: the prompt has {len(lookback_prompt()['tokens'])} tokens "
                                             f"(positions 0..{len(lookback_prompt()['tokens']) - 1}), got 20"),
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
    recipe_file = tmp_path / "lecture.toml"
    recipe_file.write_text(text)
    r = run_render("--config", recipe_file, media=tmp_path)
    assert_one_clear_line(r, expected)
    assert str(recipe_file) in r.stderr


def test_command_line_values_override_the_recipe(tmp_path):
    recipe_file = tmp_path / "lecture.toml"
    recipe_file.write_text('[lecture]\nlang = "en"\n[[scene]]\nname = "softmax_temperature"\ntop_k = 4\n')
    r = run_render("--config", recipe_file, "--lang", "zh", "--set", "top_k=3", "--dry-run", media=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "softmax_temperature-top_k-3-lang-zh" in r.stdout


def test_shipped_recipe_is_valid():
    r = run_render("--config", REPO / "lecture.toml", "--dry-run", media=REPO / "media")
    assert r.returncode == 0, r.stderr
    assert "softmax_temperature" in r.stdout


def test_shipped_recipe_runs_the_scenes_in_the_catalogs_order():
    """lecture.toml plays the lecture in the seed article's order, which is the catalog's (and `list`'s)."""
    import tomllib
    recipe = [s["name"] for s in tomllib.loads((REPO / "lecture.toml").read_text())["scene"]]
    assert recipe == [name for name in SCENES if name in recipe]
    assert recipe[:3] == ["next_token", "architecture", "softmax_temperature"]
    listed = run_render("list")
    assert listed.returncode == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines()[1:] if line and not line.startswith(" ")
             and not line.startswith("voices ")]
    assert names == list(SCENES)


# --- parameter parsing and validation ----------------------------------------------------------
def test_text_and_typed_values_parse_alike():
    spec = SOFTMAX_TEMPERATURE
    from_cli = spec.resolve(text={"temperatures": "1, 3,0", "top_k": "4", "lang": "zh", "prompt": "  a  fox "})
    from_toml = spec.resolve({"temperatures": [1, 3.0, 0], "top_k": 4, "lang": "zh", "prompt": "a fox"})
    assert from_cli == from_toml == {"temperatures": (1.0, 3.0, 0.0), "top_k": 4, "lang": "zh", "prompt": "a fox",
                                     "seed": spec.defaults()["seed"]}
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
    with pytest.raises(ParamError, match="0 or between 0.05 and 100"):
        Temperature(0.05, 100).parse("-1")
    with pytest.raises(ParamError, match="expected a number"):
        Temperature(0.05, 100).parse("warm")
    assert Temperature(0.05, 100).parse("0") == 0.0 and Temperature(0.05, 100).coerce(2) == 2.0
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
    n = gpt.config.n_layer
    with pytest.raises(ParamError, match=rf"layer: the model has {n} layers \(0..{n - 1}\), got {n}"):
        spec.resolve(text={"layer": str(n)}, model=gpt)
    with pytest.raises(ParamError, match=rf"head: the model has {gpt.config.n_head} heads"):
        spec.resolve(text={"head": "4"}, model=gpt)


def test_sweep_sections_follow_the_temperatures():
    assert sweep_stops([1, 2, 0]) == [2, 0]
    assert sweep_stops([2, 1, 0]) == [2, 1, 0]
    assert "sweep" in SOFTMAX_TEMPERATURE.sections({"temperatures": [1, 2, 0]})
    assert "sweep" not in SOFTMAX_TEMPERATURE.sections({"temperatures": [1]})
    assert find("SoftmaxTemperature") is find("softmax_temperature")


def job(**params):
    j = recipe.Job(SOFTMAX_TEMPERATURE, {}, {}, "preview", "mp4", False, None)
    j.params = {**SOFTMAX_TEMPERATURE.defaults(), **params}
    return j


def test_variant_names_are_stable_readable_and_safe(tmp_path):
    assert recipe.variant_name(job()) == "softmax_temperature"
    assert recipe.variant_name(job(lang="zh", top_k=3)) == "softmax_temperature-top_k-3-lang-zh"
    assert recipe.variant_name(job(temperatures=(1.0, 0.5, 0.0))) == "softmax_temperature-temperatures-1,0.5,0"
    name = recipe.variant_name(job(prompt="../../etc/passwd . the"))
    assert "/" not in name and ".." not in name
    long = recipe.variant_name(job(prompt=" ".join(["the"] * 30)))
    assert len(long) <= 100 and long != recipe.variant_name(job(prompt=" ".join(["the"] * 31)))
    assert recipe.manifest_path(tmp_path / "a.mp4") != recipe.manifest_path(tmp_path / "a.gif")
    j = job(prompt="../../x")
    j.name = recipe.variant_name(j)
    assert recipe.output_path(tmp_path, j).parent == (tmp_path / "preview").resolve()


# --- the cache ---------------------------------------------------------------------------------
@pytest.mark.slow
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

    # The sources are the render's import closure: render.py and the pipeline it imports, the scene, the shared scene
    # modules, the model code, and modules imported only inside a function (model/analysis, from a function of
    # scenes/prompts.py). Not the packaging modules: they read clips and change none.
    manifest_file = recipe.manifest_path(out)
    manifest = json.loads(manifest_file.read_text())
    used = set(manifest["sources"])
    assert {"render.py", "scenes/softmax_temperature.py", "scenes/style.py", "scenes/components/__init__.py",
            "scenes/components/text.py", "scenes/catalog.py", "scenes/__init__.py", "model/__init__.py",
            "model/numpy_gpt.py", "model/language.py", "model/tokenizer.py", "model/analysis/__init__.py",
            "pipeline/__init__.py", "pipeline/recipe.py", "pipeline/cache.py", "pipeline/worker.py",
            "pipeline/manifest.py", "pipeline/encoder.py", "pipeline/cairo_paths.py"} <= used
    assert not {f"pipeline/{m}.py" for m in PACKAGING_MODULES} & used
    assert "model/torch_gpt.py" not in used  # training code: editing it must not re-render the lecture
    assert not any(p.startswith("scenes/multi_head/") for p in used)  # nor another scene (a package)
    for path in ("scenes/softmax_temperature.py", "scenes/components/charts.py", "model/numpy_gpt.py"):
        edited = {**manifest, "sources": {**manifest["sources"], path: "0" * 64}}  # as if the file had changed
        manifest_file.write_text(json.dumps(edited))
        again = run_render(SCENE, *CHEAP, "--dry-run", media=tmp_path)
        assert statuses(again.stdout) == {"softmax_temperature-section-title": "would"}, path
    manifest_file.write_text(json.dumps(manifest))
    assert statuses(run_render(SCENE, *CHEAP, "--dry-run", media=tmp_path).stdout) == \
        {"softmax_temperature-section-title": "skipped"}


@pytest.mark.slow
def test_a_one_beat_clip_has_that_beat_alone_in_its_timeline(tmp_path):
    import av
    r = run_render(SCENE, "--section", "prompt", "--quality", "preview", media=tmp_path)
    assert r.returncode == 0, r.stderr
    clip = tmp_path / "preview" / "softmax_temperature-section-prompt.mp4"
    marks = json.loads(recipe.manifest_path(clip).read_text())["timeline"]
    assert [m["section"] for m in marks] == ["prompt"] and marks[0]["start"] == 0.0
    with av.open(str(clip)) as video:
        assert abs(marks[0]["end"] - video.duration / 1e6) <= 2 / 15 + 0.05


@pytest.mark.slow
def test_changing_one_parameter_rerenders_only_that_scene(tmp_path):
    recipe_file = tmp_path / "lecture.toml"
    entries = '[[scene]]\nname = "softmax_temperature"\nsection = "title"\n'
    recipe_file.write_text('[lecture]\nformat = "png"\nquality = "preview"\n' + entries
                      + entries.replace('"title"', '"prompt"'))
    first = run_render("--config", recipe_file, "--jobs", "2", media=tmp_path)
    assert first.returncode == 0, first.stderr
    assert set(statuses(first.stdout).values()) == {"done"}
    title = tmp_path / "preview" / "softmax_temperature-section-title.png"
    stamp = title.stat().st_mtime_ns
    recipe_file.write_text(recipe_file.read_text().replace('section = "prompt"', 'section = "prompt"\ntop_k = 3'))
    second = run_render("--config", recipe_file, media=tmp_path)
    assert second.returncode == 0, second.stderr
    assert statuses(second.stdout) == {"softmax_temperature-section-title": "skipped",
                                       "softmax_temperature-top_k-3-section-prompt": "done"}
    assert title.stat().st_mtime_ns == stamp
    manifest = json.loads((tmp_path / "preview" / "softmax_temperature-top_k-3-section-prompt.png.json").read_text())
    assert manifest["params"]["top_k"] == 3 and manifest["section"] == "prompt"


@pytest.mark.slow
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


def test_the_key_covers_parameters_model_quality_and_environment():
    params = {**SOFTMAX_TEMPERATURE.defaults()}
    env = cache.environment()
    assert set(env["distributions"]) == set(cache.RENDER_DISTRIBUTIONS)
    assert env["distributions"]["manim"] == "0.21.0" and env["distributions"]["numpy"] == np.__version__
    j1, j2 = job(**params), job(**{**params, "top_k": 4})
    keys = {cache.cache_key(j, {"w": "1"}, env) for j in (j1, j2)}
    keys.add(cache.cache_key(j1, {"w": "2"}, env))
    j3 = job(**params)
    j3.quality = "high"
    keys.add(cache.cache_key(j3, {"w": "1"}, env))
    changed = [{**env, "python": "3.99.0"}]
    for dist in ("manim", "numpy"):
        changed.append({**env, "distributions": {**env["distributions"], dist: "99"}})
    for package in ("texlive-latex-base", "fonts-noto-cjk"):
        changed.append({**env, "debian": {**env["debian"], package: "99"}})
    for other in changed:
        keys.add(cache.cache_key(j1, {"w": "1"}, other))
    assert len(keys) == 4 + len(changed)
    assert cache.cache_key(j1, {"w": "1"}, env) == cache.cache_key(job(**params), {"w": "1"}, cache.environment())


def test_the_key_has_the_latex_and_font_packages_setup_installs():
    """Every LaTeX, font, cairo and pango package of scripts/setup.sh is in the key; only the compilers are not."""
    text = (REPO / "scripts" / "setup.sh").read_text()
    apt = text.split("APT_PACKAGES=(", 1)[1].split(")", 1)[0].split()
    assert set(cache.RENDER_DEBIAN_PACKAGES) == set(apt) - {"build-essential", "python3-dev", "pkg-config"}
    versions = cache.debian_versions()
    if shutil.which("dpkg-query"):
        assert set(versions) == set(cache.RENDER_DEBIAN_PACKAGES)
        assert all(v != "not installed" for v in versions.values()), versions  # setup.sh installed them all
        assert cache.debian_versions(("no-such-package-xyz",)) == {"no-such-package-xyz": "not installed"}


def test_without_dpkg_the_key_records_the_latex_tools_own_versions(tmp_path, monkeypatch):
    fake = tmp_path / "latex"
    fake.write_text("#!/bin/sh\necho 'pdfTeX 3.141592653-2.6-1.40.99 (TeX Live 2099)'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))   # no dpkg-query, no dvisvgm: a latex only
    assert cache.debian_versions() == {"dpkg": "absent", "tools": {
        "latex": "pdfTeX 3.141592653-2.6-1.40.99 (TeX Live 2099)", "dvisvgm": "not found"}}


def test_a_changed_source_file_invalidates(tmp_path):
    (tmp_path / "scenes").mkdir()
    shared = tmp_path / "scenes" / "style.py"
    shared.write_text("TEAL = 1\n")
    recorded = {"scenes/style.py": cache.file_sha256(shared)}
    assert cache.sources_unchanged(recorded, tmp_path)
    shared.write_text("TEAL = 2\n")
    assert not cache.sources_unchanged(recorded, tmp_path)
    shared.unlink()
    assert not cache.sources_unchanged(recorded, tmp_path)
    assert not cache.sources_unchanged({}, tmp_path)  # a manifest that names no sources proves nothing


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_the_source_closure_holds_the_data_files_a_module_declares(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "figures.json").write_text("{}")
    (tmp_path / "main.py").write_text("import reader\n")
    (tmp_path / "reader.py").write_text('DATA_FILES = ("docs/figures.json", "docs/missing.json")\n')
    closure = {p.relative_to(tmp_path).as_posix() for p in cache.source_closure([tmp_path / "main.py"], tmp_path)}
    assert closure == {"main.py", "reader.py", "docs/figures.json"}   # a missing file is no dependency


def test_the_source_closure_holds_the_words_beside_a_module(tmp_path):
    """A scene's captions live in the TOML file beside it (scenes/words.py): rewording one renders the clip again."""
    write_tree(tmp_path, {"main.py": "import scene\n", "scene.py": "import style\n", "scene.toml": "[captions]\n",
                          "style.py": "", "style.toml": "[shared]\n", "unused.toml": "[x]\n"})
    closure = {p.relative_to(tmp_path).as_posix() for p in cache.source_closure([tmp_path / "main.py"], tmp_path)}
    assert closure == {"main.py", "scene.py", "scene.toml", "style.py", "style.toml"}


def test_the_source_closure_holds_the_words_files_a_module_reads_beside_itself(tmp_path):
    """A reworded caption re-renders the clip: a scene module's words file (Words.beside(__file__): x.py -> x.toml)
    and a scene package's (Path(__file__).with_name("words.toml")) are in the closure of the modules that read them,
    and a missing one is no dependency."""
    write_tree(tmp_path, {
        "main.py": "import flat\nfrom pkg import beats\n",
        "flat.py": "from pathlib import Path\nWORDS = Words.beside(__file__)\n",
        "flat.toml": "",
        "pkg/__init__.py": "",
        "pkg/beats.py": "from pathlib import Path\nWORDS = Words(Path(__file__).with_name('words.toml'))\n"
                        "DATA = Path(__file__).with_suffix('.json')\n",
        "pkg/words.toml": "",
        "pkg/other.toml": "",          # beside, but read by nobody
        "unread.toml": "",
    })
    closure = {p.relative_to(tmp_path).as_posix() for p in cache.source_closure([tmp_path / "main.py"], tmp_path)}
    assert closure == {"main.py", "flat.py", "flat.toml", "pkg/__init__.py", "pkg/beats.py", "pkg/words.toml"}
    # the real scenes: a scene module's words and a scene package's words, with the shared words every scene reads
    for name, words in (("next_token", "scenes/next_token.toml"), ("mlp_fact", "scenes/mlp_fact/words.toml")):
        used = {p.relative_to(REPO).as_posix()
                for p in cache.source_closure([REPO / "render.py", REPO / SCENES[name].path])}
        assert {words, "scenes/style.toml", "scenes/prompts.toml"} <= used, name


def test_the_source_closure_follows_every_kind_of_import(tmp_path):
    write_tree(tmp_path, {
        "main.py": "import numpy\nfrom pkg import scene\n",
        "pkg/__init__.py": "",
        "pkg/scene.py": "from .shared import helper\nfrom . import style\n\n"
                        "def later():\n    from pkg.deep.lazy import x\n    return x\n",
        "pkg/shared.py": "import os\ntry:\n    import pkg.optional\nexcept ImportError:\n    pass\n\n"
                         "def helper():\n    import importlib\n    return importlib.import_module('pkg.dynamic')\n",
        "pkg/style.py": "import json\nfrom pkg.shared import *\n",
        "pkg/optional.py": "",
        "pkg/dynamic.py": "",
        "pkg/deep/__init__.py": "",
        "pkg/deep/lazy.py": "from ..shared import helper\nx = 1\n",
        "pkg/unused.py": "",          # imported by nobody
        "other/__init__.py": "",      # a package nobody imports
    })
    closure = {p.relative_to(tmp_path).as_posix() for p in cache.source_closure([tmp_path / "main.py"], tmp_path)}
    assert closure == {"main.py", "pkg/__init__.py", "pkg/scene.py", "pkg/shared.py", "pkg/style.py",
                       "pkg/optional.py", "pkg/dynamic.py", "pkg/deep/__init__.py", "pkg/deep/lazy.py"}


PACKAGING_MODULES = ("packaging", "tracks", "lecture_join", "page", "tryit", "scorm", "deck")   # pipeline/: no source of a clip


def test_the_source_closure_holds_the_pipeline_but_not_its_packaging():
    """render.py's closure holds every module of pipeline/ that a render runs (imported as `from pipeline.x import`,
    and inside the package as `from .x import` and `from . import x`), and none of the packaging modules: render.py
    loads pipeline.packaging by a computed name, which the walk does not follow."""
    import render
    assert render.PACKAGING_MODULE == "pipeline.packaging"
    package = {p.relative_to(REPO).as_posix() for p in (REPO / "pipeline").glob("*.py")}
    rendering = {p.relative_to(REPO).as_posix() for p in cache.source_closure([REPO / "render.py"])} & package
    packaging = {p.relative_to(REPO).as_posix()
                 for p in cache.source_closure([REPO / "pipeline" / "packaging.py"])} & package
    assert {"pipeline/__init__.py", "pipeline/run.py", "pipeline/runners.py", "pipeline/worker.py",
            "pipeline/encoder.py", "pipeline/cairo_paths.py"} <= rendering
    assert packaging - rendering == {f"pipeline/{m}.py" for m in PACKAGING_MODULES}
    assert rendering | packaging == package   # every module of the package is one or the other


def test_moving_or_renaming_a_source_file_invalidates(tmp_path):
    """A manifest names its sources by their paths: a module renamed or moved into a subpackage (the same content,
    its importer updated) leaves the recorded sources unmatched, so the clip is rendered again. Imports in the
    package's styles are followed (`from pipeline.x import`, `from . import x`, `from .x import`, `from pipeline
    import x`); a module loaded by a computed name (render.py's packaging) is not."""
    write_tree(tmp_path, {
        "render.py": "import importlib\n\nfrom pipeline.recipe import plan\n\nPACKAGING_MODULE = 'pipeline.packaging'\n\n"
                     "def package():\n    return importlib.import_module(PACKAGING_MODULE)\n",
        "pipeline/__init__.py": "",
        "pipeline/recipe.py": "from . import cache\nfrom .worker import render\n",
        "pipeline/cache.py": "KEY = 1\n",
        "pipeline/worker.py": "from pipeline import manifest\n",
        "pipeline/manifest.py": "FIELDS = 2\n",
        "pipeline/packaging.py": "from . import tracks\n",
        "pipeline/tracks.py": "",
    })

    def sources() -> dict:
        return cache.digests(cache.source_closure([tmp_path / "render.py"], tmp_path), tmp_path)

    recorded = sources()
    assert set(recorded) == {"render.py", "pipeline/__init__.py", "pipeline/recipe.py", "pipeline/cache.py",
                             "pipeline/worker.py", "pipeline/manifest.py"}
    assert cache.sources_unchanged(recorded, tmp_path)
    (tmp_path / "pipeline" / "cache.py").rename(tmp_path / "pipeline" / "keys.py")
    (tmp_path / "pipeline" / "recipe.py").write_text("from . import keys\nfrom .worker import render\n")
    assert not cache.sources_unchanged(recorded, tmp_path)
    renamed = sources()
    assert "pipeline/keys.py" in renamed and "pipeline/cache.py" not in renamed
    assert cache.sources_unchanged(renamed, tmp_path)
    (tmp_path / "pipeline" / "store").mkdir()
    (tmp_path / "pipeline" / "store" / "__init__.py").write_text("")
    (tmp_path / "pipeline" / "manifest.py").rename(tmp_path / "pipeline" / "store" / "manifest.py")
    (tmp_path / "pipeline" / "worker.py").write_text("from pipeline.store import manifest\n")
    assert not cache.sources_unchanged(renamed, tmp_path)
    moved = sources()
    assert {"pipeline/store/__init__.py", "pipeline/store/manifest.py"} <= set(moved)
    assert "pipeline/manifest.py" not in moved


def test_modules_the_static_walk_missed_count_if_they_predate_the_hash():
    """A project module found in sys.modules after the render but not in the closure (a computed import name):
    recorded if it was last modified before the parent hashed the closure, counted as changed otherwise."""
    loaded = {p.relative_to(REPO).as_posix() for p in cache.loaded_project_files(REPO)}
    assert {"pipeline/cache.py", "scenes/catalog.py", "scenes/params.py"} <= loaded
    assert not any(p.startswith(".") or "site-packages" in p for p in loaded)
    newest = max((REPO / p).stat().st_mtime_ns for p in loaded)
    sources, changed = cache.sources_after_render({"sources": {}, "hashed_at_ns": newest + 2 * 10**9}, REPO)
    assert changed == [] and set(sources) == loaded
    assert sources["pipeline/cache.py"] == cache.file_sha256(REPO / "pipeline" / "cache.py")
    sources, changed = cache.sources_after_render({"sources": {}, "hashed_at_ns": newest}, REPO)
    assert changed == sorted(p for p in loaded if (REPO / p).stat().st_mtime_ns >= newest - cache.MTIME_SLACK_NS)
    assert changed and set(sources) | set(changed) == loaded and not set(sources) & set(changed)


def project_copy(tmp_path: Path) -> Path:
    """A copy of what a render runs (render.py, pipeline/, scenes/, model/ with the weights) to edit without touching
    the repository; its render.py puts the copy first on sys.path, so its workers import the copy. Every top-level
    module and every top-level package (pipeline/, speech/, ...) are copied, so a new one cannot be missed;
    render_in drops PYTHONPATH, as CI has none, so a module missing from the copy fails here rather than importing
    the repository's."""
    root = tmp_path / "project"
    root.mkdir()
    for module in REPO.glob("*.py"):
        shutil.copy2(module, root / module.name)
    for folder in sorted(p for p in REPO.iterdir() if (p / "__init__.py").is_file() and p.name != "tests"):
        shutil.copytree(folder, root / folder.name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def render_in(root: Path, *args, media: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, str(root / "render.py"), *map(str, args), "--media", str(media)],
                          cwd=root, capture_output=True, text=True, timeout=600, env=env)


NAME = "softmax_temperature-section-title"


@pytest.mark.slow
def test_editing_a_nested_module_renders_again(tmp_path):
    """Real edits in a copy of the project: a module two imports below the scene (model/tokenizer.py, through
    model/__init__ and model/numpy_gpt), a module imported only inside a function that this render never calls
    (model/analysis/__init__.py, from scenes/prompts.py), and render.py itself. Each makes the clip out of date; undoing
    it makes it up to date again, and so does an edit to the words the scene reads (its .toml, scenes/style.toml); an
    edit to a file outside the closure does not."""
    root, media = project_copy(tmp_path), tmp_path / "media"
    first = render_in(root, SCENE, *CHEAP, media=media)
    assert first.returncode == 0, first.stderr
    assert statuses(first.stdout) == {NAME: "done"}
    out = media / "preview" / f"{NAME}.png"
    manifest = json.loads(recipe.manifest_path(out).read_text())
    assert manifest["sources"]["model/tokenizer.py"] == cache.file_sha256(root / "model" / "tokenizer.py")

    def status() -> str:
        r = render_in(root, SCENE, *CHEAP, "--dry-run", media=media)
        assert r.returncode == 0, r.stderr
        return statuses(r.stdout)[NAME]

    assert status() == "skipped"
    # the scene's words file and the words every scene shares: a reworded caption renders again (a TOML comment is
    # an edit to the file, as a reworded line is)
    for rel in ("model/tokenizer.py", "model/analysis/__init__.py", "render.py", "pipeline/worker.py",
                "scenes/softmax_temperature.toml", "scenes/style.toml"):
        original = (root / rel).read_bytes()
        (root / rel).write_bytes(original + b"\n# an edit\n")
        assert status() == "would", rel
        (root / rel).write_bytes(original)
        assert status() == "skipped", rel
    (root / "model" / "torch_gpt.py").write_text("# training code, not imported by a render\n")
    (root / "scenes" / "multi_head" / "beats.py").write_text("# another scene\n")
    (root / "pipeline" / "page.py").write_bytes((root / "pipeline" / "page.py").read_bytes() + b"\n# packaging\n")
    assert status() == "skipped"

    (root / "model" / "tokenizer.py").write_bytes((root / "model" / "tokenizer.py").read_bytes() + b"\n# edit\n")
    again = render_in(root, SCENE, *CHEAP, media=media)
    assert again.returncode == 0, again.stderr
    assert statuses(again.stdout) == {NAME: "done"}
    manifest = json.loads(recipe.manifest_path(out).read_text())
    assert manifest["sources"]["model/tokenizer.py"] == cache.file_sha256(root / "model" / "tokenizer.py")
    assert status() == "skipped"


@pytest.mark.slow
def test_a_broken_source_is_a_failed_render_not_a_traceback(tmp_path):
    root, media = project_copy(tmp_path), tmp_path / "media"
    (root / "scenes" / "style.py").write_text("def broken(:\n")
    r = render_in(root, SCENE, *CHEAP, media=media)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert statuses(r.stdout) == {NAME: "FAILED"} and "SyntaxError" in r.stdout
    assert "Traceback" not in r.stderr and not (media / "preview").exists()


@pytest.mark.slow
def test_a_source_edited_during_the_render_is_not_cached_as_fresh(tmp_path):
    """In a copy of the project, scenes/components/__init__.py edits model/tokenizer.py when it is imported, which happens
    inside the render process, after render.py hashed the sources: the same as an editor saving the file while
    the render runs, but at a moment that does not depend on timing."""
    root, media = project_copy(tmp_path), tmp_path / "media"
    components = root / "scenes" / "components" / "__init__.py"
    components.write_text(components.read_text() + "\n\nimport pathlib as _p\n"
                          "_t = _p.Path(__file__).resolve().parents[2] / 'model' / 'tokenizer.py'\n"
                          "_t.write_text(_t.read_text() + '# saved during the render\\n')\n")
    r = render_in(root, SCENE, *CHEAP, media=media)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.splitlines() if line.startswith("[") and "rendering" not in line]
    assert len(lines) == 1 and "rendered but NOT cached: model/tokenizer.py changed during the render" in lines[0]
    assert "1 rendered but not cached" in r.stdout
    out = media / "preview" / f"{NAME}.png"
    manifest = json.loads(recipe.manifest_path(out).read_text())
    assert out.is_file() and manifest["cache_key"] is None and manifest["sources"] == {}
    assert manifest["changed_during_render"] == ["model/tokenizer.py"]
    again = render_in(root, SCENE, *CHEAP, "--dry-run", media=media)
    assert statuses(again.stdout) == {NAME: "would"}


# --- one clip on several cores -------------------------------------------------------------------
def test_split_ranges_are_contiguous_balanced_and_open_ended():
    assert plan.split_ranges([[True, 1.0, 1.0]] * 10, 2) == [(0, 4), (5, -1)]
    assert plan.split_ranges([[True, 1.0, c] for c in (5, 1, 1, 1, 1, 1)], 2) == [(0, 0), (1, -1)]  # measured
    assert plan.split_ranges([[False, s, 0.0] for s in (0.95, 0.95, 2.95, 0.95)], 2) == [(0, 1), (2, -1)]
    assert plan.split_ranges([[True, 1.0, 1.0]] * 3, 8) == [(0, 0), (1, 1), (2, -1)]
    assert plan.split_ranges([[True, 1.0, 1.0]], 2) == [(0, -1)]
    # A later part also skips the plays before its range: with skipping at half the cost of drawing, the second
    # of two parts draws 4 plays of 12 and skips 8 (8 x 0.5 + 4 = 8), as long as the first part's 8 plays.
    assert plan.split_ranges([[True, 1.0, 1.0, 0.5]] * 12, 2) == [(0, 7), (8, -1)]
    assert plan.split_ranges([[True, 1.0, 1.0, None]] * 12, 2) == [(0, 5), (6, -1)]   # skip cost unknown
    rng = np.random.default_rng(0)
    for n in range(1, 6):
        plays = [[True, 1.0, float(c)] for c in rng.uniform(0.1, 3, 40)]
        ranges = plan.split_ranges(plays, n)
        assert len(ranges) == n and ranges[0][0] == 0 and ranges[-1][1] == -1
        assert all(b + 1 == c for (_, b), (c, _) in zip(ranges, ranges[1:]))   # contiguous, in order
        costs = [sum(p[2] for p in plays[a:(b + 1 if b >= 0 else None)]) for a, b in ranges]
        total, biggest = sum(p[2] for p in plays), max(p[2] for p in plays)
        assert max(costs) <= total / n + biggest   # the bound of the best contiguous split
        if n == 2:   # and for two parts, the best split itself
            best = min(max(sum(p[2] for p in plays[:c]), sum(p[2] for p in plays[c:])) for c in range(1, 40))
            assert max(costs) == pytest.approx(best)


def test_which_clips_are_split(tmp_path):
    j = job()
    j.name = "softmax_temperature"
    assert not plan.splittable(j, tmp_path)      # preview, no plan yet: one process, which leaves the plan
    j.quality = "high"
    assert plan.splittable(j, tmp_path)          # above preview: a planning pass pays for itself
    j.format = "gif"
    assert not plan.splittable(j, tmp_path)      # a gif is re-encoded as a whole
    j.format, j.quality = "mp4", "preview"
    plan.plan_path(tmp_path, j).parent.mkdir(parents=True)
    plan.plan_path(tmp_path, j).write_text(json.dumps({"plays": [[True, 1.0, 0.5]]}))
    assert plan.splittable(j, tmp_path)
    j.section = "title"
    assert not plan.splittable(j, tmp_path)


def test_a_clip_drawn_from_its_start_is_split_where_both_processes_finish_first():
    # 10 plays of 2 s of video; the planning pass reached play i (skipped) 0.2 (i + 1) s after it started.
    plays = [[False, 2.0, 0.1]] * 10
    plan_data = {"plays": plays, "reached": [0.2 * (i + 1) for i in range(10)]}

    def finish(k, done, rate):   # the first draws plays done..k-1; the second reaches k, then draws k..9
        c = rate * 2.0 + plan.PLAY_OVERHEAD
        return max((k - done) * c, 0.2 * k + (10 - k) * c)
    # Nothing drawn yet (1 s of wall time per second of video): the split that finishes first, play 5.
    assert plan.split_live(plan_data, None) == 5 == min(range(1, 10), key=lambda k: finish(k, 0, 1.0))
    # 4 plays drawn at 0.5 s of wall time per second of video: the rest balances at play 8.
    assert plan.split_live(plan_data, {"plays": 4, "video": 8.0, "drawing": 4.0}) == 8 == \
        min(range(5, 10), key=lambda k: finish(k, 4, 0.5))
    # Reaching a play costs more than drawing what is left: no split.
    slow = {"plays": plays, "reached": [i + 1.0 for i in range(10)]}
    assert plan.split_live(slow, {"plays": 6, "video": 12.0, "drawing": 6.0}) is None
    # One play left, or a plan without the times it reached each play: no split.
    assert plan.split_live(plan_data, {"plays": 9, "video": 18.0, "drawing": 9.0}) is None
    assert plan.split_live({"plays": plays}, None) is None


def pool_job(name: str, **kw) -> recipe.Job:
    j = recipe.Job(spec=SOFTMAX_TEMPERATURE, typed={}, text={}, quality="preview", format="mp4", transparent=False,
                   section=None, name=name)
    for k, v in kw.items():
        setattr(j, k, v)
    return j


def test_the_pool_splits_the_clips_that_would_leave_a_core_idle_and_runs_longest_first():
    a, b, c = pool_job("a"), pool_job("b"), pool_job("c")
    # Three clips of 10 s on two cores: whole, one would run alone at the end (20 s); split, about 15 s.
    plays = [[True, 1.0, 1.0]] * 10
    chunks = plan.pool_chunks([a, b, c], {"a": plays, "b": plays, "c": plays}, 2)
    assert sum(ch.cost for ch in chunks) == pytest.approx(30)
    assert [ch.job.name for ch in chunks].count("a") == 2 and all(ch.part is None for ch in chunks[2:])
    assert [ch.part for ch in chunks[:2]] == [{"from": 0, "upto": 4}, {"from": 5, "upto": -1}]
    # Four equal clips on two cores already fill both: nothing is split.
    d = pool_job("d")
    chunks = plan.pool_chunks([a, b, c, d], {n: plays for n in "abcd"}, 2)
    assert len(chunks) == 4 and all(ch.part is None for ch in chunks)
    # One long clip and a short one: the long one is split, and its parts go first (longest first); with no
    # measured cost of skipping, splitting the short one too evens the two cores (22 s each).
    long = [[True, 1.0, 1.0]] * 40
    chunks = plan.pool_chunks([b, a], {"a": long, "b": [[True, 1.0, 1.0]] * 4}, 2)
    order = sorted(chunks, key=lambda ch: -ch.cost)
    assert [ch.job.name for ch in order][:2] == ["a", "a"] and [ch.cost for ch in order[:2]] == [20, 20]
    loads = [0.0, 0.0]
    for ch in order:
        loads[loads.index(min(loads))] += ch.cost
    assert loads == [22, 22]
    # Skipping costs: a split whose second part must skip slowly is not worth it.
    slow_skip = [[True, 1.0, 1.0, 1.0]] * 10
    assert [ch.part for ch in plan.pool_chunks([a], {"a": slow_skip}, 2)] == [None]
    # A clip without a plan is estimated as long as the longest with one, and is never split.
    chunks = plan.pool_chunks([a, b], {"a": plays, "b": None}, 2)
    assert [(ch.job.name, ch.part, ch.cost) for ch in chunks] == [("a", None, 10.0), ("b", None, 10.0)]
    assert [ch.cost for ch in plan.pool_chunks([a, b], {}, 2)] == [1.0, 1.0]
    # One core: never split.
    assert [ch.part for ch in plan.pool_chunks([a], {"a": plays}, 1)] == [None]


def without_render_seconds(path: Path) -> dict:
    manifest = json.loads(recipe.manifest_path(path).read_text())
    manifest.pop("render_seconds")
    return manifest


WHOLE = "token_embedding"   # the whole clip the tests below render in one process, in parts, and on Dask


@pytest.fixture(scope="module")
def one_process(tmp_path_factory) -> dict:
    """WHOLE rendered at preview in one process (--jobs 1), once for the module: its media folder (with the plan
    the render left), the clip, its decoded frames and its manifest without the render time. Tests copy from it;
    none writes into it."""
    media = tmp_path_factory.mktemp("one-process") / "media"
    single = run_render(WHOLE, "--jobs", "1", media=media)
    assert single.returncode == 0, single.stderr
    assert "parts" not in single.stdout
    clip = media / "preview" / f"{WHOLE}.mp4"
    return {"media": media, "clip": clip, "frames": decoded_frames(clip), "manifest": without_render_seconds(clip)}


@pytest.mark.slow
def test_one_clip_on_two_cores_shows_the_same_picture_as_one_process_and_plain_manim(tmp_path, one_process):
    scene, one, two = WHOLE, one_process["media"], tmp_path / "two"
    # the frames are those of plain `manim render` (worker.ENCODERS_IN_FLIGHT partial movies encoded at a time)
    spec = SCENES[scene]
    # Plain manim with its partial-movie cache off, as render.py runs it: that cache names a play by a hash that
    # truncates large arrays, so two different plays can share a name and the second reuse the first's movie.
    plain = subprocess.run([sys.executable, "-m", "manim", "render", "-ql", "--disable_caching",
                            "--media_dir", str(tmp_path / "plain"), spec.path, spec.cls],
                           cwd=REPO, capture_output=True, text=True, timeout=600)
    assert plain.returncode == 0, plain.stderr
    [plain_clip] = (tmp_path / "plain").glob(f"videos/**/{spec.cls}.mp4")
    frames_plain, frames_one = decoded_frames(plain_clip), one_process["frames"]
    assert len(frames_one) > 100
    assert picture_differences(frames_plain, frames_one) == ""
    # the bound tells a number shifted by one pixel from the same frame: ids' "145" (one_process's last frame)
    shifted = [f.copy() for f in frames_one]
    shifted[-1][60:80, 560:590] = frames_one[-1][60:80, 561:591]
    assert picture_differences(frames_one, shifted).startswith("1 of ")
    # The plan the single render left (its plays and their measured cost) lets a render split without a
    # planning pass; a plan only balances the parts, it cannot change the clip.
    shutil.copytree(one / ".cache" / "plans", two / ".cache" / "plans")
    split = run_render(scene, "--jobs", "2", media=two)
    assert split.returncode == 0, split.stderr
    assert "in 2 parts, animations 0-" in split.stdout and statuses(split.stdout)[scene] == "done"
    b = two / "preview" / f"{scene}.mp4"
    frames_a, frames_b = one_process["frames"], decoded_frames(b)
    assert len(frames_a) > 100
    assert picture_differences(frames_a, frames_b) == ""
    manifest_a, manifest_b = one_process["manifest"], without_render_seconds(b)
    assert manifest_a == manifest_b            # the timeline, sections, values and sources as well
    assert len(manifest_a["captions"]) > 3     # its narration lines, timed by the frames of each part
    assert statuses(run_render(scene, "--jobs", "2", media=two).stdout) == {scene: "skipped"}


@pytest.mark.slow
def test_one_clip_without_a_plan_is_split_while_it_renders_to_the_same_picture(tmp_path, one_process):
    """With no plan, one process draws the clip from its start while another counts its plays; the first is then
    told where to stop. The split point is set here (run.SPLIT_AT_ENV) so that both ways it can go are run:
    the first process is still before it (play -3, near the end), or it has drawn past it (play 1: by the time
    the counting process is done, the first has drawn its title) and the second part starts after where it
    stopped instead."""
    scene = WHOLE
    frames, manifest = one_process["frames"], one_process["manifest"]
    for at in ("-3", "1"):
        media = tmp_path / f"at{at}"
        r = run_render(scene, "--jobs", "2", media=media, env={run.SPLIT_AT_ENV: at})
        assert r.returncode == 0, r.stderr
        assert "from its start, while another process counts its animations" in r.stdout
        said = [line for line in r.stdout.splitlines() if "in this process" in line]
        assert len(said) == 1, r.stdout
        if at == "-3":
            assert "the second starts again" not in r.stdout
        out = media / "preview" / f"{scene}.mp4"
        split_frames = decoded_frames(out)
        assert len(frames) > 100
        assert picture_differences(frames, split_frames) == ""
        split_manifest = json.loads(recipe.manifest_path(out).read_text())
        split_manifest.pop("render_seconds")
        assert split_manifest == manifest
        assert plan.load_plan(media, recipe.Job(spec=SCENES[scene], typed={}, text={}, quality="preview",
                                                  format="mp4", transparent=False, section=None, name=scene))
        assert not list((media / ".work").iterdir())


# At high quality render.py encodes its partial movies with libx264's superfast preset (worker.ENCODER_PRESETS;
# ManimCE: medium), so the encoded pixels differ from plain `manim render`'s by the two encoders' losses. Stated
# tolerance, per frame, between the two clips' decoded frames (yuv420p): PSNR at least HIGH_MIN_PSNR_DB on every
# frame and HIGH_MEAN_PSNR_DB on average. Measured (token_embedding's "ids" beat, 1080p60): see docs/lab/rendering-measurements.md.
# A frame of other content (one frame late, a shape missing) is far below: about 20 to 30 dB.
HIGH_MIN_PSNR_DB, HIGH_MEAN_PSNR_DB = 40.0, 44.0


def paired_psnr(a: Path, b: Path, late: int = 0) -> list[float]:
    """PSNR of each pair of frames of two clips (yuv420p planes, as encoded), decoded side by side; with
    `late`, clip b's frames are paired with a's from that many frames earlier."""
    import itertools

    import av
    out = []
    with av.open(str(a)) as ca, av.open(str(b)) as cb:
        frames_b = itertools.islice(cb.decode(video=0), late, None)
        for fa, fb in zip(ca.decode(video=0), frames_b, strict=not late):
            x, y = fa.to_ndarray(format="yuv420p").astype(np.float64), fb.to_ndarray(format="yuv420p")
            mse = float(np.mean((x - y) ** 2))
            out.append(100.0 if mse == 0 else 10 * np.log10(255.0 ** 2 / mse))
    return out


@pytest.mark.slow
def test_high_quality_frames_are_within_the_stated_tolerance_of_plain_manim(tmp_path):
    scene, section = "token_embedding", "ids"
    ours = run_render(scene, "--quality", "high", "--section", section, "--jobs", "1", media=tmp_path / "ours")
    assert ours.returncode == 0, ours.stderr
    [clip] = (tmp_path / "ours" / "high").glob(f"{scene}*.mp4")
    manifest = json.loads(recipe.manifest_path(clip).read_text())
    assert manifest["encoder"] == {"libx264": {"preset": "superfast", "crf": "23"}}
    spec = SCENES[scene]
    plain = subprocess.run([sys.executable, "-m", "manim", "render", "-qh", "--disable_caching",
                            "--media_dir", str(tmp_path / "plain"), spec.path, spec.cls],
                           cwd=REPO, capture_output=True, text=True, timeout=900,
                           env={**os.environ, "GPT_LECTURE_SECTION": section})
    assert plain.returncode == 0, plain.stderr
    [plain_clip] = (tmp_path / "plain").glob(f"videos/**/{spec.cls}.mp4")
    psnr = paired_psnr(clip, plain_clip)
    assert len(psnr) > 120
    worst, mean = min(psnr), float(np.mean(psnr))
    print(f"{len(psnr)} frames: PSNR mean {mean:.2f} dB, worst {worst:.2f} dB")
    assert worst >= HIGH_MIN_PSNR_DB and mean >= HIGH_MEAN_PSNR_DB, (worst, mean)
    # the tolerance tells a clip a tenth of a second late from the same clip
    assert min(paired_psnr(clip, plain_clip, late=6)) < HIGH_MIN_PSNR_DB


# --- atomic outputs ------------------------------------------------------------------------------
def start_render(media: Path, *args) -> subprocess.Popen:
    """render.py as started from a terminal, where Ctrl-C reaches it: a test run started in the background
    (`cmd &` without job control) inherits SIGINT ignored, and so would render.py, which then renders on."""
    return subprocess.Popen([sys.executable, str(REPO / "render.py"), SCENE, "--voice", "none", *args,
                             "--media", str(media)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def children(pid: int) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:   # the field after the state: the parent's pid
                found.append(int(proc.name))
    return found


def wait_for_worker(render_pid: int, timeout: float = 60) -> int:
    """The pid of a render process of the render.py running as render_pid: a child of its forkserver, which is
    render.py's child."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for server in children(render_pid):
            workers = children(server)
            if workers:
                return workers[0]
        time.sleep(0.1)
    raise AssertionError("the worker never started")


def previous_good(media: Path, name: str) -> tuple[Path, bytes]:
    out = media / "preview" / name
    out.parent.mkdir(parents=True)
    out.write_bytes(b"the previous good clip")
    out.with_name(out.name + ".json").write_text('{"cache_key": "stale"}')
    return out, out.read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "worker killed", "ctrl-c, split", "worker killed, split", "terminated",
                                 "ctrl-c, counting"])
def test_interrupted_render_leaves_the_previous_file_and_no_partial_one(tmp_path, how):
    """"counting": two cores and no plan, so one process draws while another counts the plays (split_live);
    the stop ends both and leaves neither work folder."""
    out, before = previous_good(tmp_path, "softmax_temperature.mp4")
    if "split" in how:   # a plan (here a made-up one) makes a single clip render in parts
        plan_data = tmp_path / ".cache" / "plans" / "softmax_temperature.json"
        plan_data.parent.mkdir(parents=True)
        plan_data.write_text(json.dumps({"plays": [[True, 1.0, 1.0]] * 40}))
    proc = start_render(tmp_path, "--jobs", "2" if "split" in how or "counting" in how else "1")
    worker = wait_for_worker(proc.pid)
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".work/*/partial/**/*.mp4")):  # mid-render: clips are being encoded
        assert time.monotonic() < deadline and proc.poll() is None, "the render never got going"
        time.sleep(0.1)
    if how.startswith("ctrl-c"):
        proc.send_signal(signal.SIGINT)
    elif how == "terminated":             # `kill`, a cancelled CI job: stopped as Ctrl-C stops it
        proc.send_signal(signal.SIGTERM)
    else:
        os.kill(worker, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == (1 if how.startswith("worker killed") else 130), (stdout, stderr)
    assert ("in 2 parts" in stdout) == ("split" in how)
    assert ("while another process counts its animations" in stdout) == ("counting" in how)
    assert "Traceback" not in stderr
    assert out.read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "preview").iterdir()) == ["softmax_temperature.mp4",
                                                                       "softmax_temperature.mp4.json"]
    assert not any((tmp_path / ".work").iterdir()) if (tmp_path / ".work").exists() else True
    if how.startswith("worker killed"):
        assert "FAILED" in stdout and "failed: softmax_temperature" in stderr
        assert (tmp_path / ".logs").is_dir()


@pytest.mark.slow
def test_a_long_render_reports_its_progress(tmp_path, capsys):
    job = recipe.Job(spec=SOFTMAX_TEMPERATURE, typed={}, text={}, quality="high", format="mp4", transparent=False,
                     section=None, name="softmax_temperature")
    job.index = 1
    (tmp_path / "partial").mkdir()
    for i in range(3):
        (tmp_path / "partial" / f"uncached_{i:05}.mp4").write_bytes(b"")
    now = time.monotonic()
    reported: dict = {}
    run.report_progress(job, 2, 20, tmp_path, now - 5, reported)          # too soon: quiet
    assert capsys.readouterr().out == ""
    run.report_progress(job, 2, 20, tmp_path, now - 95, reported)
    assert capsys.readouterr().out.strip() == \
        "[1/2] softmax_temperature   still rendering: 3 animation(s) written, 1m35s"
    run.report_progress(job, 2, 20, tmp_path, now - 95, reported)         # and not again at once
    assert capsys.readouterr().out == ""


# --- a Dask cluster -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """A LocalCluster of 2 worker processes, one thread each, on 127.0.0.1 only; their LaTeX and text caches in a
    temporary folder (the workers inherit this environment)."""
    distributed = pytest.importorskip("distributed")
    cache = tmp_path_factory.mktemp("dask-cache")
    old = os.environ.get("GPT_LECTURE_DASK_CACHE")
    os.environ["GPT_LECTURE_DASK_CACHE"] = str(cache)
    try:
        with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                                      dashboard_address=None) as cluster:
            yield cluster
    finally:
        if old is None:
            os.environ.pop("GPT_LECTURE_DASK_CACHE", None)
        else:
            os.environ["GPT_LECTURE_DASK_CACHE"] = old


@pytest.mark.slow
def test_a_dask_cluster_renders_the_same_frames_as_the_local_cores(tmp_path, dask_cluster, one_process):
    scene, local, remote = WHOLE, tmp_path / "local", tmp_path / "remote"
    # so it splits (2 parts, 2 workers)
    shutil.copytree(one_process["media"] / ".cache" / "plans", remote / ".cache" / "plans")
    r = run_render(scene, "--scheduler", dask_cluster.scheduler_address, media=remote)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "in 2 parts, animations 0-" in r.stdout and statuses(r.stdout)[scene] == "done"
    b = remote / "preview" / f"{scene}.mp4"
    frames_a, frames_b = one_process["frames"], decoded_frames(b)
    assert len(frames_a) > 100
    assert picture_differences(frames_a, frames_b) == ""
    assert one_process["manifest"] == without_render_seconds(b)   # timeline, sections, values, sources
    assert not any((remote / ".work").iterdir())
    assert statuses(run_render(scene, media=remote).stdout) == {scene: "skipped"}   # cached locally

    # A clip that is not split (a still) comes back whole and is installed here, with its manifest and plan.
    still = run_render(SCENE, *CHEAP, "--scheduler", dask_cluster.scheduler_address, media=remote)
    assert still.returncode == 0, still.stderr
    mine = run_render(SCENE, *CHEAP, media=local)
    assert mine.returncode == 0, mine.stderr
    name = f"{SCENE}-section-title.png"
    assert (remote / "preview" / name).read_bytes() == (local / "preview" / name).read_bytes()
    assert without_render_seconds(remote / "preview" / name) == without_render_seconds(local / "preview" / name)


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:9", "not an address"])
def test_a_bad_scheduler_address_is_one_clear_line(tmp_path, address):
    r = run_render(SCENE, *CHEAP, "--scheduler", address, media=tmp_path / "media")
    assert_one_clear_line(r, f"render.py: error: --scheduler {address}: cannot connect to a Dask scheduler there")
    assert not (tmp_path / "media" / "preview").exists()


def test_a_dask_worker_with_another_environment_or_model_refuses_to_render(gpt):
    from model import DEFAULT_DIR
    env, model = cache.environment(), cache.model_digest(DEFAULT_DIR)
    job = {"environment": env, "model": model, "model_dir": str(DEFAULT_DIR)}
    worker.check_remote(job)   # the same: no complaint
    other = json.loads(json.dumps(env))
    other["distributions"]["manim"] = "0.1.0"
    with pytest.raises(RuntimeError, match=r"environment differs from render.py's: manim .* \(render.py: 0.1.0\)"):
        worker.check_remote({**job, "environment": other})
    with pytest.raises(RuntimeError, match="model at .* is not the one"):
        worker.check_remote({**job, "model": {**model, "weights_sha256": "0" * 64}})
