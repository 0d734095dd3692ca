#!/usr/bin/env bash
# The scale tables of make bench: every command (the built binary) and
# every route, on SQLite and on PostgreSQL, at the default 8 regions and at
# every catalogued region, both over INGEST_BENCH_DAYS (default 30: the
# standard standing's ceiling) days of the daemon's work (cmd/yeardb:
# hourly runs that churn as real charts do, in each region's languages,
# with tracking), with the all/8 ratios; the sizes per chart entry, page
# and chart-day; export's rows a second; what prune writes. "All" is the
# plan a real deployment runs (INGEST_BENCH_REGIONS, default the eight
# hourly and whole, every other region every 3 hours, its top 50).
#
# The built databases are cached in INGEST_BENCH_DIR (default
# ~/.cache/ingest-bench), keyed by the builder's version (yeardb.Version),
# the days and the selection; both are built at once, in the background,
# before anything else: every region's month, its tracking most of it,
# takes well over an hour on 2 busy cores, once (INGEST_BENCH_DAYS=12 is a
# quicker pair, and the tables say which). Each figure is the median of
# INGEST_BENCH_COUNT (default 3) runs, 8 and all interleaved; the benchmarks run on scratch
# copies, since run --once and prune write. The benchmarks name the 8
# regions' database "day" and every region's "year" (INGEST_BENCH_DAY_DB,
# INGEST_BENCH_YEAR_DB): the tables print them as "8" and "all".
#
# The daemon's resident memory at 8 and at every region (scripts/bench-rss.sh:
# two real daemons for INGEST_RSS_SPAN seconds) is measured when
# INGEST_BENCH_RSS=1, since it takes an hour.
#
# INGEST_BENCH_TABLES picks tables (default "sizes commands routes prune
# pg"), to time one again without the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
tables=" ${INGEST_BENCH_TABLES:-sizes commands routes prune pg} "
want() { [[ $tables == *" $1 "* ]]; }
days=${INGEST_BENCH_DAYS:-30}
count=${INGEST_BENCH_COUNT:-3}
all=${INGEST_BENCH_REGIONS:-all:tier=3:depth=50,default:tier=1:depth=200}
dir=${INGEST_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ingest-bench}
version=$(sed -n 's/^const Version = "\(.*\)"/\1/p' internal/rig/yeardb/yeardb.go)
mkdir -p "$dir"
out=$(mktemp -d)
pg=
trap '[[ -z $pg ]] || stop_pg; rm -rf "$out"' EXIT

# A PostgreSQL cluster of this run's own in $out/pg, fsync on, as root run
# by the postgres user, with one database per side.
pgbin=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | tail -1)")
as_pg() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
start_pg() {
  pg=$out/pg
  mkdir -p "$pg" && chmod 755 "$out" && [[ $(id -u) != 0 ]] || chown postgres "$pg"
  pgport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  as_pg "$pgbin/initdb" -D "$pg/data" -A trust -U postgres -E UTF8 --locale C.UTF-8 >/dev/null
  as_pg "$pgbin/pg_ctl" -D "$pg/data" -l "$pg/log" -w -o "-p $pgport -k $pg -c listen_addresses=127.0.0.1" start >/dev/null
  for name in regions_8 regions_all; do psql_q postgres "CREATE DATABASE $name" >/dev/null; done
}
stop_pg() { as_pg "$pgbin/pg_ctl" -D "$pg/data" -m fast stop >/dev/null || true; }
pg_url() { echo "postgres://postgres@127.0.0.1:$pgport/$1?sslmode=disable"; }
psql_q() { "$pgbin/psql" -qAt "$(pg_url "$1")" -c "$2"; }

# The selection's own key, unless it is the default one.
key=all
[[ $all == all:tier=3:depth=50,default:tier=1:depth=200 ]] || key=sel$(printf %s "$all" | cksum | cut -d' ' -f1)
db8="$dir/regions-8-days-$days-v$version.db"
dball="$dir/regions-$key-days-$days-v$version.db"

