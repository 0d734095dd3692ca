package pace

import (
	"context"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// Records is what a worker's database keeps that the pacer starts from:
// its ledger, its entries' last passes and their measured costs (the
// store implements it).
type Records interface {
	Calls(ctx context.Context, quotaKey string, since time.Time) ([]ingest.Call, error)
	LastPasses(ctx context.Context, quotaKey string, since time.Time) (map[string]time.Time, error)
	PassCosts(ctx context.Context, quotaKey string, since time.Time) (map[string]map[string]float64, error)
}

// lookBack is how far back an entry's last pass and its costs are read:
// an entry not fetched for that long runs at once.
const lookBack = 48 * time.Hour

// FromRecords is a Pacer's History read from a worker's database, for
// quotaKey's pools: its own calls in each pool's window and an edge
// before it (calls given back left out), each entry's last pass, and the costs of the last day's
// passes.
func FromRecords(r Records, quotaKey string, pools []ingest.Pool) func(ctx context.Context, now time.Time) (History, error) {
	return func(ctx context.Context, now time.Time) (History, error) {
		h := History{Spent: map[string][]Spent{}}
		calls, err := r.Calls(ctx, quotaKey, HistorySince(pools, now))
		if err != nil {
			return h, fmt.Errorf("ledger: %w", err)
		}
		for _, c := range calls {
			for _, ch := range c.Charges {
				if ch.Units > 0 {
					h.Spent[ch.Pool] = append(h.Spent[ch.Pool], Spent{At: c.At, Units: ch.Units})
				}
			}
		}
		if h.Last, err = r.LastPasses(ctx, quotaKey, now.Add(-lookBack)); err != nil {
			return h, err
		}
		if h.Cost, err = r.PassCosts(ctx, quotaKey, now.Add(-24*time.Hour)); err != nil {
			return h, err
		}
		return h, nil
	}
}

// HistorySince is the earliest call FromRecords reads at now: the
// pools' longest window and an edge before it, where a spend of this
// worker's the limiter still counts may be (others).
func HistorySince(pools []ingest.Pool, now time.Time) time.Time {
	return now.Add(-longest(pools) - edge)
}

func longest(pools []ingest.Pool) time.Duration {
	var w time.Duration
	for _, p := range pools {
		w = max(w, p.Window)
	}
	return w
}

// History is what the worker's database says of its own past: the pacer
// starts from it, so that a restart costs nothing.
type History struct {
	// Spent is this worker's own calls (its ledger's) in each pool's
	// window, by pool.
	Spent map[string][]Spent
	// Last is when each entry's latest completed pass started.
	Last map[string]time.Time
	// Cost is each entry's mean cost per pass over its recent passes, by
	// pool; an entry without one keeps its guess.
	Cost map[string]map[string]float64
}
