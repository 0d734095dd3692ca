package store

import (
	"context"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/quota"
)

// QuotaLedger is the database as the limiter's required ledger
// (quota.Ledger): its id, where it is (the host and path, for reports),
// and every role, so that a limiter built on it keeps every promise.
func (db *DB) QuotaLedger(ctx context.Context, where string) (quota.Ledger, error) {
	id, err := db.LedgerID(ctx)
	if err != nil {
		return quota.Ledger{}, err
	}
	return quota.Ledger{ID: id, Where: where, Record: db, Recall: db, Grant: db, Notes: db,
		Unknowns: quotaUnknowns{db}}, nil
}

// quotaUnknowns keeps the limiter's decisions of unknown outcome.
type quotaUnknowns struct{ db *DB }

func (l quotaUnknowns) RecordUnknown(ctx context.Context, u quota.Unknown) error {
	return l.db.RecordUnknown(ctx, Unknown(u))
}

func (l quotaUnknowns) Unknowns(ctx context.Context, quotaKey string) ([]quota.Unknown, error) {
	us, err := l.db.Unknowns(ctx, quotaKey)
	out := make([]quota.Unknown, len(us))
	for i, u := range us {
		out[i] = quota.Unknown(u)
	}
	return out, err
}

func (l quotaUnknowns) ResolveUnknown(ctx context.Context, u quota.Unknown, call *ingest.Call) error {
	return l.db.ResolveUnknown(ctx, Unknown(u), call)
}
