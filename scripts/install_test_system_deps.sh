#!/usr/bin/env bash
# System packages the test suite needs (a real browser for UI smoke tests), installed only when missing.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
