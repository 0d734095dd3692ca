package wiring

import (
	"context"

	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/store"
)

// PruneStore is the store's retention as the prune job asks for it.
type PruneStore struct{ DB *store.DB }

var _ jobs.PruneStore = PruneStore{}

// Prune deletes what the cuts c say.
func (p PruneStore) Prune(ctx context.Context, c jobs.Cuts) (jobs.Pruned, error) {
	r, err := p.DB.Prune(ctx, Retention(c))
	return jobs.Pruned(r), err
}

// Retention is the store's retention for cuts.
func Retention(c jobs.Cuts) store.Retention {
	return store.Retention{Before: c.Stats, VideosBefore: c.Videos, OrphansBefore: c.Orphans, SearchBefore: c.Search,
		CategoriesBefore: c.Categories, GoneBefore: c.Gone, LedgerBefore: c.Ledger}
}
