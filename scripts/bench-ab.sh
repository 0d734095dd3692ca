#!/usr/bin/env bash
# bench-ab.sh OLD [NEW]: the year table of scripts/bench-scale.sh, side by
# side for two revisions on the same databases: each command (the built
# binary) on one day and on INGEST_BENCH_DAYS days, old and new, with the
# new/old ratios, and what prune --keep 30d writes per byte it frees by
# the kernel's count (write_bytes of /proc/<pid>/io, WAL and checkpoints
# included) and by what was handed to write(2) (wchar).
#
# OLD and NEW are git revisions (NEW defaults to the work tree as it is).
# Both binaries run under the work tree's benchmarks, round after round
# (INGEST_BENCH_COUNT rounds, default 5), old and new interleaved, each
# on its own scratch copy of the same two databases, cached in
# INGEST_BENCH_DIR as bench-scale.sh caches them (INGEST_BENCH_DAYS,
# default 60 here). INGEST_BENCH_ONLY narrows the commands (a regexp of
# their names, as go test -bench takes it); INGEST_BENCH_PRUNE=0 skips the
# prune rounds, which prune copies whose pages are not cached (as
# bench-scale.sh; INGEST_BENCH_WARM=1 keeps the copy's pages cached); INGEST_BENCH_PG=1 adds the PostgreSQL table (BenchmarkPGYear
# of each revision's own store, run in turn: long).
#
#   scripts/bench-ab.sh main
#   INGEST_BENCH_ONLY='search-region|export' scripts/bench-ab.sh main HEAD
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: scripts/bench-ab.sh OLD [NEW] (git revisions; NEW: the work tree)}
new=${2:-}
days=${INGEST_BENCH_DAYS:-60}
# The databases hold more than 30 days: both binaries run as an extended
# key would (docs/explanation/terms.md); an older binary ignores the variables.
export INGEST_STANDING=extended INGEST_STATS_RETENTION=3650d
count=${INGEST_BENCH_COUNT:-5}
only=${INGEST_BENCH_ONLY:-.}
dir=${INGEST_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ingest-bench}
version=$(sed -n 's/^const Version = "\(.*\)"/\1/p' internal/rig/yeardb/yeardb.go)
mkdir -p "$dir"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# tree REV NAME: REV's files in $out/tree-NAME ("" is the work tree).
tree() {
  if [[ -z "$1" ]]; then
    pwd
    return
  fi
  mkdir "$out/tree-$2"
  git archive "$1" | tar -x -C "$out/tree-$2"
  echo "$out/tree-$2"
}
old_tree=$(tree "$old" old)
new_tree=$(tree "$new" new)
echo "building old ($old) and new (${new:-work tree})..."
(cd "$old_tree" && go build -o "$out/old" ./cmd/ingest)
(cd "$new_tree" && go build -o "$out/new" ./cmd/ingest)

build() { # build NAME DAYS: once per builder version, as bench-scale.sh
  local db="$dir/$1-v$version.db"
  if [[ ! -f "$db" ]]; then
    echo "building $db ($2 days of the default daemon's work)..." >&2
    rm -f "$db.tmp"*
    go run ./cmd/yeardb -db "$db.tmp" -days "$2" >/dev/null
    mv "$db.tmp" "$db"
  fi
  echo "$db"
}
day_db=$(build day 1)
year_db=$(build "days-$days" "$days")
for bin in old new; do
  for size in day year; do
    src=$day_db
    [[ $size == year ]] && src=$year_db
    cp "$src" "$out/$bin-$size.db"
    # Each binary reads its own schema: its copy is upgraded first, as a
    # worker's first start would (a prune that keeps everything opens the
    # database for writing).
    INGEST_DB="$out/$bin-$size.db" INGEST_LOG_LEVEL=warn "$out/$bin" prune --keep 3650d >/dev/null
    sync "$out/$bin-$size.db" # else the first commit pays for the copy
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

med='function median(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1]+0 > a[j]+0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }'

echo
echo "== scale: each command on one day and on $days days ($(( $(stat -c %s "$year_db") / 1000000 )) MB), old vs new, median of $count rounds =="
go test -c -o "$out/scale.test" ./cmd/ingest
for round in $(seq "$count"); do
  for bin in old new; do
    if ! (cd cmd/ingest && INGEST_BENCH_BIN="$out/$bin" INGEST_BENCH_DAY_DB="$out/$bin-day.db" INGEST_BENCH_YEAR_DB="$out/$bin-year.db" \
      "$out/scale.test" -test.run '^$' -test.bench "BenchmarkScale/($only)/" -test.benchtime 3x -test.timeout 60m) > "$out/round.txt" 2>&1; then
      echo "the $bin binary's round failed:" >&2
      tail -20 "$out/round.txt" >&2
      exit 1
    fi
    sed -n "s/^BenchmarkScale/$bin &/p" "$out/round.txt" >> "$out/scale.txt"
  done
  echo "round $round/$count done"
