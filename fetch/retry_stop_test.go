package fetch_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/fetch"
)

// A call whose context ends while its attempt fails in a way worth a retry
// ends with the context's error, so that the job that made it tells a stop
// (a second signal) from a failure; the attempt's error is kept beside it.
// The context ends as the upstream's answer arrives, before it is read.
func TestACallStoppedWhileARetryIsDueEndsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := newEnv(t, func(o *fetch.Options) {
		o.Backoff = time.Hour
		o.OnDate = func(context.Context, time.Time) { cancel() }
	})
	e.fake.FailNext(5, 503)
	_, err := e.client.Trending(ctx, e.gate.Gate, "US", "")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want the context's cancellation", err)
	}
	if err != nil && !strings.Contains(err.Error(), "503") {
		t.Errorf("err = %v, want the last attempt's status beside it", err)
	}
	if g, r := e.gate.calls(), e.fake.Requests(); g != 1 || r != 1 {
		t.Errorf("gate calls = %d, requests = %d, want 1 and 1: no retry after the stop", g, r)
	}
}

// A retry's wait is half its backoff plus the jitter Options.Jitter
// draws, asked for the other half's range: the simulation's seed draws it,
// so that a seed replays the same waits.
func TestRetryWaitsDrawTheirJitterFromOptions(t *testing.T) {
	t.Parallel()
	var asked []int64
	e := newEnv(t, func(o *fetch.Options) {
		o.Backoff = 2 * time.Millisecond
		o.Jitter = func(n int64) int64 { asked = append(asked, n); return n - 1 }
	})
	e.fake.FailNext(2, 503)
	if _, err := e.client.Trending(context.Background(), e.gate.Gate, "US", ""); err != nil {
		t.Fatal(err)
	}
	// Backoff x 2^(n-1): 2ms then 4ms, of which half is fixed and the
	// other half, and one, the jitter's range; its largest draw waits all.
	if want := []int64{int64(time.Millisecond) + 1, int64(2*time.Millisecond) + 1}; !slices.Equal(asked, want) {
		t.Errorf("jitter asked for %v, want %v", asked, want)
	}
	for _, w := range []string{"delay=2ms", "delay=4ms"} {
		if !strings.Contains(e.logs.String(), w) {
			t.Errorf("log has no retry waiting %s:\n%s", strings.TrimPrefix(w, "delay="), e.logs.String())
		}
	}
}
