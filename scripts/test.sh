#!/usr/bin/env bash
# The test suite. Sets up .venv with strata[dev] (pytest, hypothesis, torch==2.13.0) first.
#   bash scripts/test.sh                              every test
#   bash scripts/test.sh tests/test_x.py -k name -x   what pytest is given (without a path,
#                                                     pyproject's testpaths: tests/)
source "$(dirname "$0")/env.sh"
ensure_env dev
cd "$ROOT"
exec "$PY" -m pytest -q "$@"
