package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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
}

// Tables are the embedded limiter's tables on this database.
func (l *Ledger) Tables() Tables { return Tables{l.w, l.turns} }

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

func (t Tables) ClockRow(ctx context.Context, tx *sql.Tx, key string) (ms, seq int64, err error) {
	err = one(t.q(tx).QueryRowContext(ctx, `SELECT last_ms, seq FROM quota_clock WHERE quota_key = ?`, key), &ms, &seq)
	return ms, seq, err
}

func (t Tables) SetClockRow(ctx context.Context, tx *sql.Tx, key string, ms, seq int64) error {
	_, err := t.q(tx).ExecContext(ctx, `INSERT INTO quota_clock (quota_key, last_ms, seq) VALUES (?, ?, ?)
		ON CONFLICT (quota_key) DO UPDATE SET last_ms = excluded.last_ms, seq = excluded.seq`, key, ms, seq)
	return err
}

func (t Tables) Newest(ctx context.Context, tx *sql.Tx, quotaKey string) (ms int64, err error) {
	err = t.q(tx).QueryRowContext(ctx, `SELECT CAST(COALESCE(MAX(at_ms), 0) AS BIGINT) FROM quota_log WHERE quota_key = ?`, quotaKey).Scan(&ms)
	return ms, err
}

func (t Tables) Trim(ctx context.Context, tx *sql.Tx, quotaKey, pool string, keep int64) error {
	_, err := t.q(tx).ExecContext(ctx, `DELETE FROM quota_log WHERE quota_key = ? AND pool = ? AND at_ms <= ?`, quotaKey, pool, keep)
	return err
}

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

func (t Tables) Used(ctx context.Context, tx *sql.Tx, quotaKey, pool string, horizon, dayStart, keep int64, ledger bool) (used, usedDay int64, err error) {
	err = t.q(tx).QueryRowContext(ctx, `SELECT
		CAST(COALESCE(SUM(CASE WHEN at_ms > ?1 THEN units END), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN CAST(?2 AS BIGINT) > 0 AND at_ms >= ?2 THEN units END), 0) AS BIGINT)`+entries(ledger, "3", "4", "5"),
		horizon, dayStart, quotaKey, pool, keep).Scan(&used, &usedDay)
	return used, usedDay, err
}

// Reaching orders entries as the limiter's ids do (time, then sequence).
func (t Tables) Reaching(ctx context.Context, tx *sql.Tx, quotaKey, pool string, horizon, need int64, ledger bool) (at int64, err error) {
	err = one(t.q(tx).QueryRowContext(ctx, `SELECT at_ms FROM (
		SELECT at_ms, SUM(units) OVER (ORDER BY at_ms, length(id), id ROWS UNBOUNDED PRECEDING) AS run`+entries(ledger, "2", "3", "4")+`
		) AS w WHERE run >= ?1 LIMIT 1`, need, quotaKey, pool, horizon), &at)
	return at, err
}

// Missing returns the ledger's calls of quotaKey from since on with
// their charges the log lacks (calls given back and charges of no units
// left out), and the blocks it holds in force after since.
func (t Tables) Missing(ctx context.Context, tx *sql.Tx, quotaKey string, since int64) (ingest.Recalled, error) {
	var q querier = t.db
	if tx != nil {
		q = tx
	}
	rows, err := q.QueryContext(ctx, `SELECT l.call_id, l.pool, l.units, l.at_ms, l.unmetered FROM ledger l
		WHERE l.quota_key = ? AND l.at_ms >= ? AND l.units > 0`+lacked+`
		ORDER BY l.at_ms, l.call_id, l.pool`, quotaKey, since)
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
	rec.Blocks, err = blocksAfter(ctx, q, quotaKey, since)
	return rec, err
}

// blocksAfter are the blocks the ledger holds of quotaKey in force after
// ms.
func blocksAfter(ctx context.Context, q querier, quotaKey string, ms int64) ([]ingest.Block, error) {
	rows, err := q.QueryContext(ctx, `SELECT pool, until_ms, at_ms, op FROM ledger_blocks
WHERE quota_key = ? AND until_ms > ?`, quotaKey, ms)
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
	return affected(t.q(tx).ExecContext(ctx, `INSERT INTO quota_log (quota_key, pool, id, at_ms, units) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, quotaKey, pool, id, at, units))
}

func (t Tables) Drop(ctx context.Context, quotaKey, id string) error {
	_, err := t.db.ExecContext(ctx, `DELETE FROM quota_log WHERE quota_key = ? AND id = ?`, quotaKey, id)
	return err
}

func (t Tables) Conf(ctx context.Context, tx *sql.Tx, quotaKey, pool string) (conf string, err error) {
	err = one(t.q(tx).QueryRowContext(ctx, `SELECT conf FROM quota_config WHERE quota_key = ? AND pool = ?`, quotaKey, pool), &conf)
	return conf, err
}

func (t Tables) SetConf(ctx context.Context, tx *sql.Tx, quotaKey, pool, conf string, replace bool) error {
	q := `INSERT INTO quota_config (quota_key, pool, conf) VALUES (?, ?, ?)`
	if replace {
		q += ` ON CONFLICT (quota_key, pool) DO UPDATE SET conf = excluded.conf`
	}
	_, err := t.q(tx).ExecContext(ctx, q, quotaKey, pool, conf)
	return err
}

func (t Tables) Blocked(ctx context.Context, tx *sql.Tx, quotaKey, pool string, now int64) (until int64, err error) {
	err = one(t.q(tx).QueryRowContext(ctx, `SELECT until_ms FROM quota_block WHERE quota_key = ? AND pool = ? AND until_ms > ?`,
		quotaKey, pool, now), &until)
	return until, err
}

func (t Tables) Block(ctx context.Context, tx *sql.Tx, quotaKey, pool string, until int64) error {
	_, err := t.q(tx).ExecContext(ctx, `INSERT INTO quota_block (quota_key, pool, until_ms) VALUES (?, ?, ?)
		ON CONFLICT (quota_key, pool) DO UPDATE SET until_ms = excluded.until_ms WHERE quota_block.until_ms < excluded.until_ms`,
		quotaKey, pool, until)
	return err
}

func (t Tables) Take(ctx context.Context, name, token string, now, expires int64) (bool, error) {
	return affected(t.db.ExecContext(ctx, `INSERT INTO locks (name, token, expires_ms) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET token = excluded.token, expires_ms = excluded.expires_ms
		WHERE locks.expires_ms <= ?`, name, token, expires, now))
}

func (t Tables) Renew(ctx context.Context, name, token string, expires int64) (bool, error) {
	return affected(t.db.ExecContext(ctx, `UPDATE locks SET expires_ms = ? WHERE name = ? AND token = ?`, expires, name, token))
}

func (t Tables) Release(ctx context.Context, name, token string) error {
	_, err := t.db.ExecContext(ctx, `DELETE FROM locks WHERE name = ? AND token = ?`, name, token)
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
