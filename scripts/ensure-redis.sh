#!/usr/bin/env bash
# Makes sure redis-server and redis-cli are on PATH: tests start their own
# servers on loopback. Installs Debian's packages when missing and allowed.
set -euo pipefail
if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "redis-server is missing and this user cannot install it." >&2
  echo "Install Debian's redis-server package (sudo apt-get install redis-server) and run again." >&2
  exit 1
fi
echo "installing Debian's redis-server package (tests start their own servers on loopback)..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq redis-server redis-tools >/dev/null
command -v redis-server >/dev/null
