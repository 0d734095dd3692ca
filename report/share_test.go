package report

import (
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/pace"
)

// A backfill's share is what the plan leaves over each pool's window (its
// rate less the paced charts', over the window), in whole pages of every
// pool a page draws from.
func TestBackfillShare(t *testing.T) {
	day := 24 * time.Hour
	page := map[string]int64{"default": 1, "search": 1}
	cases := []struct {
		name      string
		pools     []PoolPace
		units     int64
		pages     int64
		left      map[string]int64
		lineWants string
	}{
		{"the scarcer pool sets the pages",
			[]PoolPace{{Pool: "default", Left: 60.5, Window: day}, {Pool: "search", Left: 100, Window: day},
				{Pool: "stats", Left: 5, Window: day}},
			120, 60, map[string]int64{"default": 60, "search": 100}, "taking at most 120 units, 60 pages"},
		{"less than a page",
			[]PoolPace{{Pool: "default", Left: 0.5, Window: day}, {Pool: "search", Left: 100, Window: day}},
			0, 0, map[string]int64{"default": 0, "search": 100}, "not one page's (default 1, search 1)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := (&Freshness{Pools: c.pools}).ShareOf(page)
			if s.Units != c.units || s.Pages != c.pages || s.Window != day {
				t.Errorf("share: %d units, %d pages, over %s; want %d, %d, over %s", s.Units, s.Pages, s.Window, c.units, c.pages, day)
			}
			for pool, want := range c.left {
				if s.Left[pool] != want {
					t.Errorf("left %s: %d, want %d", pool, s.Left[pool], want)
				}
			}
			if _, ok := s.Left["stats"]; ok {
				t.Errorf("left names stats, which a page does not draw from: %v", s.Left)
			}
			if line := s.Line("US", page); !strings.Contains(line, c.lineWants) || !strings.Contains(line, "units of the next 24h") {
				t.Errorf("line %q; want %q and the window it is over", line, c.lineWants)
			}
		})
	}
}

// What the plan leaves is the pool's rate less the plan's, over the window:
// a plan that spends at the whole rate leaves nothing, one that spends
// half leaves half a window's worth.
func TestLeftOverTheWindow(t *testing.T) {
	f := of(paceStatus(395, 395, 24*time.Hour))
	if got := f.Left()["default"]; got != 0 {
		t.Errorf("a plan at the whole rate leaves %v", got)
	}
	f = of(paceStatus(400, 100, 24*time.Hour))
	if got := f.Left()["default"]; got != 300*24 {
		t.Errorf("a plan at a quarter of the rate leaves %v, want %v", got, 300*24)
	}
}

func paceStatus(rate, planned float64, window time.Duration) pace.Status {
	return pace.Status{At: time.Now(), Pools: []pace.PoolStatus{{Pool: "default", Rate: rate, Planned: planned, Window: window}}}
}

// A region's next run is the plan's: none for a chart the plan dropped,
// "from" a time under a cron, the staggered slot only for a chart the plan
// does not know.
func TestRegionsNextRunIsThePlans(t *testing.T) {
	slot := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	paced := slot.Add(2 * time.Hour)
	for _, dueFrom := range []bool{false, true} {
		r := &Report{Regions: []Region{{Code: "US", NextRun: slot}, {Code: "CA", NextRun: slot}, {Code: "JP", NextRun: slot}}}
		r.nextRuns(&Freshness{DueFrom: dueFrom, Charts: []ChartAge{
			{Chart: "US", Next: paced}, {Chart: "CA", Every: pace.Never, Dropped: true}}})
		if got := r.Regions[0]; !got.NextRun.Equal(paced) || got.NextFrom != dueFrom {
			t.Errorf("US (due from %v): next %v from %v, want the plan's %v", dueFrom, got.NextRun, got.NextFrom, paced)
		}
		if got := r.Regions[1]; !got.NextRun.IsZero() || got.NextFrom {
			t.Errorf("CA, dropped: next run %v, want none", got.NextRun)
		}
		if got := r.Regions[2]; !got.NextRun.Equal(slot) {
			t.Errorf("JP, not in the plan: next run %v, want its slot %v", got.NextRun, slot)
		}
		var b strings.Builder
		r.textRegions(&b, time.UTC)
		if want := "from 11:00Z"; dueFrom != strings.Contains(b.String(), want) {
			t.Errorf("the REGION table (due from %v):\n%s\nsays %q: %v", dueFrom, b.String(), want, !dueFrom)
		}
	}
}
