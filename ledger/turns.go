package ledger

// What the ledger does each database's own way, SQLite's beside
// PostgreSQL's: how decisions on one quota key take turns, a snapshot, the
// clock, telling an outage from an error, and the lock a fail-open grant
// takes. The statements both databases share are tables.go's and
// ledger.go's.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// turns is what the embedded limiter and a fail-open grant do each
// database's own way (quota.Turns, and Grant).
type turns interface {
	Decide(ctx context.Context, quotaKey string, timeout time.Duration) (*sql.Tx, error)
	Read(ctx context.Context) (*sql.Tx, error)
	// Snapshot is a read-only transaction on the read pool r whose reads
	// all see one state of the database.
	Snapshot(ctx context.Context, r *sql.DB) (*sql.Tx, error)
	Clock(ctx context.Context, tx *sql.Tx) (int64, error)
	Down(ctx context.Context, err error) bool
	// Grant makes the transactions granting quotaKey's unmetered calls
	// take turns (GrantUnmetered).
	Grant(ctx context.Context, tx *sql.Tx, quotaKey string) error
}

// sqliteTurns are the turns on SQLite: one host, whose processes share
// the file and its clock.
type sqliteTurns struct {
	w    *sql.DB
	file *sqliteFile
}

func newSQLiteTurns(w, r *sql.DB) sqliteTurns { return sqliteTurns{w, &sqliteFile{r: r}} }

// Decide is BEGIN IMMEDIATE (the store's DSN sets _txlock=immediate): the
// database's one write lock, for every quota key at once.
//
// The turn follows the queue. Every process that holds the lock in turn
// commits to the file, and each commit (its write-ahead log moving) tells
// an ingest.BoundBySilence on ctx that the file is alive; BEGIN is asked again
// while the lock stays busy and the file moves. A holder that commits
// nothing for the bound, stopped or hung with the lock, leaves the file
// still, and the wait ends there.
func (t sqliteTurns) Decide(ctx context.Context, _ string, _ time.Duration) (*sql.Tx, error) {
	stop := t.file.watch(ctx)
	defer stop()
	for {
		tx, err := t.w.BeginTx(ctx, nil)
		if err == nil {
			ingest.Answered(ctx)
			return tx, nil
		}
		if ctx.Err() != nil || !sqliteBusy(err) {
			return nil, err
		}
	}
}

// sqliteFile is the database's file as a decision waiting for the write
// lock watches it: its path, read once from the database.
type sqliteFile struct {
	r    *sql.DB
	once sync.Once
	path string // "" for a database with no file
}

// watch tells an ingest.BoundBySilence on ctx each time the file or its
// write-ahead log changes, until stop.
func (f *sqliteFile) watch(ctx context.Context) (stop func()) {
	f.once.Do(func() {
		var seq int
		var name string
		_ = f.r.QueryRowContext(context.WithoutCancel(ctx), `PRAGMA database_list`).Scan(&seq, &name, &f.path)
	})
	if f.path == "" {
		return func() {}
	}
	look := func() (sig [4]int64) {
		for i, p := range []string{f.path, f.path + "-wal"} {
			if fi, err := os.Stat(p); err == nil {
				sig[2*i], sig[2*i+1] = fi.Size(), fi.ModTime().UnixNano()
			}
		}
		return sig
	}
	// Most decisions have the lock at once: the looking starts only
	// once one has waited a look's time.
	done := make(chan struct{})
	start := ingest.AfterFunc(fileLook, func() {
		last := look()
		tick := ingest.NewTicker(fileLook)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				if now := look(); now != last {
					last = now
					ingest.Answered(ctx)
				}
			}
		}
	})
	return func() {
		start.Stop()
		close(done)
	}
}

// fileLook is how often a decision waiting for SQLite's write lock looks
// whether the file moved.
const fileLook = 50 * time.Millisecond

