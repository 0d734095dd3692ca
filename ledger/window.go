package ledger

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
)

// windowSQL is a pool's log entries after a time, in the order the
// limiter's ids run (Reaching's).
const windowSQL = `SELECT id, at_ms, units FROM quota_log WHERE quota_key = ? AND pool = ? AND at_ms > ?
	ORDER BY at_ms, length(id), id`

// dataVersionSQL and connVersionSQL are what Version reads: every
// decision reads both, so they run prepared where the tables' statements
// are.
const (
	dataVersionSQL = `PRAGMA data_version`
	connVersionSQL = `PRAGMA temp.user_version`
)

func init() { tableSQL = append(tableSQL, windowSQL, dataVersionSQL, connVersionSQL) }

// Window is a pool's log entries after after, in the order of their ids,
// each to fn (quota.LogWindow).
func (t Tables) Window(ctx context.Context, tx *sql.Tx, quotaKey, pool string, after int64, fn func(id string, at, units int64)) error {
	rows, err := t.rows(ctx, tx, windowSQL, quotaKey, pool, after)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var at, units int64
		if err := rows.Scan(&id, &at, &units); err != nil {
			return err
		}
		fn(id, at, units)
	}
	return rows.Err()
}

// errNoVersion: only SQLite says whether another connection wrote.
var errNoVersion = errors.New("the log's version is SQLite's alone")

// Version is what tells, in a decision's transaction on SQLite, that no
// other connection has committed since the version read before on the
// same connection (quota.LogWindow): SQLite's data_version, which moves at
// every commit of another connection, and a number this connection keeps
// in its own temporary schema (set when it has none), which names the
// connection, since two connections' data_version are not comparable.
func (t Tables) Version(ctx context.Context, tx *sql.Tx) (conn, data int64, err error) {
	if _, ok := t.turns.(sqliteTurns); !ok || tx == nil {
		return 0, 0, errNoVersion
	}
	if err := t.row(ctx, tx, dataVersionSQL).Scan(&data); err != nil {
		return 0, 0, err
	}
	if err := t.row(ctx, tx, connVersionSQL).Scan(&conn); err != nil {
		return 0, 0, err
	}
	if conn == 0 {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return 0, 0, err
		}
		conn = int64(binary.BigEndian.Uint32(b[:])>>1 | 1)
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA temp.user_version = %d`, conn)); err != nil {
			return 0, 0, err
		}
	}
	return conn, data, nil
}
