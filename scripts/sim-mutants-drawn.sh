#!/usr/bin/env bash
# make sim-mutants, its second half: mutants nobody has had, drawn from
# operators (internal/rig/mutate) over the product's packages the
# simulation runs, a sample each run from a seed printed first (SEED=N
# replays it on the same tree). The shapes make test runs go first
# without a mutant, on their kept seeds, with coverage: only sites on a
# statement they ran are drawn, and a red one stops everything. Each
# mutant is applied alone to a scratch copy of the tree; one that does
# not compile is counted apart; the others run the shapes on the kept
# seeds for DAYS simulated days (as the history's mutants do), until one
# goes red, MUTANT_JOBS (default 2) mutants at a time. Prints a table
# (id, file:line, operator, the line changed, the verdict and the
# finding that caught it) and the score, caught of drawn and compiled.
# Exits non-zero when the shapes are red without a mutant, not when a
# mutant survives: a survivor is said in docs/testing/simulation.md,
# killed or equivalent.
#
# SEED: the draw's seed (unset, one from the kernel). MUTANTS: how many
# (default 25). SIM_MUTANT_DAYS: the simulated days (default 2).
# SIM_MUTANT_SEEDS: the seeds every shape runs on, as the history's.
# KEEP=DIR keeps the draw (each mutant and the table) in DIR; JUDGE=DIR
# judges a kept draw again on this tree instead of drawing (IDS=m02,m07
# only those): a check written for one sample's survivors is scored on
# another's this way, mutants nobody wrote it for.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${MUTANT_JOBS:-2}
days=${SIM_MUTANT_DAYS:-2}
count=${MUTANTS:-25}
seed=${SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
. scripts/sim-lib.sh

# The product's packages a daemon on the simulation runs, whose bugs its
# checker is to catch. The site (web) is left to its own tests: the
# simulation's readers only hold a page to its data mark.
packages=(quota ledger pace jobs store regions fetch retention custody wiring clock costs)
# The shapes make test runs, cheapest first: a mutant stops at its first red.
# TestSimRedis, the daemon on the Redis limiter, goes last: it costs about
# five of TestSimDay (a round trip to Redis at every heartbeat), and only
# the mutants the others left reach it.
# TestSimLong lives its forty days whatever DAYS says, for about what one
# day of TestSimDay costs: the only drawn shape past the long timers.
# TestSimTwoTiers is the drawn shape with two tiers of weight: the tiered
# shapes at every region cost too much to run for every mutant.
shapes=(TestSimDay TestSimScarce TestSimTwoTiers TestSimScarceUnpaced TestSimTrackingEverySlot TestSimNemesis TestSimPoolDay TestSimPacedPoolDay TestSimLong TestSimRedis)

if [ -n "${JUDGE:-}" ]; then
  echo "the draw kept in $JUDGE, $jobs at a time, $days simulated days a run, load $(cut -d' ' -f1-3 /proc/loadavg)"
else
  echo "seed $seed (SEED=$seed replays this draw on this tree), $count mutants, $jobs at a time, $days simulated days a run, load $(cut -d' ' -f1-3 /proc/loadavg)"
fi

seedsOf() {
  if [ -n "${SIM_MUTANT_SEEDS:-}" ]; then
    echo "$SIM_MUTANT_SEEDS"
  else
    awk -v t="$1" '$1 == t { print $2 }' internal/rig/sim/testdata/seeds.txt
  fi
}
for shape in "${shapes[@]}"; do
  for s in $(seedsOf "$shape"); do echo "$shape $s"; done
done >"$scratch/runs"

t0=$(date +%s)
for w in $(seq 1 "$jobs"); do copy "$scratch/repo$w"; done
go build -o "$scratch/mutate" ./internal/rig/mutate
pkgs=$(printf 'github.com/ingestworks/ingest/%s,' "${packages[@]}")
(cd "$scratch/repo1" && go test -c -o "$scratch/base.test" -coverpkg="${pkgs%,}" ./internal/rig/sim/)
mkdir -p "$scratch/internal/rig/sim" && cp -r internal/rig/sim/testdata "$scratch/internal/rig/sim/"
export scratch days
export -f simulate
if ! xargs -P "$jobs" -L 1 bash -c 's=$(date +%s); f=$(simulate "$scratch/base.test" "$1" "$2" "$scratch/base.$1.$2.out" "$scratch/cover.$1.$2"); echo $(($(date +%s) - s)) >"$scratch/secs.$1.$2"; [ -z "$f" ] || { echo "$1 seed $2: $f"; exit 255; }' _ \
  <"$scratch/runs"; then
  echo "RED WITHOUT A MUTANT: fix the product or the checker first"
  exit 1
fi
# A mutant's run is red past five times the slowest run without one, and
# not under ten minutes: a daemon that spins forever is caught by the
# test's timeout, as make test would be.
slowest=$(cat "$scratch"/secs.* | sort -n | tail -1)
timeout=$((slowest * 5 > 600 ? slowest * 5 : 600))s
echo "without a mutant: $(wc -l <"$scratch/runs") runs green, the slowest ${slowest}s ($(($(date +%s) - t0)) s)"

if [ -n "${JUDGE:-}" ]; then
  cp -r "$JUDGE/drawn" "$scratch/drawn"
  awk -F'\t' -v ids=",${IDS:-}," 'ids == ",," || index(ids, "," $1 ",")' "$JUDGE/table" >"$scratch/table"
  echo "judging $(wc -l <"$scratch/table") mutants kept in $JUDGE again"
else
  "$scratch/mutate" draw -seed "$seed" -n "$count" -out "$scratch/drawn" $(printf -- '-cover %s ' "$scratch"/cover.*) \
    $(printf './%s ' "${packages[@]}") >"$scratch/drawn.txt"
  head -1 "$scratch/drawn.txt"
  tail -n +2 "$scratch/drawn.txt" >"$scratch/table"
fi
if [ -n "${KEEP:-}" ]; then
  mkdir -p "$KEEP" && cp -r "$scratch/drawn" "$scratch/table" "$KEEP/"
fi

# judge DIR ID FILE: applies mutant ID to DIR, builds the simulation and
# runs the shapes until one is red; writes "verdict|finding|runs|seconds".
judge() {
  local dir=$1 id=$2 file=$3 start f runs=0 shape s
  start=$(date +%s)
  cp "$dir/$file" "$scratch/orig.$id"
  if ! "$scratch/mutate" apply "$scratch/drawn/$id" "$dir" 2>"$scratch/apply.$id"; then
    echo "not applied|$(head -1 "$scratch/apply.$id")|0|0" >"$scratch/result.$id"
  elif ! (cd "$dir" && go test -c -o "$dir/sim.test" ./internal/rig/sim/ >"$scratch/build.$id" 2>&1); then
    echo "does not compile|$(grep -m1 '\.go:' "$scratch/build.$id" | sed -E 's/^[^ ]* //' | cut -c1-80)|0|$(($(date +%s) - start))" >"$scratch/result.$id"
  else
    local verdict=survived finding=""
    while read -r shape s; do
      runs=$((runs + 1))
      f=$(simulate "$dir/sim.test" "$shape" "$s" "$scratch/out.$id.$shape.$s")
      if [ -n "$f" ]; then
        verdict=caught finding="$shape $s: $(short "$f")"
        break
      fi
    done <"$scratch/runs"
    echo "$verdict|$finding|$runs|$(($(date +%s) - start))" >"$scratch/result.$id"
  fi
  cp "$scratch/orig.$id" "$dir/$file"
}

for w in $(seq 1 "$jobs"); do
  (
    k=0
    while IFS=$'\t' read -r id at _ _; do
      k=$((k + 1))
      [ $(((k - 1) % jobs + 1)) -eq "$w" ] || continue
      judge "$scratch/repo$w" "$id" "${at%:*}"
      IFS='|' read -r verdict finding _ secs <"$scratch/result.$id"
      echo "  $id $verdict in ${secs}s" >&2
    done <"$scratch/table"
  ) &
done
wait

drawn=0 built=0 caught=0
echo
echo "| id | file:line | operator | the line changed | verdict | runs | caught by |"
echo "|---|---|---|---|---|---|---|"
while IFS=$'\t' read -r id at op line; do
  IFS='|' read -r verdict finding runs secs <"$scratch/result.$id"
  drawn=$((drawn + 1))
  case $verdict in
  caught) built=$((built + 1)) caught=$((caught + 1)) ;;
  survived) built=$((built + 1)) ;;
  esac
  echo "| $id | \`$at\` | $op | \`$(cut -c1-80 <<<"$line" | sed 's/|/\\|/g')\` | $verdict | $runs | $finding |"
done <"$scratch/table"
echo
drew="seed $seed"
[ -z "${JUDGE:-}" ] || drew="the draw kept in $JUDGE"
echo "$drew: $caught caught of $built drawn that compiled ($((drawn - built)) of $drawn did not), in $(($(date +%s) - t0)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
