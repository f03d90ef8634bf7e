# Sourced by the other scripts: makes .venv hold torchlint (editable) with the given
# extras, installing only when pyproject.toml or the constraints changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
EXTRAS="${1:-}"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
hash="$(cat pyproject.toml scripts/constraints.txt | sha256sum | cut -d' ' -f1)"
have="$(cat .venv/.torchlint-stamp 2>/dev/null || true)"
# An install with extras also serves a request without them.
if [ "${have%% *}" != "$hash" ] || { [ -n "$EXTRAS" ] && [ "${have#* }" != "$EXTRAS" ]; }; then
    echo "setting up .venv (torchlint${EXTRAS:+[$EXTRAS]}) ..." >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check -c scripts/constraints.txt -e ".${EXTRAS:+[$EXTRAS]}" >&2
    echo "$hash ${EXTRAS:-base}" > .venv/.torchlint-stamp
fi
