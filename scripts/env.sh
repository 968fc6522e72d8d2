# Sourced by scripts/demo.sh and scripts/test.sh: make .venv and install what is missing.
# Usage: ensure_env "<pip extras, e.g. dev or empty>"
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"

ensure_env() {
    local extras="$1"
    if [ ! -x "$PY" ]; then
        python3 -m venv "$VENV"
    fi
    local spec="$ROOT"
    [ -n "$extras" ] && spec="$ROOT[$extras]"
    # Reinstall only when pyproject.toml changed since the last install with these extras.
    local stamp="$VENV/.installed-${extras:-base}"
    local want
    want="$(sha1sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
        "$PY" -m pip install --quiet --disable-pip-version-check -e "$spec" 2>&1 \
            | grep -v "^WARNING: Location" || true
        "$PY" -c "import strata" # fail loudly if the install did not work
        echo "$want" > "$stamp"
    fi
}
