#!/usr/bin/env bash
# Set up .venv, lint, and run the whole test suite: bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
# style and import order first ([tool.ruff] in pyproject.toml; it leaves .venv and output/ alone)
ruff check .
python -m pytest -q "$@"
