// Package passtest fills a test's store as run --once fills the program's:
// each region's chart fetched by a pass (jobs.Pass) through the real
// YouTube client against the fake upstream (internal/fakeyt) over HTTP,
// charged to the embedded limiter, and stored. A package whose behaviour
// reads what the passes stored (search, charts, reports, exports) tests it
// in-process on such a store.
package passtest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/internal/fakeyt"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

// Key is the API key the passes send to the fake upstream.
const Key = "passtest-key"

// Fill runs one pass of each region's chart into db, one after another
// as run --once runs them, and fails the test unless every pass
// completes. It gives the fake upstream it fetched from.
func Fill(t testing.TB, db *store.DB, regions ...string) *fakeyt.Fake {
	t.Helper()
	ctx := context.Background()
	fake := fakeyt.New()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	quiet := slog.New(slog.DiscardHandler)
	c := costs.Default()
	led, err := wiring.On(db, "test").QuotaLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	limiter, err := quota.NewSQLite(wiring.Tables(ledger.New(db).Tables()), "q", c, led, quota.NoUpstreamClock, quota.Options{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := fetch.New(ctx, fetch.Options{Endpoint: srv.URL + "/", APIKey: Key, Backoff: time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, region := range regions {
		p := &jobs.Pass{Region: region, QuotaKey: "q", Costs: c, Limiter: limiter,
			Source: client, Sink: db, Categories: db, Logger: quiet}
		if res := p.Run(ctx); res.Status != ingest.StatusCompleted {
			t.Fatalf("passtest: the pass of %s ended %s: %v", region, res.Status, res.Err)
		}
	}
	return fake
}
