package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// GrantUnmetered decides, in one write transaction on the ledger, whether
// a call goes ahead unmetered while the shared limiter cannot be reached:
// decide is given the ledger's calls of quotaKey since since, and the call
// it returns (nil: none) is written before the transaction commits. The
// check and the grant are one step, so that processes on this database
// deciding at the same moment share one fail_open budget: SQLite's
// immediate transaction makes them take turns, and on PostgreSQL, where
// read committed would let two hosts count at once, an advisory lock on
// the quota key does.
func (l *Ledger) GrantUnmetered(ctx context.Context, quotaKey string, since time.Time,
	decide func([]ingest.Call) (*ingest.Call, error)) error {
	st, seqSt := l.prepared(insertCallSQL), l.prepared(nextSeqSQL)
	err := l.tx(ctx, func(tx *sql.Tx) error {
		if err := l.turns.Grant(ctx, tx, quotaKey); err != nil {
			return err
		}
		seen, err := calls(ctx, tx, quotaKey, since)
		if err != nil {
			return err
		}
		call, err := decide(seen)
		if err != nil || call == nil {
			return err
		}
		call.QuotaKey = quotaKey
		return insertCall(ctx, tx, st, seqSt, *call)
	})
	if err != nil {
		return fmt.Errorf("grant unmetered: %w", err)
	}
	return nil
}
