#!/usr/bin/env bash
# make bench: every benchmark table, each measured against its baseline in
# the same run, printed as ratios beside the targets.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== quota: window.lua beside PING, redis_rate (GCRA) and a per-call sorted-set log, one redis-server (and a replica), with the bars of issue 21 =="
go test -run '^$' -bench BenchmarkLimiterTable -benchtime 1x ./quota/ | grep -v '^\(goos\|goarch\|pkg\|cpu\|PASS\|ok\|Benchmark\)'

echo
echo "== quota: the SQLite limiter's take on a pool holding a day of 10,000 entries, the log's index by time with the units vs without =="
go test -run '^$' -bench BenchmarkSQLiteTakeOnADay -count 3 ./quota/ | tee "$out/sqlite-take.txt" | grep '^Benchmark'
awk '
  /index-with-units-/    { w += $3; nw++ }
  /index-without-units-/ { wo += $3; nwo++ }
  END { if (nw && nwo) printf "ratio: a take with the units in the index is %.1f times as fast (%.2f ms vs %.2f ms)\n", (wo/nwo)/(w/nw), w/nw/1e6, wo/nwo/1e6 }
' "$out/sqlite-take.txt"

echo
echo "== ledger: a decision of the SQLite limiter with its tables' statements prepared vs handed to SQLite as text, taking turns =="
go test -run '^$' -bench BenchmarkDecision -benchtime 3s -count 3 ./ledger/ | tee "$out/decision.txt" | grep '^Benchmark'
awk '/^BenchmarkDecision/ { for (i = 1; i < NF; i++) { if ($(i+1) == "ns/prepared") p += $i; if ($(i+1) == "ns/text") x += $i
    if ($(i+1) == "cpu-ns/prepared") cp += $i; if ($(i+1) == "cpu-ns/text") cx += $i }; n++ }
  END { if (n) printf "ratio: a decision with prepared statements is %.2f times as fast (%.2f ms vs %.2f ms), and takes %.2f times less CPU (%.2f ms vs %.2f ms)\n", x/p, p/n/1e6, x/n/1e6, cx/cp, cp/n/1e6, cx/n/1e6 }
' "$out/decision.txt"

echo
echo "== store: page upserts, FTS kept in sync vs no FTS =="
go test -run '^$' -bench 'BenchmarkSavePage' -benchtime 2s ./store/ | tee "$out/store.txt" | grep '^Benchmark'
awk '
  /BenchmarkSavePageNew-/      { for (i=1;i<=NF;i++) if ($(i+1)=="videos/s") fts=$i }
  /BenchmarkSavePageNewNoFTS-/ { for (i=1;i<=NF;i++) if ($(i+1)=="videos/s") nofts=$i }
  /BenchmarkSavePageNewV1-/    { for (i=1;i<=NF;i++) if ($(i+1)=="videos/s") v1=$i }
  /BenchmarkSavePageUnchanged-/{ for (i=1;i<=NF;i++) if ($(i+1)=="videos/s") same=$i }
  END {
    printf "new videos/s with FTS       %8.0f  target >= 5000   %s\n", fts, (fts>=5000?"met":"MISSED")
    printf "new videos/s without FTS    %8.0f  (baseline)  FTS/baseline = %.2f\n", nofts, fts/nofts
    printf "new videos/s, schema 1 FTS  %8.0f  (before the normalized index)  after/before = %.2f\n", v1, fts/v1
    printf "unchanged re-upserts/s      %8.0f  target >= 15000  %s\n", same, (same>=15000?"met":"MISSED")
    printf "a full cycle of 1,600 videos stored in %.0f ms (target < 333 ms)\n", 1600/fts*1000
  }' "$out/store.txt"

echo
echo "== store: a page save with and without the daily rollup's triggers (video_days), interleaved =="
go test -run '^$' -bench BenchmarkRollupTriggers -benchtime 3000x -count 3 ./store/ | tee "$out/rollup.txt" | grep '^Benchmark'
awk '/BenchmarkRollupTriggers-/ { for (i=1;i<=NF;i++) if ($(i+1)=="with/without") r = r " " $i }
  END { printf "with/without the rollup, three runs:%s\n", r }' "$out/rollup.txt"

