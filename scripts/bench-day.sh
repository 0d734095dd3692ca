#!/usr/bin/env bash
# bench-day.sh [OLD [NEW]]: what a simulated day of `ingest run` costs, for
# two revisions in one run: the bytes the upstream answered per chart call
# and per day, as JSON and on the wire, the CPU-seconds and bytes
# allocated per day at the default regions and at every region, and the
# process's peak resident memory at every region, with the new/old ratios
# beside issue 119's targets.
#
# OLD defaults to 8bf2bb5 (the tree before fields=), NEW to the work tree.
# Each tree is a git archive; the work tree's TestCostOfADay
# (internal/rig/sim/cost_test.go) is dropped into both trees' simulation
# package, and a tree whose upstream does not count its answers' bytes is
# taught to (two lines of its upstream.go). Each day runs in a test process
# of its own (a peak is that day's), old and new interleaved, round after
# round: INGEST_DAY_ROUNDS rounds at the default regions (default 3) and
# INGEST_DAY_ALL_ROUNDS at every region (default 1; a minute or more of
# CPU a day). The figures are medians over the rounds. With
# INGEST_DAY_PROFILE=1 each day at every region keeps a CPU profile, and
# what each tree's profiles hold is split by whose work it is
# (scripts/cpu-split.sh): the product's CPU beside the rigs' that share its
# process, the product's new/old beside the whole process's.
#
#   scripts/bench-day.sh
#   INGEST_DAY_ROUNDS=5 INGEST_DAY_ALL_ROUNDS=3 scripts/bench-day.sh 8bf2bb5 HEAD
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:-8bf2bb5}
new=${2:-}
rounds=${INGEST_DAY_ROUNDS:-3}
all_rounds=${INGEST_DAY_ALL_ROUNDS:-1}
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

# simdir TREE: the simulation's package in TREE (it moved to internal/rig).
simdir() {
  local d
  for d in internal/rig/sim internal/sim; do
    if [[ -f "$1/$d/sim.go" ]]; then
      echo "$1/$d"
      return
    fi
  done
  echo "$1: no simulation package (internal/rig/sim or internal/sim)" >&2
  exit 1
}

# counting DIR: the upstream in DIR keeps each call's bytes on the wire,
# its JSON's and its kind ("chart" for a chart's page), as the work tree's
# does. A tree from before the client asked for gzip (its User-Agent names
# none) is answered plain by the work tree's fake as by its own, so its
# JSON is its bytes on the wire.
counting() {
  local up=$1/upstream.go
  if ! grep -q 'Bytes: rec.Body.Len()' "$up"; then
    sed -i -e 's/^\tStatus  int$/&\n\tBytes int\n\tKind string/' \
      -e 's/Call{At: time.Now(), Path: req.URL.Path, Status: rec.Code,/& Bytes: rec.Body.Len(), Kind: map[bool]string{true: "chart"}[q.Get("chart") == "mostPopular"],/' "$up"
    grep -q 'Bytes: rec.Body.Len()' "$up" && grep -q '^	Bytes int$' "$up" ||
      { echo "$up: cannot teach its upstream to count bytes" >&2; exit 1; }
  fi
  if ! grep -q '^	JSON  *int' "$up"; then
    sed -i -e 's/^\tBytes  *int.*$/&\n\tJSON int/' -e 's/Bytes: rec.Body.Len(),/& JSON: rec.Body.Len(),/' "$up"
    grep -q 'JSON: rec.Body.Len()' "$up" && grep -q '^	JSON int$' "$up" ||
      { echo "$up: cannot teach its upstream to count its answers' JSON" >&2; exit 1; }
  fi
}

old_tree=$(tree "$old" old)
new_tree=$(tree "$new" new)
for t in old new; do
  d=$(simdir "$([[ $t == old ]] && echo "$old_tree" || echo "$new_tree")")
  if [[ $d != "$PWD/internal/rig/sim" ]]; then
    cp internal/rig/sim/cost_test.go "$d/"
    # a tree whose readers never searched has no switch to say so
    grep -q 'NoSearches bool' "$d/sim.go" || sed -i 's/ NoSearches: true,//' "$d/cost_test.go"
    counting "$d"
  fi
  echo "building $t's simulation ($d) ..."
  (cd "$d" && go test -c -o "$out/$t.test" .)
  echo "$d" > "$out/$t.dir"
done
[[ -n $new ]] || new="the work tree"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

day() { # day TREE SHAPE ROUND: one day in a process of its own; its cost line
  local log="$out/run.txt" prof=()
  if [[ ${INGEST_DAY_PROFILE:-} == 1 && $2 == all ]]; then
    prof=(-test.cpuprofile "$out/$1-$3.cpu")
  fi
  if ! (cd "$(cat "$out/$1.dir")" && INGEST_COST_DAY=$2 "$out/$1.test" -test.run '^TestCostOfADay$' -test.v -test.count 1 -test.timeout 60m "${prof[@]}") > "$log" 2>&1; then
    echo "the $1 tree's day at $2 failed:" >&2
    tail -20 "$log" >&2
    exit 1
  fi
  sed -n "s/^.*cost: /$1 /p" "$log" >> "$out/days.txt"
}
for round in $(seq "$(( rounds > all_rounds ? rounds : all_rounds ))"); do
  for shape in default all; do
    n=$rounds
    [[ $shape == default ]] || n=$all_rounds
    (( round <= n )) || continue
    for t in old new; do
      day "$t" "$shape" "$round"
    done
  done
  echo "round $round done ($(cut -d' ' -f1 /proc/loadavg) load)"
