#!/usr/bin/env bash
# Set up .venv and run the whole test suite: bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
python -m pytest -q "$@"
