package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
)

// Tables are the embedded quota limiter's tables (quota_log, quota_clock,
// quota_config, quota_block, locks) with their SQL, as package quota takes
// them (quota.Tables; the algorithm is quota's). Each method runs in tx, or
// on the database when tx is nil. What both databases share is written
// once here; what each does its own way is turns.go's.
type Tables struct {
	db *sql.DB
	turns
	prep *prepared
}

// Tables are the embedded limiter's tables on this database. On SQLite
// their statements are prepared the first time they are asked for, once
// for the ledger: the limiter built on them makes every decision with
// statements SQLite has already parsed.
func (l *Ledger) Tables() Tables {
	l.prepare()
	return Tables{l.w, l.turns, l.prep}
}

// prepare prepares the statements on SQLite, once for the ledger.
func (l *Ledger) prepare() {
	if _, ok := l.turns.(sqliteTurns); ok {
		l.prep.once.Do(func() { l.prep.prepare(l.w) })
	}
}

// prepared is q prepared on the write pool, or nil where it is not (on
// PostgreSQL, or a database not yet migrated). It may prepare, so it is
// asked before a transaction holds the pool's one connection.
func (l *Ledger) prepared(q string) *sql.Stmt {
	l.prepare()
	return l.prep.m[q]
}

// prepared are the tables' statements, prepared on the write pool. SQLite's
// driver parses a statement's text on every call it is given as text, and
// a decision runs about ten; pgx already keeps each text prepared on each
// connection, so PostgreSQL's tables take their text as it is.
type prepared struct {
	once sync.Once
	m    map[string]*sql.Stmt // read only once prepare has returned
}

// prepare prepares every statement the decisions run. It takes the pool's
// one connection, so it runs before any decision's transaction holds it; a
// statement that does not prepare (a database not yet migrated) runs as
// text.
func (p *prepared) prepare(db *sql.DB) {
	m := map[string]*sql.Stmt{}
	for _, q := range tableSQL {
		if st, err := db.PrepareContext(context.Background(), q); err == nil {
			m[q] = st
		}
	}
	p.m = m
}

// stmt is q prepared in tx (on the pool when tx is nil), or nil when it is
// not prepared.
func (t Tables) stmt(ctx context.Context, tx *sql.Tx, q string) *sql.Stmt {
	if t.prep == nil {
		return nil
	}
	st := t.prep.m[q]
	if st != nil && tx != nil {
		st = tx.StmtContext(ctx, st)
	}
	return st
}

