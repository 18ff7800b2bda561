#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the whole test suite, slow end-to-end tests included.
# Extra arguments go to pytest (e.g. -m "not slow", -k verify).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
export KERNEL_GYM_CACHE="${KERNEL_GYM_CACHE:-$PWD/.kg_cache}"
.venv/bin/python -m pytest -q -p no:cacheprovider --capture=sys --timeout=900 "$@"
rc=$?
if [ "$rc" = "5" ]; then
  echo "pytest collected no tests: treating as a failure" >&2
  exit 1
fi
exit "$rc"
