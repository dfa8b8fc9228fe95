"""Shared test helpers (plain functions; fixtures live in conftest.py)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `python -m model ARGS` the way a user would, from the project root."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "model", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def assert_clean_error(result: subprocess.CompletedProcess, *needles: str) -> None:
    """Non-zero exit, one line on stderr naming the problem, no traceback, nothing on stdout."""
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert result.stdout == ""
