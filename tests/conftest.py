"""Shared test setup: ManimCE's frame comparison on Debian's cairo, and the shipped model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# One BLAS thread per process: the tests' traces are small, and on a loaded machine OpenBLAS's default threads
# made the analysis of one fact prompt 6 times slower (29 s against 4.9 s, the mlp_fact helper's measurement).
# Set before numpy is first imported; the renders the tests start inherit it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import manim.utils.testing.frames_comparison as frames_comparison  # noqa: E402

# Debian 12 ships cairo 1.16; ManimCE would skip every frame test below 1.18. Our control
# data is made with the same cairo that checks it, so the version does not matter here.
frames_comparison.MIN_CAIRO_VERSION = 0

# Scenes read these; a value left in the environment of whoever runs the tests must not leak in.
for var in ("GPT_LECTURE_MODEL", "GPT_LECTURE_PARAMS", "GPT_LECTURE_SECTION"):
    os.environ.pop(var, None)


def pytest_addoption(parser):
    parser.addoption("--set_test", action="store_true", default=False,
                     help="write the frame-comparison control data instead of checking against it")
    parser.addoption("--show_diff", action="store_true", default=False,
                     help="show a picture of the difference when a frame comparison fails")


@pytest.fixture(scope="session")
def gpt():
    """The shipped model: the tests check the numbers the lecture actually shows."""
    from model import DEFAULT_DIR, NumpyGPT
    if not (DEFAULT_DIR / "model.safetensors").is_file():
        pytest.fail(f"the shipped weights are missing: {DEFAULT_DIR}")
    return NumpyGPT.load()


# the scenes whose preview clips test_scenes.py checks in this session (its whole-catalog render test, as collected)
LECTURE_BATCH: set[str] = set()


# The units of work under pytest-xdist: each test's group, written by the workers as they collect and read by the
# controller's scheduler (pytest-xdist's own --dist loadgroup cannot mark a test's id under pytest 9).
GROUPS_ENV = "GPT_LECTURE_TEST_GROUPS"


def pytest_configure(config):
    if getattr(config.option, "dist", "no") == "loadgroup" and not os.environ.get("PYTEST_XDIST_WORKER"):
        import tempfile
        fd, path = tempfile.mkstemp(prefix="gpt-lecture-test-groups-", suffix=".json")
        os.close(fd)
        os.environ[GROUPS_ENV] = path      # the workers, started after this, inherit it
        config._test_groups_file = path


def pytest_unconfigure(config):
    path = getattr(config, "_test_groups_file", None)
    if path:
        Path(path).unlink(missing_ok=True)


def pytest_itemcollected(item):
    """A test that uses the `lecture` fixture (the session's renders and dry runs of every scene) is slow: alone, it
    pays for them."""
    if "lecture" in getattr(item, "fixturenames", ()):
        item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """On a pytest-xdist worker under --dist loadgroup (scripts/test.sh): the tests that use the lecture are one unit
    of work, run by one worker, which makes the lecture once; every other test file is one unit, so that its
    module-scoped renders and browsers are made once too. The units are handed out longest first (scripts/test.sh
    passes --no-loadscope-reorder, so the order is this one): the lecture, then the files by their count of slow
    tests."""
    if not (config.getoption("loadgroup", False) and os.environ.get(GROUPS_ENV)):
        return
    group = {item: "lecture" if "lecture" in item.fixturenames else item.nodeid.split("::", 1)[0] for item in items}
    slow, first = {}, {}
    for i, item in enumerate(items):
        slow[group[item]] = slow.get(group[item], 0) + any(item.iter_markers("slow"))
        first.setdefault(group[item], i)
    items.sort(key=lambda item: (group[item] != "lecture", -slow[group[item]], first[group[item]]))
    path = Path(os.environ[GROUPS_ENV])
    part = path.with_name(f"{path.name}.{os.getpid()}")
    part.write_text(json.dumps({item.nodeid: group[item] for item in items}))
    part.replace(path)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Load scheduling by the groups the workers wrote (the controller itself collects nothing)."""
    if getattr(config, "_test_groups_file", None) is None:
        return None
    from xdist.scheduler import LoadScopeScheduling
    groups = {}

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            if not groups:
                groups.update(json.loads(Path(config._test_groups_file).read_text() or "{}"))
            return groups.get(nodeid, nodeid.split("::", 1)[0])

    return ByGroup(config, log)


def pytest_collection_finish(session):
    """The session's items as they will run (after -k and the like)."""
    LECTURE_BATCH.clear()
    LECTURE_BATCH.update(item.callspec.params["name"] for item in session.items
                         if getattr(item, "originalname", None) == "test_renders_every_beat_at_preview_quality")


@pytest.fixture(scope="session")
def lecture(tmp_path_factory):
    """Every scene's preview clips and dry runs, made once per session (scene_checks.Lecture). When the session
    checks several scenes' clips (test_scenes.py), the first clip asked for renders all of them in one recipe."""
    from scene_checks import Lecture
    return Lecture(tmp_path_factory, batch=LECTURE_BATCH if len(LECTURE_BATCH) > 1 else set())


def run_render(*args, media=None, timeout=600, env=None, **kwargs) -> subprocess.CompletedProcess:
    """python render.py ARGS, in the repo, into `media`; returns the finished process. Silent (--voice none) unless
    the test names a voice: the narration has tests of its own (test_narration.py), the others test the pictures."""
    cmd = [sys.executable, str(REPO / "render.py"), *map(str, args)]
    if "--voice" not in cmd:
        cmd += ["--voice", "none"]
    if media is not None:
        cmd += ["--media", str(media)]
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout, env=full_env, **kwargs)


