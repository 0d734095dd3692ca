#!/usr/bin/env bash
# make bench: every benchmark table, each measured against its baseline in
# the same run, printed as ratios beside the targets.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== quota: window.lua vs PING, fixed-window INCR, redis_rate (GCRA), per-call and per-unit sorted-set logs, one redis-server =="
go test -run '^$' -bench BenchmarkLimiterTable -benchtime 1x ./quota/ | grep -v '^\(goos\|goarch\|pkg\|cpu\|PASS\|ok\|Benchmark\)'

echo
echo "== store: page upserts, FTS kept in sync vs no FTS =="
go test -run '^$' -bench 'BenchmarkSavePage' -benchtime 2s ./store/ | tee "$out/store.txt" | grep '^Benchmark'
awk '
  /BenchmarkSavePageNew-/      { for (i=1;i<=NF;i++) if ($(i+1)=="videos/s") fts=$i }
  /BenchmarkSavePageNewNoFTS-/ { for (i=1;i<=NF;i++) if ($(i+1)=="videos/s") nofts=$i }
  /BenchmarkSavePageUnchanged-/{ for (i=1;i<=NF;i++) if ($(i+1)=="videos/s") same=$i }
  END {
    printf "new videos/s with FTS       %8.0f  target >= 5000   %s\n", fts, (fts>=5000?"met":"MISSED")
    printf "new videos/s without FTS    %8.0f  (baseline)  FTS/baseline = %.2f\n", nofts, fts/nofts
    printf "unchanged re-upserts/s      %8.0f  target >= 15000  %s\n", same, (same>=15000?"met":"MISSED")
    printf "a full cycle of 1,600 videos stored in %.0f ms (target < 333 ms)\n", 1600/fts*1000
  }' "$out/store.txt"

echo
echo "== regions: a full --once cycle, fake upstream at 20 ms a call =="
go test -run '^$' -bench BenchmarkOnceCycle -benchtime 5x ./regions/ | tee "$out/cycle.txt" | grep '^Benchmark'
awk '/BenchmarkOnceCycle-/ { for (i=1;i<=NF;i++) { if ($(i+1)=="overhead-%") o=$i; if ($(i+1)=="wall-ms/cycle") w=$i; if ($(i+1)=="latency-ms/cycle") l=$i } }
  END { printf "wall %.0f ms beside %.0f ms of upstream latency: our overhead %.1f%% (target < 10%%) %s\n", w, l, o, (o<10?"met":"MISSED") }' "$out/cycle.txt"

echo
echo "== store: search latency over ${INGEST_BENCH_VIDEOS:-200000} generated videos =="
go test -run '^$' -bench 'BenchmarkSearch' -benchtime 400x -timeout 20m ./store/ | tee "$out/search.txt" | grep '^Benchmark'
awk '/BenchmarkSearch\// { split($1, n, "/"); sub(/-[0-9]+$/, "", n[2]); for (i=1;i<=NF;i++) { if ($(i+1)=="p50-ms") p50=$i; if ($(i+1)=="p99-ms") p99=$i }
  printf "%-7s two-word queries: p50 %6.2f ms (target < 2: %s)  p99 %6.2f ms (target < 50: %s)\n", n[2], p50, (p50<2?"met":"MISSED"), p99, (p99<50?"met":"MISSED") }' "$out/search.txt"
