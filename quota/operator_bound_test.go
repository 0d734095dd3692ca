package quota_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/redistest"
)

// TestAnOperatorsReadWaitsItsOwnBound: a decision gives up on a slow Redis
// at the limiter's short timeout, but a read of the limiter's state (a
// report's, a metric's, an operator's command) waits up to its own longer
// bound, and the client's sockets do not cut it at the decision's.
func TestAnOperatorsReadWaitsItsOwnBound(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	p := startProxy(t, srv.Addr)
	h := hungHost(t, &redistest.Server{Addr: p.Addr}, quotaKey(t), func(o *limOpts) { o.Timeout = 50 * time.Millisecond })
	h.spendSteadily(2)
	// The slow server: every request waits in the proxy, longer than both
	// the decision's bound and the default one, well inside the read's.
	p.hold()
	slow := time.AfterFunc(400*time.Millisecond, p.flush)
	defer slow.Stop()
	start := time.Now()
	if _, err := h.l.Config(context.Background()); err != nil {
		t.Fatalf("reading the configuration from a Redis that answers after %s: %v; want the answer", time.Since(start).Round(time.Millisecond), err)
	}
}
