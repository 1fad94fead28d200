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
# style and import order first ([tool.ruff] in pyproject.toml; it leaves .venv and output/ alone)
ruff check .
python -m pytest -q "$@"
