#!/usr/bin/env bash
# Fetch, where a package registry is reachable, the wheels scripts/gpu_check.sh installs on a
# GPU machine without one (Python 3.12, x86-64 manylinux): pyopencl and what it needs that the
# machine's image lacks. Versions are those of the local environment, so both sides match.
#   bash scripts/gpu_wheels.sh [folder]      # default .whl (keep it out of git)
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${1:-.whl}
PY=${PYTHON:-python3}
mkdir -p "$DEST"
for name in pyopencl pytools platformdirs siphash24 bytecode; do
  version=$("$PY" -m pip show "$name" 2>/dev/null | awk '/^Version:/ {print $2}')
  spec=$name${version:+==$version}
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux1_x86_64 -d "$DEST" "$spec"
done
ls -1 "$DEST"
