#!/usr/bin/env bash
# The year-scale tables of make bench: every command (the built binary) and
# every route on a database of one day and on one of INGEST_BENCH_DAYS
# (default 365) days of the daemon's default work (cmd/yeardb: hourly runs
# of the 8 default charts that churn as real ones do, in their languages,
# with tracking), with the year/day ratios; what prune --keep 30d writes;
# the size of the year with and without --keep. The built databases are
# cached in INGEST_BENCH_DIR (default ~/.cache/ingest-bench), keyed by the
# builder's version (yeardb.Version) and the days: a year takes about an
# hour to build on 2 busy cores, once; INGEST_BENCH_DAYS=60 measures a
# smaller scale, and the tables say which. Each figure is the median of
# INGEST_BENCH_COUNT (default 3) runs, day and year interleaved; the
# benchmarks run on scratch copies, since run --once and prune write. The
# same two databases, copied into PostgreSQL, give its year/day ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
days=${INGEST_BENCH_DAYS:-365}
count=${INGEST_BENCH_COUNT:-3}
dir=${INGEST_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ingest-bench}
version=$(sed -n 's/^const Version = "\(.*\)"/\1/p' internal/yeardb/yeardb.go)
mkdir -p "$dir"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

build() { # build NAME DAYS: once per builder version, then reused
  local db="$dir/$1-v$version.db"
  if [[ ! -f "$db" ]]; then
    echo "building $db ($2 days of the default daemon's work; a year takes about an hour)..."
    rm -f "$db.tmp"*
    go run ./cmd/yeardb -db "$db.tmp" -days "$2" >/dev/null
    mv "$db.tmp" "$db"
  fi
  cp "$db" "$out/$1.db"
  # The copy's pages sit dirty in the page cache until the first fsync,
  # which would then write the whole file back: without this, the first
  # command here that commits paid for the copy and not for the year.
  sync "$out/$1.db"
}
build day 1
build "days-$days" "$days"
export INGEST_BENCH_DAY_DB="$out/day.db" INGEST_BENCH_YEAR_DB="$out/days-$days.db"
year_mb=$(( $(stat -c %s "$INGEST_BENCH_YEAR_DB") / 1000000 ))
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

# median.awk-like helper: the median of the values collected per key.
med='function median(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1]+0 > a[j]+0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }'

echo
echo "== scale: each command, the built binary, on one day vs $days days ($year_mb MB), median of $count =="
go test -run '^$' -bench BenchmarkScale -benchtime 3x -count "$count" -timeout 60m ./cmd/ingest/ > "$out/scale.txt" || { cat "$out/scale.txt"; exit 1; }
awk -v days="$days" "$med"'
  /^BenchmarkScale\// { split($1, n, "/"); c = n[2]; s = n[3]; sub(/-[0-9]+$/, "", s)
    v[c, s] = v[c, s] " " $3 / 1e6; if (!(c in seen)) { seen[c] = 1; order[++nc] = c } }
  END {
    printf "%-16s %12s %12s %8s  %s\n", "command", "one day ms", days " days ms", "ratio", "target <= 2x"
    for (k = 1; k <= nc; k++) { c = order[k]; d = median(v[c, "day"]); y = median(v[c, "year"]); r = y / d
      printf "%-16s %12.1f %12.1f %8.2f  %s\n", c, d, y, r, (r <= 2 ? "met" : "MISSED") }
  }' "$out/scale.txt"

echo
echo "== routes: each API answer and page, in process, on one day vs $days days, p50 (median of $count) =="
go test -run '^$' -bench BenchmarkRoutes -benchtime 40x -count "$count" -timeout 60m ./web/ > "$out/web.txt" || { cat "$out/web.txt"; exit 1; }
awk -v days="$days" "$med"'
  /^BenchmarkRoutes\// { split($1, n, "/"); r = n[2]; s = n[3]; sub(/-[0-9]+$/, "", s)
    for (i = 1; i <= NF; i++) { if ($(i+1) == "p50-ms") p50[r, s] = p50[r, s] " " $i; if ($(i+1) == "p90-ms") p90[r, s] = p90[r, s] " " $i }
    if (!(r in seen)) { seen[r] = 1; order[++nr] = r } }
  END {
    printf "%-20s %10s %10s %8s %12s  %s\n", "route", "day p50", days "d p50", "ratio", days "d p90", "targets: ratio <= 2x, p50 < 50 ms"
    for (k = 1; k <= nr; k++) { r = order[k]; d = median(p50[r, "day"]); y = median(p50[r, "year"]); q = median(p90[r, "year"])
      ok = (y <= 2 * d || y < 1) ? "met" : "MISSED"; if (y >= 50) ok = ok ", p50 MISSED"
      printf "%-20s %10.2f %10.2f %8.2f %12.2f  %s\n", r, d, y, y / d, q, ok }
    print "(a ratio above 2 under 1 ms counts as met: noise)"
  }' "$out/web.txt"

echo
echo "== store: the slowest page saved into one day vs $days days =="
go test -run '^$' -bench BenchmarkSavePageAtScale -benchtime 100x -timeout 30m ./store/ | grep '^Benchmark' || true

echo
echo "== PostgreSQL: the store calls of the tables above on one day vs $days days, copied from the SQLite databases into a real server (fsync on), median of ${INGEST_BENCH_ROUNDS:-11} calls =="
INGEST_PGTEST_DURABLE=1 go test -run '^$' -bench BenchmarkPGYear -benchtime 1x -timeout 90m ./store/ > "$out/pgyear.txt" || { cat "$out/pgyear.txt"; exit 1; }
grep -v '^\(goos\|goarch\|pkg\|cpu\|PASS\|ok\|Benchmark\)' "$out/pgyear.txt"

echo
echo "== prune --keep 30d of $days days (its pages not cached): bytes written per byte freed, the WAL's peak, the size with and without --keep =="
# Cold: the copy's pages are dropped from the page cache first. A copy
# just written sits there in large folios, and the kernel books a whole
# folio as written (write_bytes) each time prune dirties a 4 KB page in
# it, though writeback writes the dirty blocks alone: warm, write_bytes
# counts about 2.6 times what prune wrote, for the copy's sake.
INGEST_BENCH_COLD=1 go test -run '^$' -bench BenchmarkPruneYear -benchtime 1x -timeout 60m ./retention/ > "$out/prune.txt" || { cat "$out/prune.txt"; exit 1; }
awk -v year="$year_mb" '
  /^BenchmarkPruneYear/ { for (i = 1; i <= NF; i++) m[$(i+1)] = $i }
  END {
    printf "time %.0f s; WAL peak %.1f MB (bound: 64 MiB)\n", m["s"], m["wal-peak-MB"]
    printf "written / freed: write_bytes %.2fx (target <= 5x: %s), wchar %.2fx, device %.2fx (every process on the disk)\n",
      m["write_bytes/freed"], (m["write_bytes/freed"] <= 5 ? "met" : "MISSED"), m["wchar/freed"], m["device/freed"]
    printf "size: %s MB without --keep, %.1f MB with --keep 30d (%.1f MB freed)\n", year, m["after-MB"], m["freed-MB"]
  }' "$out/prune.txt"
