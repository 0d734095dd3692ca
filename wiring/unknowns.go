package wiring

import (
	"context"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
)

// unknowns is the store's table of decisions of unknown outcome as the
// Redis limiter keeps them (quota.UnknownLedger): each package has its own
// record of one, and this is the one place that converts between them.
type unknowns struct{ db *store.DB }

func (u unknowns) RecordUnknown(ctx context.Context, x quota.Unknown) error {
	return u.db.RecordUnknown(ctx, store.Unknown(x))
}

func (u unknowns) Unknowns(ctx context.Context, quotaKey string) ([]quota.Unknown, error) {
	list, err := u.db.Unknowns(ctx, quotaKey)
	out := make([]quota.Unknown, len(list))
	for i, x := range list {
		out[i] = quota.Unknown(x)
	}
	return out, err
}

func (u unknowns) ResolveUnknown(ctx context.Context, x quota.Unknown, call *ingest.Call) error {
	return u.db.ResolveUnknown(ctx, store.Unknown(x), call)
}
