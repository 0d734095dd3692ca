package wiring

import (
	"context"

	"github.com/ingestworks/ingest/jobs"
)

// databaseLeases is the runner's locker: on a Redis limiter, each job's
// lease named for this database's ledger (jobs.PerLedger); on the embedded
// limiter the leases are in the database already.
func (h *Host) databaseLeases(ctx context.Context, l jobs.Locker, db *Database) (jobs.Locker, error) {
	if h.RedisURL == "" {
		return l, nil
	}
	id, err := db.Ledger.LedgerID(ctx)
	if err != nil {
		return nil, err
	}
	return jobs.PerLedger(l, id), nil
}
