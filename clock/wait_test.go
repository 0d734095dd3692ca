package clock_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
)

// TestSleepWaitsOrEndsWithItsContext: Sleep waits its span on the
// runtime's timer (the bubble's), or returns its context's error at once
// when that ends first.
func TestSleepWaitsOrEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := clock.Sleep(context.Background(), time.Hour); err != nil || time.Since(start) != time.Hour {
			t.Errorf("Sleep(1h): err %v after %s, want nil after 1h", err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start = time.Now()
		if err := clock.Sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Minute {
			t.Errorf("Sleep(1h) under a minute's context: err %v after %s, want the deadline after 1m", err, time.Since(start))
		}
	})
}

// TestSinceAndUntilReadTheClockGiven: spans are read on the clock handed
// in, not the host's.
func TestSinceAndUntilReadTheClockGiven(t *testing.T) {
	at := time.Date(2026, 3, 8, 10, 0, 0, 0, time.UTC)
	f := clocktest.NewFake(at)
	f.Advance(90 * time.Second)
	if d := clock.Since(f, at); d != 90*time.Second {
		t.Errorf("Since: %s, want 1m30s", d)
	}
	if d := clock.Until(f, at.Add(time.Hour)); d != time.Hour-90*time.Second {
		t.Errorf("Until: %s, want 58m30s", d)
	}
}
