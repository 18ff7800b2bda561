#!/usr/bin/env bash
# Set up .venv with the CPU build of torch and kernel-gym (editable, with test extras).
# Idempotent: a second run only checks. Needs Python 3.11+ and g++ (installed via apt when
# missing and running as root).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
"$PYTHON" - <<'PY' || { echo "kernel-gym needs Python >= 3.11 (set PYTHON=/path/to/python3.11)" >&2; exit 1; }
import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY

# System packages: g++ compiles kernels; bubblewrap (and libseccomp) isolate the answers;
# postgresql gives the memory tests a real server (the store runs on SQLite without it).
missing=""
command -v g++ >/dev/null 2>&1 || missing="$missing g++"
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
ldconfig -p 2>/dev/null | grep -q libseccomp.so.2 || missing="$missing libseccomp2"
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing="$missing postgresql"
if [ -n "$missing" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "[setup] installing$missing"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  elif echo "$missing" | grep -q "g++"; then
    echo "kernel-gym compiles kernels with g++; install it (Debian/Ubuntu: sudo apt-get install g++)" >&2
    exit 1
  else
    echo "[setup] WARNING:$missing missing: verification runs with reduced isolation without bubblewrap/libseccomp2," \
      "the PostgreSQL memory tests skip without postgresql (sudo apt-get install$missing)" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv"
  "$PYTHON" -m venv .venv
fi
PIP=".venv/bin/python -m pip"
# the test extras plus the optional ones the suite exercises (slurm: the submitit launcher's sweep test)
EXTRAS="dev,slurm"
STAMP=.venv/.kernel-gym-installed
WANT="$( (cat pyproject.toml; echo "$EXTRAS") | sha256sum | cut -c1-16)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  exit 0
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
# pip's own chatter (index warnings, resolver notes) goes to a log, shown only when a stage fails
LOG=.venv/setup.log
: > "$LOG"
quiet() {
  if ! "$@" >>"$LOG" 2>&1; then
    echo "[setup] failed: $*" >&2
    tail -n 40 "$LOG" >&2
    return 1
  fi
}
# The CPU build of torch first: the package's range ("torch>=2.3,<3") is then satisfied and
# pip never pulls the multi-GB CUDA wheels.
if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
  echo "[setup] installing torch (CPU build)"
  quiet $PIP install -q torch==2.13.0 || quiet $PIP install -q "torch>=2.3,<3"
fi
echo "[setup] installing kernel-gym and its dependencies (log: $LOG)"
quiet $PIP install -q -e ".[$EXTRAS]"
echo "$WANT" > "$STAMP"
echo "[setup] done"
