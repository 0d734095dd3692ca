package quota

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLiteTimeout is how long the embedded limiter waits for the database's
// write lock, as long as the busy timeout in store.DSN.
const SQLiteTimeout = 10 * time.Second

// SQLite is the embedded limiter in the SQLite database, for one host.
// Every decision is one write transaction (BEGIN IMMEDIATE), so processes
// sharing the file take turns and stay exact.
type SQLite struct{ embedded }

// NewSQLite returns a limiter on db, the store's write pool (store.DB.Writer):
// the store opens the database and keeps its schema. It never fails open:
// a database busy past the timeout (default SQLiteTimeout) is an error.
func NewSQLite(db *sql.DB, quotaKey string, ledger Ledger, upstream *UpstreamClock, o Options) (*SQLite, error) {
	if db == nil {
		return nil, errors.New("quota: the database is required")
	}
	if ledger.none {
		return nil, errors.New("quota: the embedded limiter lives in the ledger's database: NoLedger cannot be")
	}
	if o.Timeout <= 0 {
		o.Timeout = SQLiteTimeout
	}
	opts, err := newSettings(quotaKey, ledger, upstream, o)
	if err != nil {
		return nil, fmt.Errorf("quota: %w", err)
	}
	return &SQLite{embedded{db: db, opts: opts, d: sqliteDialect{now: opts.Now}}}, nil
}

// Backend names the backend, for reports.
func (s *SQLite) Backend() string { return "sqlite" }

// sqliteDialect: one host, whose processes share the file and its clock.
type sqliteDialect struct{ now func() time.Time }

// decide is BEGIN IMMEDIATE (_txlock=immediate in the store's DSN): the
// database's one write lock, for every quota key at once.
func (sqliteDialect) decide(ctx context.Context, db *sql.DB, _ string) (*sql.Tx, error) {
	return db.BeginTx(ctx, nil)
}

// read is a plain deferred BEGIN, which a query-only connection allows.
func (sqliteDialect) read(ctx context.Context, db *sql.DB) (*sql.Tx, error) {
	return db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
}

// wall is Options.Now: every process sharing the file is on one host.
func (d sqliteDialect) wall(context.Context, querier) (int64, error) { return d.now().UnixMilli(), nil }

func (sqliteDialect) clock() string { return "this host's clock" }

func (sqliteDialect) lease(context.Context, querier) (int64, error) {
	return time.Now().UnixMilli(), nil
}

// unavailable: the write lock was held past the timeout.
func (sqliteDialect) unavailable(ctx context.Context, err error, timeout time.Duration) error {
	if !busy(ctx, err) {
		return nil
	}
	return fmt.Errorf("database busy for %s: %w: %w", timeout, ErrUnavailable, err)
}

// busy tells a database that is locked past the timeout from a real error.
func busy(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var serr *sqlite.Error
	if errors.As(err, &serr) {
		code := serr.Code() & 0xff
		return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED || code == sqlite3.SQLITE_INTERRUPT
	}
	return false
}
