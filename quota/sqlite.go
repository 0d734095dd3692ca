package quota

import (
	"context"
	"database/sql"
	"time"

	"github.com/ingestworks/ingest"
)

// SQLiteTimeout is how long the embedded limiter waits for the database's
// write lock, as long as the busy timeout in store.DSN.
const SQLiteTimeout = 10 * time.Second

// SQLite is the embedded limiter in the SQLite database, for one host.
// Every decision is one write transaction (BEGIN IMMEDIATE), so processes
// sharing the file take turns and stay exact.
type SQLite struct{ embedded }

// NewSQLite returns a limiter in the tables of a SQLite store
// (store.DB.LimiterTables): the store opens the database, keeps its schema
// and holds the SQL. It decides by this host's clock (Options.Now), which
// every process sharing the file shares. It never fails open: a database
// busy past the timeout (default SQLiteTimeout) is an error.
func NewSQLite(t Tables, quotaKey string, costs *ingest.Costs, ledger Ledger, upstream *UpstreamClock, o Options) (*SQLite, error) {
	if o.Timeout <= 0 {
		o.Timeout = SQLiteTimeout
	}
	e, err := newEmbedded(t, quotaKey, costs, ledger, upstream, o)
	if err != nil {
		return nil, err
	}
	now := e.opts.Now
	e.wall = func(context.Context, *sql.Tx) (int64, error) { return now().UnixMilli(), nil }
	e.clockName, e.down = "this host's clock", "database busy for"
	return &SQLite{e}, nil
}

// Backend names the backend, for reports.
func (s *SQLite) Backend() string { return "sqlite" }
