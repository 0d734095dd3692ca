# Sourced by the scripts of make sim-mutants: the scratch copy of the
# tree and one run of a simulation's shape, the same for the history's
# mutants and the drawn ones.

# copy DIR: a scratch copy of the tracked tree (no .git).
copy() {
  mkdir -p "$1"
  git ls-files -z | xargs -0 cp --parents -t "$1"
}

# simulate BIN SHAPE SEED OUT [PROFILE]: runs SHAPE of BIN on SEED for
# $days simulated days (within $timeout, default 30m; a run past it is
# red), its coverage in PROFILE when given; prints the checker's first
# finding (or the test's own failure), nothing when green.
simulate() {
  local bin=$1 shape=$2 seed=$3 out=$4 profile=${5:-} cover=()
  [ -z "$profile" ] || cover=(-test.coverprofile "$profile")
  if (cd "$(dirname "$bin")/internal/rig/sim" && INGEST_SIM_SEED=$seed INGEST_SIM_DAYS=$days INGEST_SIM_ALL_DAYS=$days \
    "$bin" -test.run "^$shape\$" -test.timeout "${timeout:-30m}" "${cover[@]}" >"$out" 2>&1); then
    return 0
  fi
  local first
  first=$(grep -E "seed $seed: |panic:|FAIL" "$out" | sed -E 's/^ *//' | grep -vE "upstream calls, |^(--- )?FAIL|replays it" | head -1 |
    sed -E 's/^[a-z_]+\.go:[0-9]+: //; s/^seed [0-9]+: //' || true)
  echo "${first:-red (see its output)}"
}

# short TEXT: a finding cut to a table's column.
short() { cut -c1-90 <<<"$1"; }
