package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/ingestworks/ingest"
)

// PruneStore deletes what a retention no longer keeps, in short
// transactions, so that pruning never holds the database for long.
type PruneStore interface {
	// Prune deletes what was fetched before each of cuts' times.
	Prune(ctx context.Context, cuts ingest.Cuts) (ingest.Pruned, error)
}

// Prune is the store's retention under the key's standing under the
// upstream's terms (docs/explanation/terms.md): it keeps Keep of statistics (chart
// runs, their entries, tracked counts; the standing's StatsFor when zero),
// no other data fetched longer ago than the standing's DataKeep, and the
// ledger for at least the quota's Span, which a limiter refills from,
// whatever Keep says.
type Prune struct {
	Standing ingest.Standing
	Keep     time.Duration
	Span     time.Duration
	Store    PruneStore
	// Drain, once closed, ends the prune between its transactions.
	Drain <-chan struct{}
	Clock ingest.Clock // the house's; required
}

// PruneResult is how one prune ended: completed, interrupted or failed.
type PruneResult struct {
	ingest.RunEnd
	ingest.Pruned
	Err error
}

// Run prunes once.
func (p *Prune) Run(ctx context.Context) PruneResult {
	now := required(p.Clock, "Prune").Now
	ctx, stop := drainCtx(ctx, p.Drain)
	defer stop()
	pruned, err := p.Store.Prune(ctx, p.Cuts(now()))
	res := PruneResult{Pruned: pruned, RunEnd: ingest.RunEnd{Status: ingest.StatusCompleted}}
	switch {
	// A drain cancels the prune's context, which may end a transaction
	// under way with the driver's own error rather than the context's.
	case err != nil && stopping(p.Drain) && (errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled)):
		res.Status, res.Message = ingest.StatusInterrupted, "interrupted: stopped between transactions"
	case err != nil:
		res.Status, res.Err = ingest.StatusFailed, err // the store names itself
		res.Message = res.Err.Error()
	}
	res.At = now()
	return res
}

// Kept is how long statistics are kept: Keep, or the standing's StatsFor.
func (p *Prune) Kept() time.Duration {
	if p.Keep > 0 {
		return p.Keep
	}
	return p.Standing.StatsFor
}

// Cuts are what a prune at at deletes before. Under the standard standing
// a video whose text was not fetched again within DataKeep goes with every
// row pointing at it; under extended, statistics kept longer keep their
// videos, which a refresh fetches again (jobs.Refresh), and only the
// videos nothing shows go.
func (p *Prune) Cuts(at time.Time) ingest.Cuts {
	keep, data := p.Kept(), p.Standing.DataKeep()
	c := ingest.Cuts{Stats: at.Add(-keep), Orphans: at.Add(-min(keep, data)), Search: at.Add(-data),
		Categories: at.Add(-data), Gone: at.Add(-data), Ledger: at.Add(-max(keep, p.Span))}
	if !p.Standing.Extended {
		c.Videos = at.Add(-data)
	}
	return c
}

// Entry is pruning as an entry of a schedule, named "prune".
func (p *Prune) Entry() Entry {
	return Entry{Name: "prune", Kind: KindPrune, run: func(ctx context.Context, _ time.Time) Ended {
		res := p.Run(ctx)
		msg := "pruned"
		if res.Status == ingest.StatusFailed {
			msg = "prune failed; trying again next period"
		}
		return Ended{RunEnd: res.RunEnd, Err: res.Err, Message: msg, Did: []any{"keep", ingest.Days(p.Kept()),
			"standing", p.Standing.Name(), "runs", res.Runs, "entries", res.Entries, "stats", res.Stats,
			"videos", res.Videos, "backfill_results", res.Search, "categories", res.Categories,
			"ledger", res.Ledger, "freed_bytes", res.Freed, "free_kept_bytes", res.FreeKept}}
	}}
}

// drainCtx is ctx, cancelled too once drain closes.
func drainCtx(ctx context.Context, drain <-chan struct{}) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-drain:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
