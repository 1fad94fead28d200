#!/usr/bin/env bash
# Build (or reuse) a Python 3.12 venv with rs-trafilatura, the Rust port of trafilatura that `edrew evaluate
# --extractors rs-trafilatura` and benchmarks/peers.py compare against. It ships a CPython 3.12 wheel only, so
# it cannot be installed in the project's venv: it runs in this one, as a worker process. A benchmark peer,
# never a dependency of the project.
#   bash scripts/rs-trafilatura-venv.sh        # prints the venv's python (absolute); then
#   edrew evaluate ... --extractors rs-trafilatura --rs-trafilatura-python .venv-rs/bin/python
# EDREW_RS_VENV: where the venv goes (default .venv-rs in the repository); EDREW_PYTHON312: the Python 3.12 to
# build it from (default python3.12 on PATH, else pyenv's newest 3.12).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${EDREW_RS_VENV:-.venv-rs}"
VERSION="rs-trafilatura==0.1.1"
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import rs_trafilatura" 2>/dev/null \
        && [ "$(cat "$VENV/.edrew-stamp" 2>/dev/null)" = "$VERSION" ]; then
    echo "$(realpath "$VENV")/bin/python"
    exit 0
fi
is312() { "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; }
PY=""
for candidate in "${EDREW_PYTHON312:-}" "$(command -v python3.12 || true)" \
        $(command -v pyenv >/dev/null 2>&1 && ls -d "$(pyenv root)"/versions/3.12.*/bin/python 2>/dev/null | sort -rV); do
    if [ -n "$candidate" ] && is312 "$candidate"; then
        PY="$candidate"
        break
    fi
done
if [ -z "$PY" ]; then
    echo "rs-trafilatura-venv: no Python 3.12 found (set EDREW_PYTHON312, or install one: pyenv install 3.12)" >&2
    exit 1
fi
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q "$VERSION" >&2
echo "$VERSION" > "$VENV/.edrew-stamp"
echo "$(realpath "$VENV")/bin/python"