// row, rows and exec run a statement of the tables; each that returns is
// the database's answer to an ingest.BoundBySilence on ctx (on PostgreSQL the
// driver tells it too).
func (t Tables) row(ctx context.Context, tx *sql.Tx, q string, args ...any) *sql.Row {
	defer ingest.Answered(ctx)
	if st := t.stmt(ctx, tx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.q(tx).QueryRowContext(ctx, q, args...)
}

func (t Tables) rows(ctx context.Context, tx *sql.Tx, q string, args ...any) (*sql.Rows, error) {
	defer ingest.Answered(ctx)
	if st := t.stmt(ctx, tx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	if tx == nil {
		return t.db.QueryContext(ctx, q, args...)
	}
	return tx.QueryContext(ctx, q, args...)
}

func (t Tables) exec(ctx context.Context, tx *sql.Tx, q string, args ...any) (sql.Result, error) {
	defer ingest.Answered(ctx)
	if st := t.stmt(ctx, tx, q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.q(tx).ExecContext(ctx, q, args...)
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (t Tables) q(tx *sql.Tx) queryRower {
	if tx == nil {
		return t.db
	}
	return tx
}

// one scans a row into dest, leaving it as it was when there is none.
func one(row *sql.Row, dest ...any) error {
	if err := row.Scan(dest...); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return nil
}

// The statements of the tables, each one text for both databases.
const (
	clockRowSQL    = `SELECT last_ms, seq FROM quota_clock WHERE quota_key = ?`
	setClockRowSQL = `INSERT INTO quota_clock (quota_key, last_ms, seq) VALUES (?, ?, ?)
		ON CONFLICT (quota_key) DO UPDATE SET last_ms = excluded.last_ms, seq = excluded.seq`
	newestSQL = `SELECT CAST(COALESCE(MAX(at_ms), 0) AS BIGINT) FROM quota_log WHERE quota_key = ?`
	trimSQL   = `DELETE FROM quota_log WHERE quota_key = ? AND pool = ? AND at_ms <= ?`
	addSQL    = `INSERT INTO quota_log (quota_key, pool, id, at_ms, units) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`
	dropSQL        = `DELETE FROM quota_log WHERE quota_key = ? AND id = ?`
	confSQL        = `SELECT conf FROM quota_config WHERE quota_key = ? AND pool = ?`
	addConfSQL     = `INSERT INTO quota_config (quota_key, pool, conf) VALUES (?, ?, ?)`
	replaceConfSQL = addConfSQL + ` ON CONFLICT (quota_key, pool) DO UPDATE SET conf = excluded.conf`
	blockedSQL     = `SELECT until_ms FROM quota_block WHERE quota_key = ? AND pool = ? AND until_ms > ?`
	blockSQL       = `INSERT INTO quota_block (quota_key, pool, until_ms) VALUES (?, ?, ?)
		ON CONFLICT (quota_key, pool) DO UPDATE SET until_ms = excluded.until_ms WHERE quota_block.until_ms < excluded.until_ms`
	takeSQL = `INSERT INTO locks (name, token, expires_ms) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET token = excluded.token, expires_ms = excluded.expires_ms
		WHERE locks.expires_ms <= ?`
	renewSQL   = `UPDATE locks SET expires_ms = ? WHERE name = ? AND token = ?`
	releaseSQL = `DELETE FROM locks WHERE name = ? AND token = ?`
)

// entries is the FROM clause of a pool's log entries after the
// parameter numbered after (the quota key's key, the pool's pool): the
// log's, or with ledger also the ledger's charges the log lacks
// (Missing), for a read that may not write them.
func entries(ledger bool, key, pool, after string) string {
	r := strings.NewReplacer("KEY", "?"+key, "POOL", "?"+pool, "AFTER", "?"+after)
	if !ledger {
		return r.Replace(` FROM quota_log WHERE quota_key = KEY AND pool = POOL AND at_ms > AFTER`)
	}
	return r.Replace(` FROM (SELECT id, at_ms, units FROM quota_log WHERE quota_key = KEY AND pool = POOL AND at_ms > AFTER
		UNION ALL SELECT l.call_id, l.at_ms, l.units FROM ledger l WHERE l.quota_key = KEY AND l.pool = POOL AND l.at_ms > AFTER AND l.units > 0` +
		lacked + `) AS e`)
}

// lacked keeps the ledger rows l that the log lacks and that were not
// given back.
const lacked = `
		AND NOT EXISTS (SELECT 1 FROM quota_log q WHERE q.quota_key = l.quota_key AND q.pool = l.pool AND q.id = l.call_id)
		AND NOT EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.quota_key = l.quota_key AND g.call_id = l.call_id)`

// usedSQL and reachingSQL are each read of the window twice: over the log
// alone ([false]), and over the log with the ledger's charges it lacks
// ([true]).
var usedSQL, reachingSQL [2]string

// missingSQL reads the ledger's charges the log lacks, by the ledger's
// index by time; missingAfterSQL those written after a write number, by
// its index by write number (the time's "+ 0" keeps SQLite's planner off
// the index by time, which would read the whole span).
const (
	missingSQL = `SELECT l.call_id, l.pool, l.units, l.at_ms, l.unmetered FROM ledger l
		WHERE l.quota_key = ? AND l.at_ms >= ? AND l.units > 0` + lacked + `
		ORDER BY l.at_ms, l.call_id, l.pool`
	missingAfterSQL = `SELECT l.call_id, l.pool, l.units, l.at_ms, l.unmetered FROM ledger l
		WHERE l.quota_key = ? AND l.at_ms + 0 >= ? AND l.seq > ? AND l.units > 0` + lacked + `
		ORDER BY l.at_ms, l.call_id, l.pool`
)

func init() {
	for i, ledger := range []bool{false, true} {
		usedSQL[i] = `SELECT
		CAST(COALESCE(SUM(CASE WHEN at_ms > ?1 THEN units END), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN CAST(?2 AS BIGINT) > 0 AND at_ms >= ?2 THEN units END), 0) AS BIGINT)` + entries(ledger, "3", "4", "5")
		reachingSQL[i] = `SELECT at_ms FROM (
		SELECT at_ms, SUM(units) OVER (ORDER BY at_ms, length(id), id ROWS UNBOUNDED PRECEDING) AS run` + entries(ledger, "2", "3", "4") + `
		) AS w WHERE run >= ?1 LIMIT 1`
	}
	tableSQL = append(tableSQL, usedSQL[0], usedSQL[1], reachingSQL[0], reachingSQL[1], missingSQL, missingAfterSQL)
}

// which is 1 for the read with the ledger, 0 for the log's alone.
func which(ledger bool) int {
	if ledger {
		return 1
	}
	return 0
}

// tableSQL are the statements prepare prepares.
var tableSQL = []string{clockRowSQL, setClockRowSQL, newestSQL, trimSQL, addSQL,
	dropSQL, confSQL, addConfSQL, replaceConfSQL, blockedSQL, blockSQL, takeSQL, renewSQL, releaseSQL,
	blocksSQL, insertCallSQL, nextSeqSQL}

func (t Tables) ClockRow(ctx context.Context, tx *sql.Tx, key string) (ms, seq int64, err error) {
	err = one(t.row(ctx, tx, clockRowSQL, key), &ms, &seq)
	return ms, seq, err
}

func (t Tables) SetClockRow(ctx context.Context, tx *sql.Tx, key string, ms, seq int64) error {
	_, err := t.exec(ctx, tx, setClockRowSQL, key, ms, seq)
	return err
}

func (t Tables) Newest(ctx context.Context, tx *sql.Tx, quotaKey string) (ms int64, err error) {
	err = t.row(ctx, tx, newestSQL, quotaKey).Scan(&ms)
	return ms, err
}

func (t Tables) Trim(ctx context.Context, tx *sql.Tx, quotaKey, pool string, keep int64) error {
	_, err := t.exec(ctx, tx, trimSQL, quotaKey, pool, keep)
	return err
}

func (t Tables) Used(ctx context.Context, tx *sql.Tx, quotaKey, pool string, horizon, dayStart, keep int64, ledger bool) (used, usedDay int64, err error) {
	err = t.row(ctx, tx, usedSQL[which(ledger)], horizon, dayStart, quotaKey, pool, keep).Scan(&used, &usedDay)
	return used, usedDay, err
}

// Reaching orders entries as the limiter's ids do (time, then sequence).
func (t Tables) Reaching(ctx context.Context, tx *sql.Tx, quotaKey, pool string, horizon, need int64, ledger bool) (at int64, err error) {
	err = one(t.row(ctx, tx, reachingSQL[which(ledger)], need, quotaKey, pool, horizon), &at)
	return at, err
}

// Missing returns the ledger's calls of quotaKey from since on written
// after the write number after (-1 for all) with their charges the log
// lacks (calls given back and charges of no units left out), and the
// blocks it holds in force after since.
func (t Tables) Missing(ctx context.Context, tx *sql.Tx, quotaKey string, since, after int64) (ingest.Recalled, error) {
	var q querier = t.db
	if tx != nil {
		q = tx
	}
	st, args := missingSQL, []any{quotaKey, since}
	if after >= 0 {
		st, args = missingAfterSQL, append(args, after)
	}
	rows, err := t.rows(ctx, tx, st, args...)
	if err != nil {
		return ingest.Recalled{}, err
	}
	var rec ingest.Recalled
	for rows.Next() {
		c := ingest.Call{QuotaKey: quotaKey}
		var ch ingest.Charge
		var at int64
		if err := rows.Scan(&c.ID, &ch.Pool, &ch.Units, &at, &c.Unmetered); err != nil {
			rows.Close()
			return ingest.Recalled{}, err
		}
		c.At = time.UnixMilli(at).UTC()
		if n := len(rec.Calls); n == 0 || rec.Calls[n-1].ID != c.ID {
			rec.Calls = append(rec.Calls, c)
		}
		last := &rec.Calls[len(rec.Calls)-1]
		last.Charges = append(last.Charges, ch)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return ingest.Recalled{}, err
	}
	rec.Blocks, err = blocksAfter(ctx, q, t.stmt(ctx, tx, blocksSQL), quotaKey, since)
	return rec, err
}

// Written is quotaKey's write number as tx sees it (Ledger.Written). Every
// decision reads it, so it runs prepared where the tables' statements are.
func (t Tables) Written(ctx context.Context, tx *sql.Tx, quotaKey string) (seq int64, err error) {
	return seq, one(t.row(ctx, tx, writtenSQL, quotaKey), &seq)
}

// blocksSQL reads the blocks in force after a time.
const blocksSQL = `SELECT pool, until_ms, at_ms, op FROM ledger_blocks
WHERE quota_key = ? AND until_ms > ?`

// blocksAfter are the blocks the ledger holds of quotaKey in force after
// ms, read with st (blocksSQL prepared) when it is not nil, else on q.
func blocksAfter(ctx context.Context, q querier, st *sql.Stmt, quotaKey string, ms int64) ([]ingest.Block, error) {
	var rows *sql.Rows
	var err error
	if st != nil {
		rows, err = st.QueryContext(ctx, quotaKey, ms)
	} else {
		rows, err = q.QueryContext(ctx, blocksSQL, quotaKey, ms)
	}
	if err != nil {
		return nil, fmt.Errorf("ledger blocks of %s: %w", quotaKey, err)
	}
	defer rows.Close()
	var out []ingest.Block
	for rows.Next() {
		b := ingest.Block{QuotaKey: quotaKey}
		var until, at int64
		if err := rows.Scan(&b.Pool, &until, &at, &b.Op); err != nil {
			return nil, fmt.Errorf("ledger blocks of %s: %w", quotaKey, err)
		}
		b.Until, b.At = time.UnixMilli(until).UTC(), time.UnixMilli(at).UTC()
		out = append(out, b)
	}
	return out, rows.Err()
}

func (t Tables) Add(ctx context.Context, tx *sql.Tx, quotaKey, pool, id string, at, units int64) (bool, error) {
	return affected(t.exec(ctx, tx, addSQL, quotaKey, pool, id, at, units))
}

func (t Tables) Drop(ctx context.Context, quotaKey, id string) error {
	_, err := t.exec(ctx, nil, dropSQL, quotaKey, id)
	return err
}

func (t Tables) Conf(ctx context.Context, tx *sql.Tx, quotaKey, pool string) (conf string, err error) {
	err = one(t.row(ctx, tx, confSQL, quotaKey, pool), &conf)
	return conf, err
}

func (t Tables) SetConf(ctx context.Context, tx *sql.Tx, quotaKey, pool, conf string, replace bool) error {
	q := addConfSQL
	if replace {
		q = replaceConfSQL
	}
	_, err := t.exec(ctx, tx, q, quotaKey, pool, conf)
	return err
}

func (t Tables) Blocked(ctx context.Context, tx *sql.Tx, quotaKey, pool string, now int64) (until int64, err error) {
	err = one(t.row(ctx, tx, blockedSQL, quotaKey, pool, now), &until)
	return until, err
}

func (t Tables) Block(ctx context.Context, tx *sql.Tx, quotaKey, pool string, until int64) error {
	_, err := t.exec(ctx, tx, blockSQL, quotaKey, pool, until)
	return err
}

func (t Tables) Take(ctx context.Context, name, token string, now, expires int64) (bool, error) {
	return affected(t.exec(ctx, nil, takeSQL, name, token, expires, now))
}

func (t Tables) Renew(ctx context.Context, name, token string, expires int64) (bool, error) {
	return affected(t.exec(ctx, nil, renewSQL, expires, name, token))
}

func (t Tables) Release(ctx context.Context, name, token string) error {
	_, err := t.exec(ctx, nil, releaseSQL, name, token)
	return err
}

func affected(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Shared says whether hosts share the tables (PostgreSQL), rather than
// the processes of one host (a SQLite file).
func (t Tables) Shared() bool {
	_, ok := t.turns.(pgTurns)
	return ok
}
