package jobs_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// slowStats answers videos.batchGetStats after took on the bubble's clock.
type slowStats struct{ took time.Duration }

func (s slowStats) Stats(ctx context.Context, gate ingest.Gate, ids []string) ([]ingest.VideoStats, error) {
	if _, err := gate(ctx, ingest.OpBatchGetStats); err != nil {
		return nil, err
	}
	time.Sleep(s.took)
	out := make([]ingest.VideoStats, len(ids))
	for i, id := range ids {
		out[i] = ingest.VideoStats{ID: id}
	}
	return out, nil
}

// charted is a track store that has always charted n videos in US and
// keeps no counts.
type charted int

func (n charted) ChartedSince(context.Context, time.Time) ([]ingest.Charted, error) {
	out := make([]ingest.Charted, n)
	for i := range out {
		out[i] = ingest.Charted{ID: fmt.Sprintf("v%03d", i), Regions: []string{"US"}}
	}
	return out, nil
}

func (charted) SaveStats(context.Context, []ingest.VideoStats) error { return nil }

// lateLocker takes each lease late: a slot's pass starts that long after
// the slot (a slow lease, store or database).
type lateLocker struct {
	jobs.Locker
	late time.Duration
}

func (l lateLocker) Lock(ctx context.Context, name string, ttl time.Duration) (func(), bool, error) {
	time.Sleep(l.late)
	return l.Locker.Lock(ctx, name, ttl)
}

// trackDaemon runs a paced daemon of US's chart and tracking, both every
// every, on db until stop, tracking's passes each three calls of took
// begun late after their slot; it returns the slots tracking ran at.
func trackDaemon(t *testing.T, db *store.DB, lim *quota.SQLite, every, took, late time.Duration, stop time.Time) []time.Time {
	t.Helper()
	drain := make(chan struct{})
	var mu sync.Mutex
	var slots []time.Time
	r := &jobs.Runner{Clock: clock.System, Locker: lateLocker{lim, late}, Logger: quiet(), Drain: drain, LastStart: db.LastStart, Record: db,
		Observe: func(e jobs.Entry, end jobs.Ended, _ time.Duration, slot time.Time) {
			if e.Name == "track" && end.Status == ingest.StatusCompleted {
				mu.Lock()
				defer mu.Unlock()
				slots = append(slots, slot)
			}
		}}
	r.Passes = []*jobs.Pass{{Clock: clock.System, Region: "US", QuotaKey: "q", Costs: costs.Default(), Limiter: lim,
		Source: &slowSource{at: map[string][]time.Time{}}, Sink: db, Categories: db, Logger: quiet(), Drain: drain}}
	ros := jobs.Roster{Runner: r, Every: every, TrackEvery: every,
		Track: &jobs.Track{QuotaKey: "q", Costs: costs.Default(), Limiter: lim, Source: slowStats{took}, Store: charted(3 * jobs.TrackBatch),
			Logger: quiet(), Drain: drain, Cadence: jobs.Cadence{Every: every}, Clock: clock.System}}
	entries, err := ros.Entries()
	if err != nil {
		t.Fatal(err)
	}
	pools := costs.Default().Pools
	pc, err := pace.New(pace.Config{Pools: pools, State: lim.State, Entries: jobs.PaceEntries(entries, costs.Default()),
		History: pace.FromRecords(ledger.New(db), "q", pools), LastPass: db.LastCompletedStart,
		Clock: clock.System, Logger: quiet(), Refresh: every})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- (&jobs.Daemon{Roster: ros, Pacer: pc}).Run(context.Background()) }()
	time.Sleep(time.Until(stop))
	close(drain)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return slots
}

// Tracking's passes that last longer than a stagger step, begun late
// after their slots, run at every slot its plan gives (every one, on a
// pool that holds them all), as the charts' do: each is credited to the
// slot it ran for, whatever its length. A restarted daemon, whose pacer
// reads the passes from the database, goes on at every slot.
func TestTrackingRunsAtEverySlotHoweverLongItsPasses(t *testing.T) {
	const every = 5 * time.Minute // a stagger step of 37.5 s
	const took, late = 25 * time.Second, 10 * time.Second
	synctest.Test(t, func(t *testing.T) {
		db, lim := storeAndLimiter(t)
		start := time.Now()
		restart := start.Add(time.Hour)
		first := trackDaemon(t, db, lim, every, took, late, restart)
		second := trackDaemon(t, db, lim, every, took, late, restart.Add(time.Hour))
		slots := regions.AfterCharts(every, 1, 2) // tracking's, after one chart
		for run, c := range []struct {
			got        []time.Time
			from, till time.Time
		}{{first, start, restart}, {second, restart, restart.Add(time.Hour)}} {
			var want []time.Time
			for at := slots.Next(c.from); at.Before(c.till.Add(-took*3 - late)); at = slots.Next(at) {
				want = append(want, at)
			}
			if len(want) < 10 {
				t.Fatalf("only %d slots: the test shows nothing", len(want))
			}
			if !slices.Equal(c.got, want) {
				t.Errorf("daemon %d: tracking ran at %d of its %d slots: at %v, want every one: %v", run+1, len(c.got), len(want), since(start, c.got), since(start, want))
			}
		}
	})
}
