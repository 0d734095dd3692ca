package ingest

import (
	"context"
	"time"
)

// The house's waits. A wait measures a span, not a reading: it is the
// runtime's timer, which a testing/synctest bubble makes virtual, so that
// a process run in one waits on the bubble's time (docs/testing.md). Every
// part waits through these (package clock hands them on to the parts
// above the adapters) and reads the time through the Clock it is handed,
// never through package time's: internal/rig/hostclock holds them to it.

// NewTimer is a timer that fires once d has passed.
func NewTimer(d time.Duration) *time.Timer { return time.NewTimer(d) }

// After is a channel that receives once d has passed.
func After(d time.Duration) <-chan time.Time { return time.After(d) }

// AfterFunc calls f in its own goroutine once d has passed.
func AfterFunc(d time.Duration, f func()) *time.Timer { return time.AfterFunc(d, f) }

// NewTicker is a ticker that ticks every d.
func NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(d) }

// Sleep waits d, or until ctx ends: then it returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
