#!/usr/bin/env bash
# System packages the test suite needs (a real browser for UI smoke tests), installed only when missing.
# The browser tests drive /usr/bin/chromium (Debian's package) through Playwright.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "chromium is missing and installing it needs root: run 'apt-get install chromium' as root." >&2
  exit 1
fi
echo "Installing Debian's chromium for the browser tests..."
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