build() { # build PATH REGIONS END: once per builder version, days and selection
  local db=$1
  echo "building $db ($days days of the daemon's work at -regions '$2')..."
  rm -f "$db.tmp"*
  go run ./cmd/yeardb -db "$db.tmp" -days "$days" -regions "$2" -end "$3" >/dev/null
  mv "$db.tmp" "$db"
}
# Both are built together, to the same last hour, so that they cover the
# same days: a pair with one missing is built again whole.
if [[ ! -f $db8 || ! -f $dball ]]; then
  end=$(date -u -d '1 hour ago' +%Y-%m-%dT%H:00:00Z)
  rm -f "$db8" "$dball"
  build "$db8" default "$end" & b8=$!
  build "$dball" "$all" "$end" & ball=$!
  wait "$b8" && wait "$ball"
fi

# fresh: new scratch copies of the pair, before each table: run --once
# (its refresh marks the videos the fake does not know gone) and prune
# change the copies they are given. The copies' pages sit dirty in the
# page cache until the first fsync, which would then write the whole file
# back: without sync, the first command here that commits paid for the
# copy and not for the month.
fresh() {
  cp "$db8" "$out/eight.db" && cp "$dball" "$out/all.db" && sync "$out/eight.db" "$out/all.db"
}
# A pair built before this revision's newest migration is brought to it
# once, in place, as an operator's first writing command would: a prune
# that keeps everything (the read-only commands timed here refuse an
# older schema).
go build -o "$out/ingest" ./cmd/ingest
for db in "$db8" "$dball"; do
  said=$(env -i PATH="$PATH" HOME="$HOME" INGEST_DB="$db" INGEST_STANDING=extended INGEST_STATS_RETENTION=400d \
    INGEST_LOG_LEVEL=warn "$out/ingest" prune --keep 400d 2>&1) || { echo "$said" >&2; exit 1; }
done
export INGEST_BENCH_DAY_DB="$out/eight.db" INGEST_BENCH_YEAR_DB="$out/all.db"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; all = --regions '$all'; $days days$([[ $days == 30 ]] || echo " (NOT the 30 days the goals are set at)")"

# median: the median of the values collected per key.
med='function median(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1]+0 > a[j]+0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }'

sizes() { # sizes NAME PATH: a row of the sizes table
  local bytes
  bytes=$(stat -c %s "$2")
  sqlite3 -readonly "$2" "SELECT count(DISTINCT region), (SELECT count(*) FROM trending_entries), (SELECT count(*) FROM ledger WHERE op = 'videos.list'), (SELECT count(*) FROM videos), (SELECT count(*) FROM video_stats) FROM runs" |
    awk -F'|' -v name="$1" -v bytes="$bytes" -v days="$days" '{
      printf "%-12s %9.1f %8d %10d %8d %9d %10d %11.0f %9.0f %12.0f\n", name, bytes / 1e6, $1, $2, $3, $4, $5, bytes / $2, bytes / $3, bytes / ($1 * days) }'
}

sizes_table() {
  echo
  echo "== sizes: what each database holds (an entry is one video on one stored chart; a page is one videos.list page stored; a chart-day is one region's chart kept one day) =="
  printf "%-12s %9s %8s %10s %8s %9s %10s %11s %9s %12s\n" database MB regions entries pages videos counts B/entry B/page B/chart-day
  sizes "8 regions" "$INGEST_BENCH_DAY_DB" | tee "$out/sizes.txt"
  sizes "all regions" "$INGEST_BENCH_YEAR_DB" | tee -a "$out/sizes.txt"
  awk '{ e[NR] = $(NF-2); p[NR] = $(NF-1); c[NR] = $NF } END {
    printf "all/8 bytes per entry %.2f (target <= 1.2: %s), per page %.2f, per chart-day %.2f\n", e[2] / e[1], (e[2] <= 1.2 * e[1] ? "met" : "MISSED"), p[2] / p[1], c[2] / c[1] }' "$out/sizes.txt"
  # Where the bytes are: the chart entries' own table and indexes per
  # entry, and tracking's counts (dbstat, when this sqlite3 has it).
  local side path
  for side in "8 regions:$INGEST_BENCH_DAY_DB" "all regions:$INGEST_BENCH_YEAR_DB"; do
    path=${side#*:}
    sqlite3 -readonly "$path" "SELECT sum(CASE WHEN name LIKE 'trending_entries%' THEN pgsize END), sum(CASE WHEN name LIKE 'video_stats%' THEN pgsize END),
      (SELECT count(*) FROM trending_entries) FROM dbstat" 2>/dev/null |
      awk -F'|' -v name="${side%%:*}" '{ printf "%-12s chart entries %.0f B/entry; tracked counts %.1f MB\n", name, $1 / $3, $2 / 1e6 }'
  done
}

