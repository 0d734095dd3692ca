package pace_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// slotWalk is a pacer of entries on their staggered slots against a pool
// that is never spent (its state stays whole), driven slot by slot: what
// the guards of Due decide, without the limiter's room in the way.
type slotWalk struct {
	t       *testing.T
	p       *pace.Pacer
	entries []pace.Entry
	now     time.Time
	runs    map[string][]time.Time
}

func newSlotWalk(t *testing.T, pool ingest.Pool, entries []pace.Entry, bound time.Duration, at time.Time) *slotWalk {
	w := &slotWalk{t: t, entries: entries, now: at, runs: map[string][]time.Time{}}
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: pool.Name, Limit: pool.Limit, Remaining: pool.Capacity()}}, nil
	}
	w.p = newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: entries, Bound: bound,
		Clock: clock.Func(func() time.Time { return w.now }), Logger: quiet(), Refresh: time.Hour})
	return w
}

// ask asks the entry at t (a slot, or a catch-up's now) and runs it when due.
func (w *slotWalk) ask(e pace.Entry, t time.Time) {
	w.now = t
	if w.p.Due(context.Background(), e.Name, t) {
		w.runs[e.Name] = append(w.runs[e.Name], t)
		w.p.Ran(e.Name, map[string]int64{"default": int64(e.Cost["default"])}, nil, ingest.StatusCompleted)
	}
}

// walk asks every entry at each of its slots in [from, to), in time
// order, calling each after every slot.
func (w *slotWalk) walk(from, to time.Time, each func(now time.Time)) {
	for now := from; now.Before(to); {
		next := to
		for _, e := range w.entries {
			if n := e.Slots.Next(now.Add(-time.Nanosecond)); n.Before(next) {
				next = n
			}
		}
		if !next.Before(to) {
			return
		}
		for _, e := range w.entries {
			if e.Slots.Next(next.Add(-time.Nanosecond)).Equal(next) {
				w.ask(e, next)
			}
		}
		if each != nil {
			each(next)
		}
		now = next.Add(time.Nanosecond)
	}
}

// ofTiers is n region charts of each tier given, level 0, cost 4, floor
// the tier's multiple of every, each on its tier's staggered slots.
func ofTiers(t *testing.T, every time.Duration, n map[int]int) []pace.Entry {
	t.Helper()
	var out []pace.Entry
	total := 0
	for _, k := range n {
		total += k
	}
	for _, tier := range []int{1, 2, 3} {
		for range n[tier] {
			sl, err := regions.Stagger(time.Duration(tier)*every, len(out), total)
			if err != nil {
				t.Fatal(err)
			}
			e := entry(fmt.Sprintf("R%02d", len(out)), 0, time.Duration(tier)*every, 4)
			e.Tier, e.Slots = tier, sl
			out = append(out, e)
		}
	}
	return out
}

// A stretched chart runs at the slot before the one at which it would
// pass its bound, whatever its cadence and its group's spread say: six
// charts stretched to just under --max-stale 3h, all caught up at a fresh
// start 20 minutes off their slots (a catch-up is its next slot's pass),
// are never older than the bound at any slot of the next day.
func TestStretchedChartKeepsItsBound(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 200, Window: 24 * time.Hour}
	entries := ofTiers(t, time.Hour, map[int]int{1: 6})
	const bound = 3 * time.Hour
	start := t0.Truncate(time.Hour).Add(20 * time.Minute)
	w := newSlotWalk(t, pool, entries, bound, start)
	for _, e := range entries {
		w.ask(e, start)
	}
	st := w.p.Status()
	for _, e := range st.Entries {
		if e.Every <= e.Floor || e.Every > bound {
			t.Fatalf("%s every %s: the pool was meant to stretch the charts to under the bound", e.Name, e.Every)
		}
	}
	worst, over := time.Duration(0), 0
	w.walk(start.Add(time.Nanosecond), start.Add(24*time.Hour), func(now time.Time) {
		for _, e := range entries {
			last := start
			if runs := w.runs[e.Name]; len(runs) > 0 {
				last = runs[len(runs)-1]
			}
			age := now.Sub(last)
			worst = max(worst, age)
			if age > bound {
				if over++; over <= 3 {
					t.Errorf("at %s %s is %s old, over the bound %s (every %s)", now.Sub(start), e.Name, age, bound, st.Entries[0].Every.Round(time.Minute))
				}
			}
		}
	})
	t.Logf("six charts every %s under --max-stale %s: the oldest reached %s", st.Entries[0].Every.Round(time.Minute), bound, worst)
}

// Stretched charts keep to their rate tier by tier: a tier's passes never
// wait for a higher tier's. Four tier-1 and eight tier-3 charts on a pool
// that stretches them all, all caught up at a fresh start, then a day of
// slots: no chart of either tier grows older than its cadence and a
// floor (its slots' period), as it would if the tiers kept to one rate
// together and the many tier-3 passes held back the tier-1 charts; so for
// the regions' own charts (whose slots also hold each to its cadence's
// slot) and for category charts, which only their tier's spread holds.
func TestSpreadKeepsTiersApart(t *testing.T) {
	t.Parallel()
	for _, level := range []int{0, 1} {
		t.Run(fmt.Sprintf("level %d", level), func(t *testing.T) {
			t.Parallel()
			spreadTiers(t, level)
		})
	}
}

func spreadTiers(t *testing.T, level int) {
	pool := ingest.Pool{Name: "default", Limit: 300, Window: 24 * time.Hour}
	entries := ofTiers(t, time.Hour, map[int]int{1: 4, 3: 8})
	for i := range entries {
		entries[i].Priority = level
	}
	start := t0.Truncate(time.Hour).Add(7 * time.Minute)
	w := newSlotWalk(t, pool, entries, 24*time.Hour, start)
	for _, e := range entries {
		w.ask(e, start)
	}
	every := map[string]time.Duration{}
	for _, e := range w.p.Status().Entries {
		every[e.Name] = e.Every
		if e.Every <= e.Floor || e.Every == pace.Never {
			t.Fatalf("%s every %s: the pool was meant to stretch every chart", e.Name, e.Every)
		}
	}
	worst := map[int]float64{}
	w.walk(start.Add(time.Nanosecond), start.Add(36*time.Hour), func(now time.Time) {
		if now.Sub(start) < 12*time.Hour {
			return
		}
		for _, e := range entries {
			last := start
			if runs := w.runs[e.Name]; len(runs) > 0 {
				last = runs[len(runs)-1]
			}
			worst[e.Tier] = max(worst[e.Tier], float64(now.Sub(last))/float64(every[e.Name]))
		}
	})
	t.Logf("tier 1 every %s, tier 3 every %s: the largest age over the cadence by tier %v", every["R00"].Round(time.Minute), every["R11"].Round(time.Minute), worst)
	for tier, name := range map[int]string{1: "R00", 3: "R11"} {
		// A pass falls at a slot: at most a floor after the cadence.
		if limit := 1 + float64(time.Duration(tier)*time.Hour)/float64(every[name]) + 0.01; worst[tier] > limit {
			t.Errorf("tier %d reached %.3f of its cadence, over its cadence and a floor (%.3f): it waited for another tier's passes", tier, worst[tier], limit)
		}
	}
}
