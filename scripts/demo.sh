#!/usr/bin/env bash
# The main demo. Sets up .venv with strata first.
source "$(dirname "$0")/env.sh"
ensure_env demo
cd "$ROOT"
exec "$PY" examples/demo.py "$@"
