package jobs_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
)

// undecidedSource is a limiter that cannot decide while undecided says so
// (a Redis primary whose replica is cut off), in front of an upstream that
// serves one page a chart. It notes when each chart was tried and when a
// pass of it got its page.
type undecidedSource struct {
	undecided func(time.Time) bool

	mu          sync.Mutex
	tried, paid map[string][]time.Time
	// failed counts the failed runs the daemon observed, by chart and by
	// whether they retried their slot (jobs.Ended.Again).
	failed map[string]map[bool]int
}

func (s *undecidedSource) Chart(ctx context.Context, gate ingest.Gate, region, _, _ string) (ingest.Page, error) {
	now := time.Now()
	s.mu.Lock()
	s.tried[region] = append(s.tried[region], now)
	s.mu.Unlock()
	if s.undecided(now) {
		return ingest.Page{}, fmt.Errorf("fetch videos.list: limiter: %w: unconfirmed: 0 of 1 replicas confirmed the write", ingest.ErrUnavailable)
	}
	if _, err := gate(ctx, "videos.list"); err != nil {
		return ingest.Page{}, err
	}
	s.mu.Lock()
	s.paid[region] = append(s.paid[region], now)
	s.mu.Unlock()
	v := ingest.Video{ID: "v-" + region, Title: "a video in " + region, PublishedAt: now}
	return ingest.Page{Kind: ingest.Trending, Region: region, Videos: []ingest.Video{v}, Fetched: now}, nil
}

func (s *undecidedSource) Categories(context.Context, ingest.Gate, string, string) ([]ingest.Category, error) {
	return nil, nil
}

// runUndecided runs a daemon of every default chart at an 8-minute period
// (a chart's slot each minute, in the schedule's order) on src from the
// bubble's start (2000-01-01 00:00 UTC), and drains it after the given
// time; it returns how long the daemon took to stop once drained.
func runUndecided(t *testing.T, src *undecidedSource, after time.Duration) time.Duration {
	t.Helper()
	src.tried, src.paid, src.failed = map[string][]time.Time{}, map[string][]time.Time{}, map[string]map[bool]int{}
	db, lim := storeAndLimiter(t)
	drain := make(chan struct{})
	r := daemon(db, lim, src, drain)
	r.Observe = func(e jobs.Entry, end jobs.Ended, _ time.Duration, _ time.Time) {
		if end.Status == ingest.StatusFailed {
			src.mu.Lock()
			defer src.mu.Unlock()
			if src.failed[e.Name] == nil {
				src.failed[e.Name] = map[bool]int{}
			}
			src.failed[e.Name][end.Again]++
		}
	}
	r.LastStart = db.LastStart // as run wires it: a failed try's run holds the slot against other processes
	d := &jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: 8 * time.Minute}}
	done := make(chan error)
	go func() { done <- d.Run(context.Background()) }()
	time.Sleep(after)
	close(drain)
	drained := time.Now()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return time.Since(drained)
}

// A limiter that cannot decide for the first 20 seconds of every minute
// meets every chart's slot: each pass is tried again a few seconds on,
// and each chart gets its page within its slot instead of at the next one,
// minutes later. A daemon stopped while retries wait stops at once.
func TestDaemonTriesAnUndecidedPassAgainWithinItsSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		src := &undecidedSource{undecided: func(at time.Time) bool { return at.Sub(start)%time.Minute < 20*time.Second }}
		took := runUndecided(t, src, 16*time.Minute+10*time.Second) // drained while US's 16:00 slot waits to try again
		for i, code := range regions.Default {
			var want []time.Time // the catch-up at start, then each of the chart's slots
			for _, slot := range []time.Duration{0, time.Duration(i) * time.Minute, time.Duration(8+i) * time.Minute} {
				if len(want) == 0 || !start.Add(slot).Equal(want[len(want)-1]) {
					want = append(want, start.Add(slot))
				}
			}
			paid := src.paid[code]
			for _, slot := range want {
				// Tries at 5 and 15 seconds meet the outage; the one at 35 is
				// the first after it.
				if !slices.ContainsFunc(paid, func(at time.Time) bool { return at.Equal(slot.Add(35 * time.Second)) }) {
					t.Errorf("%s: no page within its slot of %s (tried at %s; pages at %s)", code, slot.Sub(start), since(start, src.tried[code]), since(start, paid))
				}
			}
			if len(paid) != len(want) {
				t.Errorf("%s: %d pages, want one in each of its %d slots: at %s", code, len(paid), len(want), since(start, paid))
			}
		}
		if took != 0 {
			t.Errorf("the daemon took %s to stop with a retry waiting, want no time: a retry's wait ends at the stop", took)
		}
	})
}

