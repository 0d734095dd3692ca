package pace_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// A pass that spent nothing and did not complete (the limiter unavailable:
// a failover's new primary without its replica; or not run after all:
// the schedule found the slot tried) is no pass: the chart's next slot
// asks again, whether the pass was a catch-up at start or a slot's. One
// that failed having spent units spent its credit as any pass does: the
// chart, stretched past its slots, skips the next slot.
func TestAPassThatSpentNothingGivesBackItsSlot(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 6, Window: 2 * time.Minute}
	sl, err := regions.Stagger(time.Minute, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	e := entry("US", 0, time.Minute, 4)
	e.Tier, e.Slots = 1, sl
	for _, c := range []struct {
		name   string
		status ingest.RunStatus
		spent  int64
		want   bool // the next slot runs
	}{
		{"failed having spent nothing", ingest.StatusFailed, 0, true},
		{"did not run", "", 0, true},
		{"failed having spent a unit", ingest.StatusFailed, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := t0.Add(20 * time.Second)
			w := newSlotWalk(t, pool, []pace.Entry{e}, 24*time.Hour, start)
			ctx := context.Background()
			fail := func(at time.Time, what string) {
				t.Helper()
				w.now = at
				if !w.p.Due(ctx, e.Name, at) {
					t.Fatalf("%s at %s: not due", what, at.Sub(t0))
				}
				w.p.Ran(e.Name, map[string]int64{"default": c.spent}, nil, c.status)
			}
			// A catch-up at start that fails or does not run.
			fail(start, "the catch-up at start")
			st := w.p.Status()
			if every := st.Entries[0].Every; every <= time.Minute || every >= 2*time.Minute {
				t.Fatalf("US every %s: the pool was meant to stretch it between one and two of its slots", every)
			}
			slot := sl.Next(start)
			w.now = slot
			if got := w.p.Due(ctx, e.Name, slot); got != c.want {
				t.Fatalf("after a catch-up that %s, the next slot (%s) runs: %v, want %v (every %s)", c.name, slot.Sub(t0), got, c.want, st.Entries[0].Every)
			}
			if !c.want {
				return
			}
			// That slot's pass ends the same way: the slot after it asks
			// again.
			w.p.Ran(e.Name, map[string]int64{"default": 0}, nil, c.status)
			next := sl.Next(slot.Add(time.Nanosecond))
			w.now = next
			if !w.p.Due(ctx, e.Name, next) {
				t.Errorf("after a slot's pass that %s, the next slot (%s) does not run", c.name, next.Sub(t0))
			}
		})
	}
}
