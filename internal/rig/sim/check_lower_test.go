package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// On a default pool of 20 units a day, US a page hourly (24 a day) is
// short of it: the refresh, a category chart and, drawing from the pool,
// tracking run no pass, paced; a chart that stored fewer pages than its
// depth asks is measured at those; a plan that dropped an own chart, or
// --pace=false, leaves the lower levels be.
func TestCheckFindsALowerLevelRunOnAShortPool(t *testing.T) {
	short := func() *History {
		h := history(hourly(24, 1), hourly(24, 60), 1)
		h.Costs = poolCosts(t, 20, "24h")
		for i := range h.Runs {
			h.Runs[i].Pages = 1
		}
		return h
	}
	h := short()
	if f := checkLowerDropped(h); len(f) != 1 || !strings.Contains(f[0], "pool default: the regions' own charts at their --every want more than it holds, yet the refresh ran 24 passes (first at 2026-10-25T00:03:00Z)") {
		t.Errorf("the refresh at every slot on a short pool: %q", f)
	}
	// a run --once beside the daemon refreshes after its chart: its pass
	// is no pass of the daemon's plan
	beside := short()
	beside.Passes = nil
	at := t0.Add(5 * time.Hour)
	beside.Passes = append(beside.Passes, Pass{Entry: "refresh", Status: "completed", Started: at.Add(2 * time.Second)})
	beside.Joins = []Join{{Region: "ME", Runs: []JoinRun{{Interval: Interval{From: at, To: at.Add(5 * time.Second)}}}}}
	if f := checkLowerDropped(beside); len(f) != 0 {
		t.Errorf("a refresh by a run --once beside the daemon: %q", f)
	}
	beside.Joins[0].Runs[0].Interval.To = at.Add(time.Second)
	if f := checkLowerDropped(beside); len(f) != 1 || !strings.Contains(f[0], "the refresh ran 1 passes") {
		t.Errorf("a refresh after the run --once beside the daemon ended: %q", f)
	}
	h.Passes = h.Passes[:0]
	for _, p := range housekeepingPasses() {
		if p.Entry == "prune" {
			h.Passes = append(h.Passes, p)
		}
	}
	if f := checkLowerDropped(h); len(f) != 0 {
		t.Errorf("the refresh dropped, the prune at every slot: %q", f)
	}
	h.Runs = append(h.Runs, Run{Region: "US", Category: "10", Status: "completed", Started: t0.Add(90 * time.Minute), Pages: 1})
	if f := checkLowerDropped(h); len(f) != 1 || !strings.Contains(f[0], "the category charts ran 1 passes (first at 2026-10-25T01:30:00Z)") {
		t.Errorf("a category chart on a short pool: %q", f)
	}
	h.Runs = h.Runs[:len(h.Runs)-1]
	h.Passes = append(h.Passes, Pass{Entry: "track", Status: "completed", Started: t0.Add(time.Hour)})
	if f := checkLowerDropped(h); len(f) != 0 {
		t.Errorf("tracking on the stats pool, which the charts do not draw from: %q", f)
	}
	h.Costs = poolCosts(t, 20, "24h")
	h.Costs.Operations["videos.batchGetStats"] = h.Costs.Operations["videos.list"]
	if f := checkLowerDropped(h); len(f) != 1 || !strings.Contains(f[0], "tracking ran 1 passes") {
		t.Errorf("tracking on the short default pool: %q", f)
	}

	h = short()
	h.Costs = poolCosts(t, 24, "24h")
	if f := checkLowerDropped(h); len(f) != 0 {
		t.Errorf("US a page hourly on a pool of 24 a day, which holds it: %q", f)
	}
	h.Charts[0].Depth = 200 // four pages asked, one stored: measured at one
	h.Costs = poolCosts(t, 80, "24h")
	if f := checkLowerDropped(h); len(f) != 0 {
		t.Errorf("US a page a pass stored, its depth four, on a pool of 80 a day: %q", f)
	}
	h.Runs = nil // none completed: the four its depth asks
	if f := checkLowerDropped(h); len(f) != 1 {
		t.Errorf("US never passed, four pages hourly on a pool of 80 a day: %q", f)
	}

	h = short()
	h.NoPace = true
	if f := checkLowerDropped(h); len(f) != 0 {
		t.Errorf("--pace=false: %q", f)
	}
	h = short()
	h.Log = filepath.Join(t.TempDir(), "daemon.log")
	const drops = `time=2026-10-25T04:00:00.000Z level=WARN msg="pace: the plan drops what the budget cannot hold beside the entries above it" dropped=1 entries=US back=0 kept=0
`
	if err := os.WriteFile(h.Log, []byte(drops), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkLowerDropped(h); len(f) != 0 {
		t.Errorf("a plan dropped US, an own chart: %q", f)
	}
	if err := os.WriteFile(h.Log, []byte(strings.ReplaceAll(drops, "entries=US", "entries=refresh")), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkLowerDropped(h); len(f) != 1 {
		t.Errorf("a plan said it dropped the refresh, which ran: %q", f)
	}
}
