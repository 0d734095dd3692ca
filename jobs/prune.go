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
	// Prune deletes the chart runs started before before, with their
	// entries, the stats read before it and the videos nothing kept shows,
	// and the ledger rows older than ledgerBefore.
	Prune(ctx context.Context, before, ledgerBefore time.Time) (Pruned, error)
}

// Pruned is what one prune removed.
type Pruned struct {
	Runs, Entries, Stats, Videos, Ledger int64
	Freed                                int64 // bytes given back to the file system
}

// Prune is the store's retention: it keeps Keep of runs, entries and
// stats, and the ledger for at least the quota's Span, which a limiter
// refills from, whatever Keep says.
type Prune struct {
	Keep  time.Duration
	Span  time.Duration
	Store PruneStore
	// Drain, once closed, ends the prune between its transactions.
	Drain <-chan struct{}
	Now   func() time.Time // time.Now when nil
}

// PruneResult is how one prune ended: completed, interrupted or failed.
type PruneResult struct {
	ingest.RunEnd
	Pruned
	Err error
}

// Run prunes once.
func (p *Prune) Run(ctx context.Context) PruneResult {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	ctx, stop := drainCtx(ctx, p.Drain)
	defer stop()
	at := now()
	pruned, err := p.Store.Prune(ctx, at.Add(-p.Keep), at.Add(-max(p.Keep, p.Span)))
	res := PruneResult{Pruned: pruned, RunEnd: ingest.RunEnd{Status: ingest.StatusCompleted}}
	switch {
	case err != nil && stopping(p.Drain) && errors.Is(err, context.Canceled):
		res.Status, res.Message = ingest.StatusInterrupted, "interrupted: stopped between transactions"
	case err != nil:
		res.Status, res.Err = ingest.StatusFailed, err // the store names itself
		res.Message = res.Err.Error()
	}
	res.At = now()
	return res
}

// Entry is pruning as an entry of a schedule, named "prune".
func (p *Prune) Entry() Entry {
	return Entry{Name: "prune", Kind: KindPrune, run: func(ctx context.Context) Ended {
		res := p.Run(ctx)
		return Ended{RunEnd: res.RunEnd, Err: res.Err, Did: []any{"keep", p.Keep.String(),
			"runs", res.Runs, "entries", res.Entries, "stats", res.Stats, "videos", res.Videos,
			"ledger", res.Ledger, "freed_bytes", res.Freed}}
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
