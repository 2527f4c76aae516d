#!/usr/bin/env bash
# Set up the environment and run the whole test suite (this is what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
.venv/bin/python -m pytest -q "$@"
