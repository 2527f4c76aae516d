#!/usr/bin/env bash
# On a bare GPU machine (no network): install the wheels tools/gpu/wheels.sh made into .whl/, install
# arena itself without dependencies, then run the GPU measurements. Usage: bash tools/gpu/run.sh OUT_DIR [--sections a,b]
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-runs/gpu}"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/arena-site .whl/*.whl
export PYTHONPATH=/tmp/arena-site PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . 2>&1 | tail -2
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 tools/gpu/run.py --out "$out" --work /tmp/arena-gpu-work "${@:2}"
