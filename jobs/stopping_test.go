package jobs_test

import (
	"context"
	"sync"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
)

// signalWhileDeciding is a limiter during whose decision the first signal
// comes: the limiter admits the call, and by the time it answers the
// process is stopping.
type signalWhileDeciding struct {
	jobs.Limiter
	signal func()
}

func (s signalWhileDeciding) Take(ctx context.Context, by ingest.Caller, op string) (ingest.Decision, error) {
	d, err := s.Limiter.Take(ctx, by, op)
	s.signal()
	return d, err
}

// A call the limiter admits while the signal comes never goes out: it is
// given back, and the upstream charges nothing (docs/operations.md,
// Stopping).
func TestASignalDuringADecisionSendsNothing(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	drain := make(chan struct{})
	var once sync.Once
	signal := func() { once.Do(func() { close(drain) }) }
	p := r.pass("GB")
	p.Limiter = jobs.Stopping(signalWhileDeciding{Limiter: r.limiter, signal: signal}, drain)
	res := p.Run(context.Background())
	if res.Status != ingest.StatusInterrupted || res.Pages != 0 {
		t.Errorf("pass ended %s after %d pages (%v), want interrupted before its first", res.Status, res.Pages, res.Err)
	}
	if got := r.fake.Charged(testKey); got != 0 {
		t.Errorf("the upstream charged %d units after the signal, want 0", got)
	}
	if got := r.ledgerUnits(t); got != 0 || res.TotalUnits() != 0 {
		t.Errorf("ledger holds %d units and the run %d, want the admitted call given back (0)", got, res.TotalUnits())
	}
	st, err := r.limiter.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Used != 0 {
			t.Errorf("pool %s holds %d units in the limiter's window, want 0", s.Pool, s.Used)
		}
	}
}
