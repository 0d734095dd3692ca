package throttle

import (
	"fmt"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
)

// TestThrottleIsBounded: however many addresses fail, the throttle keeps
// at most its table's size, and one that waits keeps its wait while new
// ones come and go.
func TestThrottleIsBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	l := defaultLimits
	l.clients = 8
	th := newThrottle(clock.Func(func() time.Time { return now }), l)
	fail := func(key string) Verdict { return th.Try(key, func() bool { return false }) }
	for range 10 {
		fail("waits")
	}
	for i := range 10000 {
		now = now.Add(time.Millisecond)
		if v := fail(fmt.Sprintf("a%d", i)); v.Wait > 0 {
			t.Fatalf("a new address's first failure waits %s", v.Wait)
		}
		if len(th.clients) > l.clients {
			t.Fatalf("after %d addresses the table holds %d, want at most %d", i+1, len(th.clients), l.clients)
		}
	}
	if v := th.Peek("waits"); v.Wait <= 0 {
		t.Errorf("the address that waits was dropped for room (%s left, %s passed)", v.Wait, 10*time.Second)
	}
}
