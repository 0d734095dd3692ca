#!/usr/bin/env bash
# make sim-sweep: the simulation over SEEDS seeds drawn from the kernel,
# DAYS simulated days each, every shape make test runs (and the four at
# every region when ALL=1), as many at once as the machine has cores.
# Prints a table: the seed, the shape, the verdict, the first failure and
# the line that replays it; exits 1 when any is red. A red seed goes into
# internal/sim/testdata/seeds.txt with its fix (docs/testing.md, "Seeds").
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${SEEDS:-20}
days=${DAYS:-2}
jobs=${JOBS:-$(nproc)}
shapes=(TestSimDay TestSimNemesis TestSimScarce TestSimScarceUnpaced TestSimTrackingEverySlot)
if [ "${ALL:-0}" = 1 ]; then
	shapes+=(TestSimNemesisEveryRegion TestSimShortPoolEveryRegion TestSimTieredPool TestSimTieredPoolShort)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/sim.test" ./internal/sim/
for _ in $(seq "$seeds"); do
	seed=$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')
	for shape in "${shapes[@]}"; do
		echo "$seed $shape"
	done
done >"$work/todo"
echo "sim-sweep: $seeds seeds x ${#shapes[@]} shapes, $days days each, $jobs at a time (seeds drawn from the kernel)" >&2
export work days
one() {
	local seed=$1 shape=$2 out="$work/$1.$2.out" verdict first
	if (cd internal/sim && INGEST_SIM_SEED=$seed INGEST_SIM_DAYS=$days INGEST_SIM_ALL_DAYS=$days \
		"$work/sim.test" -test.run "^$shape\$" -test.timeout 0 >"$out" 2>&1); then
		verdict=green first=-
	else
		verdict=RED
		# The first of the checker's findings, or the test's own failure.
		first=$(grep -E "seed $seed: |panic:|FAIL" "$out" | grep -vE "upstream calls, |^[[:space:]]*(--- )?FAIL|replays it" | head -1 | sed 's/^ *//' | cut -c1-200)
	fi
	printf '%s\t%s\t%s\t%s\tINGEST_SIM_SEED=%s INGEST_SIM_DAYS=%s go test -run '"'"'^%s$'"'"' ./internal/sim/\n' \
		"$seed" "$shape" "$verdict" "${first:--}" "$seed" "$days" "$shape" >>"$work/table"
	echo "sim-sweep: $seed $shape $verdict" >&2
}
export -f one
xargs -P "$jobs" -L 1 bash -c 'one "$@"' _ <"$work/todo"
printf 'seed\tshape\tverdict\tfirst failure\treplay\n'
sort -k3,3r -k2,2 "$work/table"
red=$(grep -c $'\tRED\t' "$work/table" || true)
total=$(wc -l <"$work/table")
echo "$((total - red)) passed, $red failed"
[ "$red" -eq 0 ]
