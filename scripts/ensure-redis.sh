#!/usr/bin/env bash
# Makes sure redis-server and redis-cli are on PATH: tests start their own
# servers on loopback. Also a C compiler (cc): the simulation builds the
# small clock shim it preloads into redis-server, so that Redis reads the
# simulation's virtual time (internal/rig/sim/redis.go); without one, that
# shape skips and says so. Installs Debian's packages when missing and
# allowed.
set -euo pipefail
need=()
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  need+=(redis-server redis-tools)
fi
command -v cc >/dev/null || need+=(gcc)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  if ! command -v redis-server >/dev/null; then
    echo "redis-server is missing and this user cannot install it." >&2
    echo "Install Debian's redis-server package (sudo apt-get install redis-server) and run again." >&2
    exit 1
  fi
  echo "note: no C compiler (cc): the simulation on Redis (TestSimRedis) will skip; sudo apt-get install gcc runs it." >&2
  exit 0
fi
echo "installing Debian's ${need[*]} (tests start their own Redis servers on loopback; the simulation builds its clock shim with cc)..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${need[@]}" >/dev/null
command -v redis-server >/dev/null
