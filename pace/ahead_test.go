package pace_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// A pass stamped by a clock stepped 15 minutes ahead holds a chart for no
// longer than its cadence once the step is over: whether another process
// on the database stamped it (read back as the chart's last pass) or this
// pacer ran it while its own clock read ahead. Taken as the latest pass,
// it held the chart until the clock caught up with the stamp.
func TestAPassStampedAheadHoldsNoSlot(t *testing.T) {
	t.Parallel()
	const step = 15 * time.Minute
	pool := ingest.Pool{Name: "default", Limit: 40, Window: 2 * time.Minute}
	sl, err := regions.Stagger(time.Minute, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	e := entry("PL", 0, time.Minute, 4)
	e.Tier, e.Slots = 1, sl
	start := t0.Add(20 * time.Second)
	for _, c := range []struct {
		name string
		// before walks the pacer up to start: what the step left.
		before func(w *slotWalk, ahead *time.Time)
	}{
		{"stamped by another process", func(w *slotWalk, ahead *time.Time) {
			*ahead = start.Add(step)
		}},
		{"run here while this clock read ahead", func(w *slotWalk, ahead *time.Time) {
			w.now = start.Add(step)
			if !w.p.Due(context.Background(), e.Name, w.now) {
				t.Fatal("the catch-up at start, the clock stepped ahead: not due")
			}
			w.p.Ran(e.Name, map[string]int64{"default": 4}, nil, ingest.StatusCompleted)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ahead time.Time // the database's latest start of PL
			w := &slotWalk{t: t, entries: []pace.Entry{e}, now: start, runs: map[string][]time.Time{}}
			state := func(context.Context) ([]ingest.PoolState, error) {
				return []ingest.PoolState{{Pool: pool.Name, Limit: pool.Limit, Remaining: pool.Capacity()}}, nil
			}
			w.p = newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: w.entries,
				Clock: clock.Func(func() time.Time { return w.now }), Logger: quiet(), Refresh: time.Hour,
				LastPass: func(context.Context, string) (time.Time, error) { return ahead, nil }})
			c.before(w, &ahead)
			end := start.Add(10 * time.Minute)
			w.walk(start, end, nil)
			runs := w.runs[e.Name]
			if len(runs) < 8 {
				t.Fatalf("PL ran %d times in the 10 minutes after a pass stamped %s ahead, want about one a minute: %v",
					len(runs), step, runs)
			}
			if gap := runs[0].Sub(start); gap > 2*time.Minute {
				t.Errorf("PL's first pass after the step came %s after it, over two of its one-minute slots", gap)
			}
		})
	}
}
