#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the offline demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export KERNEL_GYM_CACHE="${KERNEL_GYM_CACHE:-$PWD/.kg_cache}"
exec .venv/bin/python -m experiments.demo "$@"