echo
echo "== store: the entries' rollup by one statement a page vs by the trigger a row, interleaved =="
go test -run '^$' -bench BenchmarkRollupPerPage -benchtime 1000x -count 3 ./store/ | grep '^Benchmark'

echo
echo "== store: an hourly run's rows handed to SQLite as JSONB vs as JSON text, interleaved =="
go test -run '^$' -bench BenchmarkHourlyRunRowsJSONB -benchtime 100x -count 3 ./store/ | grep '^Benchmark'

echo
echo "== store: an hourly run's rows written into bytes given back vs bytes made for each page, interleaved =="
go test -run '^$' -bench BenchmarkHourlyRunRowsKept -benchtime 100x -count 3 ./store/ | grep '^Benchmark'

echo
echo "== store: eight regions' hourly runs on a writer whose temporary files are in memory vs on disk, interleaved =="
go test -run '^$' -bench BenchmarkHourlyRunTempStore -benchtime 5x -count 3 ./store/ | grep '^Benchmark'

echo
echo "== store: a chart's entries read into room made once vs grown row by row, interleaved =="
go test -run '^$' -bench BenchmarkChartEntriesRoom -benchtime 300x -count 3 ./store/ | grep '^Benchmark'

echo
echo "== web: an answer gzipped by a reused writer vs a new one, interleaved =="
go test -run '^$' -bench BenchmarkGzip -benchtime 200x -count 3 ./web/transport/ | grep '^Benchmark'

echo
echo "== web: a page and an API answer's JSON written into a kept buffer vs one grown for each, interleaved =="
go test -run '^$' -bench 'BenchmarkRender$|BenchmarkReplyJSON$' -benchtime 300x -count 3 ./web/ | grep '^Benchmark'

echo
echo "== regions: a full --once cycle, fake upstream at 20 ms a call =="
go test -run '^$' -bench BenchmarkOnceCycle -benchtime 5x ./jobs/ | tee "$out/cycle.txt" | grep '^Benchmark'
awk '/BenchmarkOnceCycle-/ { for (i=1;i<=NF;i++) { if ($(i+1)=="overhead-%") o=$i; if ($(i+1)=="wall-ms/cycle") w=$i; if ($(i+1)=="latency-ms/cycle") l=$i } }
  END { printf "wall %.0f ms beside %.0f ms of upstream latency: our overhead %.1f%% (target < 10%%) %s\n", w, l, o, (o<10?"met":"MISSED") }' "$out/cycle.txt"

echo
echo "== fetch: a chart page read with the client's fields= vs the whole answer, the same page replayed to the real client =="
go test -run '^$' -bench BenchmarkChartPage -benchtime 1000x -count 3 ./fetch/ | tee "$out/fields.txt" | grep '^Benchmark'
awk '/^BenchmarkChartPage\// { side = ($1 ~ /fields/) ? "f" : "w"
    for (i = 1; i < NF; i++) { if ($(i+1) == "bytes/call") by[side] = $i; if ($(i+1) == "ns/op") ns[side] += $i
      if ($(i+1) == "B/op") al[side] += $i }; n[side]++ }
  END { if (n["f"] && n["w"]) printf "fields/whole: bytes read a call %.2f (%d vs %d), client time %.2f, allocated bytes %.2f\n", by["f"]/by["w"], by["f"], by["w"], (ns["f"]/n["f"])/(ns["w"]/n["w"]), (al["f"]/n["f"])/(al["w"]/n["w"]) }
' "$out/fields.txt"

