package quota_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
)

// A call holds its place in its pool for the window and the bound on its
// delivery (docs/explanation/quota.md, "A call's delivery"): the upstream counts a
// call when it arrives, up to that bound after its admission, so a window
// of the upstream's count can hold calls admitted that much before it.
// At a window after a full pool's calls there is still no room; at the
// window and the bound there is, and a refusal says so.
func TestACallIsHeldForTheWindowAndItsDelivery(t *testing.T) {
	// check reports false when the machine was too slow for the spans: a
	// call admitted at the first call's window and delivery or after is
	// admitted rightly, and says nothing of the promise.
	check := func(t *testing.T, l limiter, window, delivery time.Duration, await func(time.Time)) (decided bool) {
		t.Helper()
		var first time.Time
		for i := range 300 {
			d := take(t, l, "videos.list")
			if !d.Allowed {
				t.Fatalf("call %d of 300: refused %+v", i+1, d)
			}
			if i == 0 {
				first = d.At
			}
		}
		late := func(d ingest.Decision) bool { return d.Allowed && !d.At.Before(first.Add(window+delivery)) }
		d := take(t, l, "videos.list")
		if late(d) {
			return false
		}
		if d.Allowed {
			t.Fatalf("a call past the pool in the window: admitted at %s, the first at %s", d.At.Format(time.StampMilli), first.Format(time.StampMilli))
		}
		if want := first.Add(window + delivery); d.RetryAt.Before(want) {
			t.Errorf("the refusal's RetryAt %s, before the first call's window and delivery (%s)", d.RetryAt.Format(time.StampMilli), want.Format(time.StampMilli))
		}
		await(first.Add(window))
		if d := take(t, l, "videos.list"); late(d) {
			return false
		} else if d.Allowed {
			t.Errorf("a window after the first call, within its delivery's bound: admitted at %s", d.At.Format(time.StampMilli))
		}
		await(d.RetryAt)
		if d := take(t, l, "videos.list"); !d.Allowed {
			t.Errorf("at the refusal's RetryAt: refused %+v", d)
		}
		return true
	}
	t.Run("SQLite", func(t *testing.T) {
		c := clocktest.NewFake(time.Now())
		window, delivery := time.Minute, 20*time.Second
		l, err := newSQLite(openDB(t, filepath.Join(t.TempDir(), "q.db"), false), limOpts{QuotaKey: quotaKey(t),
			Costs: testCosts(t, 300, 0, 5, window), Timeout: 5 * time.Second, Logger: quiet, Clock: c, Delivery: delivery})
		if err != nil {
			t.Fatal(err)
		}
		if !check(t, l, window, delivery, func(at time.Time) { c.AdvanceTo(at) }) {
			t.Fatal("a call came after its window on a clock that only moves when told")
		}
	})
	t.Run("Redis", func(t *testing.T) {
		srv := redistest.Start(t)
		client := newClient(t, srv.Addr)
		// The server's clock decides: short spans, waited for, each four
		// times the last when a busy machine took longer than one to fill
		// the pool (on a key of its own).
		for span := time.Second; ; span *= 4 {
			l, err := newRedis(client, limOpts{QuotaKey: quotaKey(t) + span.String(), Costs: testCosts(t, 300, 0, 5, span), Timeout: 2 * time.Second,
				Logger: quiet, Delivery: span})
			if err != nil {
				t.Fatal(err)
			}
			created(t, l)
			if check(t, l, span, span, func(at time.Time) { awaitClock(t, func() time.Time { return redisTime(t, client) }, at) }) {
				return
			}
			if span >= time.Hour {
				t.Fatalf("filling a pool of 300 took longer than %s each time", span)
			}
			t.Logf("filling the pool took longer than a %s window: again with spans four times as long", span)
		}
	})
}
