// Package passtest fills a test's store as run --once fills the program's:
// each region's chart fetched by a pass (jobs.Pass) through the real
// YouTube client against the fake upstream (internal/rig/fakeyt) over HTTP,
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
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
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
// into one store runs on: the real client, the embedded limiter on the
// store's ledger, and the costs both charge by.
type Upstream struct {
	Fake    *fakeyt.Fake
	DB      *store.DB
	Limiter *quota.SQLite
	Clock   ingest.Clock // the limiter's, the client's and the passes'
	Client  *fetch.Client
	Costs   *ingest.Costs
}

// Options are New's tunables.
type Options struct {
	Costs *ingest.Costs // the operations' costs; costs.Default when nil
	Clock ingest.Clock  // the limiter's and the client's; the host's when nil
}

// New serves a fake upstream for the passes into db, with the embedded
// limiter on db's ledger under the default costs.
func New(t testing.TB, db *store.DB) *Upstream {
	t.Helper()
	return NewWith(t, db, Options{})
}

// NewWith is New with o's costs and clock.
func NewWith(t testing.TB, db *store.DB, o Options) *Upstream {
	t.Helper()
	ctx := context.Background()
	u := &Upstream{Fake: fakeyt.New(), DB: db, Costs: o.Costs, Clock: o.Clock}
	if u.Clock == nil {
		u.Clock = clock.System // the rig's default: a test that moves time gives its own
	}
	if u.Costs == nil {
		u.Costs = costs.Default()
	}
	srv := httptest.NewServer(u.Fake)
	t.Cleanup(srv.Close)
	l := ledger.New(db)
	id, err := l.LedgerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	led := quota.Ledger{ID: id, Where: "test", Record: l, Recall: l, Grant: l, Notes: l, Unknowns: l}
	tables := l.Tables()
	u.Limiter, err = quota.NewSQLite(quota.Tables{Turns: tables, Clocks: tables, Log: tables, Pools: tables, Leases: tables, Ledger: tables},
		QuotaKey, u.Costs, led, quota.NoUpstreamClock, u.Clock, quota.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u.Client, err = fetch.New(ctx, fetch.Options{Endpoint: srv.URL + "/", APIKey: Key, Backoff: time.Millisecond,
		Logger: slog.New(slog.DiscardHandler), Now: u.Clock.Now})
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
	return u.NewPass(chart).Run(context.Background())
}

// NewPass is the pass of chart, a region (US) or a region's category
// (US/10), as run --once builds it, for a test to change before it runs.
func (u *Upstream) NewPass(chart string) *jobs.Pass {
	region, category, _ := strings.Cut(chart, "/")
	return &jobs.Pass{Region: region, Category: category, QuotaKey: QuotaKey, Costs: u.Costs, Limiter: u.Limiter,
		Source: u.Client, Sink: u.DB, Categories: u.DB, Logger: slog.New(slog.DiscardHandler), Clock: u.Clock}
}

// Fill serves a fake upstream and fills db with one pass of each chart
// from it (Upstream.Fill). It gives the fake.
func Fill(t testing.TB, db *store.DB, charts ...string) *fakeyt.Fake {
	t.Helper()
	u := New(t, db)
	u.Fill(t, charts...)
	return u.Fake
}
