package throttle

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ingestworks/ingest/ratelimit"
)

// warming is an API limiter a round trip away, whose warm-up fails with err.
type warming struct {
	ratelimit.Limiter
	err    error
	warmed *atomic.Int32
}

func (w warming) Warm(context.Context) error { w.warmed.Add(1); return w.err }

// TestWarmSaysALimiterThatDoesNotAnswer: a limiter a round trip away is
// warmed once before the listener opens, and one that does not answer is
// said; one in the process is not asked.
func TestWarmSaysALimiterThatDoesNotAnswer(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var warmed atomic.Int32
	Warm(context.Background(), warming{Limiter: ratelimit.NewMemory(), warmed: &warmed}, log)
	if warmed.Load() != 1 || buf.Len() != 0 {
		t.Errorf("an answering limiter: warmed %d times, said %q; want once and nothing said", warmed.Load(), buf.String())
	}
	Warm(context.Background(), warming{Limiter: ratelimit.NewMemory(), err: errors.New("dial tcp: refused"), warmed: &warmed}, log)
	if warmed.Load() != 2 || !strings.Contains(buf.String(), "served unmetered") {
		t.Errorf("a silent limiter: warmed %d times, said %q; want it said that requests go unmetered", warmed.Load(), buf.String())
	}
	buf.Reset()
	Warm(context.Background(), ratelimit.NewMemory(), log)
	if buf.Len() != 0 {
		t.Errorf("a limiter in the process: said %q, want nothing", buf.String())
	}
}

// remote is an API limiter a round trip away.
type remote struct{ ratelimit.Limiter }

func (remote) Backend() string { return "redis" }

// TestNewMeterLeasesOnlyFromALimiterAway: a limiter a round trip away
// lends an anonymous client's budget in blocks; the one in this process
// is asked for each request.
func TestNewMeterLeasesOnlyFromALimiterAway(t *testing.T) {
	t.Parallel()
	if m := NewMeter(nil, ratelimit.NewMemory(), nil, nil); m.Lease != 0 {
		t.Errorf("in the process: lease %d, want none", m.Lease)
	}
	if m := NewMeter(nil, remote{ratelimit.NewMemory()}, nil, nil); m.Lease != DefaultLease {
		t.Errorf("a round trip away: lease %d, want %d", m.Lease, DefaultLease)
	}
}
