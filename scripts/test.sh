#!/usr/bin/env bash
# Run the test suite (sets up everything it needs first). Extra arguments go to pytest: -m "not slow" is the fast
# tier, -n 0 runs in one process. Two pytest-xdist workers; the tests that use the rendered lecture share one worker
# and the others go by file (tests/conftest.py), longest first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
exec .venv/bin/python -m pytest -n 2 --dist loadgroup --no-loadscope-reorder "$@"
