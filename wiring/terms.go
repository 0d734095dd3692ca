package wiring

// The key's standing under the upstream's terms as a host applies it to
// its database (retention.Gate, docs/explanation/terms.md): the prune it implies, and
// what the standing's check reads.

import (
	"context"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/retention"
)

// The prune's and the refresh's stores are retention's, over the store.
var (
	_ jobs.PruneStore   = retention.Store{}
	_ jobs.RefreshStore = retention.GoneStore{}
)

// Terms is the key's standing, and the span of the quota (whose ledger a
// prune keeps).
type Terms struct {
	Standing ingest.Standing
	Span     time.Duration
	Clock    clock.Clock // the house's; required
}

// PruneJob is the prune the standing implies, keeping keep of statistics
// (the standing's whole allowance when zero).
func (t Terms) PruneJob(db *Database, keep time.Duration, drain <-chan struct{}) *jobs.Prune {
	return &jobs.Prune{Standing: t.Standing, Keep: keep, Span: t.Span, Store: retention.Store{DB: db.DB}, Drain: drain,
		Clock: t.Clock}
}

// cuts are what the standing's prune removes now.
func (t Terms) cuts(db *Database) retention.Retention {
	return retention.For(t.PruneJob(db, 0, nil).Cuts(t.Clock.Now()))
}

// Beyond says whether db holds data older than the standing allows
// (retention.OverStanding); "" when it holds none.
func (t Terms) Beyond(ctx context.Context, db *Database) (string, error) {
	return retention.OverStanding(ctx, db.DB, db.Ledger, t.Standing, t.cuts(db))
}

// Gate is run's check of the standing before anything is spent
// (retention.Gate).
func (t Terms) Gate(ctx context.Context, db *Database) error {
	return retention.Gate(ctx, db.DB, db.Ledger, t.Standing, t.cuts(db))
}

// HeldIn reads how far back db's data reaches, for the report.
func HeldIn(db *Database) func(context.Context) (retention.Held, error) {
	return func(ctx context.Context) (retention.Held, error) { return retention.ReadHeld(ctx, db.DB) }
}
