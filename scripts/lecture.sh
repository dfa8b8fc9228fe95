#!/usr/bin/env bash
# The main job (sets up everything it needs first). Extra arguments go to the command.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh runtime
exec .venv/bin/python -m model demo "$@"
