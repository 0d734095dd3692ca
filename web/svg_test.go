package web

import (
	"fmt"
	"testing"
	"time"
)

// TestRankAxisPutsNumberOneOnTop: a rank chart's axis starts at #1, at the
// top, and the worst rank is at the bottom; a views chart's smallest tick
// is at the bottom, in K or M.
func TestRankAxisPutsNumberOneOnTop(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	ranks := series{name: "US", t: []time.Time{t0, t0.Add(time.Hour), t0.Add(2 * time.Hour)}, v: []float64{37, 12, 3}}
	c := lineChart([]series{ranks}, true, func(f float64) string { return fmt.Sprintf("#%.0f", f) }, "rank")
	first, last := c.YTicks[0], c.YTicks[len(c.YTicks)-1]
	if first.Label != "#1" || first.Pos != c.Top || last.Pos != c.Bottom || last.Label != "#40" {
		t.Errorf("rank ticks %+v: want #1 at the top (%v) and #40 at the bottom (%v)", c.YTicks, c.Top, c.Bottom)
	}
	for i := 1; i < len(c.YTicks); i++ {
		if c.YTicks[i].Pos <= c.YTicks[i-1].Pos {
			t.Errorf("rank ticks %+v: a worse rank is not lower down", c.YTicks)
		}
	}
	if m := c.Lines[0].Marks; m[len(m)-1].Y >= m[0].Y {
		t.Errorf("climbing from #37 to #3 drew the line downwards: %+v", m)
	}
	views := series{name: "views", t: ranks.t, v: []float64{19.0e6, 24e6, 28.8e6}}
	c = lineChart([]series{views}, false, compact, "views")
	first, last = c.YTicks[0], c.YTicks[len(c.YTicks)-1]
	if first.Label != "15M" || first.Pos != c.Bottom || last.Label != "30M" || last.Pos != c.Top {
		t.Errorf("views ticks %+v: want 15M at the bottom and 30M at the top", c.YTicks)
	}
	flat := lineChart([]series{{name: "views", t: ranks.t, v: []float64{28.4e6, 28.4e6, 28.4e6}}}, false, compact, "views")
	for i := 1; i < len(flat.YTicks); i++ {
		if flat.YTicks[i].Label == flat.YTicks[i-1].Label {
			t.Errorf("flat views: ticks %+v say the same twice", flat.YTicks)
			break
		}
	}
	if len(c.XTicks) != 5 || c.XTicks[0].Label != "Nov 20 09:00" || c.XTicks[4].Pos != c.Right {
		t.Errorf("time ticks %+v", c.XTicks)
	}
}

func TestDurationAndDay(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"PT22M47S": "22:47", "PT45S": "0:45", "PT1H2M3S": "1:02:03", "P1DT2H": "26:00:00",
		"PT4M": "4:00", "P0D": "live", "soon": "soon"} {
		if got := duration(in); got != want {
			t.Errorf("duration(%q) = %q, want %q", in, got, want)
		}
	}
	for at, want := range map[string]string{"2026-11-20T09:00:00Z": "Nov 20, 2026", "2019-01-02T23:59:00-05:00": "Jan 3, 2019", "soon": "soon"} {
		if got := day(&at); got != want {
			t.Errorf("day(%q) = %q, want %q", at, got, want)
		}
	}
}
