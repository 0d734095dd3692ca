package partition

import (
	"testing"
	"time"

	"github.com/ingestworks/ingest/pace"
)

// The checker's arithmetic on histories made by hand, so that it is seen
// to fail where it must without a network to cut.

func TestMostInAWindowFindsTheFullestSpan(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cs := []charge{
		{at: t0, units: 10},
		{at: t0.Add(90 * time.Second), units: 20},
		{at: t0.Add(150 * time.Second), units: 25}, // 45 with the one before it, in 2 minutes
		{at: t0.Add(270 * time.Second), units: 1},  // exactly a window after the one at 150 s: a window of its own
	}
	worst, from := mostInAWindow(cs, 2*time.Minute)
	if worst != 45 || !from.Equal(t0.Add(90*time.Second)) {
		t.Errorf("mostInAWindow = %d from %s, want 45 from %s", worst, from, t0.Add(90*time.Second))
	}
}

func TestTheWindowCountsTheDefaultPoolAlone(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var cs []charge
	for i := range 40 {
		cs = append(cs, charge{at: t0.Add(time.Duration(i) * time.Second), units: 1, op: "/youtube/v3/videos"})
	}
	for i := range 16 { // tracking's reads: the stats pool's
		cs = append(cs, charge{at: t0.Add(time.Duration(50+i) * time.Second), units: 1, op: "/youtube/v3/videos:batchGetStats"})
	}
	if worst, _ := mostInAWindow(inDefaultPool(cs), 2*time.Minute); worst != 40 {
		t.Errorf("40 chart pages and 16 stats reads in a window: the default pool's window holds %d, want 40", worst)
	}
}

func TestGapsAreBoundByThePlanAndTheOutage(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(m float64) time.Time { return t0.Add(time.Duration(m * float64(time.Minute))) }
	every := func(e time.Duration) func(_, _ time.Time) (time.Duration, bool) {
		return func(_, _ time.Time) (time.Duration, bool) { return e, true }
	}
	// An outage of 2 minutes from minute 10 to 12.
	outage := func(from, to time.Time) time.Duration {
		a, b := maxTime(from, at(10)), minTime(to, at(12))
		if b.After(a) {
			return b.Sub(a)
		}
		return 0
	}
	// Runs at 1, 2, 3, then none until 9 (6 minutes: over 1m + grace),
	// then 14 (5 minutes, of which 2 out: within 1m + 2m + grace), and
	// the end at 15.
	gs := gaps(t0, at(15), []time.Time{at(1), at(2), at(3), at(9), at(14)}, every(time.Minute), outage)
	var over []time.Time
	for _, g := range gs {
		if g.over() {
			over = append(over, g.from)
		}
	}
	if len(gs) != 6 || len(over) != 1 || !over[0].Equal(at(3)) {
		t.Errorf("%d gaps, over their bound from %v; want 6, one over from %s", len(gs), over, at(3))
	}
	// The same runs under a plan that dropped the chart: no bound.
	for _, g := range gaps(t0, at(15), []time.Time{at(1), at(9)}, every(pace.Never), outage) {
		if g.over() || !g.dropped {
			t.Errorf("a gap from %s under a plan that dropped the chart: over %v, dropped %v; want no bound", g.from, g.over(), g.dropped)
		}
	}
	// A run stamped an hour back by a stepped clock opens no gap of an
	// hour: it is left out.
	if gs := gaps(t0, at(5), []time.Time{at(1), at(-60), at(2), at(4)}, every(time.Minute), outage); len(gs) != 4 {
		t.Errorf("runs at 1, 2 and 4 and one stamped an hour before the start: %d gaps, want 4 (the stamp left out)", len(gs))
	} else {
		for _, g := range gs {
			if g.over() {
				t.Errorf("a gap from %s of %s over its bound: the run stamped an hour back was counted", g.from, g.length)
			}
		}
	}
	// Before any plan was read, --every's minute bounds it.
	none := func(_, _ time.Time) (time.Duration, bool) { return 0, false }
	if gs := gaps(t0, at(5), nil, none, outage); len(gs) != 1 || !gs[0].over() {
		t.Errorf("5 minutes without a run and no plan read: %+v, want one gap over its bound", gs)
	}
}