commands() { # commands LABEL: BenchmarkScale's table
  echo
  echo "== commands on $1: each, the built binary, at 8 regions vs all, $days days, median of $count =="
  go test -run '^$' -bench BenchmarkScale -benchtime 3x -count "$count" -timeout 90m ./cmd/ingest/ > "$out/scale.txt" || { cat "$out/scale.txt"; exit 1; }
  awk "$med"'
    /^BenchmarkScale\// { split($1, n, "/"); c = n[2]; s = n[3]; sub(/-[0-9]+$/, "", s)
      v[c, s] = v[c, s] " " $3 / 1e6; if (!(c in seen)) { seen[c] = 1; order[++nc] = c } }
    END {
      printf "%-20s %10s %10s %8s  %s\n", "command", "8 ms", "all ms", "all/8", "target <= 2x"
      for (k = 1; k <= nc; k++) { c = order[k]; d = median(v[c, "day"]); y = median(v[c, "year"]); r = y / d
        printf "%-20s %10.1f %10.1f %8.2f  %s\n", c, d, y, r, (r <= 2 ? "met" : "MISSED") }
    }' "$out/scale.txt" | tee "$out/commands.txt"
}
rows() { # rows PATH: the rows export-day writes, as export logs them
  local day
  day=$(sqlite3 -readonly "$1" "SELECT date(max(started_ms) / 1000, 'unixepoch') FROM runs WHERE region = 'US'")
  env -i PATH="$PATH" HOME="$HOME" INGEST_DB="$1" INGEST_STANDING=extended INGEST_STATS_RETENTION=400d \
    bin/ingest export --since "$day" --out "$out/rows.csv" 2>&1 | sed -n 's/.*msg=exported rows=\([0-9]*\).*/\1/p'
}

export_rate() { # after commands SQLite: export-day's rows a second
  echo
  echo "== export: rows a second of the last day's CSV (export-day above) =="
  [[ -x bin/ingest ]] || make -s build >/dev/null
  local r8 rall
  r8=$(rows "$INGEST_BENCH_DAY_DB")
  rall=$(rows "$INGEST_BENCH_YEAR_DB")
  awk -v r8="$r8" -v ra="$rall" '$1 == "export-day" {
    printf "8 regions: %d rows in %.0f ms, %.0f rows/s; all regions: %d rows in %.0f ms, %.0f rows/s\n", r8, $2, r8 / $2 * 1000, ra, $3, ra / $3 * 1000 }' "$out/commands.txt"
}

