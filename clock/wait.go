package clock

import (
	"context"
	"time"

	"github.com/ingestworks/ingest"
)

// The house's waits, the root's (wait.go) handed on to the parts above
// the adapters. A wait measures a span, not a reading: it is the
// runtime's timer, which a testing/synctest bubble makes virtual, so that
// a process run in one waits on the bubble's time (docs/testing.md). Every
// part waits through these and reads the time through the Clock it is
// handed, never through package time's (internal/rig/hostclock holds them to
// it), so that what a wait is, is decided here once.

// NewTimer is ingest.NewTimer.
func NewTimer(d time.Duration) *time.Timer { return ingest.NewTimer(d) }

// After is ingest.After.
func After(d time.Duration) <-chan time.Time { return ingest.After(d) }

// NewTicker is ingest.NewTicker.
func NewTicker(d time.Duration) *time.Ticker { return ingest.NewTicker(d) }

// Sleep is ingest.Sleep: it waits d, or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error { return ingest.Sleep(ctx, d) }

// Since is how long ago t was on c.
func Since(c Clock, t time.Time) time.Duration { return c.Now().Sub(t) }

// Until is how long until t on c.
func Until(c Clock, t time.Time) time.Duration { return t.Sub(c.Now()) }
