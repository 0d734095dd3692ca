package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// ErrStopping is what the limiter of a stopping process answers: a signal
// came, so no call starts, a retry neither (docs/operations.md, Signals).
var ErrStopping = errors.New("stopping: a signal came, no new call starts")

// StopBound is how long the work in flight at the first signal may go on:
// then it is stopped as a second signal stops it. With StopGrace and the
// closing after it, a stop ends well inside the 90 s the shipped units give
// (deploy/: TimeoutStopSec, terminationGracePeriodSeconds) at any upstream
// latency.
const StopBound = 30 * time.Second

// Stopping is l, refusing every call with ErrStopping once drain closes:
// from the first signal no attempt starts, neither a new call's nor a
// retry's, whichever job or read makes it.
func Stopping(l Limiter, drain <-chan struct{}) Limiter {
	return stoppingLimiter{Limiter: l, drain: drain}
}

type stoppingLimiter struct {
	Limiter
	drain <-chan struct{}
}

// The signal is looked for again once the limiter has admitted the call:
// a signal that came while the limiter decided would otherwise let a call
// admitted after it go out. Such a call is given back unsent; if the give
// back fails, the ledger keeps it as spent, which counts a unit too many,
// never one too few.
func (s stoppingLimiter) Take(ctx context.Context, by ingest.Caller, op string) (ingest.Decision, error) {
	if stopping(s.drain) {
		return ingest.Decision{}, ErrStopping
	}
	d, err := s.Limiter.Take(ctx, by, op)
	if err != nil || !d.Allowed || !stopping(s.drain) {
		return d, err
	}
	if err := s.Limiter.Refund(context.WithoutCancel(ctx), d.Call("", by)); err != nil {
		return ingest.Decision{}, errors.Join(ErrStopping, fmt.Errorf("give back %s: %w", d.ID, err))
	}
	return ingest.Decision{}, ErrStopping
}
