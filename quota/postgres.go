package quota

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// PostgresTimeout bounds a decision of the limiter on PostgreSQL: it waits
// its turn behind other hosts' decisions and for a connection of the
// store's pool, which pages being written may hold.
const PostgresTimeout = 5 * time.Second

// Postgres is the embedded limiter in a PostgreSQL database: the same log
// as SQLite's, exact across every host that shares the database, with no
// Redis. Each decision is one transaction that first takes an advisory
// lock on its quota key, so processes on every host take turns, and is
// taken by the server's clock, which every host shares.
type Postgres struct{ embedded }

// NewPostgres returns a limiter on db, the store's pool (store.DB.Writer):
// the store opens the database and keeps its schema, and its driver writes
// the limiter's ? placeholders as PostgreSQL's. Like SQLite's, it never
// fails open: a server that does not answer within the timeout (default
// PostgresTimeout) is ErrUnavailable, and nothing is admitted.
func NewPostgres(db *sql.DB, quotaKey string, ledger Ledger, upstream *UpstreamClock, o Options) (*Postgres, error) {
	if db == nil {
		return nil, errors.New("quota: the database is required")
	}
	if ledger.none {
		return nil, errors.New("quota: the embedded limiter lives in the ledger's database: NoLedger cannot be")
	}
	if o.Timeout <= 0 {
		o.Timeout = PostgresTimeout
	}
	opts, err := newSettings(quotaKey, ledger, upstream, o)
	if err != nil {
		return nil, fmt.Errorf("quota: %w", err)
	}
	d := pgDialect{offset: opts.ClockOffset.Milliseconds(), timeout: opts.Timeout}
	return &Postgres{embedded{db: db, opts: opts, d: d}}, nil
}

// Backend names the backend, for reports.
func (p *Postgres) Backend() string { return "postgres" }

// pgDialect: hosts sharing one server, whose clock they share.
type pgDialect struct {
	offset  int64 // Options.ClockOffset, ms
	timeout time.Duration
}

// pgLockClass is the first half of the limiter's advisory locks, the
// second being the quota key's hash: apart from the store's one-number
// locks, which PostgreSQL keeps in a space of their own.
const pgLockClass = 0x71756f74 // "quot"

// decide is read committed, whatever the server's default, so that each
// statement after the lock sees what the host that held it before
// committed (a snapshot taken before the lock would not). A transaction
// that goes idle longer than the timeout, its host gone or hung mid-way,
// is ended by the server, and its lock with it: other hosts wait no longer
// than they would for an answer.
func (d pgDialect) decide(ctx context.Context, db *sql.DB, quotaKey string) (*sql.Tx, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return nil, err
	}
	ms := fmt.Sprintf("%dms", d.timeout.Milliseconds())
	_, err = tx.ExecContext(ctx, `SELECT set_config('idle_in_transaction_session_timeout', $1, true),
		set_config('lock_timeout', $1, true)`, ms)
	if err == nil {
		_, err = tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, pgLockClass, quotaKey)
	}
	if err != nil {
		tx.Rollback()
		return nil, err
	}
	return tx, nil
}

// read is one snapshot for every pool.
func (pgDialect) read(ctx context.Context, db *sql.DB) (*sql.Tx, error) {
	return db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
}

// wall is the server's clock, not the host's: hosts whose clocks differ
// would disagree on the window and the calendar day, and spend more than
// the limit between them. ClockOffset moves it in tests.
func (d pgDialect) wall(ctx context.Context, q querier) (int64, error) {
	ms, err := d.lease(ctx, q)
	return ms + d.offset, err
}

// lease is the server's clock, as Redis's TIME is for its leases.
func (pgDialect) clock() string { return "PostgreSQL's clock_timestamp()" }

func (pgDialect) lease(ctx context.Context, q querier) (int64, error) {
	var ms int64
	err := q.QueryRowContext(ctx, `SELECT CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT)`).Scan(&ms)
	return ms, err
}

// unavailable: no answer within the timeout (a hung server, a lock held
// past it), no connection, or the server refusing work for a while
// (starting, shutting down, out of connections).
func (pgDialect) unavailable(ctx context.Context, err error, timeout time.Duration) error {
	if !pgDown(ctx, err) {
		return nil
	}
	return fmt.Errorf("database did not answer within %s: %w: %w", timeout, ErrUnavailable, err)
}

func pgDown(ctx context.Context, err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code[:2] {
		case "08", "53", "57": // connection; insufficient resources; operator intervention, cancels and shutdowns
			return true
		}
		return pe.Code == "55P03" // lock_timeout
	}
	var ne net.Error
	return ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) ||
		pgconn.Timeout(err) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}
