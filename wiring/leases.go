package wiring

import (
	"context"
	"strings"
	"time"

	"github.com/ingestworks/ingest/jobs"
)

// databaseLeases is the runner's locker. On a Redis limiter the leases
// live in Redis under the quota key, which hosts of databases of their own
// share; a job's lease (prune, tracking, the catalogue's refresh) is about
// one database, so it is named for that database's ledger: hosts on one
// database still exclude each other, hosts on their own no longer skip
// each other's work (docs/operations/faults.md, "A host cut off from a peer").
// A chart's lease keeps its name: which host charts a region is shared.
// On the embedded limiter the leases are in the database already.
func (h *Host) databaseLeases(ctx context.Context, l jobs.Locker, db *Database) (jobs.Locker, error) {
	if h.RedisURL == "" {
		return l, nil
	}
	id, err := db.Ledger.LedgerID(ctx)
	if err != nil {
		return nil, err
	}
	return ledgerLeases{l, id}, nil
}

type ledgerLeases struct {
	jobs.Locker
	ledger string
}

func (l ledgerLeases) Lock(ctx context.Context, name string, ttl time.Duration) (func(), bool, error) {
	if strings.HasPrefix(name, "job:") {
		name += "@" + l.ledger
	}
	return l.Locker.Lock(ctx, name, ttl)
}
