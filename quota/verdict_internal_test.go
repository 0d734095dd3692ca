package quota

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
)

// A refusal on the clock says how old the upstream's reading it rests on
// is: asked at most once a minute, it is not "just now" 50 seconds later.
func TestClockRefusalSaysHowOldTheReadingIs(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := NewUpstreamClock(clock.Func(func() time.Time { return now }), UpstreamOptions{
		Ask: func(context.Context) (time.Time, error) { return now, nil },
		Uptime: func() (string, time.Duration, bool) {
			return "boot", time.Hour + now.Sub(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)), true
		},
	})
	if _, ok := c.ask(context.Background()); !ok {
		t.Fatal("the upstream's time was not taken in")
	}
	now = now.Add(50 * time.Second)
	o := settings{Upstream: c, Options: Options{Guard: DefaultGuard}}
	err := o.skewError("this host's clock", now.Add(time.Hour).UnixMilli(), now.UnixMilli())
	if msg := err.Error(); !strings.Contains(msg, "read 50s ago (asked at no quota cost by "+DateRequest+", at most once a minute)") ||
		strings.Contains(msg, "just now") {
		t.Errorf("refusal: %s\nwant the reading's age, 50s", msg)
	}
}
