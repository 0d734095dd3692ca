package sim

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// spreadHistory is a day of US a page hourly on a default pool of 72
// units a day (3 an hour: 2 left for the levels below), with category
// charts of a page each passed at the given hours.
func spreadHistory(t *testing.T, cats []float64) *History {
	t.Helper()
	h := history(hourly(24, 1), nil, 1)
	for i := range h.Runs {
		h.Runs[i].Pages, h.Runs[i].Slot = 1, h.Runs[i].Started
	}
	h.Costs = poolCosts(t, 72, "24h")
	h.TrackFor = 0
	for i, hr := range cats {
		at := t0.Add(time.Duration(hr * float64(time.Hour)))
		cat := []string{"1", "2", "10", "20", "24"}[i%5]
		h.Runs = append(h.Runs, Run{Region: "US", Category: cat, Status: "completed", Started: at, Slot: at, Finished: at.Add(time.Second), Pages: 1})
		h.Calls = append(h.Calls, Call{At: at.Add(time.Second), Path: "/youtube/v3/videos", Kind: KindChart, Worker: WorkerDaemon, Region: "US", Category: cat})
	}
	slices.SortStableFunc(h.Calls, func(a, b Call) int { return a.At.Compare(b.At) })
	for i := range h.Calls {
		h.Calls[i].Charged = map[string]int64{"default": int64(i + 1)}
	}
	return h
}

// The category charts keep to the rate the pool leaves them beside the
// own charts over each --every, a pass more: two an hour and a third are
// within it, four in one hour are a burst; paced only, and not while a
// plan may have dropped an own chart.
func TestCheckFindsCategoryChartsInABurst(t *testing.T) {
	spread := spreadHistory(t, []float64{0.5, 0.75, 1.5, 1.75, 2.25, 2.5, 2.75})
	if f := checkLevelsSpread(spread); len(f) != 0 {
		t.Errorf("two an hour, and a third once: %q", f)
	}
	h := spreadHistory(t, []float64{0.5, 5.5, 5.6, 5.7, 5.8})
	if f := checkLevelsSpread(h); len(f) != 1 || !strings.Contains(f[0], "pool default: the category charts spent more than the most the plan gives them (2.0 units an hour) over 1 of their --every") ||
		!strings.Contains(f[0], "4 units in the 1h0m0s to 2026-10-25T05:48:00Z (4 passes: [US/2 US/10 US/20 US/24]), over 3.0") {
		t.Errorf("four in an hour: %q", f)
	}
	h.NoPace = true
	if f := checkLevelsSpread(h); len(f) != 0 {
		t.Errorf("--pace=false: %q", f)
	}
	h = spreadHistory(t, []float64{0.5, 5.5, 5.6, 5.7, 5.8})
	h.Log = filepath.Join(t.TempDir(), "daemon.log")
	const drops = `time=2026-10-25T04:00:00.000Z level=WARN msg="pace: the plan drops what the budget cannot hold beside the entries above it" dropped=2 entries="US/1 and 1 more" back=0 kept=1
`
	if err := os.WriteFile(h.Log, []byte(drops), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkLevelsSpread(h); len(f) != 0 {
		t.Errorf("a plan perhaps dropped US: %q", f)
	}
	back := drops + `time=2026-10-25T05:00:00.000Z level=INFO msg="pace: the plan takes back entries it dropped" back=2 entries="US/1 and 1 more"
`
	if err := os.WriteFile(h.Log, []byte(back), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkLevelsSpread(h); len(f) != 1 {
		t.Errorf("taken back before the burst: %q", f)
	}
}
