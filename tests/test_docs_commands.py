"""Every command the README and docs/ show in a shell block runs as written: exit 0, or exit 2 where the doc says
it refuses (a comment on the command containing "refuses" or "exit 2").

The commands are read from the fenced ```bash blocks of README.md and docs/*.md, so a command added to the docs is
tested without a change here. How each kind is run, so that the suite stays short:

- `render.py ...` runs as written plus `--dry-run --media <tmp>`: the command line is parsed, the recipe read and
  every parameter resolved against the model (an unknown flag, a bad value or a scene without that parameter fails
  here exactly as in a real run); nothing is drawn. Rendering itself is tested in test_render.py.
- `bash scripts/lecture.sh ...` runs as written plus the same two options (its setup step only checks, here).
- `manim render ...` runs as written plus `--dry_run` (the scene plays through, nothing is written), with the
  environment variables the line sets.
- `superposition record` is run with `--check`: it would otherwise rewrite the shipped runs, for minutes.
- Not run (NOT_RUN says why): `bash scripts/test.sh` (this suite), `python -m model train` (retrains the shipped
  model for minutes; test_training.py trains through the same function), `python -m model eval --json` (test_cli.py
  runs it), and commands of other programs (a Dask scheduler on another host, pip).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```(?:bash|sh|shell|console)\n(.*?)```", re.S)
NOT_RUN = {"bash scripts/test.sh": "the test suite itself",
           'bash scripts/test.sh -m "not slow"': "the suite's fast tier",
           ".venv/bin/python -m model train": "retrains the shipped model (test_training.py trains through train())",
           ".venv/bin/python -m model eval --json": "test_cli.py runs it, with fewer shuffles",
           ".venv/bin/python scripts/caption_rules.py media/preview --out docs/caption-rules.md":
               "needs a rendered lecture (test_caption_rules_doc.py makes the list from the suite's renders)"}
PROJECT = ("render.py", "scripts/", "model", "manim")   # a command naming none of these is another program's


def documented_commands() -> list[tuple[str, str, bool]]:
    """(where, command, refuses) for every command line of every shell block."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in BLOCK.findall(text):
            for line in block.splitlines():
                command, _, comment = line.partition(" #")
                command = command.strip()
                if not command or command.startswith("#"):
                    continue
                refuses = "refuses" in comment or "exit 2" in comment
                found.append((f"{doc.relative_to(ROOT)}", command, refuses))
    return found


COMMANDS = documented_commands()
# commands that take more than about 5 s (left out of the fast tier, -m "not slow"): the superposition lab's runs
# (pack 30 s, toy 16 s of CPU) and manim playing a whole scene
SLOW_COMMAND = re.compile(r"superposition (pack|toy)\b|\bmanim render\b")
MANIM_RENDER = re.compile(r"\bmanim render\b")


def test_the_docs_show_commands():
    """The parser finds the README's own examples (a broken parser would make every case below vanish)."""
    commands = {c for _, c, _ in COMMANDS}
    assert ".venv/bin/python render.py next_token --temperature 0.7 --seed 3 --steps 6" in commands
    assert "bash scripts/lecture.sh" in commands
    assert len(COMMANDS) >= 20


def as_run(command: str, tmp_path: Path) -> list[str] | None:
    """The argv this test runs for a documented command (see the module's docstring), or None if not run."""
    if command in NOT_RUN:
        return None
    argv = shlex.split(command)
    while argv and re.fullmatch(r"[A-Z_]+=.*", argv[0]):   # VAR=value before the command: kept by run_env
        argv.pop(0)
    if argv[0] in ("python", "python3", ".venv/bin/python"):
        argv[0] = sys.executable
    if argv[0] == "manim":
        return [str(Path(sys.executable).with_name("manim")), *argv[1:], "--dry_run"]
    if "render.py" in argv or argv[:2] == ["bash", "scripts/lecture.sh"]:
        return argv + ["--dry-run", "--media", str(tmp_path / "media")]
    if argv[1:5] == ["-m", "model", "superposition", "record"]:
        return argv + ["--check"]
    return argv


def run_env(command: str) -> dict:
    """The environment of a documented command: this one without PYTHONPATH (as a user's), plus what it sets."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for word in shlex.split(command):
        if not re.fullmatch(r"[A-Z_]+=.*", word):
            break
        key, _, value = word.partition("=")
        env[key] = value
    return env


@pytest.mark.parametrize("where, command, refuses",
                         [pytest.param(*c, marks=pytest.mark.slow) if SLOW_COMMAND.search(c[1]) else c for c in COMMANDS],
                         ids=[f"{w}: {c}" for w, c, _ in COMMANDS])
def test_a_documented_command_runs_as_written(where, command, refuses, tmp_path):
    if not any(word in command for word in PROJECT):
        pytest.skip("another program's command")
    argv = as_run(command, tmp_path)
    if argv is None:
        pytest.skip(f"not run here: {NOT_RUN[command]}")
    env = run_env(command)
    if MANIM_RENDER.search(command):     # the command as written, played to the end of its first beat (the title card):
        env.setdefault("GPT_LECTURE_SECTION", "title")     # the whole scene through manim is test_render.py's
    r = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    expected = 2 if refuses else 0
    assert r.returncode == expected, f"{where}: `{command}` exited {r.returncode}:\n{r.stderr[-2000:]}"
    if refuses:
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
