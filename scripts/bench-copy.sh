#!/usr/bin/env bash
# The worker's stop for a move of every region's month (make bench): db copy
# --two-step of the all-regions database of scripts/bench-scale.sh (built
# there, or by cmd/yeardb; INGEST_BENCH_COPY_DB names another), SQLite to
# PostgreSQL and back. Each way a daemon runs every region on the source
# against the fake upstream (bin/fakeyt, its charts moving) while the bulk
# is copied; it gets SIGTERM when the copy asks, and the copy carries what
# changed since. The table is the copy's own figures: the bulk's rows and
# rows a second, the rows carried, and the worker's stop from the release of
# its lease to the target's being ready (the sums come after, the worker
# already started). Target: a stop of at most 60 s. INGEST_BENCH_COPY_HOLD
# (seconds, default 0) leaves the daemon writing that long after the copy
# asks for the stop: more changes to carry, as a longer bulk would leave.
set -euo pipefail
cd "$(dirname "$0")/.."
days=${INGEST_BENCH_DAYS:-30}
all=${INGEST_BENCH_REGIONS:-all:tier=3:depth=50,default:tier=1:depth=200}
dir=${INGEST_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ingest-bench}
version=$(sed -n 's/^const Version = "\(.*\)"/\1/p' internal/rig/yeardb/yeardb.go)
key=all
[[ $all == all:tier=3:depth=50,default:tier=1:depth=200 ]] || key=sel$(printf %s "$all" | cksum | cut -d' ' -f1)
db=${INGEST_BENCH_COPY_DB:-$dir/regions-$key-days-$days-v$version.db}
out=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; [[ -z ${pg:-} ]] || stop_pg; rm -rf "$out"' EXIT
[[ -x bin/ingest && -x bin/fakeyt ]] || make -s build >/dev/null
if [[ ! -f $db ]]; then
  mkdir -p "$dir"
  echo "building $db ($days days at -regions '$all')..."
  go run ./cmd/yeardb -db "$db.tmp" -days "$days" -regions "$all" >/dev/null
  mv "$db.tmp" "$db"
fi

pgbin=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | tail -1)")
as_pg() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg=$out/pg
mkdir -p "$pg" && chmod 755 "$out" && { [[ $(id -u) != 0 ]] || chown postgres "$pg"; }
pgport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
as_pg "$pgbin/initdb" -D "$pg/data" -A trust -U postgres -E UTF8 --locale C.UTF-8 >/dev/null
as_pg "$pgbin/pg_ctl" -D "$pg/data" -l "$pg/log" -w -o "-p $pgport -k $pg -c listen_addresses=127.0.0.1" start >/dev/null
stop_pg() { as_pg "$pgbin/pg_ctl" -D "$pg/data" -m fast stop >/dev/null || true; }
url="postgres://postgres@127.0.0.1:$pgport/moved?sslmode=disable"
"$pgbin/psql" -qAt "postgres://postgres@127.0.0.1:$pgport/postgres?sslmode=disable" -c "CREATE DATABASE moved" >/dev/null

bin/fakeyt --listen 127.0.0.1:0 --addr-file "$out/fake.url" --latency 20ms --move 2s 2>"$out/fake.log" & pids+=($!)
for _ in $(seq 100); do [[ -s $out/fake.url ]] && break; sleep 0.05; done
cat >"$out/costs.yaml" <<'EOF'
pools:
  default: {limit: 100000000, reserve: 0, window: 24h}
  search:  {limit: 100000000, reserve: 0, window: 24h}
  stats:   {limit: 100000000, reserve: 0, window: 24h}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 100}
  videos.batchGetStats: {stats: 1}
EOF
export YOUTUBE_API_KEY=bench-key-not-secret YOUTUBE_ENDPOINT=$(cat "$out/fake.url") INGEST_COSTS=$out/costs.yaml INGEST_STANDING=standard
unset REDIS_URL INGEST_QUOTA_KEY

cp "$db" "$out/month.db" && sync "$out/month.db"
# the month the database was built to may have aged past the standing
INGEST_DB=$out/month.db bin/ingest prune --terms >/dev/null 2>&1
# A worker that has run all along has refreshed its videos as they came due;
# the built month has not, and the fake upstream knows none of its videos,
# so its first refresh finds every one due gone and deletes it with every
# row pointing at it. Done once here, before the move, as the worker would
# have done it before the operator's move.
INGEST_DB=$out/month.db bin/ingest run --once --regions "$all" --every 10m >/dev/null 2>&1
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; $(basename "$db"), $(($(stat -c %s "$db") / 1000000)) MB"
printf "%-22s %12s %10s %12s %14s %10s %s\n" move "bulk rows" "bulk s" "rows/s" "rows carried" "stop s" "target"
move() { # move NAME FROM TO: a two-step copy beside a daemon on FROM
  local name=${1// /-} from=$2 to=$3
  INGEST_DB=$from bin/ingest run --regions "$all" --every 10m >"$out/$name.daemon" 2>&1 & local daemon=$! ; pids+=($daemon)
  until grep -q "msg=pass" "$out/$name.daemon" || ! kill -0 $daemon 2>/dev/null; do sleep 0.2; done # its lease is held
  kill -0 $daemon 2>/dev/null || { echo "$name: the daemon did not start:"; tail -3 "$out/$name.daemon"; exit 1; }
  INGEST_DB=$from bin/ingest db copy --two-step --to "$to" >"$out/$name.sums" 2>"$out/$name.copy" & local copy=$! ; pids+=($copy)
  until grep -q "stop the worker on" "$out/$name.copy" || ! kill -0 $copy 2>/dev/null; do sleep 0.2; done
  sleep "${INGEST_BENCH_COPY_HOLD:-0}"
  kill -TERM $daemon; wait $daemon || true
  wait $copy || { echo "$name: the copy failed:"; cat "$out/$name.copy"; exit 1; }
  awk -v name="$1" '
    /the bulk is copied:/ { for (i = 1; i <= NF; i++) { if ($(i+1) == "rows" && r == "") r = $i; if ($i == "in") s = $(i+1); if ($(i+1) == "rows" && $(i+2) == "a") rs = substr($i, 2) } }
    /carried what changed since the bulk:/ { for (i = 1; i <= NF; i++) { if ($(i+1) == "rows" && $(i+2) == "written") w = $i; if ($(i+1) == "deleted,") d = $i } }
    /the worker.s stop so far:/ { for (i = 1; i <= NF; i++) if ($i == "far:") st = $(i+1) }
    function secs(d,   v) { v = d; if (v ~ /ms/) { sub(/ms.*/, "", v); return v / 1000 } if (v ~ /m/) { split(v, a, "m"); sub(/s.*/, "", a[2]); return a[1] * 60 + a[2] } sub(/s.*/, "", v); return v + 0 }
    END { printf "%-22s %12s %10.0f %12s %14d %10.1f %s\n", name, r, secs(s), rs, w + d, secs(st), (secs(st) <= 60 ? "met" : "MISSED") }' "$out/$name.copy"
}
move "SQLite to PostgreSQL" "$out/month.db" "$url"
[[ -n ${INGEST_BENCH_COPY_ONE_WAY:-} ]] || move "PostgreSQL to SQLite" "$url" "$out/back.db"
