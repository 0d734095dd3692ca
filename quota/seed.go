package quota

import (
	"context"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// SeedLedger is one host's ledger as a move to a new Redis hands it over:
// its id, where its database is, and its calls of the span.
type SeedLedger struct {
	ID, Where string
	Calls     ingest.Recalled
}

// Seed is a host's move to a new Redis (`ingest quota seed`): each ledger's
// calls are put in under that ledger's own id and mark, as its own refill
// would put them, so that its first call finds none missing and fetches at
// once; then this costs file's pools when the key holds none, and the end
// of any wait. The operator names every ledger that spent in the window.
func (r *Redis) Seed(ctx context.Context, ledgers []SeedLedger) (int, error) {
	r.led.recallMu.Lock()
	defer r.led.recallMu.Unlock()
	total := 0
	for _, l := range ledgers {
		a := r.base(r.opts.Costs.Pools, one)
		a.Ledger, a.Where = l.ID, l.Where
		n, err := r.refillWith(ctx, a, l.Calls, true)
		if err != nil {
			return total, fmt.Errorf("seed ledger %s: %w", l.ID, err)
		}
		total += n
	}
	if err := r.adopt(ctx); err != nil {
		return total, fmt.Errorf("seed: write the configuration: %w", err)
	}
	if _, err := r.run(ctx, 5*time.Second, "release", r.inst, r.base(r.opts.Costs.Pools, one)); err != nil {
		return total, fmt.Errorf("seed: end the wait: %w", err)
	}
	return total, nil
}
