#!/usr/bin/env bash
# make sim-mutants: the simulation's checker must catch the product's own
# bugs. Each mutant is a bug this project once had (or one of its kind),
# applied (sed) alone to a scratch copy of the repository; the
# simulation's test binary is built once for it (no -race) and the shapes
# named on its line run over a few seeds of DAYS simulated days each: some
# shape must go red on some seed. Mutants run MUTANT_JOBS at a time
# (default 2), each in a scratch copy of its own. Prints a table (mutant,
# the checker's first finding that caught it, on how many of the seeds,
# seconds) and exits non-zero when any mutant survives, does not apply or
# does not build, or when the shapes are red without a mutant. Not part of
# `make test` (docs/testing/simulation.md, "The checker, scored").
#
#   scripts/sim-mutants.sh [NAME...]   only the mutants named
#
# SIM_MUTANT_SEEDS: the seeds every shape runs on (blank-separated);
# unset, each shape runs on the seeds internal/rig/sim/testdata/seeds.txt
# keeps for it. SIM_MUTANT_DAYS: the simulated days (default 2).
#
# Adding a mutant is one line below: name@file@shapes (comma-separated
# tests of internal/rig/sim)@sed script.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${MUTANT_JOBS:-2}
days=${SIM_MUTANT_DAYS:-2}
scratch=$(mktemp -d)
. scripts/sim-lib.sh
trap 'rm -rf "$scratch"' EXIT

mutants=(
  # tracking's pass credited at its end rather than its slot: a pass
  # longer than a stagger step moves tracking's next slot on, one by one
  "tracking-filed-at-its-end@pace/measure.go@TestSimTrackingEverySlot@s/^\t\tif !granted {$/\t\tif !granted || name == \"track\" {/"
  # the embedded limiter admits one unit over its limit less reserve
  # (Redis's one over is make mutants' and make partition's: the
  # simulation runs the embedded limiter only)
  "embedded-limiter-one-over@quota/embedded.go@TestSimScarceUnpaced@/^func (p \*sqlPool) fits() bool {$/,/^}$/s/c := p.pool.Capacity()$/c := p.pool.Capacity() + 1/"
  # the site keeps a page whatever the store's data mark says
  "page-kept-past-its-mark@web/cache.go@TestSimDay,TestSimNemesis@s/return a != nil \&\& a.mark == mark/return a != nil/"
  # a catch-up at start counts half a cadence before it ran, not as its
  # next slot's pass: a downtime costs two passes, the second half a
  # cadence to a cadence on
  "two-passes-after-a-downtime@pace/credit.go@TestSimNemesis@s/^\treturn s.Next(t)$/\treturn t.Add(-p.every(i) \/ 2)/"
  # the prune, or the refresh, not run at one slot a day
  "prune-skipped-at-a-slot@jobs/daemon.go@TestSimDay,TestSimNemesis@s/^\t\tgo d.runPaced(ctx, e, attempt{slot: slot}, stop)$/\t\tif e.Kind != KindPrune || slot.Hour() != 3 {\n\t\t\tgo d.runPaced(ctx, e, attempt{slot: slot}, stop)\n\t\t}/"
  "refresh-skipped-at-a-slot@jobs/daemon.go@TestSimDay,TestSimNemesis@s/^\t\tgo d.runPaced(ctx, e, attempt{slot: slot}, stop)$/\t\tif e.Kind != KindRefresh || slot.Hour() != 3 {\n\t\t\tgo d.runPaced(ctx, e, attempt{slot: slot}, stop)\n\t\t}/"
  # a call abandoned at its delivery bound (or cancelled by a stop) is
  # given back as if it had never been sent, though the upstream charged it
  "abandoned-call-given-back@fetch/client.go@TestSimNemesis@s/^\treturn errors.As(err, \&dns) || (errors.As(err, \&op) \&\& op.Op == \"dial\")$/\treturn errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.As(err, \&dns) || (errors.As(err, \&op) \&\& op.Op == \"dial\")/"
  # the drain ends a pass without storing the page it had fetched
  "drain-drops-the-page-in-flight@jobs/pass.go@TestSimNemesis@s/^\t\t\tout.interrupted()$/\t\t\tout.interrupted()\n\t\t\treturn nil/"
  # a full disk met at a write is said in SQLite's words, not the disk's
  "full-disk-not-said@jobs/job.go@TestSimNemesis@s/if f, ok := store.(fuller); ok \&\& err != nil {/if f, ok := store.(fuller); false \&\& ok \&\& err != nil {/"
  # the day's plan told again by run after Prepare told it
  "plan-told-twice@wiring/run.go@TestSimDay,TestSimNemesis@s/^\tif r.Plan \&\& r.Regions.All() {/\tif r.Plan {/"
  # a chart pass declined for want of room waits a whole slot, never
  # asking its slot again as the window slides
  "declined-for-room-never-asked-again@jobs/daemon.go@TestSimScarce,TestSimScarceUnpaced@s/^\tcase !due \&\& !a.catchUp \&\& e.Kind.charts() \&\& d.Pacer.WaitsForRoom(e.Name):/\tcase false \&\& !due \&\& !a.catchUp \&\& e.Kind.charts() \&\& d.Pacer.WaitsForRoom(e.Name):/"
  # a read of the region catalogue that meets the upstream's exhausted
  # quota blocks nothing: the next pass calls the upstream again
  "catalogue-read-blocks-nothing@jobs/catalogue.go@TestSimNemesis@s/^\t\tc.blockSpent(ctx, err)$/\t\t_ = c.blockSpent/"
  # a short pool stretches every tier together, tier 1 with tier 3,
  # where it holds tier 1 at its cadence beside the others at --max-stale
  "tier-1-starved-on-a-short-pool@pace/plan.go@TestSimShortPoolEveryRegion@s/if held := holdHighTiers(rate, ms); held != nil {/if held := holdHighTiers(rate, ms); false \&\& held != nil {/"
)

