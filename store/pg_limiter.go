package store

// The embedded quota limiter's turns and clock on PostgreSQL; the
// statements both databases share are limiter.go's.

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

// pgTurns are the embedded limiter's turns on PostgreSQL: hosts sharing
// one server, whose clock they share.
type pgTurns struct{ w *sql.DB }

// pgQuotaLockClass is the first half of the limiter's advisory locks, the
// second being the quota key's hash: apart from the store's one-number
// locks, which PostgreSQL keeps in a space of their own.
const pgQuotaLockClass = 0x71756f74 // "quot"

// Decide is read committed, whatever the server's default, so that each
// statement after the lock sees what the host that held it before
// committed (a snapshot taken before the lock would not). A transaction
// that goes idle longer than timeout, its host gone or hung mid-way, is
// ended by the server, and its lock with it: other hosts wait no longer
// than they would for an answer.
func (t pgTurns) Decide(ctx context.Context, quotaKey string, timeout time.Duration) (*sql.Tx, error) {
	tx, err := t.w.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return nil, err
	}
	ms := fmt.Sprintf("%dms", timeout.Milliseconds())
	_, err = tx.ExecContext(ctx, `SELECT set_config('idle_in_transaction_session_timeout', ?1, true),
		set_config('lock_timeout', ?1, true)`, ms)
	if err == nil {
		_, err = tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?1, hashtext(?2))`, pgQuotaLockClass, quotaKey)
	}
	if err != nil {
		tx.Rollback()
		return nil, err
	}
	return tx, nil
}

// Read is one snapshot for every pool.
func (t pgTurns) Read(ctx context.Context) (*sql.Tx, error) {
	return t.w.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
}

// Clock is the server's, as Redis's TIME is for the Redis limiter.
func (t pgTurns) Clock(ctx context.Context, tx *sql.Tx) (ms int64, err error) {
	err = LimiterTables{db: t.w}.q(tx).QueryRowContext(ctx, `SELECT CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT)`).Scan(&ms)
	return ms, err
}

// Down: no answer within the timeout (a hung server, a lock held past
// it), no connection, or the server refusing work for a while (starting,
// shutting down, out of connections).
func (pgTurns) Down(ctx context.Context, err error) bool {
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
