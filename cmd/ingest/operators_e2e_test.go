package main

// End-to-end tests of what an operator reads: help that tells the truth,
// errors that name the fix.

import (
	"regexp"
	"strings"
	"testing"
)

// backfill --help prices a page as the shipped costs.yaml does, the same
// words --dry-run prints for a page.
func TestBackfillHelpPricesAPageAsDryRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	plan := h.mustRun(0, "backfill", "--region", "US", "--since", "2026-01-01", "--dry-run")
	m := regexp.MustCompile(`\(a page: ([^)]+)\)`).FindStringSubmatch(plan.stdout)
	if m == nil {
		t.Fatalf("--dry-run prints no page cost:\n%s", plan)
	}
	help := h.mustRun(0, "backfill", "--help")
	text := strings.Join(strings.Fields(help.stdout), " ")
	if !strings.Contains(text, m[1]) || strings.Contains(text, "100 units") {
		t.Errorf("backfill --help does not price a page as --dry-run does (%q):\n%s", m[1], help.stdout)
	}
}

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
