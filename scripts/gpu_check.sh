#!/usr/bin/env bash
# The opencl device on an NVIDIA GPU machine: install, run tests/opencl, benchmark beside torch.
#
# Expects Python 3.12 with torch (CUDA) installed and the NVIDIA driver, and no package
# registry: pyopencl and its needs come as wheels in .whl/ (scripts/gpu_wheels.sh fetches them
# where a registry is reachable); strata runs from this checkout's src/. Then:
#   1. installs the wheels into a private folder (pip --no-index),
#   2. writes /etc/OpenCL/vendors/nvidia.icd (the path of libnvidia-opencl.so) if missing, so
#      that pyopencl's ICD loader finds the NVIDIA platform (OCL_ICD_VENDORS where /etc is
#      read-only),
#   3. runs benchmarks/opencl.py: a markdown table, strata on opencl vs torch on CUDA,
#   4. runs benchmarks/opencl_probe.py: launch cost, launches per step, GEMM blockings,
#   5. runs tests/opencl on the GPU (STRATA_OPENCL_DEVICE=nvidia),
# each stage under its own time limit (GPU_CHECK_{BENCH,PROBE,TESTS}_S seconds; GPU_CHECK_STAGES
# picks stages, e.g. "bench,tests"; GPU_CHECK_TESTS and GPU_CHECK_PROBE_PARTS narrow the last two).
# Without an NVIDIA driver it runs on whatever OpenCL platform there is (PoCL), which is how
# it was checked; GPU_CHECK_QUICK=1 uses small benchmark sizes.
#   bash scripts/gpu_check.sh 2>&1 | tee gpu_check.log
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
WHEELS=${GPU_CHECK_WHEELS:-.whl}
SITE=${GPU_CHECK_SITE:-/tmp/strata-gpu-site}

torch_info=$("$PY" -c 'import torch; print(torch.__version__, "cuda", torch.cuda.is_available())')
echo "== python: $("$PY" --version 2>&1), torch: $torch_info"
if compgen -G "$WHEELS/*.whl" >/dev/null; then
  echo "== installing $(ls "$WHEELS"/*.whl | wc -l) wheel(s) from $WHEELS into $SITE"
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$SITE" "$WHEELS"/*.whl
fi
export PYTHONPATH="$PWD/src:$PWD:$SITE${PYTHONPATH:+:$PYTHONPATH}"

ICD_DIR=/etc/OpenCL/vendors
lib=$( (ldconfig -p 2>/dev/null || true) | awk '/libnvidia-opencl\.so/ {print $NF; exit}')
if [ -z "$lib" ]; then
  lib=$(find /usr /lib /opt -name 'libnvidia-opencl.so*' 2>/dev/null | sort | head -1 || true)
fi
if [ -n "$lib" ]; then
  if [ ! -e "$ICD_DIR/nvidia.icd" ]; then
    if ! { mkdir -p "$ICD_DIR" && echo "$lib" > "$ICD_DIR/nvidia.icd"; } 2>/dev/null; then
      ICD_DIR=$(mktemp -d)
      echo "$lib" > "$ICD_DIR/nvidia.icd"
      export OCL_ICD_VENDORS=$ICD_DIR
    fi
    echo "== wrote $ICD_DIR/nvidia.icd -> $lib"
  fi
  export STRATA_OPENCL_DEVICE=${STRATA_OPENCL_DEVICE:-nvidia}
else
  echo "== no libnvidia-opencl.so: using the OpenCL platforms installed (PoCL?)"
fi

"$PY" - <<'PYEOF'
import strata
if not strata.opencl.is_available():
    raise SystemExit("no OpenCL device: is pyopencl installed, and an ICD for the driver?")
print("== opencl:0 is", strata.opencl.get_device_name())
PYEOF

# Each stage has its own time limit, so one that hangs or fails leaves the others their turn.
status=0
stage() {   # stage NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  echo "== $name (at most ${limit}s)"
  local t0=$SECONDS
  timeout "$limit" "$@" || { echo "== $name: exit $?"; status=1; }
  echo "== $name took $((SECONDS - t0))s"
}
STAGES=",${GPU_CHECK_STAGES:-bench,probe,tests},"
if [[ $STAGES == *,bench,* ]]; then
  stage benchmarks/opencl.py "${GPU_CHECK_BENCH_S:-180}" "$PY" -m benchmarks.opencl \
    ${GPU_CHECK_QUICK:+--quick}
fi
if [[ $STAGES == *,probe,* ]]; then
  stage benchmarks/opencl_probe.py "${GPU_CHECK_PROBE_S:-90}" "$PY" -m benchmarks.opencl_probe \
    ${GPU_CHECK_QUICK:+--quick} --parts "${GPU_CHECK_PROBE_PARTS:-launch,steps,device,gemm}"
fi
if [[ $STAGES == *,tests,* ]]; then
  # shellcheck disable=SC2086  # a list of test paths and pytest options
  stage tests/opencl "${GPU_CHECK_TESTS_S:-240}" "$PY" -m pytest ${GPU_CHECK_TESTS:-tests/opencl} \
    -q -p no:cacheprovider -rf
fi
exit $status
