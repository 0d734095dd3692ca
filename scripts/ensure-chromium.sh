#!/usr/bin/env bash
# Makes sure a headless-capable Chromium is on PATH for the dashboard's
# browser tests (cmd/ingest/web_e2e_test.go starts it itself). Installs
# Debian's chromium package when missing and allowed; when it cannot, it
# says so and leaves the browser tests to skip with the same message.
set -euo pipefail
if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "chromium is missing and this user cannot install it: the browser tests will skip." >&2
  echo "Install Debian's chromium package (sudo apt-get install chromium) to run them." >&2
  exit 0
fi
echo "installing Debian's chromium package (the dashboard's browser tests drive it headless)..." >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }; then
  echo "apt-get could not install chromium: the browser tests will skip." >&2
fi
exit 0