// sqliteBusy: the write lock was not had within the busy timeout.
func sqliteBusy(err error) bool {
	var serr *sqlite.Error
	if errors.As(err, &serr) {
		code := serr.Code() & 0xff
		return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
	}
	return false
}

// Read is a plain deferred BEGIN, which a query-only connection allows.
func (t sqliteTurns) Read(ctx context.Context) (*sql.Tx, error) {
	return t.w.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
}

// Snapshot is a deferred BEGIN: WAL gives its reads the state of the
// file at its first.
func (sqliteTurns) Snapshot(ctx context.Context, r *sql.DB) (*sql.Tx, error) {
	return r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
}

// Down: the write lock was held past the timeout.
func (sqliteTurns) Down(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var serr *sqlite.Error
	return sqliteBusy(err) || errors.As(err, &serr) && serr.Code()&0xff == sqlite3.SQLITE_INTERRUPT
}

// Grant takes no lock: SQLite's immediate transactions take turns.
func (sqliteTurns) Grant(context.Context, *sql.Tx, string) error { return nil }

// pgTurns are the turns on PostgreSQL: hosts sharing
// one server, whose clock they share.
type pgTurns struct{ w *sql.DB }

// pgQuotaLockClass and pgFailOpenLockClass are the first halves of the
// limiter's and a fail-open grant's advisory locks, the second being the
// quota key's hash: apart from each other and from the store's one-number
// locks, which PostgreSQL keeps in a space of their own.
const (
	pgQuotaLockClass    = 0x71756f74 // "quot"
	pgFailOpenLockClass = 0x6661696c // "fail"
)

// Decide is read committed, whatever the server's default, so that each
// statement after the lock sees what the host that held it before
// committed (a snapshot taken before the lock would not). A transaction
// that goes idle longer than timeout, its host gone or hung mid-way, is
// ended by the server, and its lock with it.
//
// The turn follows the queue: the lock is asked for with half the timeout,
// and asked for again while the server keeps saying it is held, each
// answer a sign the server works (ingest.BoundBySilence); the holders ahead are
// each ended by the server if they go idle. Only ctx ends the wait.
func (t pgTurns) Decide(ctx context.Context, quotaKey string, timeout time.Duration) (*sql.Tx, error) {
	for {
		tx, err := t.turn(ctx, quotaKey, timeout)
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != "55P03" || ctx.Err() != nil {
			return tx, err
		}
	}
}

// turn is one ask for the quota key's lock.
func (t pgTurns) turn(ctx context.Context, quotaKey string, timeout time.Duration) (*sql.Tx, error) {
	tx, err := t.w.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return nil, err
	}
	idle := fmt.Sprintf("%dms", timeout.Milliseconds())
	wait := fmt.Sprintf("%dms", max(timeout.Milliseconds()/2, 1))
	_, err = tx.ExecContext(ctx, `SELECT set_config('idle_in_transaction_session_timeout', ?1, true),
		set_config('lock_timeout', ?2, true)`, idle, wait)
	if err == nil {
		_, err = tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?1, hashtext(?2))`, pgQuotaLockClass, quotaKey)
	}
	if err == nil { // the decision's own statements wait the whole timeout
		_, err = tx.ExecContext(ctx, `SELECT set_config('lock_timeout', ?1, true)`, idle)
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

// Snapshot is repeatable read: one snapshot for every statement.
func (pgTurns) Snapshot(ctx context.Context, r *sql.DB) (*sql.Tx, error) {
	return r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
}

// Clock is the server's, as Redis's TIME is for the Redis limiter.
func (t pgTurns) Clock(ctx context.Context, tx *sql.Tx) (ms int64, err error) {
	err = Tables{db: t.w}.q(tx).QueryRowContext(ctx, `SELECT CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT)`).Scan(&ms)
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

// Grant takes an advisory lock on the quota key: read committed would let
// two hosts count its calls at once.
func (pgTurns) Grant(ctx context.Context, tx *sql.Tx, quotaKey string) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?, hashtext(?))`, pgFailOpenLockClass, quotaKey)
	return err
}
