package main

import (
	"context"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
)

// unknownLedger keeps the Redis limiter's decisions of unknown outcome in
// the database, so that a worker that stops before Redis answers again
// leaves them to the next one on the same ledger.
type unknownLedger struct{ db *store.DB }

var _ quota.UnknownLedger = unknownLedger{}

func (l unknownLedger) RecordUnknown(ctx context.Context, u quota.Unknown) error {
	return l.db.RecordUnknown(ctx, store.Unknown(u))
}

func (l unknownLedger) Unknowns(ctx context.Context, quotaKey string) ([]quota.Unknown, error) {
	us, err := l.db.Unknowns(ctx, quotaKey)
	out := make([]quota.Unknown, len(us))
	for i, u := range us {
		out[i] = quota.Unknown(u)
	}
	return out, err
}

func (l unknownLedger) ResolveUnknown(ctx context.Context, u quota.Unknown, call *ingest.Call) error {
	return l.db.ResolveUnknown(ctx, store.Unknown(u), call)
}
