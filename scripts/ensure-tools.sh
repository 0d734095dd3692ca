#!/usr/bin/env bash
# Makes sure the validators some tests use are on PATH: systemd-analyze
# (Debian's systemd package) for the units under deploy/systemd, and
# promtool (Debian's prometheus package) for the /metrics exposition, and
# xmllint (Debian's libxml2-utils) for the sitemap against its schema, and
# varnishd with its xkey module (Debian's varnish, varnish-modules) and
# nginx for the edge the readers' site ships behind (deploy/varnish,
# deploy/nginx), and litestream beside the daemon (deploy/litestream), and
# Python's official API client (Debian's python3-googleapi, for Debian's
# /usr/bin/python3) that the proxy's tests drive.
# Installs them when missing and allowed (root with apt-get); otherwise
# says so, and those checks skip with the same reason.
set -euo pipefail
# litestream, a Go program, for deploy/litestream: built from the module
# proxy at the version its check was written against.
if ! command -v litestream >/dev/null && [ ! -x "$(go env GOPATH)/bin/litestream" ]; then
  echo "installing litestream v0.5.18 (go install; deploy/litestream's check)..." >&2
  go install github.com/benbjohnson/litestream/cmd/litestream@v0.5.18 ||
    echo "note: litestream could not be installed: deploy/litestream's check will skip." >&2
fi
need=()
command -v systemd-analyze >/dev/null || need+=(systemd)
command -v promtool >/dev/null || need+=(prometheus)
command -v xmllint >/dev/null || need+=(libxml2-utils)
command -v varnishd >/dev/null || need+=(varnish)
ls /usr/lib/*/varnish/vmods/libvmod_xkey.so >/dev/null 2>&1 || need+=(varnish-modules)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
/usr/bin/python3 -c 'import googleapiclient' 2>/dev/null || need+=(python3-googleapi)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "note: ${need[*]} not installed and this user cannot install them: those checks will skip." >&2
  echo "      (sudo apt-get install --no-install-recommends ${need[*]})" >&2
  exit 0
fi
echo "installing Debian's ${need[*]} (validators for deploy/, /metrics and the sitemap)..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
