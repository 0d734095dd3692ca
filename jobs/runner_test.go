package jobs_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

// slowSource serves a one-page chart per region, taking the region's
// duration on the bubble's clock, and records when each chart was asked.
type slowSource struct {
	took map[string]time.Duration
	mu   sync.Mutex
	at   map[string][]time.Time
}

func (s *slowSource) Chart(ctx context.Context, gate ingest.Gate, region, _, _ string) (ingest.Page, error) {
	if _, err := gate(ctx, "videos.list"); err != nil {
		return ingest.Page{}, err
	}
	s.mu.Lock()
	s.at[region] = append(s.at[region], time.Now())
	s.mu.Unlock()
	time.Sleep(s.took[region])
	v := ingest.Video{ID: "v-" + region, Title: "a video in " + region, PublishedAt: time.Now()}
	return ingest.Page{Kind: ingest.Trending, Region: region, Videos: []ingest.Video{v}, Fetched: time.Now()}, nil
}

func (s *slowSource) Categories(context.Context, ingest.Gate, string, string) ([]ingest.Category, error) {
	return nil, nil
}

// storeAndLimiter opens a store in a temp dir and the embedded limiter on
// it, for quota key "q" at the shipped costs.
func storeAndLimiter(t *testing.T) (*store.DB, *quota.SQLite) {
	t.Helper()
	db := storetest.Open(t)
	led, err := wiring.On(db, "test").QuotaLedger(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lim, err := quota.NewSQLite(wiring.Tables(ledger.New(db).Tables()), "q", costs.Default(), led, quota.NoUpstreamClock, clock.System, quota.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db, lim
}

// daemon is a runner of every default region's pass from src into db.
func daemon(db *store.DB, lim *quota.SQLite, src jobs.Source, drain chan struct{}) *jobs.Runner {
	r := &jobs.Runner{Clock: clock.System, Locker: lim, Logger: quiet(), Drain: drain}
	for _, code := range regions.Default {
		r.Passes = append(r.Passes, &jobs.Pass{Clock: clock.System, Region: code, QuotaKey: "q", Costs: costs.Default(), Limiter: lim,
			Source: src, Sink: db, Categories: db, Logger: quiet(), Drain: drain})
	}
	return r
}

// TestDaemonStartRunsEachSlotOnce: a daemon starts with every region's
// slot missed, so it catches them up one after another; GB's next slot
// comes while the catch-up is still busy with a slow US, and the schedule
// runs GB then. The catch-up must not run GB again for that same slot.
// The bubble's clock starts at a period boundary (2000-01-01 00:00 UTC).
func TestDaemonStartRunsEachSlotOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db, lim := storeAndLimiter(t)
		src := &slowSource{took: map[string]time.Duration{"US": 30 * time.Second}, at: map[string][]time.Time{}}
		drain := make(chan struct{})
		r := daemon(db, lim, src, drain)
		every := 8 * time.Minute // a slot a minute: GB's at 00:01
		time.Sleep(45 * time.Second)
		done := make(chan error)
		go func() { done <- (&jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: every}}).Run(ctx) }()
		time.Sleep(4 * time.Minute) // the catch-up ends and four slots pass
		close(drain)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for i, code := range regions.Default {
			s, _ := regions.Stagger(every, i, len(regions.Default))
			slots := map[time.Time]time.Time{}
			for _, at := range src.at[code] {
				if prev, twice := slots[s.Prev(at)]; twice {
					t.Errorf("%s ran twice for its slot %s: at %s and at %s", code,
						s.Prev(at).Format(time.TimeOnly), prev.Format(time.TimeOnly), at.Format(time.TimeOnly))
				}
				slots[s.Prev(at)] = at
			}
			if len(src.at[code]) == 0 {
				t.Errorf("%s never ran", code)
			}
		}
	})
}

