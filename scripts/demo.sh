#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the offline demo: Q-memory agent vs baselines (conf/experiment/demo.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export KERNEL_GYM_CACHE="${KERNEL_GYM_CACHE:-$PWD/.kg_cache}"
exec .venv/bin/python -m experiments.run experiment=demo "$@"