def render_recipe(root: Path, recipe: str, timeout: float = 900) -> dict:
    """A recipe's text written to root/lecture.toml and rendered into root/media on both cores (it must succeed):
    {"media", "dir" (the preview folder), "recipe", "stdout"}."""
    recipe_file = root / "lecture.toml"
    recipe_file.write_text(recipe)
    media = root / "media"
    r = run_render("--config", recipe_file, "--jobs", "2", media=media, timeout=timeout)
    assert r.returncode == 0, r.stderr
    return {"media": media, "dir": media / "preview", "recipe": recipe_file, "stdout": r.stdout}


def statuses(stdout: str) -> dict[str, str]:
    """Each clip's last status word ("done", "skipped", "would") from render.py's progress lines."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("["):
            name, _, status = line.split("]", 1)[1].strip().partition("  ")
            out[name] = status.strip().split(" ")[0]
    return out


@pytest.fixture(scope="session")
def gpt2_tokenizer_dir(tmp_path_factory):
    """GPT-2's tokenizer.json, built from js-tiktoken's ranks (scripts/setup.sh fetches the npm package)."""
    from gpt2_checkpoints import js_tiktoken_ranks
    from scripts.gpt2_tokenizer import build
    if not js_tiktoken_ranks().is_file():
        pytest.fail(f"js-tiktoken's GPT-2 ranks are missing: {js_tiktoken_ranks()} (run scripts/setup.sh)")
    out = tmp_path_factory.mktemp("gpt2-tokenizer")
    build(js_tiktoken_ranks(), out)
    return out


@pytest.fixture(scope="session")
def gpt2_small(tmp_path_factory, gpt2_tokenizer_dir):
    """A seeded random-init GPT2LMHeadModel with GPT-2's vocabulary and tokenizer on a tiny body (2 layers, 64
    numbers, 4 heads, 64 positions): the scenes at GPT-2's vocabulary, fast."""
    from gpt2_checkpoints import SMALL, make_checkpoint
    return make_checkpoint(tmp_path_factory.mktemp("gpt2-small"), SMALL, seed=1, tokenizer_dir=gpt2_tokenizer_dir)


@pytest.fixture(scope="session")
def gpt2_full(tmp_path_factory, gpt2_tokenizer_dir):
    """A seeded random-init GPT-2 small (124M parameters, about 500 MB on disk)."""
    from gpt2_checkpoints import FULL, make_checkpoint
    return make_checkpoint(tmp_path_factory.mktemp("gpt2-full"), FULL, seed=2, tokenizer_dir=gpt2_tokenizer_dir)
