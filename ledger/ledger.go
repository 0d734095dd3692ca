// Package ledger is the quota's book in the database the store opened: the
// calls every limiter admitted (the ledger, with the calls given back and
// the blocks the upstream caused), its notes, the decisions of unknown
// outcome, the unmetered calls granted while the shared limiter was out of
// reach, the embedded limiter's tables (quota_log, quota_clock,
// quota_config, quota_block, locks), and what pacing plans from and keeps
// beside it: what each pass cost, the daemon's schedule and its plan.
//
// It owns no connection and no migration: store.Open opens the database
// and builds every table through its one numbered stream, and the wiring
// hands the ledger what store opened (Database). The SQL both databases share
// is written once; what differs (a transaction alone on a quota key, a
// snapshot, the clock, telling an outage from an error) sits side by side,
// SQLite's beside PostgreSQL's, in turns.go.
//
// What is where: the quota's book in the database store opened, handed to it
// by the wiring (ledger.New(db), no open and no migration of its own): the
// ledger's calls, blocks and calls given back (ledger.go), each write
// numbered in commit order, and a reader's cursor that reads only what was
// written since its last read (follow.go: Follow, Written), its notes and id
// (notes.go), decisions of unknown outcome (unknown.go), fail-open grants
// (failopen.go), the embedded limiter's tables (tables.go, with what the
// ledger holds that the log lacks, Missing), a worker's lease on its
// database that a copy reads, and a copy's worker's on its source that the
// source's workers read (workers.go), what each database does its own way,
// SQLite's beside PostgreSQL's (turns.go), what each pass cost as pacing
// reads it (passes.go), the daemon's schedule and pacing's plan (plans.go).
package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// Database is the database as store opened it (*store.DB).
type Database interface {
	// Writer is the write pool: one connection on SQLite, whose one writer
	// everything that writes must queue on.
	Writer() *sql.DB
	// Reader is the query-only read pool.
	Reader() *sql.DB
	// Postgres says the database is PostgreSQL, shared by hosts, rather
	// than a SQLite file shared by the processes of one host.
	Postgres() bool
	// Update runs fn in one write transaction: run again when the
	// database asks, refused on a database migrated past this binary's
	// schema.
	Update(ctx context.Context, fn func(*sql.Tx) error) error
}

// Ledger is the quota's book on one database. Its methods are safe for
// concurrent use.
type Ledger struct {
	w, r  *sql.DB
	turns turns
	tx    func(ctx context.Context, fn func(*sql.Tx) error) error
	prep  *prepared
}

// New returns the ledger on db.
func New(db Database) *Ledger {
	l := &Ledger{w: db.Writer(), r: db.Reader(), turns: newSQLiteTurns(db.Writer(), db.Reader()), tx: db.Update,
		prep: &prepared{}}
	if db.Postgres() {
		l.turns = pgTurns{db.Writer()}
	}
	return l
}

func msOf(t time.Time) int64 { return t.UnixMilli() }

// Recall returns what the ledger holds for quotaKey since a time: the
// calls, and the blocks still in force at now (the house clock's, as the
// limiter reads it), for a limiter to refill itself.
func (l *Ledger) Recall(ctx context.Context, quotaKey string, since, now time.Time) (ingest.Recalled, error) {
	calls, err := l.Calls(ctx, quotaKey, since)
	if err != nil {
		return ingest.Recalled{}, err
	}
	blocks, err := blocksAfter(ctx, l.r, nil, quotaKey, msOf(now))
	return ingest.Recalled{Calls: calls, Blocks: blocks}, err
}

// Calls returns the ledger's calls under quotaKey made at or after since,
// oldest first, each with its charges in every pool: for the report's
// breakdowns, and to refill a limiter that lost its data.
func (l *Ledger) Calls(ctx context.Context, quotaKey string, since time.Time) ([]ingest.Call, error) {
	return calls(ctx, l.r, quotaKey, since)
}

// querier is a pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func calls(ctx context.Context, db querier, quotaKey string, since time.Time) ([]ingest.Call, error) {
	rows, err := db.QueryContext(ctx, `
SELECT `+callColumns+`
FROM ledger WHERE quota_key = ? AND at_ms >= ?`+notGivenBack+`
ORDER BY at_ms, call_id, pool`, quotaKey, msOf(since))
	if err != nil {
		return nil, fmt.Errorf("ledger of %s: %w", quotaKey, err)
	}
	return scanCalls(rows, quotaKey)
}

