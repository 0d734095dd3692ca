package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/regions"
)

// spendHistory is three days of one chart from t0: the upstream's day of
// Oct 25 (from 07:00 UTC, 24 hours) lies whole inside it.
func spendHistory() *History {
	return &History{Config: Config{Shape: Shape{Every: time.Hour, TrackEvery: time.Hour}, Start: t0, Days: 3},
		End: t0.Add(72 * time.Hour), Starts: []time.Time{t0}, Charts: []regions.Chart{{Code: "US", Tier: 1, Depth: 50}}}
}

func TestCheckFindsChartsSpendingOverThePlanTold(t *testing.T) {
	h := spendHistory()
	h.Log = filepath.Join(t.TempDir(), "daemon.log")
	plan := "time=2026-10-25T00:00:00.000Z level=INFO msg=plan pool=default regions=1 pages_per_cycle=1 cycles_per_day=24 tracked_videos=0 " +
		"tracking_units_per_day=0 category_units_per_day=1 units_per_day=25 capacity=9500 fits=true\n"
	if err := os.WriteFile(h.Log, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	var charged int64
	chart := func(at time.Time) {
		charged++
		h.Calls = append(h.Calls, Call{At: at, Status: 200, Kind: KindChart, Region: "US", Charged: map[string]int64{"default": charged}})
	}
	for i := range 72 {
		chart(t0.Add(time.Duration(i)*time.Hour + time.Minute))
	}
	if f := checkChartsSpend(h); len(f) != 0 {
		t.Fatalf("a page an hour, as planned: %q", f)
	}
	chart(t0.Add(20 * time.Hour))
	if f := checkChartsSpend(h); len(f) != 0 {
		t.Fatalf("a page more, a cycle's: %q", f)
	}
	chart(t0.Add(21 * time.Hour))
	if f := checkChartsSpend(h); len(f) != 1 || !strings.Contains(f[0], "2026-10-25: 26 units, over the plan's 24 a day for the charts (25 with its 24h0m0s and a cycle of 1 pages)") {
		t.Errorf("two pages more: %q", f)
	}
	h.Starts = append(h.Starts, t0.Add(12*time.Hour))
	if f := checkChartsSpend(h); len(f) != 0 {
		t.Errorf("two pages more on a day the daemon started, its catch-up: %q", f)
	}
}

func TestCheckFindsVideosAskedInPartBatches(t *testing.T) {
	h := spendHistory()
	pass := func(ids ...int) {
		h.Calls = nil
		for i := range 72 {
			for k, n := range ids {
				h.Calls = append(h.Calls, Call{At: t0.Add(time.Duration(i)*time.Hour + time.Duration(k)*time.Second), Status: 200, Kind: KindStats, N: n,
					First: fmt.Sprint(i, k)})
			}
		}
	}
	pass(50, 10)
	if f := checkBatches(h); len(f) != 0 {
		t.Fatalf("a whole batch and a part one a pass: %q", f)
	}
	pass(20, 20, 20)
	if f := checkBatches(h); len(f) != 1 || !strings.Contains(f[0], "tracking asked for videos in more calls than whole batches make: 2026-10-25: 72 calls for 1440 videos, over 54") {
		t.Errorf("sixty videos a pass in three calls: %q", f)
	}
}
