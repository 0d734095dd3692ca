#!/usr/bin/env bash
# make sim-sweep: the simulation over SEEDS seeds drawn from the kernel,
# DAYS simulated days each, every shape make test runs (and the four at
# every region when ALL=1), as many at once as the machine has cores.
# Prints a table: the seed, the shape, the verdict, the first failure and
# the line that replays it, the CPU-seconds; then what each shape cost.
# Exits 1 when any is red. A red seed goes into
# internal/rig/sim/testdata/seeds.txt with its fix (docs/testing.md, "Seeds").
set -euo pipefail
cd "$(dirname "$0")/.."
# Each run starts in the simulation's folder, so what it calls is named
# from the repository's root.
root=$PWD
seeds=${SEEDS:-20}
days=${DAYS:-2}
jobs=${JOBS:-$(nproc)}
# TestSimLong lives its forty days whatever DAYS says: its horizon is its point.
shapes=(TestSimDay TestSimNemesis TestSimScarce TestSimTwoTiers TestSimScarceUnpaced TestSimTrackingEverySlot TestSimPoolDay TestSimPacedPoolDay TestSimLong)
if [ "${ALL:-0}" = 1 ]; then
	shapes+=(TestSimNemesisEveryRegion TestSimShortPoolEveryRegion TestSimTieredPool TestSimTieredPoolShort)
fi
# SWEEP_DIR keeps every run's output there (a red's to read after); by
# default they go with the sweep.
if [ -n "${SWEEP_DIR:-}" ]; then
	work=$SWEEP_DIR
	mkdir -p "$work"
	rm -f "$work/table"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
go test -c -o "$work/sim.test" ./internal/rig/sim/
for _ in $(seq "$seeds"); do
	seed=$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')
	for shape in "${shapes[@]}"; do
		echo "$seed $shape"
	done
done >"$work/todo"
echo "sim-sweep: $seeds seeds x ${#shapes[@]} shapes, $days days each, $jobs at a time (seeds drawn from the kernel)" >&2
export work days root
# sim runs shape on seed into out, its CPU-seconds into cpu: its status.
sim() {
	(cd internal/rig/sim && INGEST_CPU_LOG="$4" INGEST_SIM_SEED=$1 INGEST_SIM_DAYS=$days INGEST_SIM_ALL_DAYS=$days \
		"$root/scripts/cputime.sh" "$work/sim.test" -test.run "^$2\$" -test.timeout 0 >"$3" 2>&1)
}
one() {
	local seed=$1 shape=$2 out="$work/$1.$2.out" verdict first cpu rc=0 again=0
	sim "$seed" "$shape" "$out" "$work/$1.$2.cpu" || rc=$?
	if [ "$rc" -eq 0 ]; then
		verdict=green first=-
	elif [ "$rc" -gt 128 ]; then
		# Killed by a signal (the sweep stopped, the machine out of
		# memory): no verdict on the seed either way.
		verdict=stopped first="killed by signal $((rc - 128)) before its verdict"
	else
		verdict=RED
		# The first of the checker's findings, or the test's own failure.
		first=$(grep -E "seed $seed: |panic:|FAIL" "$out" | grep -vE "upstream calls, |^[[:space:]]*(--- )?FAIL|replays it" | head -1 | sed 's/^ *//' | cut -c1-200)
		# A red runs again on its seed, to say whether the line that
		# replays it does: the simulation draws all it does from the seed,
		# but not the order of what happens at one instant.
		sim "$seed" "$shape" "$out.again" /dev/null || again=$?
		if [ "$again" -eq 0 ]; then
			first="$first (green when replayed)"
		elif [ "$again" -gt 128 ]; then
			first="$first (its replay was stopped)"
		else
			first="$first (red again when replayed)"
		fi
	fi
	cpu=$(awk '{ print $1 }' "$work/$1.$2.cpu" 2>/dev/null || echo -)
	printf '%s\t%s\t%s\t%s\t%s\tINGEST_SIM_SEED=%s INGEST_SIM_DAYS=%s go test -run '"'"'^%s$'"'"' ./internal/rig/sim/\n' \
		"$seed" "$shape" "$verdict" "${cpu:--}" "${first:--}" "$seed" "$days" "$shape" >>"$work/table"
	echo "sim-sweep: $seed $shape $verdict ${cpu:--} CPU-s" >&2
}
export -f sim one
# Stopped (^C, a TERM), the sweep still prints what it ran: the runs it
# stopped are listed as stopped, not red.
trap 'echo "sim-sweep: stopped; the runs under way are not counted" >&2' INT TERM
xargs -P "$jobs" -L 1 bash -c 'one "$@"' _ <"$work/todo" || true
touch "$work/table"
printf 'seed\tshape\tverdict\tCPU-s\tfirst failure\treplay\n'
sort -t $'\t' -k3,3r -k2,2 "$work/table"
# What each shape cost: its runs, its reds, its CPU-seconds (user + sys) in all and at most.
echo
awk -F '\t' '$3 != "stopped" { n[$2]++; if ($3 == "RED") r[$2]++; c[$2] += $4; if ($4 > m[$2]) m[$2] = $4; t += $4; all++ }
	END { printf "shape\truns\tred\tCPU-s\tCPU-s at most\n"; for (s in n) printf "%s\t%d\t%d\t%.0f\t%.1f\n", s, n[s], r[s], c[s], m[s]
		printf "all\t%d\t\t%.0f\n", all, t }' "$work/table"
red=$(grep -c $'\tRED\t' "$work/table" || true)
stopped=$(grep -c $'\tstopped\t' "$work/table" || true)
total=$(wc -l <"$work/table")
summary="$((total - red - stopped)) passed, $red failed"
[ "$stopped" -eq 0 ] || summary+=", $stopped stopped before their verdict"
echo "$summary"
[ "$red" -eq 0 ]
