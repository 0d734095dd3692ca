#!/usr/bin/env bash
# The daemon's resident memory at the default regions and at every region:
# two real daemons (bin/ingest run) side by side, each against its own
# bin/fakeyt whose charts move an hour each --every, with a costs file whose
# pools hold far more than the schedules spend, so that pacing never slows
# them and both do every pass the schedule asks for. Each daemon's VmRSS
# (/proc/PID/status) is sampled every INGEST_RSS_SAMPLE (default 15) seconds
# for INGEST_RSS_SPAN (default 3600) seconds; the table gives the peak, the
# last sample and all/8. Run by make bench when INGEST_BENCH_RSS=1 (an hour).
set -euo pipefail
cd "$(dirname "$0")/.."
span=${INGEST_RSS_SPAN:-3600}
sample=${INGEST_RSS_SAMPLE:-15}
every=${INGEST_RSS_EVERY:-2m}
all=${INGEST_RSS_REGIONS:-all:tier=3:depth=50,default:tier=1:depth=200}
out=${INGEST_RSS_DIR:-$(mktemp -d)}
mkdir -p "$out"
[[ -x bin/ingest && -x bin/fakeyt ]] || make -s build >/dev/null
sed 's/limit: 10000,/limit: 100000000,/' costs.yaml > "$out/costs.yaml"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true' EXIT

start() { # start NAME REGIONS: a fake and a daemon; prints the daemon's pid
  local name=$1 regions=$2
  bin/fakeyt --listen 127.0.0.1:0 --addr-file "$out/$name.url" --move "$every" 2>"$out/$name-fakeyt.log" &
  pids+=($!)
  for _ in $(seq 100); do [[ -s "$out/$name.url" ]] && break; sleep 0.1; done
  env -i PATH="$PATH" HOME="$HOME" YOUTUBE_API_KEY=bench-key YOUTUBE_ENDPOINT="$(cat "$out/$name.url")" \
    INGEST_COSTS="$out/costs.yaml" INGEST_DB="$out/$name.db" INGEST_RUN_REGIONS="$regions" \
    bin/ingest run --every "$every" --track-every "$every" --listen 127.0.0.1:0 2>"$out/$name-ingest.log" &
  pids+=($!)
}
start eight default
eight=${pids[-1]}
start all "$all"
all_pid=${pids[-1]}
echo "sampling VmRSS of the daemons every ${sample}s for ${span}s (--every $every; all: $all) in $out"
end=$(( $(date +%s) + span ))
while (( $(date +%s) < end )); do
  for p in "$eight" "$all_pid"; do
    kb=$(awk '/^VmRSS/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)
    echo "$(date +%s) $p $kb"
  done >> "$out/rss.txt"
  sleep "$sample"
done
awk -v e="$eight" -v a="$all_pid" '
  { last[$2] = $3; if ($3 > peak[$2]) peak[$2] = $3 }
  END {
    printf "%-12s %12s %12s\n", "daemon", "peak MB", "last MB"
    printf "%-12s %12.1f %12.1f\n", "8 regions", peak[e] / 1024, last[e] / 1024
    printf "%-12s %12.1f %12.1f\n", "all regions", peak[a] / 1024, last[a] / 1024
    r = peak[a] / peak[e]
    printf "all/8 (peak) %.2f  target <= 2x: %s\n", r, (r <= 2 ? "met" : "MISSED")
  }' "$out/rss.txt"
for n in eight all; do
  echo "$n: $(grep -c 'msg=pass ' "$out/$n-ingest.log" || true) passes ($(grep 'msg=pass ' "$out/$n-ingest.log" | grep -vc status=completed || true) not completed), $(grep -c 'msg=tracking' "$out/$n-ingest.log" || true) tracking passes, database $(( $(stat -c %s "$out/$n.db") / 1000000 )) MB"
done
