package ledger

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ingestworks/ingest/quota"
)

// windowSQL is a pool's log entries after a time, in the order the
// limiter's ids run (Reaching's).
const windowSQL = `SELECT id, at_ms, units FROM quota_log WHERE quota_key = ? AND pool = ? AND at_ms > ?
	ORDER BY at_ms, length(id), id`

func init() { tableSQL = append(tableSQL, windowSQL) }

// Window is a pool's log entries after after, in the order of their ids
// (quota.LogWindow).
func (t Tables) Window(ctx context.Context, tx *sql.Tx, quotaKey, pool string, after int64) ([]quota.LogEntry, error) {
	rows, err := t.rows(ctx, tx, windowSQL, quotaKey, pool, after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []quota.LogEntry
	for rows.Next() {
		var e quota.LogEntry
		if err := rows.Scan(&e.ID, &e.At, &e.Units); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// errNoVersion: only SQLite says whether another connection wrote.
var errNoVersion = errors.New("the log's version is SQLite's alone")

// Version is what tells, in a decision's transaction on SQLite, that no
// other connection has committed since the version read before on the
// same connection (quota.LogWindow): SQLite's data_version, which moves at
// every commit of another connection, and a number this connection keeps
// in its own temporary schema (set when it has none), which names the
// connection, since two connections' data_version are not comparable.
func (t Tables) Version(ctx context.Context, tx *sql.Tx) (quota.LogVersion, error) {
	if _, ok := t.turns.(sqliteTurns); !ok || tx == nil {
		return quota.LogVersion{}, errNoVersion
	}
	var v quota.LogVersion
	if err := tx.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v.Data); err != nil {
		return quota.LogVersion{}, err
	}
	if err := tx.QueryRowContext(ctx, `PRAGMA temp.user_version`).Scan(&v.Conn); err != nil {
		return quota.LogVersion{}, err
	}
	if v.Conn == 0 {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return quota.LogVersion{}, err
		}
		v.Conn = int64(binary.BigEndian.Uint32(b[:])>>1 | 1)
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA temp.user_version = %d`, v.Conn)); err != nil {
			return quota.LogVersion{}, err
		}
	}
	return v, nil
}
