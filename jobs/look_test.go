package jobs_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/pace"
)

// A running daemon counts a worker of another database joining its pool,
// and one leaving it, within one period (--every) of the limiter's count
// changing, whatever its slots: a chart whose tier puts its slots three
// periods apart, and a plan made at a pass's end, off the slots, which is
// not yet a period old at the next one. The limiter is the embedded one,
// with the workers it counts (which only Redis's does) set by the test.
func TestDaemonCountsAJoinerWithinAPeriod(t *testing.T) {
	const every = time.Minute
	for _, c := range []struct {
		what         string
		region       string
		tier         int
		took         time.Duration
		joins, leave time.Duration // after the daemon's start
	}{
		{what: "a tier-3 chart's slots three periods apart", region: "JO", tier: 3, joins: 3*every + 30*time.Second, leave: 7*every + 10*time.Second},
		{what: "a plan made at a pass's end", region: "US", tier: 1, took: 20 * time.Second, joins: 30 * time.Second, leave: 2*every + 30*time.Second},
	} {
		t.Run(c.what, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				db, lim := storeAndLimiter(t)
				src := &slowSource{took: map[string]time.Duration{c.region: c.took}, at: map[string][]time.Time{}}
				drain := make(chan struct{})
				r := &jobs.Runner{Clock: clock.System, Locker: lim, Logger: quiet(), Drain: drain}
				r.Passes = []*jobs.Pass{{Clock: clock.System, Region: c.region, Tier: c.tier, QuotaKey: "q", Costs: costs.Default(),
					Limiter: lim, Source: src, Sink: db, Categories: db, Logger: quiet(), Drain: drain}}
				ros := jobs.Roster{Runner: r, Every: every}
				entries, err := ros.Entries()
				if err != nil {
					t.Fatal(err)
				}
				var others atomic.Int64
				state := func(ctx context.Context) ([]ingest.PoolState, error) {
					st, err := lim.State(ctx)
					for i := range st {
						st[i].Others = int(others.Load())
					}
					return st, err
				}
				pools := costs.Default().Pools
				pc, err := pace.New(pace.Config{Pools: pools, State: state, Entries: jobs.PaceEntries(entries, costs.Default()),
					History: pace.FromRecords(ledger.New(db), "q", pools), LastPass: db.LastStart,
					Clock: clock.System, Logger: quiet(), Refresh: every})
				if err != nil {
					t.Fatal(err)
				}
				share := func() float64 {
					for _, ps := range pc.Status().Pools {
						if ps.Pool == ingest.DefaultPool {
							return ps.Share
						}
					}
					return -1
				}
				start := time.Now()
				at := func(d time.Duration) string { return fmt.Sprintf("%s after the start", d) }
				done := make(chan error)
				go func() { done <- (&jobs.Daemon{Roster: ros, Pacer: pc}).Run(ctx) }()

				time.Sleep(c.joins - time.Since(start))
				if got := share(); got != 1 {
					t.Fatalf("alone, %s: the daemon counts on %.3f of the pool, want 1", at(c.joins), got)
				}
				others.Store(1) // another database's worker spent in the pool
				time.Sleep(every)
				if got := share(); got != 0.5 {
					t.Errorf("a worker joined %s; a period later the daemon counts on %.3f of the pool, want 0.5", at(c.joins), got)
				}
				time.Sleep(c.leave - time.Since(start))
				others.Store(0) // its last spend left the pool's window
				time.Sleep(every)
				if got := share(); got != 1 {
					t.Errorf("the other worker's last spend left the window %s; a period later the daemon counts on %.3f of the pool, want 1", at(c.leave), got)
				}
				close(drain)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}
