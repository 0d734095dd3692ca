package retention

import (
	"context"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// For is what a prune removes for the cuts a prune job sets.
func For(c ingest.Cuts) Retention {
	return Retention{Before: c.Stats, VideosBefore: c.Videos, OrphansBefore: c.Orphans, SearchBefore: c.Search,
		CategoriesBefore: c.Categories, GoneBefore: c.Gone, LedgerBefore: c.Ledger}
}

// Store is the prune over the store, as the prune job asks for it
// (jobs.PruneStore). Progress, when set, is told what the prune has removed
// so far after each of its transactions.
type Store struct {
	DB       *store.DB
	Progress func(ingest.Pruned)
	// DryRun, when set, prunes on PostgreSQL in one transaction rolled
	// back at its end (DryRun), and puts the database as that prune left
	// it in *DryRun. SQLite's dry run prunes a copy, with DryRun nil.
	DryRun *store.Size
}

// Prune deletes what the cuts c say.
func (s Store) Prune(ctx context.Context, c ingest.Cuts) (ingest.Pruned, error) {
	r := For(c)
	r.Progress = s.Progress
	if s.DryRun != nil {
		pruned, left, err := DryRun(ctx, s.DB, r)
		*s.DryRun = left
		return pruned, err
	}
	return Prune(ctx, s.DB, r)
}

// GoneStore is the store as the refresh job asks for it
// (jobs.RefreshStore), with the videos gone upstream deleted here.
type GoneStore struct{ *store.DB }

// Gone deletes the videos ids names, gone upstream, keeping a tombstone
// of each.
func (g GoneStore) Gone(ctx context.Context, ids []string, at time.Time) (int64, error) {
	return Gone(ctx, g.DB, ids, at)
}
