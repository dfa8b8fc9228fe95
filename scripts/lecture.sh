#!/usr/bin/env bash
# The main job: render the lecture recipe (lecture.toml) into media/, skipping what is up to date, and package
# it: each clip's caption and chapter tracks, the whole lecture (media/high/lecture.mp4), the slide deck
# (lecture.slides.html) and the course page (media/high/course/index.html); see docs/course.md.
# Sets up everything it needs first. Extra arguments go to render.py, e.g. --lang zh or --quality preview.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh runtime
exec .venv/bin/python render.py --config lecture.toml "$@"
