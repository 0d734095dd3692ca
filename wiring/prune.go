package wiring

import (
	"context"
	"time"

	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/retention"
	"github.com/ingestworks/ingest/store"
)

// PruneStore is retention over the store, as the prune job asks for it.
// Progress, when set, is told what the prune has removed so far after each
// of its transactions.
type PruneStore struct {
	DB       *store.DB
	Progress func(jobs.Pruned)
	// DryRun, when set, prunes on PostgreSQL in one transaction rolled
	// back at its end (retention.DryRun), and puts the database as that
	// prune left it in *DryRun. SQLite's dry run prunes a copy
	// (Host.DryRunCopy), with DryRun nil.
	DryRun *store.Size
}

var _ jobs.PruneStore = PruneStore{}

// Prune deletes what the cuts c say.
func (p PruneStore) Prune(ctx context.Context, c jobs.Cuts) (jobs.Pruned, error) {
	r := Retention(c)
	if p.Progress != nil {
		r.Progress = func(n retention.Pruned) { p.Progress(jobs.Pruned(n)) }
	}
	if p.DryRun != nil {
		pruned, left, err := retention.DryRun(ctx, p.DB, r)
		*p.DryRun = left
		return jobs.Pruned(pruned), err
	}
	pruned, err := retention.Prune(ctx, p.DB, r)
	return jobs.Pruned(pruned), err
}

// Retention is what a prune removes for cuts.
func Retention(c jobs.Cuts) retention.Retention {
	return retention.Retention{Before: c.Stats, VideosBefore: c.Videos, OrphansBefore: c.Orphans, SearchBefore: c.Search,
		CategoriesBefore: c.Categories, GoneBefore: c.Gone, LedgerBefore: c.Ledger}
}

// RefreshStore is the store as the refresh job asks for it, with the videos
// gone upstream deleted by retention.
type RefreshStore struct{ *store.DB }

var _ jobs.RefreshStore = RefreshStore{}

// Gone deletes the videos ids names, gone upstream, keeping a tombstone
// of each.
func (r RefreshStore) Gone(ctx context.Context, ids []string, at time.Time) (int64, error) {
	return retention.Gone(ctx, r.DB, ids, at)
}
