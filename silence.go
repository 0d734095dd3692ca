// A wait on a server bounded by how long the server stays silent, not by
// how long the whole wait takes: one of the house's waits (wait.go). A
// decision of several statements on a busy machine may take longer than
// any fixed bound while the server answers each of them in good time; one
// the server does not answer at all is the outage the bound is for.
//
// The PostgreSQL driver (store) calls Answered for every reply it reads,
// the ledger's tables for every statement that returns and for every
// commit to a SQLite file a decision sees while it waits for the write
// lock; the waits that take a BoundBySilence are the embedded limiter's.

package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrSilent is the cause of a bounded context that ended because nothing
// answered within its bound.
var ErrSilent = errors.New("no answer")

type silenceKey struct{}

// silenceWatch ends its context once d passes with no answer.
type silenceWatch struct {
	d     time.Duration
	mu    sync.Mutex
	timer *time.Timer
	done  bool
}

// BoundBySilence returns a context that ends once d has passed since it
// was made or since the last Answered on it (or a context derived from
// it), whichever is later, and then has the cause ErrSilent. Calling stop releases it.
func BoundBySilence(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &silenceWatch{d: d}
	w.timer = AfterFunc(d, func() {
		cancel(fmt.Errorf("%w within %s", ErrSilent, d))
	})
	stop := func() {
		w.mu.Lock()
		w.done = true
		w.timer.Stop()
		w.mu.Unlock()
		cancel(context.Canceled)
	}
	return context.WithValue(ctx, silenceKey{}, w), stop
}

// Answered marks a reply on ctx: a BoundBySilence over it starts its wait
// again. Outside one it does nothing. A bound that has already run out stays
// out: its wait has ended.
func Answered(ctx context.Context) {
	w, ok := ctx.Value(silenceKey{}).(*silenceWatch)
	if !ok || ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done && w.timer.Stop() {
		w.timer.Reset(w.d)
	}
}