done

echo
echo "== a simulated day of run (tracking on, readers, seed 3969310467), $old (old) vs $new (new): medians of $rounds rounds at the default regions, $all_rounds at every region =="
awk '
  function median(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1]+0 > a[j]+0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
  { delete f
    for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    k = $1 SUBSEP f["shape"]
    if (f["chart-calls"] > 0) {
      v[k, "chart"] = v[k, "chart"] " " f["chart-bytes"] / f["chart-calls"]
      v[k, "chart-json"] = v[k, "chart-json"] " " f["chart-json-bytes"] / f["chart-calls"]
    }
    v[k, "day"] = v[k, "day"] " " f["bytes"] / 1e6
    v[k, "day-json"] = v[k, "day-json"] " " f["json-bytes"] / 1e6
    v[k, "cpu"] = v[k, "cpu"] " " f["cpu-s"]
    v[k, "alloc"] = v[k, "alloc"] " " f["alloc-bytes"] / 1e6
    v[k, "heap"] = v[k, "heap"] " " f["heap-peak"] / 1e6
    v[k, "rss"] = v[k, "rss"] " " f["rss-peak"] / 1e6 }
  function row(name, shape, m, unit, target,   o, n, r) {
    if (v["old" SUBSEP shape, m] == "" || v["new" SUBSEP shape, m] == "") { printf "%-38s %-8s %12s %12s %8s\n", name " (" unit ")", shape, "-", "-", "-"; return }
    o = median(v["old" SUBSEP shape, m]); n = median(v["new" SUBSEP shape, m]); r = o > 0 ? n / o : 0
    printf "%-38s %-8s %12.2f %12.2f %8.2f  %s\n", name " (" unit ")", shape, o, n, r,
      target == "" ? "" : sprintf("target <= %s %s", target, r <= target + 0 ? "met" : "MISSED")
  }
  END {
    printf "%-38s %-8s %12s %12s %8s\n", "", "regions", "old", "new", "new/old"
    row("upstream JSON a chart call", "default", "chart-json", "B", "")
    row("upstream JSON a chart call", "all", "chart-json", "B", "")
    row("upstream on the wire a chart call", "default", "chart", "B", "")
    row("upstream on the wire a chart call", "all", "chart", "B", "")
    row("upstream JSON a day", "default", "day-json", "MB", "0.4")
    row("upstream JSON a day", "all", "day-json", "MB", "0.4")
    row("upstream on the wire a day", "default", "day", "MB", "0.4")
    row("upstream on the wire a day", "all", "day", "MB", "0.4")
    row("CPU a day", "default", "cpu", "s", "")
    row("CPU a day", "all", "cpu", "s", "0.7")
    row("allocated a day", "default", "alloc", "MB", "0.6")
    row("allocated a day", "all", "alloc", "MB", "0.6")
    row("peak live heap", "all", "heap", "MB", "")
    row("peak RSS of the process", "default", "rss", "MB", "")
    row("peak RSS of the process", "all", "rss", "MB", "")
    print "(JSON: the answers'"'"' bodies as the client decodes them; on the wire: as the fake sends them, gzipped to a client that asks as the upstream wants it asked; CPU: the test process'"'"'s user+sys while the day ran; RSS: VmHWM of a process that ran that day alone)"
  }' "$out/days.txt"

if [[ ${INGEST_DAY_PROFILE:-} == 1 ]]; then
  echo
  echo "== whose CPU a day at every region is (scripts/cpu-split.sh): medians of the profiles' seconds =="
  for t in old new; do
    for p in "$out/$t"-*.cpu; do
      scripts/cpu-split.sh "$out/$t.test" "$p" | sed -n "s/^split: /$t /p"
    done
  done | awk '
    function median(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1]+0 > a[j]+0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
    { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[$1, kv[1]] = v[$1, kv[1]] " " kv[2] } }
    END {
      printf "%-28s %12s %12s %8s\n", "sampled CPU a day (s)", "old", "new", "new/old"
      n = split("total product rigs collector rest", k, " ")
      for (i = 1; i <= n; i++) {
        o = median(v["old", k[i]]); w = median(v["new", k[i]])
        printf "%-28s %12.1f %12.1f %8.2f\n", k[i], o, w, (o > 0 ? w / o : 0)
      }
      print "(product: samples whose leaf-most frame of the module is outside internal/ rigs; rigs: the fake upstream, the readers, the checker; collector: background GC with no frame of the module; rest: neither)"
    }'
fi