// callColumns are a ledger row's columns as scanCalls reads them.
const callColumns = `call_id, pool, units, at_ms, op, region, coalesce(run_id, 0), unmetered, client`

// notGivenBack leaves out the rows of the calls given back.
const notGivenBack = `
  AND NOT EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.quota_key = ledger.quota_key AND g.call_id = ledger.call_id)`

// scanCalls reads rows of callColumns, ordered by time, call and pool,
// into calls with their charges, and closes rows.
func scanCalls(rows *sql.Rows, quotaKey string) ([]ingest.Call, error) {
	defer rows.Close()
	var calls []ingest.Call
	for rows.Next() {
		c := ingest.Call{QuotaKey: quotaKey}
		var ch ingest.Charge
		var at int64
		if err := rows.Scan(&c.ID, &ch.Pool, &ch.Units, &at, &c.Op, &c.Region, &c.RunID, &c.Unmetered, &c.Client); err != nil {
			return nil, fmt.Errorf("ledger of %s: %w", quotaKey, err)
		}
		c.At = time.UnixMilli(at).UTC()
		if n := len(calls); n == 0 || calls[n-1].ID != c.ID {
			calls = append(calls, c)
		}
		if ch.Pool != "" || ch.Units != 0 {
			last := &calls[len(calls)-1]
			last.Charges = append(last.Charges, ch)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger of %s: %w", quotaKey, err)
	}
	return calls, nil
}

// QuotaKeys returns the quota keys the ledger holds, sorted.
func (l *Ledger) QuotaKeys(ctx context.Context) ([]string, error) {
	// One index seek per key (a loose index scan), not a pass over the
	// whole ledger as DISTINCT would make.
	rows, err := l.r.QueryContext(ctx, `WITH RECURSIVE k (key) AS (
  SELECT (SELECT min(quota_key) FROM ledger)
  UNION ALL
  SELECT (SELECT min(quota_key) FROM ledger WHERE quota_key > k.key) FROM k WHERE k.key IS NOT NULL
) SELECT key FROM k WHERE key IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("quota keys: %w", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("quota keys: %w", err)
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// DailyUnits returns, per pool, the units quotaKey's ledger holds for each
// of days days UTC from since's, oldest first; given-back calls left out.
func (l *Ledger) DailyUnits(ctx context.Context, quotaKey string, since time.Time, days int) (map[string][]int64, error) {
	start := since.UTC().Truncate(24 * time.Hour)
	rows, err := l.r.QueryContext(ctx, `
SELECT pool, (at_ms - ?2) / 86400000 AS day, sum(units) FROM ledger
WHERE quota_key = ?1 AND at_ms >= ?2 AND at_ms < ?3
  AND NOT EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.quota_key = ledger.quota_key AND g.call_id = ledger.call_id)
GROUP BY pool, day`, quotaKey, start.UnixMilli(), start.AddDate(0, 0, days).UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("daily units of %s: %w", quotaKey, err)
	}
	defer rows.Close()
	out := map[string][]int64{}
	for rows.Next() {
		var pool string
		var day, units int64
		if err := rows.Scan(&pool, &day, &units); err != nil {
			return nil, fmt.Errorf("daily units of %s: %w", quotaKey, err)
		}
		if out[pool] == nil {
			out[pool] = make([]int64, days)
		}
		if day >= 0 && day < int64(days) {
			out[pool][day] += units
		}
	}
	return out, rows.Err()
}

// RecordCall writes an admitted call to the ledger, one row per pool it
// drew from. Writing the same call again changes nothing but its region
// and run where the first write lacked them: a call granted unmetered is
// written first by the grant (GrantUnmetered).
func (l *Ledger) RecordCall(ctx context.Context, call ingest.Call) error {
	if call.QuotaKey == "" || call.ID == "" {
		return fmt.Errorf("record call %q: a call needs a quota key and an id", call.Op)
	}
	st, seqSt := l.prepared(insertCallSQL), l.prepared(nextSeqSQL)
	err := l.tx(ctx, func(tx *sql.Tx) error { return insertCall(ctx, tx, st, seqSt, call) })
	if err != nil {
		return fmt.Errorf("record call %s %s: %w", call.Op, call.ID, err)
	}
	return nil
}

// insertCallSQL writes one charge of a call, numbered in write order
// (nextSeqSQL). A call written again takes its new number only where it
// changes the row, so that a reader in write order reads the change.
const insertCallSQL = `
INSERT INTO ledger (quota_key, call_id, pool, units, at_ms, op, region, run_id, unmetered, seq, client)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (quota_key, call_id, pool) DO UPDATE
SET region = excluded.region, run_id = excluded.run_id, seq = excluded.seq, client = excluded.client
WHERE ledger.region = '' AND ledger.run_id IS NULL AND ledger.client = ''`

// nextSeqSQL takes the next number of a quota key's counter of writes.
// The writer holds the counter's row until it commits (SQLite's one
// writer does as much for the whole file; on PostgreSQL the next writer of
// the key waits on the row and reads the number the first one left), so
// the numbers are the order the writes committed: what a reader that read
// the counter at n has not seen is numbered after n (docs/explanation/quota.md).
const nextSeqSQL = `INSERT INTO ledger_seq (quota_key, last) VALUES (?, 1)
ON CONFLICT (quota_key) DO UPDATE SET last = ledger_seq.last + 1 RETURNING last`

// nextSeq is quotaKey's next write number in tx, with st (nextSeqSQL
// prepared on the write pool) when it is not nil. It is taken last before
// the rows are written, so that the counter's row is held no longer than
// the transaction's end.
func nextSeq(ctx context.Context, tx *sql.Tx, st *sql.Stmt, quotaKey string) (seq int64, err error) {
	if st != nil {
		st = tx.StmtContext(ctx, st)
		defer st.Close()
		err = st.QueryRowContext(ctx, quotaKey).Scan(&seq)
	} else {
		err = tx.QueryRowContext(ctx, nextSeqSQL, quotaKey).Scan(&seq)
	}
	if err != nil {
		return 0, fmt.Errorf("number the write: %w", err)
	}
	return seq, nil
}

// insertCall writes call's rows in tx, numbered with one write number,
// with st (insertCallSQL prepared on the write pool) and seqSt (nextSeqSQL)
// when they are not nil.
func insertCall(ctx context.Context, tx *sql.Tx, st, seqSt *sql.Stmt, call ingest.Call) error {
	charges := call.Charges
	if len(charges) == 0 { // keep the call visible, charging nothing
		charges = []ingest.Charge{{}}
	}
	var run any
	if call.RunID != 0 {
		run = call.RunID
	}
	seq, err := nextSeq(ctx, tx, seqSt, call.QuotaKey)
	if err != nil {
		return err
	}
	if st != nil {
		st = tx.StmtContext(ctx, st)
		defer st.Close()
	}
	for _, c := range charges {
		args := []any{call.QuotaKey, call.ID, c.Pool, c.Units, msOf(call.At), call.Op, call.Region, run, call.Unmetered, seq, call.Client}
		var err error
		if st != nil {
			_, err = st.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, insertCallSQL, args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// RecordBlock keeps a block the upstream's exhaustion caused, so that a
// limiter that lost its data is refilled with it.
func (l *Ledger) RecordBlock(ctx context.Context, b ingest.Block) error {
	_, err := l.w.ExecContext(ctx, `INSERT INTO ledger_blocks (quota_key, pool, until_ms, at_ms, op)
VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, b.QuotaKey, b.Pool, msOf(b.Until), msOf(b.At), b.Op)
	if err != nil {
		return fmt.Errorf("record block %s: %w", b.Pool, err)
	}
	return nil
}

// RecordGiveBack marks, at at (the house clock's), a call that never
// reached the upstream: it stays in the ledger, and Calls and Recall leave
// it out. The mark is numbered in write order, as a call's rows are.
func (l *Ledger) RecordGiveBack(ctx context.Context, call ingest.Call, at time.Time) error {
	seqSt := l.prepared(nextSeqSQL)
	err := l.tx(ctx, func(tx *sql.Tx) error {
		seq, err := nextSeq(ctx, tx, seqSt, call.QuotaKey)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO ledger_given_back (quota_key, call_id, at_ms, seq) VALUES (?, ?, ?, ?)
ON CONFLICT DO NOTHING`, call.QuotaKey, call.ID, msOf(at), seq)
		return err
	})
	if err != nil {
		return fmt.Errorf("record give back %s: %w", call.ID, err)
	}
	return nil
}