// TestDaemonFiresOnTheHouseClock: the schedule fires a slot when the
// house clock reaches it, not when the host's does: with the house clock
// four minutes ahead of the host's, each slot's run starts at its slot on
// the house clock (the lag /metrics shows: none).
func TestDaemonFiresOnTheHouseClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, lim := storeAndLimiter(t)
		drain := make(chan struct{})
		r := daemon(db, lim, &slowSource{at: map[string][]time.Time{}}, drain)
		const ahead = 4 * time.Minute
		r.Clock = clock.Func(func() time.Time { return time.Now().Add(ahead) })
		var mu sync.Mutex
		var lags []time.Duration
		r.Observe = func(_ jobs.Entry, _ jobs.Ended, took time.Duration, slot time.Time) {
			if slot.IsZero() {
				return // the catch-up at start
			}
			mu.Lock()
			defer mu.Unlock()
			lags = append(lags, r.Clock.Now().Add(-took).Sub(slot))
		}
		done := make(chan error)
		go func() {
			done <- (&jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: 8 * time.Minute}}).Run(context.Background())
		}()
		time.Sleep(20 * time.Minute)
		close(drain)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if len(lags) == 0 {
			t.Fatal("no slot ran in 20 minutes")
		}
		for _, lag := range lags {
			if lag < 0 || lag >= time.Minute {
				t.Errorf("a slot's run started %s after its slot on the house clock, want at its slot", lag)
			}
		}
	})
}

// TestDaemonFiresNoSlotTwiceWhenTheClockStepsBack: the house clock stepped
// back ten minutes while the daemon waits for a slot does not make it fire
// again the slots it already fired: it waits for the slot it was waiting
// for, on the clock as it now reads.
func TestDaemonFiresNoSlotTwiceWhenTheClockStepsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, lim := storeAndLimiter(t)
		drain := make(chan struct{})
		r := daemon(db, lim, &slowSource{at: map[string][]time.Time{}}, drain)
		var back atomic.Int64
		r.Clock = clock.Func(func() time.Time { return time.Now().Add(-time.Duration(back.Load())) })
		var mu sync.Mutex
		fired := map[string]int{}
		r.Observe = func(e jobs.Entry, _ jobs.Ended, _ time.Duration, slot time.Time) {
			if slot.IsZero() {
				return // the catch-up at start
			}
			mu.Lock()
			defer mu.Unlock()
			fired[e.Name+" "+slot.Format(time.TimeOnly)]++
		}
		done := make(chan error)
		go func() {
			done <- (&jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: 8 * time.Minute}}).Run(context.Background())
		}()
		time.Sleep(12 * time.Minute)
		back.Store(int64(10 * time.Minute))
		time.Sleep(20 * time.Minute)
		close(drain)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if len(fired) == 0 {
			t.Fatal("no slot ran")
		}
		for slot, n := range fired {
			if n > 1 {
				t.Errorf("%s fired %d times, want once", slot, n)
			}
		}
	})
}

// TestDaemonsSharingAStoreRunEachSlotOnce: two daemons (two hosts) share
// one store and one lease; every slot of every chart is stored once in
// all, though both daemons' schedules fire at the same moment and a pass
// ends long before the other daemon asks for the lease.
func TestDaemonsSharingAStoreRunEachSlotOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db, lim := storeAndLimiter(t)
		src := &slowSource{took: map[string]time.Duration{}, at: map[string][]time.Time{}}
		drain := make(chan struct{})
		every := 8 * time.Minute
		done := make(chan error, 2)
		for range 2 {
			r := daemon(db, lim, src, drain)
			r.LastStart = db.LastStart
			go func() { done <- (&jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: every}}).Run(ctx) }()
		}
		time.Sleep(20 * time.Minute)
		close(drain)
		for range 2 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		for i, code := range regions.Default {
			s, _ := regions.Stagger(every, i, len(regions.Default))
			slots := map[time.Time]int{}
			for _, at := range src.at[code] {
				slots[s.Prev(at)]++
			}
			for slot, n := range slots {
				if n != 1 {
					t.Errorf("%s: slot %s stored %d times, want once", code, slot.Format(time.TimeOnly), n)
				}
			}
			if len(slots) < 3 {
				t.Errorf("%s: %d slots ran in 20 minutes of an 8-minute schedule, want 3", code, len(slots))
			}
		}
	})
}

