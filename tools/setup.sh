#!/usr/bin/env bash
# Create .venv (if missing) and install arena with everything the test suite exercises.
# Idempotent: re-running only installs what changed. Usage: bash tools/setup.sh [extras]
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
EXTRAS="${1:-test,torch}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  .venv/bin/pip install -q --upgrade pip
fi
# torch is pinned (torch==2.13.0 is a CPU wheel; an unpinned torch pulls a multi-GB CUDA build).
.venv/bin/pip install -q -e ".[${EXTRAS}]"
