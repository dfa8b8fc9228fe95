#!/usr/bin/env bash
# The main job: render the lecture recipe (lecture.toml) into media/, skipping what is up to date.
# Sets up everything it needs first. Extra arguments go to render.py, e.g. --lang zh or --quality preview.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh runtime
exec .venv/bin/python render.py --config lecture.toml "$@"
