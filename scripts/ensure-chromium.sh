#!/usr/bin/env bash
# Makes sure a headless-capable Chromium is on PATH for the dashboard's
# browser tests (cmd/ingest/web_e2e_test.go starts it itself), with the
# fonts that draw the charts' Japanese, Korean, Chinese and Arabic titles
# (Debian's fonts-noto-cjk and fonts-noto-core: the pages' language tests
# and screenshots look at them as a reader's browser draws them). Installs
# what is missing when it is allowed; when it cannot, it says so and leaves
# the browser tests to skip with the same message.
set -euo pipefail
need=()
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  need+=(chromium)
fi
if command -v dpkg >/dev/null; then
  for pkg in fonts-noto-cjk fonts-noto-core; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
fi
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "${need[*]} missing and this user cannot install them: the browser tests will skip or draw scripts without their fonts." >&2
  echo "Install Debian's packages (sudo apt-get install ${need[*]}) to run them." >&2
  exit 0
fi
echo "installing Debian's ${need[*]} (the dashboard's browser tests drive Chromium headless, over titles in many scripts)..." >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null; }; then
  echo "apt-get could not install ${need[*]}: the browser tests will skip." >&2
fi
exit 0
