#!/usr/bin/env bash
# cpu-split.sh BINARY PROFILE: whose CPU a profile of a simulated day holds.
# The simulation's process is the daemon and its rigs together (the fake
# upstream, the simulated readers, the checker), so each sample goes to the
# package of its leaf-most frame of this module: under internal/ rigs
# (internal/rig/, or the older layout's internal/sim, internal/fakeyt) it is
# the rigs', any other package's the product's. A sample with no frame of
# the module is the collector's when it is a background mark, sweep or
# scavenge, else the rest's (the standard library's plumbing and the
# scheduler, either side's). It prints one line, seconds each,
#   split: total=S product=S rigs=S collector=S rest=S
# then the product's seconds by package, the most first.
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 BINARY PROFILE" >&2
  exit 2
fi
go tool pprof -traces "$1" "$2" | awk '
  function secs(x) {
    if (x ~ /ms$/) { sub(/ms$/, "", x); return x / 1e3 }
    if (x ~ /us$/) { sub(/us$/, "", x); return x / 1e6 }
    if (x ~ /ns$/) { sub(/ns$/, "", x); return x / 1e9 }
    sub(/s$/, "", x); return x + 0
  }
  function flush(   who) {
    if (v == "") return
    who = pkg == "" ? (gc ? "collector" : "rest") : (pkg ~ /^internal\/(rig\/|sim$|fakeyt$)/ ? "rigs" : "product")
    s[who] += v; total += v
    if (who == "product") p[pkg] += v
    v = ""; pkg = ""; gc = 0
  }
  /^-+\+-+$/ { flush(); traces = 1; next }
  !traces { next }
  {
    if ($0 ~ /^ +[0-9.]+(ns|us|ms|s) /) { v = secs($1); f = $2 } else f = $1
    if (f ~ /^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge)$/) gc = 1
    if (pkg == "" && f ~ /^github\.com\/ingestworks\/ingest[.\/]/) {
      sub(/^github\.com\/ingestworks\/ingest\/?/, "", f)
      sub(/\.[^\/]*$/, "", f)
      pkg = f == "" ? "ingest" : f
    }
  }
  END {
    flush()
    printf "split: total=%.1f product=%.1f rigs=%.1f collector=%.1f rest=%.1f\n", total, s["product"], s["rigs"], s["collector"], s["rest"]
    for (k in p) printf "%7.1f  %s\n", p[k], k | "sort -rn"
  }'
