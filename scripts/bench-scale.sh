#!/usr/bin/env bash
# The year-scale table of make bench: each command on a database of one day
# and on one of INGEST_BENCH_DAYS (default 365) days of hourly runs of every
# default chart, built with the store's own writer (cmd/yeardb). The built
# databases are kept in INGEST_BENCH_DIR (default $TMPDIR/ingest-bench) and
# reused: a year takes half an hour to build on 2 cores; the benchmarks run
# on scratch copies, since run --once and the daemon write to them.
set -euo pipefail
cd "$(dirname "$0")/.."
days=${INGEST_BENCH_DAYS:-365}
dir=${INGEST_BENCH_DIR:-${TMPDIR:-/tmp}/ingest-bench}
mkdir -p "$dir"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

build() { # build NAME DAYS: once, then reused
  if [[ ! -f "$dir/$1.db" ]]; then
    echo "building $dir/$1.db ($2 days; a year takes about half an hour)..."
    rm -f "$dir/$1.db.tmp"*
    go run ./cmd/yeardb -db "$dir/$1.db.tmp" -days "$2" >/dev/null
    mv "$dir/$1.db.tmp" "$dir/$1.db"
  fi
  cp "$dir/$1.db" "$out/$1.db"
  # The copy's pages sit dirty in the page cache until the first fsync,
  # which would then write the whole file back (about 300 ms for a year's
  # 640 MB, nothing for a day): without this, run --once, the first
  # command here that commits, paid for the copy and not for the year.
  sync "$out/$1.db"
}
build day 1
build "days-$days" "$days"
export INGEST_BENCH_DAY_DB="$out/day.db" INGEST_BENCH_YEAR_DB="$out/days-$days.db"

echo "== scale: each command on one day vs $days days of hourly runs of the 8 default charts ($(du -m "$INGEST_BENCH_YEAR_DB" | cut -f1) MB) =="
go test -run '^$' -bench BenchmarkScale -benchtime 5x -timeout 60m ./cmd/ingest/ | tee "$out/scale.txt" | grep '^Benchmark' || true
go test -run '^$' -bench BenchmarkSavePageAtScale -benchtime 100x -timeout 30m ./store/ | tee -a "$out/scale.txt" | grep '^Benchmark' || true
awk -v days="$days" '
  /^BenchmarkScale\// {
    split($1, n, "/"); c = n[2]; s = n[3]; sub(/-[0-9]+$/, "", s)
    ms[c, s] = $3 / 1e6
    if (!(c in seen)) { seen[c] = 1; order[++nc] = c }
  }
  /^BenchmarkSavePageAtScale\// {
    split($1, n, "/"); s = n[2]; sub(/-[0-9]+$/, "", s)
    for (i = 1; i <= NF; i++) if ($(i+1) == "max-ms/page") page[s] = $i
  }
  END {
    printf "%-16s %12s %12s %8s  %s\n", "command", "one day ms", days " days ms", "ratio", "target <= 2x"
    for (k = 1; k <= nc; k++) { c = order[k]; r = ms[c, "year"] / ms[c, "day"]
      printf "%-16s %12.1f %12.1f %8.2f  %s\n", c, ms[c, "day"], ms[c, "year"], r, (r <= 2 ? "met" : "MISSED") }
    printf "%-16s %12.1f %12.1f %8s  %s\n", "slowest page", page["day"], page["year"], "", (page["year"] <= 100 ? "met (<= 100 ms)" : "MISSED (> 100 ms)")
  }' "$out/scale.txt"
