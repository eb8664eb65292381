#!/usr/bin/env bash
# Runs the whole suite. pytest exits 5 when it collected nothing: that must fail, never pass silently.
set -uo pipefail
cd "$(dirname "$0")/.."
# Tests never reach a model or dataset hub.
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# Passive OpenMP waits: spinning torch threads slow every pass about tenfold on a shared 2-core machine.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
.venv/bin/python -m pytest "$@"
status=$?
if [ "$status" = 5 ]; then
  echo "pytest collected no tests: failing on purpose." >&2
  exit 1
fi
exit "$status"
