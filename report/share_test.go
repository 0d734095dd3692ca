package report

import (
	"strings"
	"testing"
	"time"
)

func TestBackfillShare(t *testing.T) {
	reset := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
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
			[]PoolPace{{Pool: "default", Budget: 100, Projected: 39.5, Reset: reset},
				{Pool: "search", Budget: 100, Reset: reset.Add(time.Hour)}, {Pool: "stats", Budget: 5, Reset: reset}},
			120, 60, map[string]int64{"default": 60, "search": 100}, "taking at most 120 units, 60 pages"},
		{"less than a page",
			[]PoolPace{{Pool: "default", Budget: 10, Projected: 10, Reset: reset}, {Pool: "search", Budget: 100, Reset: reset}},
			0, 0, map[string]int64{"default": 0, "search": 100}, "not one page's (default 1, search 1)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := (&Freshness{Pools: c.pools}).ShareOf(page)
			if s.Units != c.units || s.Pages != c.pages || !s.Reset.Equal(reset) {
				t.Errorf("share: %d units, %d pages, reset %s; want %d, %d, %s", s.Units, s.Pages, s.Reset, c.units, c.pages, reset)
			}
			for pool, want := range c.left {
				if s.Left[pool] != want {
					t.Errorf("left %s: %d, want %d", pool, s.Left[pool], want)
				}
			}
			if _, ok := s.Left["stats"]; ok {
				t.Errorf("left names stats, which a page does not draw from: %v", s.Left)
			}
			if line := s.Line("US", page); !strings.Contains(line, c.lineWants) || !strings.Contains(line, "2026-11-24 00:00 PST") {
				t.Errorf("line %q; want %q and the reset in Pacific time", line, c.lineWants)
			}
		})
	}
}
