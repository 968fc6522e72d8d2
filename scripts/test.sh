#!/usr/bin/env bash
# The whole test suite. Sets up .venv with strata[dev] (pytest, hypothesis, torch==2.13.0) first.
source "$(dirname "$0")/env.sh"
ensure_env dev
cd "$ROOT"
exec "$PY" -m pytest tests -q "$@"
