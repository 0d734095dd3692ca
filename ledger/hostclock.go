package ledger

import (
	"context"
	"database/sql"
	"time"
)

// Clock is this host's, not the house's: every process sharing the SQLite
// file is on it, and a lease (a worker's on its database, a copy's on its
// source) must expire by a clock all its holders read, which a rehearsal's
// offset in one process must not move. PostgreSQL's is the server's
// (pgTurns.Clock).
func (sqliteTurns) Clock(context.Context, *sql.Tx) (int64, error) { return time.Now().UnixMilli(), nil }
