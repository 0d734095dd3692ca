package jobs

import (
	"context"
	"strings"
	"time"
)

// PerLedger is l with each job's lease (prune, tracking, the catalogue's
// refresh: a lease named "job:") named for the ledger of the database the
// job works on. On a Redis limiter the leases live in Redis under the
// quota key, which hosts of databases of their own share; a job's lease is
// about one database, so hosts on one database still exclude each other,
// and hosts on their own no longer skip each other's work
// (docs/operations/faults.md, "A host cut off from a peer"). A chart's lease keeps
// its name: which host charts a region is shared.
func PerLedger(l Locker, ledgerID string) Locker { return ledgerLeases{l, ledgerID} }

type ledgerLeases struct {
	Locker
	ledger string
}

func (l ledgerLeases) Lock(ctx context.Context, name string, ttl time.Duration) (func(), bool, error) {
	if strings.HasPrefix(name, "job:") {
		name += "@" + l.ledger
	}
	return l.Locker.Lock(ctx, name, ttl)
}