routes() { # routes LABEL: BenchmarkRoutes' table
  echo
  echo "== routes on $1: each API answer and page, in process, at 8 regions vs all, $days days, p50 (median of $count) =="
  go test -run '^$' -bench BenchmarkRoutes -benchtime 40x -count "$count" -timeout 90m ./web/ > "$out/web.txt" || { cat "$out/web.txt"; exit 1; }
  awk "$med"'
    /^BenchmarkRoutes\// { split($1, n, "/"); r = n[2]; s = n[3]; sub(/-[0-9]+$/, "", s)
      for (i = 1; i <= NF; i++) { if ($(i+1) == "p50-ms") p50[r, s] = p50[r, s] " " $i; if ($(i+1) == "p90-ms") p90[r, s] = p90[r, s] " " $i }
      if (!(r in seen)) { seen[r] = 1; order[++nr] = r } }
    END {
      printf "%-20s %10s %10s %8s %10s  %s\n", "route", "8 p50", "all p50", "all/8", "all p90", "targets: all/8 <= 2x, p50 <= 50 ms"
      for (k = 1; k <= nr; k++) { r = order[k]; d = median(p50[r, "day"]); y = median(p50[r, "year"]); q = median(p90[r, "year"])
        ok = (y <= 2 * d || y < 1) ? "met" : "MISSED"; if (y > 50) ok = ok ", p50 MISSED"
        printf "%-20s %10.2f %10.2f %8.2f %10.2f  %s\n", r, d, y, y / d, q, ok }
      print "(an all/8 above 2 under 1 ms counts as met: noise)"
    }' "$out/web.txt"
  echo "-- /api/v1/quota as serve builds it (the ledger's reads kept while it stays the same), 8 regions vs all, p50 (median of $count)"
  go test -run '^$' -bench BenchmarkQuotaAPI -benchtime 40x -count "$count" -timeout 30m ./wiring/ > "$out/quota.txt" || { cat "$out/quota.txt"; exit 1; }
  awk "$med"'
    /^BenchmarkQuotaAPI\// { split($1, n, "/"); s = n[2]; sub(/-[0-9]+$/, "", s)
      for (i = 1; i <= NF; i++) { if ($(i+1) == "p50-ms") p50[s] = p50[s] " " $i; if ($(i+1) == "first-ms") f[s] = f[s] " " $i } }
    END { d = median(p50["day"]); y = median(p50["year"])
      printf "8 regions p50 %.2f ms, all p50 %.2f ms (all/8 %.2f; first request %.0f ms and %.0f ms): target p50 <= 50 ms %s\n",
        d, y, y / d, median(f["day"]), median(f["year"]), (y <= 50 && d <= 50 ? "met" : "MISSED") }' "$out/quota.txt"
}
prune_table() {
  echo
  echo "== prune --keep 7d of $days days (its pages not cached), 8 regions vs all =="
  # Cold: the copy's pages are dropped from the page cache first (see
  # BenchmarkPruneYear: warm, write_bytes books a copy's large folios).
  local side
  for side in "8 regions:$INGEST_BENCH_DAY_DB" "all regions:$INGEST_BENCH_YEAR_DB"; do
    INGEST_BENCH_YEAR_DB=${side#*:} INGEST_BENCH_KEEP=7 INGEST_BENCH_COLD=1 go test -run '^$' -bench BenchmarkPruneYear -benchtime 1x -timeout 60m ./retention/ > "$out/prune.txt" || { cat "$out/prune.txt"; exit 1; }
    awk -v name="${side%%:*}" '
      /^BenchmarkPruneYear/ { for (i = 1; i <= NF; i++) m[$(i+1)] = $i }
      END { printf "%-12s time %.1f s; WAL peak %.1f MB; write_bytes/freed %.2fx (target <= 5x: %s); %.1f MB after, %.1f MB freed\n",
        name, m["s"], m["wal-peak-MB"], m["write_bytes/freed"], (m["write_bytes/freed"] <= 5 ? "met" : "MISSED"), m["after-MB"], m["freed-MB"] }' "$out/prune.txt"
  done
}

pg_tables() {
  echo
  echo "== PostgreSQL (a real server, fsync on): the same two databases copied in; the store calls of the commands, median of ${INGEST_BENCH_ROUNDS:-11} =="
  start_pg
  INGEST_BENCH_PG_DAY_URL=$(pg_url regions_8) INGEST_BENCH_PG_YEAR_URL=$(pg_url regions_all)
  export INGEST_BENCH_PG_DAY_URL INGEST_BENCH_PG_YEAR_URL
  go test -run '^$' -bench BenchmarkPGYear -benchtime 1x -timeout 90m ./store/ > "$out/pgyear.txt" || { cat "$out/pgyear.txt"; exit 1; }
  grep -v '^\(goos\|goarch\|pkg\|cpu\|PASS\|ok\|Benchmark\)' "$out/pgyear.txt" | sed 's/day ms/8 ms/; s/year ms/all ms/; s/ratio$/all\/8/'
  local name
  for name in 8 all; do
    echo "PostgreSQL database at $name regions: $(psql_q "regions_$name" "SELECT pg_database_size(current_database()) / 1000000") MB"
  done
  routes PostgreSQL
  commands PostgreSQL # last: run --once writes
}

want sizes && fresh && sizes_table
want commands && fresh && { commands SQLite; export_rate; }
want routes && fresh && routes SQLite
want prune && fresh && prune_table
want pg && fresh && pg_tables
if [[ -n ${INGEST_BENCH_RSS:-} ]]; then
  echo
  echo "== the daemon's resident memory, 8 regions vs all (scripts/bench-rss.sh) =="
  scripts/bench-rss.sh
fi
