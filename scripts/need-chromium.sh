#!/usr/bin/env bash
# Makes sure Debian's Chromium is at /usr/bin/chromium for the browser test of
# examples/server. It installs the distribution package with apt-get when it
# is missing and we are root; it never downloads a browser build of its own.
# Elsewhere it prints what to do and exits non-zero, so that a test run under
# CI=true fails early with a clear message instead of half-way through.
#
# CHROME_PATH names another Chromium binary to use instead.
set -euo pipefail

chrome="${CHROME_PATH:-/usr/bin/chromium}"
if [ -x "$chrome" ]; then
  exit 0
fi
if [ -n "${CHROME_PATH:-}" ]; then
  echo "CHROME_PATH=$CHROME_PATH is not an executable file" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing chromium with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  if [ -x "$chrome" ]; then
    exit 0
  fi
  echo "apt-get install chromium did not provide $chrome" >&2
  exit 1
fi
echo "Chromium is needed at $chrome for the browser test: install it as root" >&2
echo "(Debian: apt-get install chromium) or set CHROME_PATH to a Chromium binary." >&2
exit 1