// A limiter that never decides is asked again at 5, 15, 35, 75, 155 and
// 315 seconds after each slot, and never at or past the chart's next one.
func TestRetriesOfAnUndecidedPassEndBeforeTheNextSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		src := &undecidedSource{undecided: func(time.Time) bool { return true }}
		runUndecided(t, src, 16*time.Minute+59*time.Second)
		code := regions.Default[3] // the fourth chart: slots at 3 and 11 minutes
		var want []time.Duration
		slots := []time.Duration{0, 3 * time.Minute, 11 * time.Minute, 19 * time.Minute} // the catch-up at start, then the slots
		for i, from := range slots[:3] {
			for _, retry := range []time.Duration{0, 5, 15, 35, 75, 155, 315, 635} {
				if at := from + retry*time.Second; at < slots[i+1] {
					want = append(want, at)
				}
			}
		}
		if got := since(start, src.tried[code]); !slices.Equal(got, want) {
			t.Errorf("%s tried at %v, want at %v", code, got, want)
		}
		// Metrics count a slot's failure once: its retries say they are.
		if got, want := src.failed[code], (map[bool]int{false: 3, true: len(want) - 3}); !maps.Equal(got, want) {
			t.Errorf("%s's failed runs, by whether they retried their slot: %v, want %v", code, got, want)
		}
		if len(src.paid[code]) != 0 {
			t.Errorf("%s got pages from a limiter that never decided: %v", code, since(start, src.paid[code]))
		}
	})
}

// since is each time's distance from start.
func since(start time.Time, at []time.Time) []time.Duration {
	out := make([]time.Duration, len(at))
	for i, t := range at {
		out[i] = t.Sub(start)
	}
	return out
}

// roomy is a pacer whose pools hold a pass only from a time on each
// minute: before it, it declines for want of room alone. It keeps when
// each chart was asked, and for which slot.
type roomy struct {
	start time.Time
	from  time.Duration // into each minute, when the pools hold a pass

	mu    sync.Mutex
	asked map[string][]time.Time
	slots map[string][]time.Time
	short map[string]bool
}

func (p *roomy) Due(_ context.Context, name string, slot time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	p.asked[name] = append(p.asked[name], now)
	p.slots[name] = append(p.slots[name], slot)
	p.short[name] = now.Sub(p.start)%time.Minute < p.from
	return !p.short[name]
}

func (p *roomy) WaitsForRoom(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.short[name]
}

func (*roomy) Ran(string, map[string]int64, map[string]int64, ingest.RunStatus) {}
func (*roomy) Look(context.Context)                                             {}

// A pass the pacer declines for want of room at its slot asks the slot
// again every few seconds, so that it takes the room when it frees rather
// than a whole slot later while others take it; it stops asking at its
// next slot, and each ask is for the slot it waits at.
func TestDaemonWaitsAtItsSlotForRoom(t *testing.T) {
	for _, c := range []struct {
		name string
		from time.Duration
	}{{"room after 20 s", 20 * time.Second}, {"no room", time.Hour}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				src := &undecidedSource{undecided: func(time.Time) bool { return false }, tried: map[string][]time.Time{}, paid: map[string][]time.Time{}}
				db, lim := storeAndLimiter(t)
				drain := make(chan struct{})
				r := daemon(db, lim, src, drain)
				pc := &roomy{start: start, from: c.from, asked: map[string][]time.Time{}, slots: map[string][]time.Time{}, short: map[string]bool{}}
				d := &jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: 8 * time.Minute}, Pacer: pc}
				done := make(chan error)
				go func() { done <- d.Run(context.Background()) }()
				time.Sleep(10*time.Minute + 59*time.Second)
				close(drain)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				code := regions.Default[3] // slots at 3 and 11 minutes
				slot, next := start.Add(3*time.Minute), start.Add(11*time.Minute)
				var asked []time.Duration
				for k, at := range pc.asked[code] {
					if !at.Before(slot) && at.Before(next) {
						asked = append(asked, at.Sub(slot))
						if !pc.slots[code][k].Equal(slot) {
							t.Errorf("%s asked at %s for the slot %s, want the slot it waits at, %s", code, at.Sub(start), pc.slots[code][k].Sub(start), slot.Sub(start))
						}
					}
				}
				// Asked at the slot, then every RoomEvery until the room is
				// there (the first ask at or after it runs), or, never, until
				// the next slot.
				var want []time.Duration
				for w := time.Duration(0); slot.Add(w).Before(next); w += jobs.RoomEvery {
					want = append(want, w)
					if w >= c.from {
						break
					}
				}
				if !slices.Equal(asked, want) {
					t.Errorf("%s asked at %v into its slot, want %v", code, asked, want)
				}
				ran := slot.Add(want[len(want)-1])
				if got := slices.ContainsFunc(src.paid[code], func(at time.Time) bool { return at.Equal(ran) }); got != (c.from < 8*time.Minute) {
					t.Errorf("%s: a page at %s into its slot is %v, want %v (the room from %s): pages at %v", code, want[len(want)-1], got, !got, c.from, since(start, src.paid[code]))
				}
			})
		})
	}
}
