#!/usr/bin/env bash
# make demo: the main job against the project's own fake upstream, then a
# search, a report and a look at the API; it ends with how to open the
# dashboard over the demo database. Everything lives in ./demo and stops on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p demo
rm -f demo/ingest.db demo/ingest.db-wal demo/ingest.db-shm demo/fakeyt.url demo/trending.csv demo/trending.jsonl

# --move 2s: every two seconds are an hour of the fake's charts, so that
# the runs below see new videos, ranks that change and counts that grow.
./bin/fakeyt --listen 127.0.0.1:0 --addr-file demo/fakeyt.url --latency 20ms --move 2s 2>demo/fakeyt.log &
fake=$!
trap 'kill $fake 2>/dev/null; wait $fake 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s demo/fakeyt.url ] && break; sleep 0.05; done
[ -s demo/fakeyt.url ] || { echo "fakeyt did not start; see demo/fakeyt.log" >&2; exit 1; }

export YOUTUBE_API_KEY=demo-key-not-secret
export YOUTUBE_ENDPOINT="$(cat demo/fakeyt.url)"
export INGEST_DB=demo/ingest.db
unset REDIS_URL INGEST_QUOTA_KEY INGEST_COSTS
export INGEST_STANDING=standard # the key's standing under YouTube's terms: nothing fetched kept over 30 days (docs/explanation/terms.md)

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
step ingest run --once "(fake upstream at $YOUTUBE_ENDPOINT, embedded limiter, standing $INGEST_STANDING: kept 30 days, docs/explanation/terms.md)"
./bin/ingest run --once
step ingest search football --limit 5
./bin/ingest search football --limit 5
step ingest search muller --limit 3
./bin/ingest search muller --limit 3
step ingest backfill --region US --since 2026-10-01 --max-units 4 "(two pages: search.list from the search pool, details from default)"
./bin/ingest backfill --region US --since 2026-10-01 --max-units 4
step ingest quota show
./bin/ingest quota show
step ingest run --once --regions GB,AU "(twice more, two fake hours apart: the charts move)"
for _ in 1 2; do sleep 4; ./bin/ingest run --once --regions GB,AU; done
step ingest export --since 2000-01-01 --region GB --format csv --out demo/trending.csv
./bin/ingest export --since 2000-01-01 --region GB --format csv --out demo/trending.csv
./bin/ingest export --since 2000-01-01 --region GB --format jsonl --out demo/trending.jsonl
echo "$(wc -l <demo/trending.jsonl) rows (GB's chart, three runs) in $(du -k demo/trending.csv | cut -f1) KB; its columns:"
head -1 demo/trending.csv
top=$(sed -n 10p demo/trending.jsonl | sed 's/.*"video_id":"\([^"]*\)".*/\1/') # GB's number 10 in the first run
step ingest history -- "$top" "(GB's number 10 in the first run)"
./bin/ingest history -- "$top"
step ingest report
./bin/ingest report
step ingest serve --db demo/ingest.db "(a quick look: the API answers, then the server stops)"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 18080)
./bin/ingest serve --db demo/ingest.db --listen "127.0.0.1:$port" 2>demo/serve.log &
srv=$!
trap 'kill $fake $srv 2>/dev/null; wait $fake $srv 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/api/v1/runs?limit=1" >/dev/null 2>&1 && break; sleep 0.05; done
curl -s "http://127.0.0.1:$port/api/v1/search?q=football&limit=2" | head -20
kill $srv 2>/dev/null; wait $srv 2>/dev/null || true

printf '\n\033[1mThe dashboard of the demo database:\033[0m\n'
printf '  bin/ingest serve --db demo/ingest.db\n'
printf '  then open http://127.0.0.1:8080/   (JSON under http://127.0.0.1:8080/api/v1/, see docs/api.md)\n'
