package fetch_test

import (
	"context"
	"errors"
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
