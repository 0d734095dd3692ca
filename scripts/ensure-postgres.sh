#!/usr/bin/env bash
# Makes sure PostgreSQL's server binaries (initdb, postgres) are installed:
# the store tests start their own cluster in a temp dir on a free loopback
# port (internal/rig/pgtest). Installs Debian's postgresql package when missing
# and allowed; the package's own cluster is not needed, so it is not started.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "PostgreSQL is missing and this user cannot install it: the PostgreSQL store tests will be skipped." >&2
  echo "Install Debian's postgresql package (sudo apt-get install postgresql) and run again." >&2
  exit 0
fi
echo "installing Debian's postgresql package (tests start their own cluster on loopback)..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# A policy-rc.d (removed after, if it was not there) keeps the package's
# own cluster from starting.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get install -y -qq postgresql >/dev/null
ls /usr/lib/postgresql/*/bin/initdb >/dev/null
