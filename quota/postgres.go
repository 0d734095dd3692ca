package quota

import (
	"context"
	"database/sql"
	"time"

	"github.com/ingestworks/ingest"
)

// PostgresTimeout bounds a decision of the limiter on PostgreSQL: it waits
// its turn behind other hosts' decisions and for a connection of the
// store's pool, which pages being written may hold.
const PostgresTimeout = 5 * time.Second

// Postgres is the embedded limiter in a PostgreSQL database: the same log
// as SQLite's, exact across every host that shares the database, with no
// Redis. Each decision is one transaction that first takes a lock on its
// quota key, so processes on every host take turns, and is taken by the
// server's clock, which every host shares.
type Postgres struct{ embedded }

// NewPostgres returns a limiter in the tables of a PostgreSQL store
// (store.DB.LimiterTables): the store opens the database, keeps its schema
// and holds the SQL. Like SQLite's, it never fails open: a server that
// does not answer within the timeout (default PostgresTimeout) is
// ErrUnavailable, and nothing is admitted.
func NewPostgres(t Tables, quotaKey string, costs *ingest.Costs, ledger Ledger, upstream *UpstreamClock, o Options) (*Postgres, error) {
	if o.Timeout <= 0 {
		o.Timeout = PostgresTimeout
	}
	e, err := newEmbedded(t, quotaKey, costs, ledger, upstream, o)
	if err != nil {
		return nil, err
	}
	// The server's clock, not the host's: hosts whose clocks differ would
	// disagree on the window and the calendar day, and spend more than the
	// limit between them. ClockOffset moves it in tests.
	offset := e.opts.ClockOffset.Milliseconds()
	e.wall = func(ctx context.Context, tx *sql.Tx) (int64, error) {
		ms, err := t.Turns.Clock(ctx, tx)
		return ms + offset, err
	}
	e.clockName, e.down = "PostgreSQL's clock_timestamp()", "database did not answer within"
	return &Postgres{e}, nil
}

// Backend names the backend, for reports.
func (p *Postgres) Backend() string { return "postgres" }
