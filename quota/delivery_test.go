package quota_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/redistest"
)

// A call holds its place in its pool for the window and the bound on its
// delivery (docs/quota.md, "A call's delivery"): the upstream counts a
// call when it arrives, up to that bound after its admission, so a window
// of the upstream's count can hold calls admitted that much before it.
// At a window after a full pool's calls there is still no room; at the
// window and the bound there is, and a refusal says so.
func TestACallIsHeldForTheWindowAndItsDelivery(t *testing.T) {
	check := func(t *testing.T, l limiter, window, delivery time.Duration, await func(time.Time)) {
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
		d := take(t, l, "videos.list")
		if d.Allowed {
			t.Fatalf("a call past the pool in the window: admitted")
		}
		if want := first.Add(window + delivery); d.RetryAt.Before(want) {
			t.Errorf("the refusal's RetryAt %s, before the first call's window and delivery (%s)", d.RetryAt.Format(time.StampMilli), want.Format(time.StampMilli))
		}
		await(first.Add(window))
		if d := take(t, l, "videos.list"); d.Allowed {
			t.Errorf("a window after the first call, within its delivery's bound: admitted at %s", d.At.Format(time.StampMilli))
		}
		await(d.RetryAt)
		if d := take(t, l, "videos.list"); !d.Allowed {
			t.Errorf("at the refusal's RetryAt: refused %+v", d)
		}
	}
	t.Run("SQLite", func(t *testing.T) {
		c := clock.NewFake(time.Now())
		window, delivery := time.Minute, 20*time.Second
		l, err := newSQLite(openDB(t, filepath.Join(t.TempDir(), "q.db"), false), limOpts{QuotaKey: quotaKey(t),
			Costs: testCosts(t, 300, 0, 5, window), Timeout: 5 * time.Second, Logger: quiet, Clock: c, Delivery: delivery})
		if err != nil {
			t.Fatal(err)
		}
		check(t, l, window, delivery, func(at time.Time) { c.AdvanceTo(at) })
	})
	t.Run("Redis", func(t *testing.T) {
		srv := redistest.Start(t)
		client := newClient(t, srv.Addr)
		// The server's clock decides: short spans, waited for.
		window, delivery := time.Second, time.Second
		l, err := newRedis(client, limOpts{QuotaKey: quotaKey(t), Costs: testCosts(t, 300, 0, 5, window), Timeout: 2 * time.Second,
			Logger: quiet, Delivery: delivery})
		if err != nil {
			t.Fatal(err)
		}
		created(t, l)
		check(t, l, window, delivery, func(at time.Time) { awaitClock(t, func() time.Time { return redisTime(t, client) }, at) })
	})
}
