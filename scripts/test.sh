#!/usr/bin/env bash
# Set up (scripts/setup.sh), check lint, format and types, and run the whole test suite, slow
# end-to-end tests included. Extra arguments go to pytest (e.g. -m "not slow", -k verify, -n 0 for
# one process).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
export KERNEL_GYM_CACHE="${KERNEL_GYM_CACHE:-$PWD/.kg_cache}"

# ruff (lint + format) and mypy over the library code (configured in pyproject.toml); a finding
# fails the run, but the tests still run so that one red run shows everything that is wrong
lint=0
echo "[lint] ruff check, ruff format --check, mypy"
.venv/bin/ruff check --quiet kernel_gym agents experiments || lint=1
.venv/bin/ruff format --check --quiet kernel_gym agents experiments || lint=1
.venv/bin/mypy --no-error-summary || lint=1

# Test files run on KG_TEST_WORKERS processes (default: 2, this project's reference machine has 2
# cores); loadfile keeps each file on one worker, so module fixtures (servers, markers) stay single.
workers="${KG_TEST_WORKERS:-2}"
.venv/bin/python -m pytest -q -p no:cacheprovider --capture=sys --timeout=900 --durations=30 \
  -n "$workers" --dist loadfile "$@"
rc=$?
if [ "$rc" = "5" ]; then
  echo "pytest collected no tests: treating as a failure" >&2
  exit 1
fi
if [ "$lint" != "0" ]; then
  echo "lint, format or type check failed (see above): fix the findings (ruff check --fix, ruff format)" >&2
  [ "$rc" = "0" ] && rc=1
fi
exit "$rc"
