#!/usr/bin/env bash
# Set up .venv, lint, and run the whole test suite: bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
# chromium, for the report tests that render in a real headless browser (tests/test_report_browser.py):
# installed when missing in CI or as root; elsewhere those tests skip and say why, in CI they fail
if ! command -v chromium >/dev/null 2>&1 && { [ "${CI:-}" = "true" ] || [ "$(id -u)" = 0 ]; }; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo -n"
    { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends chromium >/dev/null; } || echo "scripts/test.sh: chromium could not be installed" >&2
fi
# rs-trafilatura, a peer of `edrew evaluate`, ships a CPython 3.12 wheel only: a venv of its own that
# tests/test_evaluate_peers.py runs as a worker (in CI they fail without it, elsewhere they skip and say why)
if [ -z "${EDREW_RS_TRAFILATURA_PYTHON:-}" ]; then
    if EDREW_RS_TRAFILATURA_PYTHON="$(bash scripts/rs-trafilatura-venv.sh)"; then
        export EDREW_RS_TRAFILATURA_PYTHON
    else
        echo "scripts/test.sh: no rs-trafilatura venv (scripts/rs-trafilatura-venv.sh)" >&2
    fi
fi
# style and import order first ([tool.ruff] in pyproject.toml; it leaves .venv and output/ alone)
ruff check .
python -m pytest -q "$@"
