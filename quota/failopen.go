package quota

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest"
)

// failPolicy decides what a call does while the shared limiter cannot be
// reached: it goes ahead unmetered only when every pool it draws from has a
// fail_open policy, the charge is at most that pool's max_cost, and the
// units this process took unmetered in the pool during this outage stay
// within its budget. Anything else is refused with ErrUnavailable.
type failPolicy struct {
	log   *slog.Logger
	costs *ingest.Costs

	mu    sync.Mutex
	down  atomic.Bool      // changed under mu; up reads it without, on every answer
	spent map[string]int64 // units taken unmetered per pool, this outage
}

func newFailPolicy(log *slog.Logger, costs *ingest.Costs) *failPolicy {
	return &failPolicy{log: log, costs: costs, spent: map[string]int64{}}
}

// open decides a call while the limiter is unreachable.
func (f *failPolicy) open(op string, cs []charge, cause error) (ingest.Decision, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.down.Load() {
		f.down.Store(true)
		f.log.Warn("quota limiter unreachable: cheap calls go ahead unmetered within each pool's fail_open budget",
			"err", cause)
	}
	for _, c := range cs {
		fo := c.pool.FailOpen
		switch {
		case fo.MaxCost == 0:
			return ingest.Decision{}, fmt.Errorf("limiter: %w (pool %s has no fail_open): %w", ErrUnavailable, c.pool.Name, cause)
		case c.units > fo.MaxCost:
			return ingest.Decision{}, fmt.Errorf("limiter: %w (%d units in pool %s, fail_open.max_cost %d): %w",
				ErrUnavailable, c.units, c.pool.Name, fo.MaxCost, cause)
		case f.spent[c.pool.Name]+c.units > fo.Budget:
			return ingest.Decision{}, fmt.Errorf("limiter: %w (pool %s spent its fail_open.budget of %d units in this outage): %w",
				ErrUnavailable, c.pool.Name, fo.Budget, cause)
		}
	}
	charges := make([]ingest.Charge, len(cs))
	for i, c := range cs {
		f.spent[c.pool.Name] += c.units
		charges[i] = ingest.Charge{Pool: c.pool.Name, Units: c.units}
	}
	now := time.Now()
	return ingest.Decision{Allowed: true, Unmetered: true, At: now, Op: op, Charges: charges, ID: unmeteredID(now)}, nil
}

// up notes that the limiter answered; it reports whether an outage just
// ended (the unmetered calls are then to be written back).
func (f *failPolicy) up() bool {
	if !f.down.Load() {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.down.Load() {
		return false
	}
	f.down.Store(false)
	clear(f.spent)
	f.log.Info("quota limiter reachable again")
	return true
}