# selected NAME [ASKED...]: whether NAME runs (every one when none asked).
selected() {
  [ $# -eq 1 ] && return 0
  local want=$1; shift
  for n in "$@"; do [ "$n" = "$want" ] && return 0; done
  return 1
}

# seedsOf SHAPE: the seeds SHAPE runs on.
seedsOf() {
  if [ -n "${SIM_MUTANT_SEEDS:-}" ]; then
    echo "$SIM_MUTANT_SEEDS"
  else
    awk -v t="$1" '$1 == t { print $2 }' internal/rig/sim/testdata/seeds.txt
  fi
}

# judge DIR I NAME FILE SHAPES SCRIPT: applies mutant I in DIR, builds the
# simulation, runs its shapes on their seeds and writes
# "NAME|result|caught/runs|seconds" to $scratch/result.I.
judge() {
  local dir=$1 i=$2 name=$3 file=$4 shapes=$5 script=$6 start result runs=0 caught=0 first="" f
  start=$(date +%s)
  if [ ! -f "$dir/$file" ]; then
    echo "$name|NOT APPLIED (no file $file: update it)|-|0" >"$scratch/result.$i"
    return
  fi
  cp "$dir/$file" "$scratch/orig.$i"
  sed -i "$script" "$dir/$file"
  if cmp -s "$scratch/orig.$i" "$dir/$file"; then
    result="NOT APPLIED (the sed matched nothing: update it)"
  elif ! (cd "$dir" && go test -c -o "$dir/sim.test" ./internal/rig/sim/ >"$scratch/build.$i" 2>&1); then
    result="DOES NOT BUILD (fix the sed)"
  else
    for shape in ${shapes//,/ }; do
      for seed in $(seedsOf "$shape"); do
        runs=$((runs + 1))
        f=$(simulate "$dir/sim.test" "$shape" "$seed" "$scratch/out.$i.$shape.$seed")
        if [ -n "$f" ]; then
          caught=$((caught + 1))
          [ -n "$first" ] || first="$shape: $(short "$f")"
        fi
      done
    done
    if [ "$caught" -gt 0 ]; then
      result="caught by $first"
    else
      result="SURVIVED"
    fi
  fi
  cp "$scratch/orig.$i" "$dir/$file"
  echo "$name|$result|$caught/$runs|$(($(date +%s) - start))" >"$scratch/result.$i"
}

t0=$(date +%s)
picked=()
for i in "${!mutants[@]}"; do
  IFS='@' read -r name _ <<<"${mutants[$i]}"
  selected "$name" "$@" && picked+=("$i")
done
for w in $(seq 1 "$jobs"); do copy "$scratch/repo$w"; done

# Without a mutant, every picked shape is green on its seeds.
(cd "$scratch/repo1" && go test -c -o "$scratch/base.test" ./internal/rig/sim/)
mkdir -p "$scratch/internal/rig/sim" && cp -r internal/rig/sim/testdata "$scratch/internal/rig/sim/"
for i in "${picked[@]}"; do
  IFS='@' read -r _ _ shapes _ <<<"${mutants[$i]}"
  for shape in ${shapes//,/ }; do
    for seed in $(seedsOf "$shape"); do echo "$shape $seed"; done
  done
done | sort -u >"$scratch/base.todo"
export scratch days
export -f simulate
if ! xargs -P "$jobs" -L 1 bash -c 'f=$(simulate "$scratch/base.test" "$1" "$2" "$scratch/base.$1.$2.out"); [ -z "$f" ] || { echo "$1 seed $2: $f"; exit 255; }' _ \
  <"$scratch/base.todo"; then
  echo "RED WITHOUT A MUTANT: fix the product or the checker first"
  exit 1
fi
echo "without a mutant: $(wc -l <"$scratch/base.todo") runs green ($(($(date +%s) - t0)) s)"

# Worker w takes every jobs-th mutant, in its own copy.
for w in $(seq 1 "$jobs"); do
  (
    k=0
    for i in "${picked[@]}"; do
      k=$((k + 1))
      [ $(((k - 1) % jobs + 1)) -eq "$w" ] || continue
      IFS='@' read -r name file shapes script <<<"${mutants[$i]}"
      judge "$scratch/repo$w" "$i" "$name" "$file" "$shapes" "$script"
    done
  ) &
done
wait

fail=0
printf '%-36s %5s %6s  %s\n' mutant s seeds result
for i in "${picked[@]}"; do
  IFS='|' read -r name result seeds secs <"$scratch/result.$i"
  case $result in "caught by"*) ;; *) fail=1 ;; esac
  printf '%-36s %5s %6s  %s\n' "$name" "$secs" "$seeds" "$result"
done
echo "${#picked[@]} mutants, $jobs at a time, $days simulated days a run, in $(($(date +%s) - t0)) s"
exit $fail