// TestAStartStampedAheadHoldsNoSlot: a chart's last start in the store
// stamped well ahead of this host's clock (a host whose clock was stepped
// ahead when it ran) is no run of the slots before it: the chart runs at
// its slots, where taking the stamp as a run of each would leave it stale
// for as long as the step.
func TestAStartStampedAheadHoldsNoSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db, lim := storeAndLimiter(t)
		src := &slowSource{took: map[string]time.Duration{}, at: map[string][]time.Time{}}
		drain := make(chan struct{})
		r := daemon(db, lim, src, drain)
		ahead := time.Now().Add(15 * time.Minute)
		r.LastStart = func(ctx context.Context, chart string) (time.Time, error) {
			if chart == "US" {
				return ahead, nil
			}
			return db.LastStart(ctx, chart)
		}
		every := 8 * time.Minute
		done := make(chan error, 1)
		go func() {
			done <- (&jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: every}, LastStart: map[string]time.Time{"US": ahead}}).Run(ctx)
		}()
		time.Sleep(17 * time.Minute)
		close(drain)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := len(src.at["US"]); n < 2 {
			t.Errorf("US ran %d times in 17 minutes of an 8-minute schedule, want its two slots: a start stamped 15 minutes ahead held it", n)
		}
	})
}

// TestDaemonTellsObserveTheSlot: Observe sees the slot the schedule
// started a pass for, and no slot for a catch-up at start, which ran for a
// slot that passed while no daemon was there: a lag metric must not count
// it as late.
func TestDaemonTellsObserveTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db, lim := storeAndLimiter(t)
		src := &slowSource{took: map[string]time.Duration{"US": 30 * time.Second}, at: map[string][]time.Time{}}
		drain := make(chan struct{})
		r := daemon(db, lim, src, drain)
		type seen struct {
			region      string
			start, slot time.Time
		}
		var mu sync.Mutex
		var got []seen
		r.Observe = func(e jobs.Entry, _ jobs.Ended, took time.Duration, slot time.Time) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, seen{e.Name, time.Now().Add(-took), slot})
		}
		every := 8 * time.Minute // a slot a minute: GB's at 00:01
		time.Sleep(45 * time.Second)
		started := time.Now()
		done := make(chan error)
		go func() { done <- (&jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: every}}).Run(ctx) }()
		time.Sleep(4 * time.Minute)
		close(drain)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		index := map[string]int{}
		for i, code := range regions.Default {
			index[code] = i
		}
		catchUps, onSlot := 0, 0
		for _, o := range got {
			s, _ := regions.Stagger(every, index[o.region], len(regions.Default))
			switch {
			case o.slot.IsZero():
				catchUps++
				if s.Prev(o.start).After(started) {
					t.Errorf("%s at %s: no slot, but its slot %s came after the daemon started", o.region, o.start.Format(time.TimeOnly), s.Prev(o.start).Format(time.TimeOnly))
				}
			default:
				onSlot++
				if o.slot != s.Prev(o.start) || o.slot.Before(started) {
					t.Errorf("%s at %s: slot %s, want its schedule's %s, after the start", o.region, o.start.Format(time.TimeOnly), o.slot.Format(time.TimeOnly), s.Prev(o.start).Format(time.TimeOnly))
				}
			}
		}
		if catchUps == 0 || onSlot == 0 {
			t.Errorf("%d catch-ups and %d passes on their slot; want some of each: %+v", catchUps, onSlot, got)
		}
	})
}
