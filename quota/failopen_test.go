package quota_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

// TestFaultFailOpenBudgetOneTransaction: six processes of one database (each its
// own store handle, as six processes are) take fail-open grants at the
// same moment while Redis is down or hung, each built as a library user
// builds it (wiring's Ledger of the store, quota.NewRedis). The budget's
// check and its grant are one write transaction on the ledger, so the
// database takes exactly its budget of 3, on SQLite and on PostgreSQL.
func TestFaultFailOpenBudgetOneTransaction(t *testing.T) {
	t.Parallel()
	for _, db := range []string{"sqlite", "postgres"} {
		for _, outage := range []string{"down", "hung"} {
			t.Run(db+"/"+outage, func(t *testing.T) {
				t.Parallel()
				path := filepath.Join(t.TempDir(), "ledger.db")
				if db == "postgres" {
					path = pgtest.URL(t)
				}
				addr := closedAddr(t)
				if outage == "hung" {
					srv := redistest.Start(t)
					addr = srv.Addr
					defer stop(t, srv)()
				}
				// Three rounds, each on a key of its own: grants that
				// overlap are up to the scheduler, so more of them.
				for round := range 3 {
					key := fmt.Sprintf("%s.%d", quotaKey(t), round)
					granted, held := failOpenAtOnce(t, path, addr, key, 6, 3)
					t.Logf("%s, Redis %s, round %d, 6 processes x 3 cheap calls at once: %d granted unmetered, the ledger holds %d (budget 3)",
						db, outage, round, granted, held)
					if granted != 3 || held != 3 {
						t.Fatalf("granted %d unmetered, the ledger holds %d; want the budget, 3, both", granted, held)
					}
				}
			})
		}
	}
}

// failOpenAtOnce runs procs processes on the database at path and quota
// key key, each
// taking calls cheap calls through a Redis at addr that does not answer;
// it returns the grants and the unmetered units the ledger holds.
func failOpenAtOnce(t *testing.T, path, addr, key string, procs, calls int) (granted, held int) {
	t.Helper()
	costs := faultCosts(t, false)
	ctx := context.Background()
	dbs := make([]*store.DB, procs)
	for i := range dbs {
		db, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, db := range dbs {
		l := ledgerLimiter(t, db, addr, key, costs)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range calls {
				d, err := l.Take(ctx, ingest.Caller{Region: "US"}, "videos.list")
				if errors.Is(err, quota.ErrUnavailable) {
					continue
				}
				if err != nil || !d.Allowed || !d.Unmetered {
					t.Errorf("a cheap call while Redis does not answer: %+v, %v", d, err)
					return
				}
				mu.Lock()
				granted++
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	rec, err := ledger.New(dbs[0]).Recall(ctx, key, time.Now().Add(-time.Hour), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rec.Calls {
		if c.Unmetered {
			held += int(c.Charges[0].Units)
			if c.Region != "US" {
				t.Errorf("unmetered call %s has region %q in the ledger: the caller given with the call must reach the ledger", c.ID, c.Region)
			}
		}
	}
	return granted, held
}

// ledgerLimiter is the Redis limiter of one process on db, wired as the
// binary wires it: its ledger, and the fail-open grant in the ledger's
// transaction.
func ledgerLimiter(t *testing.T, db *store.DB, addr, key string, costs *ingest.Costs) *quota.Redis {
	t.Helper()
	c, err := quota.NewClient("redis://"+addr, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	led, err := wiring.On(db, "test:/"+key).QuotaLedger(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l, err := quota.NewRedis(c, key, costs, led, quota.NoUpstreamClock, clock.System, quota.Options{Logger: quiet, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestFaultFailOpenCountsThisProcessGrants: a process without a ledger it can
// write in one transaction (no Grant), whose ledger writes have not landed,
// still counts the grants it made itself: 8 cheap calls while Redis is
// down take the budget of 3, not 8.
func TestFaultFailOpenCountsThisProcessGrants(t *testing.T) {
	t.Parallel()
	key, costs := quotaKey(t), faultCosts(t, false)
	c, err := quota.NewClient("redis://"+closedAddr(t), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	l, err := newRedis(c, limOpts{QuotaKey: key, Costs: costs, Logger: quiet, Timeout: 100 * time.Millisecond,
		Recall: func(context.Context) (ingest.Recalled, error) { return ingest.Recalled{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	granted := 0
	for range 8 {
		d, err := l.Take(context.Background(), ingest.Caller{}, "videos.list")
		switch {
		case err == nil && d.Allowed && d.Unmetered:
			granted++
		case !errors.Is(err, quota.ErrUnavailable):
			t.Fatalf("a cheap call while Redis is down: %+v, %v", d, err)
		}
	}
	if granted != 3 {
		t.Fatalf("8 cheap calls with the ledger's writes not landed: %d granted unmetered, want the budget, 3", granted)
	}
}
