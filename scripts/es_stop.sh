#!/usr/bin/env bash
# Stops the server started by es_start.sh (by its pid) and removes its working directory.
# Usage: scripts/es_stop.sh WORKDIR
set -euo pipefail
WORKDIR="${1:?usage: es_stop.sh WORKDIR}"
case "$WORKDIR" in /var/tmp/leaklens-es-run.*) ;; *) echo "refusing to stop: $WORKDIR is not an es_start.sh directory" >&2; exit 1;; esac
if [ -f "$WORKDIR/es.pid" ]; then
  PID="$(cat "$WORKDIR/es.pid")"
  if kill "$PID" 2>/dev/null; then
    for _ in $(seq 1 60); do kill -0 "$PID" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$PID" 2>/dev/null || true
  fi
fi
rm -rf "$WORKDIR"
