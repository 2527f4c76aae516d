#!/usr/bin/env bash
# The pure-Python and binary wheels a bare GPU machine lacks for tools/gpu/run.py, made here (where
# PyPI is reachable) into .whl/ (git-ignored; at most 64 MiB together). The GPU image already holds
# torch, transformers, peft, numpy, scipy, pyyaml, pluggy, rich, tensorboard, networkx, matplotlib.
# Usage: bash tools/gpu/wheels.sh [PYTHON_VERSION, default 3.12]
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${1:-3.12}"
pip="${PIP:-python3 -m pip}"
mkdir -p .whl
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
for req in open_spiel==2.0.2 omegaconf==2.3.0 ml-collections==1.1.0 openskill==6.2.0; do
  $pip download -q --no-deps --only-binary=:all: --python-version "$py" --implementation cp "${platforms[@]}" -d .whl "$req"
done
$pip wheel -q --no-deps -w .whl antlr4-python3-runtime==4.9.3   # omegaconf's parser: published as an sdist only
du -ch .whl/*.whl | tail -1
