package quota_test

// The conformance suite's lease tests (runConformance): one holder at a
// time, released only by its holder, expired and renewed, on every
// backend.

import (
	"context"
	"testing"
	"time"
)

func testLockOneHolder(t *testing.T, h harness) {
	key := quotaKey(t)
	costs := testCosts(t, 100, 0, 5, time.Minute)
	a, b := h.open(t, key, costs), h.open(t, key, costs)
	// Leases that outlive the test: one holder is the point, not expiry.
	unlock, ok, err := a.Lock(context.Background(), "US", time.Minute)
	if err != nil || !ok {
		t.Fatalf("first lock: ok %v, %v", ok, err)
	}
	if _, ok, err := b.Lock(context.Background(), "US", time.Minute); ok || err != nil {
		t.Fatalf("second holder: ok %v, %v; want not ok", ok, err)
	}
	ugb, ok, _ := b.Lock(context.Background(), "GB", time.Minute)
	if !ok {
		t.Fatal("another name: not ok")
	}
	defer ugb()
	unlock()
	unlock() // twice is harmless
	u2, ok, err := b.Lock(context.Background(), "US", time.Minute)
	if err != nil || !ok {
		t.Fatalf("after unlock: ok %v, %v", ok, err)
	}
	defer u2()
}

func testLockHolderOnly(t *testing.T, h harness) {
	key := quotaKey(t)
	l := h.open(t, key, testCosts(t, 100, 0, 5, time.Minute))
	unlock, ok, err := l.Lock(context.Background(), "US", 300*time.Millisecond)
	if err != nil || !ok {
		t.Fatalf("lock: ok %v, %v", ok, err)
	}
	// Someone else takes over (as after our lease expired), for longer
	// than the test: our renewal and our unlock must leave their lease
	// alone.
	h.plant(t, key, "US", "other", time.Hour)
	h.await(t, h.now(t).Add(250*time.Millisecond)) // renewals come every 100 ms
	unlock()
	if got := h.holder(t, key, "US"); got != "other" {
		t.Fatalf("after the old holder's unlock: holder %q, want other", got)
	}
	if _, ok, _ := l.Lock(context.Background(), "US", time.Second); ok {
		t.Fatal("lock taken while other holds it")
	}
}

// testLockExpiry: a lease nobody renews ends at its time; one its holder
// renews does not. Leases run on real time (the runtime's timers renew
// them), so a machine too busy for the spans, which the test sees, tries
// spans four times as long, on a key of its own.
func testLockExpiry(t *testing.T, h harness) {
	for span := time.Second; ; span *= 4 {
		if lockExpiryIn(t, h, span) {
			return
		}
		if span >= time.Minute {
			t.Fatalf("the machine was too busy for leases of %s each time", span)
		}
		t.Logf("the machine was too busy for leases of %s: again with spans four times as long", span)
	}
}

// lockExpiryIn is testLockExpiry on leases of span; false when the
// machine was too busy for it to decide.
func lockExpiryIn(t *testing.T, h harness, span time.Duration) (decided bool) {
	ctx := context.Background()
	key := quotaKey(t) + span.String()
	costs := testCosts(t, 100, 0, 5, time.Minute)
	a, b := h.open(t, key, costs), h.open(t, key, costs)
	before := h.now(t)
	h.plant(t, key, "US", "crashed", span)
	planted := h.now(t) // after the lease was written
	if unlock, ok, _ := a.Lock(ctx, "US", span); ok {
		unlock()
		if !h.now(t).Before(before.Add(span)) {
			return false // the planted lease had ended: rightly taken
		}
		t.Fatal("lock taken while a live lease holds it")
	}
	h.await(t, planted.Add(span+time.Millisecond))
	// A lease of 1.5 spans renewed every half span, held for 2: taken by
	// b only if renewal failed, or if this process or the server went
	// a span unanswered (held tells), which would starve any renewal.
	unlock, ok, err := a.Lock(ctx, "US", span*3/2)
	if err != nil || !ok {
		t.Fatalf("after the lease expired: ok %v, %v", ok, err)
	}
	defer unlock()
	longest := held(t, h, 2*span)
	if ub, ok, _ := b.Lock(ctx, "US", span); ok {
		ub()
		if longest >= span/2 {
			return false
		}
		t.Fatalf("renewed lease was taken (the longest gap between two readings of the clock: %s)", longest)
	}
	unlock()
	if got := h.holder(t, key, "US"); got != "" {
		t.Fatalf("after unlock: holder %q, want none", got)
	}
	return true
}

// held returns once the backend's clock has moved on by d, with the
// longest the test went between two answered readings of it: how long a
// busy machine kept this process or the server from answering anything.
func held(t *testing.T, h harness, d time.Duration) (longest time.Duration) {
	t.Helper()
	at := h.now(t).Add(d)
	last := time.Now()
	for {
		n := h.now(t)
		longest, last = max(longest, time.Since(last)), time.Now()
		if !n.Before(at) {
			return longest
		}
		time.Sleep(min(at.Sub(n), d/20))
	}
}