done
awk -v days="$days" "$med"'
  { split($2, n, "/"); c = n[2]; s = n[3]; sub(/-[0-9]+$/, "", s)
    v[$1, c, s] = v[$1, c, s] " " $4 / 1e6; if (!(c in seen)) { seen[c] = 1; order[++nc] = c } }
  END {
    printf "%-20s %9s %9s %7s %11s %11s %7s %9s %9s\n", "command", "day old", "day new", "new/old", days "d old", days "d new", "new/old", "ratio old", "ratio new"
    for (k = 1; k <= nc; k++) { c = order[k]
      do_ = median(v["old", c, "day"]); dn = median(v["new", c, "day"]); yo = median(v["old", c, "year"]); yn = median(v["new", c, "year"])
      printf "%-20s %9.1f %9.1f %7.2f %11.1f %11.1f %7.2f %9.2f %9.2f\n", c, do_, dn, dn / do_, yo, yn, yn / yo, yo / do_, yn / dn }
    print "(milliseconds; ratio: the " days " days over one day, target <= 2x)"
  }' "$out/scale.txt"

if [[ ${INGEST_BENCH_PRUNE:-1} != 0 ]]; then
  echo
  echo "== prune --keep 30d of $days days (cached: ${INGEST_BENCH_WARM:-0}): bytes written per byte freed, old vs new, median of $count rounds =="
  for round in $(seq "$count"); do
    for bin in old new; do
      db="$out/prune.db"
      cp "$year_db" "$db"
      sync "$db"
      # As bench-scale.sh: the copy's cached large folios would make the
      # kernel book a whole folio per 4 KB page prune dirties.
      [[ ${INGEST_BENCH_WARM:-0} == 1 ]] || dd if="$db" iflag=nocache count=0 status=none
      before=$(stat -c %s "$db")
      # The shell's own counters, read after it waited for prune, hold
      # prune's (a reaped child's I/O is added to its parent's).
      io=$(INGEST_DB="$db" INGEST_LOG_LEVEL=warn bash -c '
        t0=$(date +%s%N); "$1" prune --keep 30d >/dev/null; t1=$(date +%s%N)
        echo "$(( (t1 - t0) / 1000000 )) $(grep -E "^(wchar|write_bytes):" /proc/$$/io | cut -d" " -f2 | tr "\n" " ")"' _ "$out/$bin")
      after=$(stat -c %s "$db")
      rm -f "$db" "$db-wal" "$db-shm"
      echo "$bin $io $before $after" >> "$out/prune.txt"
    done
  done
  awk "$med"'
    { ms[$1] = ms[$1] " " $2; freed = $5 - $6; if (freed < 1) freed = 1
      wc[$1] = wc[$1] " " $3 / freed; wb[$1] = wb[$1] " " $4 / freed; fr[$1] = fr[$1] " " freed / 1e6 }
    END {
      printf "%-4s %9s %9s %12s %17s\n", "", "s", "freed MB", "wchar/freed", "write_bytes/freed"
      for (b = 0; b < 2; b++) { k = b ? "new" : "old"
        printf "%-4s %9.1f %9.1f %12.2f %17.2f\n", k, median(ms[k]) / 1000, median(fr[k]), median(wc[k]), median(wb[k]) }
      print "(target: write_bytes/freed <= 5)"
    }' "$out/prune.txt"
fi

if [[ ${INGEST_BENCH_PG:-0} == 1 ]]; then
  echo
  echo "== PostgreSQL: each revision's BenchmarkPGYear, old then new, on the same two databases =="
  for bin in old new; do
    t=$old_tree
    [[ $bin == new ]] && t=$new_tree
    echo "-- $bin"
    (cd "$t" && INGEST_BENCH_DAY_DB="$day_db" INGEST_BENCH_YEAR_DB="$year_db" INGEST_PGTEST_DURABLE=1 \
      go test -run '^$' -bench BenchmarkPGYear -benchtime 1x -timeout 90m ./store/) |
      grep -v '^\(goos\|goarch\|pkg\|cpu\|PASS\|ok\|Benchmark\)'
  done
fi