echo
echo "== fetch: a chart page (fields=) read plain vs gzipped with the client's reused inflater vs with a new one an answer (Go's transport), the same page replayed to the real client =="
go test -run '^$' -bench BenchmarkChartPageGzip -benchtime 1000x -count 3 ./fetch/ | tee "$out/gzip.txt" | grep '^Benchmark'
awk '/^BenchmarkChartPageGzip\// { split($1, n, "/"); side = n[2]; sub(/-[0-9]+$/, "", side)
    for (i = 1; i < NF; i++) { if ($(i+1) == "wire-bytes/call") by[side] = $i; if ($(i+1) == "ns/op") ns[side] += $i
      if ($(i+1) == "B/op") al[side] += $i; if ($(i+1) == "allocs/op") ao[side] += $i }; k[side]++ }
  function per(m, s) { return m[s] / k[s] }
  END { if (k["plain"] && k["gzip"] && k["gzip-new"]) {
    printf "gzip/plain: bytes on the wire a call %.2f (%d vs %d), client time %.2f, allocated bytes %.2f, allocations %.2f\n", by["gzip"]/by["plain"], by["gzip"], by["plain"], per(ns, "gzip")/per(ns, "plain"), per(al, "gzip")/per(al, "plain"), per(ao, "gzip")/per(ao, "plain")
    printf "reused/new inflater: client time %.2f, allocated bytes %.2f (%.0f vs %.0f B a call)\n", per(ns, "gzip")/per(ns, "gzip-new"), per(al, "gzip")/per(al, "gzip-new"), per(al, "gzip"), per(al, "gzip-new") } }
' "$out/gzip.txt"

echo
scripts/bench-day.sh

echo
echo "== store: search over ${INGEST_BENCH_VIDEOS:-200000} generated videos, schema 1 index (before) vs normalized (after), same corpus and queries =="
go test -run '^$' -bench 'BenchmarkSearch' -benchtime 400x -timeout 30m ./store/ | tee "$out/search.txt" | grep '^Benchmark'
awk '
  /^BenchmarkSearch\// {
    split($1, n, "/"); ix = n[2]; cl = n[3]; sub(/-[0-9]+$/, "", cl)
    for (i=1;i<=NF;i++) {
      if ($(i+1)=="p50-ms") p50[ix,cl]=$i; if ($(i+1)=="p99-ms") p99[ix,cl]=$i
      if ($(i+1)=="hits/query") hq[ix,cl]=$i
      if ($(i+1)=="videos/s") rate[ix]=$i; if ($(i+1)=="index-MB") mb[ix]=$i
    }
    if (cl != "load" && !(cl in seen)) { seen[cl]=1; order[++nc]=cl }
  }
  function ratio(a, b) { return b > 0 ? sprintf("%.2f", a/b) : "-" }
  END {
    printf "%-10s %22s %22s %12s %16s\n", "", "p50 ms before/after", "p99 ms before/after", "p50 ratio", "hits before/after"
    for (k=1;k<=nc;k++) { c=order[k]
      printf "%-10s %10.2f / %-9.2f %10.2f / %-9.2f %12s %8.1f / %-6.1f\n", c, p50["before",c], p50["after",c], p99["before",c], p99["after",c], ratio(p50["after",c], p50["before",c]), hq["before",c], hq["after",c] }
    printf "index size MB     %8.1f / %-8.1f  after/before = %s\n", mb["before"], mb["after"], ratio(mb["after"], mb["before"])
    printf "load videos/s     %8.0f / %-8.0f  after/before = %s\n", rate["before"], rate["after"], ratio(rate["after"], rate["before"])
    c="common"
    printf "common-word target: p50 %.2f ms (< 2: %s)  p99 %.2f ms (< 50: %s)\n", p50["after",c], (p50["after",c]<2?"met":"MISSED"), p99["after",c], (p99["after",c]<50?"met":"MISSED")
  }' "$out/search.txt"

echo
echo "== API limiter (issue 32): the cheapest API route metered vs not, (a) without Redis, (b) on Redis, (c) on PostgreSQL; Redis server time beside redis_rate's =="
go test -run '^$' -bench BenchmarkAPILimiter -benchtime 1x ./cmd/ingest/ | grep -v '^\(goos\|goarch\|pkg\|cpu\|PASS\|ok\|Benchmark\)'

