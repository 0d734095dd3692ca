package jobs_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
)

// TestTheBackoffTheStoreKeepsHoldsTheDaemon: a daemon started during a
// backoff another process kept in the store calls the upstream for no
// chart, and once that process's pass succeeds (the store keeps none) it
// calls again at its next slots.
func TestTheBackoffTheStoreKeepsHoldsTheDaemon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db, lim := storeAndLimiter(t)
		kept := ingest.Backoff{Until: time.Now().Add(time.Hour).Truncate(time.Millisecond), Wait: time.Hour, InARow: 3,
			Blamed: "an upstream", Cause: "HTTP 500 backendError: Backend Error"}
		if err := db.KeepBackoff(ctx, kept); err != nil {
			t.Fatal(err)
		}
		src := &failingSource{}
		drain := make(chan struct{})
		r := daemon(db, lim, src, drain)
		r.Kept = db
		d := &jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: 8 * time.Minute}}
		done := make(chan error)
		go func() { done <- d.Run(ctx) }()
		time.Sleep(20 * time.Minute)
		if n := src.calls.Load(); n != 0 {
			t.Errorf("%d charts called during the backoff the store keeps", n)
		}
		if err := db.KeepBackoff(ctx, ingest.Backoff{}); err != nil { // another process's pass succeeded
			t.Fatal(err)
		}
		time.Sleep(10 * time.Minute)
		close(drain)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if src.calls.Load() == 0 {
			t.Errorf("the backoff ended in the store, and no chart was called in the next period")
		}
	})
}
