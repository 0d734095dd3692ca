package web

// The work a reader's request may start that no kept answer spares (a
// search asked once, a miss, a page's first build) costs a build; hot
// pages cost a copy from memory. A flood of the first (unique searches,
// unique misses, from many addresses: no per-client plan holds it) would
// take the CPU the readers of the hot pages need. So anonymous readers'
// builds run within one budget for the whole site: a few at once, a
// request waiting briefly for its turn and answered 503 with Retry-After
// past it. Kept answers, the watcher's builds and requests that carry a
// token or a session are outside it (docs/reference/api/dashboard.md).

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest/clock"
)

// budgetWait is how long an anonymous reader's build waits for its turn
// before the request is answered 503.
const budgetWait = time.Second

// budgetRetry is the Retry-After of a request over the budget, in seconds.
const budgetRetry = "1"

// budget is how many builds anonymous readers may run at once.
type budget struct {
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

// figures are the budget's figures now.
func (b *budget) figures() BudgetFigures {
	return BudgetFigures{Admitted: b.admitted.Load(), Refused: b.refused.Load(),
		Running: len(b.slots), Waiting: int(b.waiting.Load()), Slots: cap(b.slots)}
}

// newBudget holds n builds at once; n < 1 holds one.
func newBudget(n int) *budget {
	return &budget{slots: make(chan struct{}, max(1, n))}
}

// defaultBudget leaves half the processors to the readers of kept pages.
func defaultBudget() *budget { return newBudget(runtime.GOMAXPROCS(0) / 2) }

// take waits up to wait (and no longer than ctx) for a turn: release ends
// it; ok false when none came.
func (b *budget) take(ctx context.Context, wait time.Duration) (release func(), ok bool) {
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

// busy is the answer of a request over the budget: 503 with Retry-After,
// as JSON for the API and a page for a reader.
func (s *Server) busy(r *http.Request) *buffered {
	b := &buffered{header: http.Header{}, status: http.StatusOK}
	b.header.Set("Retry-After", budgetRetry)
	const msg = "the site is busy with other readers' searches and pages not kept: retry in a second (Retry-After)"
	if strings.HasPrefix(r.URL.Path, "/api/") {
		apiError(b, http.StatusServiceUnavailable, "busy", "", msg)
	} else {
		s.pageError(b, r, http.StatusServiceUnavailable, "The site is busy with other readers' searches; retry in a second.")
	}
	return b
}
