#!/usr/bin/env bash
# Runs the whole suite. pytest exits 5 when it collected nothing: that must fail, never pass silently.
set -uo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pytest "$@"
status=$?
if [ "$status" = 5 ]; then
  echo "pytest collected no tests: failing on purpose." >&2
  exit 1
fi
exit "$status"
