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
	"strings"
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
)

// Key is the API key the passes send to the fake upstream.
const Key = "passtest-key"

// QuotaKey is the quota key the passes charge and the ledger records.
const QuotaKey = "q"

// Upstream is the fake upstream served over HTTP, and the parts a pass
// into one store runs on.
type Upstream struct {
	Fake    *fakeyt.Fake
	db      *store.DB
	limiter *quota.SQLite
	client  *fetch.Client
	costs   *ingest.Costs
}

// New serves a fake upstream for the passes into db, with the embedded
// limiter on db's ledger under the default costs.
func New(t testing.TB, db *store.DB) *Upstream {
	t.Helper()
	ctx := context.Background()
	u := &Upstream{Fake: fakeyt.New(), db: db, costs: costs.Default()}
	srv := httptest.NewServer(u.Fake)
	t.Cleanup(srv.Close)
	l := ledger.New(db)
	id, err := l.LedgerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	led := quota.Ledger{ID: id, Where: "test", Record: l, Recall: l, Grant: l, Notes: l, Unknowns: l}
	tables := l.Tables()
	u.limiter, err = quota.NewSQLite(quota.Tables{Turns: tables, Clocks: tables, Log: tables, Pools: tables, Leases: tables, Ledger: tables},
		QuotaKey, u.costs, led, quota.NoUpstreamClock, quota.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u.client, err = fetch.New(ctx, fetch.Options{Endpoint: srv.URL + "/", APIKey: Key, Backoff: time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Fill runs one pass of each chart, a region (US) or a region's category
// (US/10), one after another as run --once runs them, and fails the test
// unless every pass completes.
func (u *Upstream) Fill(t testing.TB, charts ...string) {
	t.Helper()
	for _, chart := range charts {
		if res := u.Pass(chart); res.Status != ingest.StatusCompleted {
			t.Fatalf("passtest: the pass of %s ended %s: %v", chart, res.Status, res.Err)
		}
	}
}

// Pass runs one pass of chart and gives how it ended, for a test whose
// upstream fails or has no chart there.
func (u *Upstream) Pass(chart string) jobs.PassResult {
	region, category, _ := strings.Cut(chart, "/")
	p := &jobs.Pass{Region: region, Category: category, QuotaKey: QuotaKey, Costs: u.costs, Limiter: u.limiter,
		Source: u.client, Sink: u.db, Categories: u.db, Logger: slog.New(slog.DiscardHandler)}
	return p.Run(context.Background())
}

// Fill serves a fake upstream and fills db with one pass of each chart
// from it (Upstream.Fill). It gives the fake.
func Fill(t testing.TB, db *store.DB, charts ...string) *fakeyt.Fake {
	t.Helper()
	u := New(t, db)
	u.Fill(t, charts...)
	return u.Fake
}
