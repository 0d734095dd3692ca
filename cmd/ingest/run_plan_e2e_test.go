package main

import (
	"os"
	"path/filepath"
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

// A pool with no calendar day whose window is shorter than a day allows
// its limit in every window: a schedule that fits it is neither warned of
// nor refused with --strict, and the plan line says what it allows a day.
func TestRunPlanCountsAShortPoolByItsWindow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	path := filepath.Join(h.dir, "short.yaml")
	if err := os.WriteFile(path, []byte(`pools:
  default:  {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
  search:   {limit: 100, reserve: 0, window: 24h, day: America/Los_Angeles}
  stats:    {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
  trending: {limit: 90, reserve: 10, window: 3h}
operations:
  videos.list:          {default: 1, trending: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	h.set("INGEST_COSTS", path)
	res := h.run("run", "--once", "--every", "1h", "--regions", "US", "--strict", "--log-format", "json")
	if res.code != 0 || strings.Contains(res.stderr, "cannot fit") {
		t.Fatalf("a schedule the short pool holds in every window: want it run, got %s", res)
	}
	var told bool
	for _, l := range jsonLines(t, res.stderr) {
		if l["msg"] == "plan" && l["pool"] == "trending" {
			told = true
			if l["capacity"] != float64(640) || l["fits"] != true {
				t.Errorf("trending's plan line says capacity %v, fits %v: want 640 a day (80 every 3h), fits", l["capacity"], l["fits"])
			}
		}
	}
	if !told {
		t.Errorf("no plan line for the trending pool:\n%s", res.stderr)
	}
}
