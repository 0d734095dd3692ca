package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// RecordPass records how a pass of an entry that has no run row ended
// (tracking, the refresh, the prune): when it started and finished, its
// status, and the slot a daemon ran it for (zero: none, as for a
// catch-up), so that pacing credits it to that slot however long it ran
// (docs/explanation/pacing.md). A pass recorded twice is kept once.
func (db *DB) RecordPass(ctx context.Context, entry string, started, finished, slot time.Time, status ingest.RunStatus) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO passes (entry, started_ms, finished_ms, slot_ms, status)
VALUES (?, ?, ?, ?, ?) ON CONFLICT (entry, started_ms) DO NOTHING`,
			entry, msOf(started), msOf(finished), nullMS(slot), string(status))
		return err
	})
	if err != nil {
		return fmt.Errorf("record the %s pass: %w", entry, err)
	}
	return nil
}
