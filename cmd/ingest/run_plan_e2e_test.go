package main

import (
	"os"
	"strings"
	"testing"
)

// run --once --every prints the plan at the default level, as run --help,
// docs/operations.md and ingest-once.service say.
func TestRunOnceEveryPrintsThePlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "run", "--once", "--every", "1h", "--regions", "US", "--log-format", "json")
	pools := map[any]bool{}
	for _, l := range jsonLines(t, res.stderr) {
		if l["msg"] == "plan" {
			pools[l["pool"]] = true
		}
	}
	if !pools["default"] {
		t.Errorf("run --once --every 1h: no plan line for the default pool at info:\n%s", res.stderr)
	}
}

// 4b. A schedule that cannot fit is said at start, and refused with
// --strict before anything is opened.
func TestRunPlanWarnsOrRefuses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.run("run", "--every", "1m", "--strict")
	if res.code != 2 || !strings.Contains(res.stderr, "cannot fit") || !strings.Contains(res.stderr, "default") {
		t.Errorf("--every 1m --strict: want exit 2 saying it cannot fit, got %s", res)
	}
	if _, err := os.Stat(h.db()); err == nil {
		t.Errorf("--strict refusal created the database")
	}
	res = h.mustRun(0, "run", "--once", "--every", "1m")
	if !strings.Contains(res.stderr, "cannot fit") {
		t.Errorf("run --once --every 1m: no warning that the schedule cannot fit:\n%s", res)
	}
}
