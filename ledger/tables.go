package ledger

import (
	"context"
	"database/sql"
	"errors"
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

func (t Tables) Used(ctx context.Context, tx *sql.Tx, quotaKey, pool string, horizon, dayStart, keep int64) (used, usedDay int64, err error) {
	err = t.q(tx).QueryRowContext(ctx, `SELECT
		CAST(COALESCE(SUM(CASE WHEN at_ms > ? THEN units END), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN CAST(? AS BIGINT) > 0 AND at_ms >= ? THEN units END), 0) AS BIGINT)
		FROM quota_log WHERE quota_key = ? AND pool = ? AND at_ms > ?`,
		horizon, dayStart, dayStart, quotaKey, pool, keep).Scan(&used, &usedDay)
	return used, usedDay, err
}

// Reaching orders entries as the limiter's ids do (time, then sequence).
func (t Tables) Reaching(ctx context.Context, tx *sql.Tx, quotaKey, pool string, horizon, need int64) (at int64, err error) {
	err = one(t.q(tx).QueryRowContext(ctx, `SELECT at_ms FROM (
		SELECT at_ms, SUM(units) OVER (ORDER BY at_ms, length(id), id ROWS UNBOUNDED PRECEDING) AS run
		FROM quota_log WHERE quota_key = ? AND pool = ? AND at_ms > ?) AS w WHERE run >= ? LIMIT 1`,
		quotaKey, pool, horizon, need), &at)
	return at, err
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