echo
echo "== web: pages and JSON as --public serves them, beside a server handing out the same bytes from memory (gzip asked, 16 and 64 clients, one listener on loopback); a metered anonymous read beside an unmetered one =="
[ -f demo/ingest.db ] || { make -s build && scripts/demo.sh >/dev/null; }
go run ./cmd/yeardb -days 30 -db "$out/month.db" >/dev/null
for db in "$PWD/demo/ingest.db" "$out/month.db"; do
  echo "-- $(basename "$db" .db | sed 's/^ingest$/the demo database/; s/^month$/a 30-day database (cmd\/yeardb)/')"
  INGEST_BENCH_SERVE_DB="$db" go test -run '^$' -bench BenchmarkServeFromMemory -benchtime 1x ./web/ | tee "$out/serve.txt" | scripts/serve-table.awk
  INGEST_BENCH_SERVE_DB="$db" go test -run '^$' -bench BenchmarkMeteredRead -benchtime 2000x -count 5 ./web/ | tee "$out/metered.txt" | awk '
    /BenchmarkMeteredRead\/unmetered/ { off[++n] = $3 } /BenchmarkMeteredRead\/metered/ { on[++m] = $3 }
    function median(a, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((k + 1) / 2)] }
    END { if (n && m) { u = median(off, n); v = median(on, m); printf "in the process, a kept chart JSON: unmetered %.1f us, metered anonymous %.1f us (medians of %d): metered/unmetered rate %.2fx (goal >= 0.9x) %s\n", u/1000, v/1000, n, u/v, (u/v >= 0.9 ? "met" : "MISSED") } }'
done
echo
echo "== web: /worldwide beside /charts/US at every region, a run landing every 2 s (a day of every region's charts, cmd/yeardb's) =="
go test -run '^$' -bench BenchmarkWorldwideWhileRunsLand -benchtime 20s -timeout 20m ./web/ | tee "$out/landing.txt" | awk '
  /^BenchmarkWorldwideWhileRunsLand/ { for (i = 1; i < NF; i++) v[$(i+1)] = $i }
  END { if ("worldwide/chart-p50" in v) printf "p50: /worldwide %.3f ms, /charts/US %.3f ms: %.2fx (goal <= 2x) %s; %d runs landed, %d builds beside the requests, %d requests waited for a first build\n",
    v["worldwide-p50-ms"], v["chart-p50-ms"], v["worldwide/chart-p50"], (v["worldwide/chart-p50"] <= 2 ? "met" : "MISSED"), v["runs-landed"], v["built-beside"], v["waited"] }'
echo
echo "== web: a landing's builds without a cache in front, the watcher building ahead of the readers vs each page built when asked (readers ask for each of ten pages with even odds after each landing) =="
go test -run '^$' -bench BenchmarkLandingsWithoutACache -benchtime 300x -benchmem ./web/ | tee "$out/ahead.txt" | grep '^Benchmark'
awk '/^BenchmarkLandingsWithoutACache\// { side = ($1 ~ /ahead/) ? "ahead" : "asked"
    for (i = 1; i < NF; i++) { if ($(i+1) == "builds/landing") b[side] = $i; if ($(i+1) == "cpu-ms/landing") c[side] = $i; if ($(i+1) == "B/op") a[side] = $i } }
  END { if (b["ahead"] && b["asked"]) printf "asked/ahead: builds a landing %.2f (%.1f vs %.1f), CPU %.2f, allocated bytes %.2f\n", b["asked"]/b["ahead"], b["asked"], b["ahead"], c["asked"]/c["ahead"], a["asked"]/a["ahead"] }
' "$out/ahead.txt"
echo
echo "== stores: SQLite beside PostgreSQL (a real server, fsync on), the same work; ${INGEST_BENCH_STORE_VIDEOS:-200000} videos searched =="
INGEST_PGTEST_DURABLE=1 go test -run '^$' -bench BenchmarkStores -benchtime 200x -timeout 60m ./store/ | tee "$out/stores.txt" | grep '^Benchmark'
scripts/stores-table.awk "$out/stores.txt"

echo
scripts/bench-scale.sh

echo
echo "== db copy --two-step of every region's month: the worker's stop, SQLite to PostgreSQL and back, a daemon writing the source during the bulk (target: a stop of at most 60 s) =="
scripts/bench-copy.sh
