#!/usr/bin/env bash
# Create (or reuse) .venv with the project installed in editable mode.
# With torch (the [train] extra, which the tests need): dev and CI pin torch==2.13.0 (a CPU build on this
# machine's disk); the package itself accepts any torch>=2.3.
# Usage: source scripts/venv.sh   (sets up and activates .venv)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${EDREW_VENV:-$root/.venv}"
stamp="$venv/.edrew-installed"
want="$(cat "$root/setup.cfg" "$root/scripts/constraints.txt" | sha256sum | cut -c1-16)"
if [ ! -x "$venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
    # pip 23.2 (Python 3.11's) trips over lxml[html-clean] extras; a current pip resolves them
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$root/scripts/constraints.txt" -e "$root[train,dev]"
    echo "$want" > "$stamp"
fi
set +u
# shellcheck disable=SC1091
source "$venv/bin/activate"
set -u
