package throttle

// The work a reader's request may start that no kept answer spares costs
// a build; a flood of them from many addresses, which no per-client plan
// holds, would take the CPU the readers of the kept pages need. So
// anonymous readers' builds run within one budget for the whole site: a
// few at once, the rest waiting briefly for a turn (web answers those
// that find none 503).

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest/clock"
)

// Budget is how many builds anonymous readers may run at once.
type Budget struct {
	slots    chan struct{}
	admitted atomic.Int64 // builds given a turn
	refused  atomic.Int64 // requests answered 503 for it
	waiting  atomic.Int64 // requests waiting for a turn now
}

// BudgetFigures are what the budget of anonymous readers' builds did and
// holds now: the builds it admitted, the requests it answered 503 busy,
// the builds running in it and the requests waiting for a turn, of Slots
// at once (docs/reference/metrics.md).
type BudgetFigures struct {
	Admitted, Refused int64
	Running, Waiting  int
	Slots             int
}

// Figures are the budget's figures now.
func (b *Budget) Figures() BudgetFigures {
	return BudgetFigures{Admitted: b.admitted.Load(), Refused: b.refused.Load(),
		Running: len(b.slots), Waiting: int(b.waiting.Load()), Slots: cap(b.slots)}
}

// NewBudget holds n builds at once; n < 1 holds one.
func NewBudget(n int) *Budget {
	return &Budget{slots: make(chan struct{}, max(1, n))}
}

// DefaultBudget leaves half the processors to the readers of kept pages.
func DefaultBudget() *Budget { return NewBudget(runtime.GOMAXPROCS(0) / 2) }

// Take waits up to wait (and no longer than ctx) for a turn: release ends
// it; ok false when none came.
func (b *Budget) Take(ctx context.Context, wait time.Duration) (release func(), ok bool) {
	select {
	case b.slots <- struct{}{}:
		b.admitted.Add(1)
		return func() { <-b.slots }, true
	default:
	}
	b.waiting.Add(1)
	defer b.waiting.Add(-1)
	t := clock.NewTimer(wait)
	defer t.Stop()
	select {
	case b.slots <- struct{}{}:
		b.admitted.Add(1)
		return func() { <-b.slots }, true
	case <-t.C:
	case <-ctx.Done():
	}
	b.refused.Add(1)
	return nil, false
}
