package quota

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/redistest"
)

// internalRedis starts a redis-server and returns a maker of limiters on it
// for quota key Q: one pool of 100 an hour, videos.list 1 unit.
func internalRedis(t *testing.T) func(q string) *Redis {
	t.Helper()
	srv := redistest.Start(t)
	c, err := NewClient("redis://"+srv.Addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	costs, err := ingest.ParseCosts("internal", []byte("pools:\n  default: {limit: 100, window: 1h}\noperations:\n  videos.list: {default: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return func(q string) *Redis {
		r, err := NewRedis(c, Options{QuotaKey: q, Costs: costs, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}

// TestRedisFenceRefusesALateRequest: a token reconciled before its request
// reaches Redis is fenced: the request is refused when it arrives, so that
// "never admitted" stays true; the next token is admitted.
func TestRedisFenceRefusesALateRequest(t *testing.T) {
	t.Parallel()
	newLimiter := internalRedis(t)
	r := newLimiter("fence")
	ctx := context.Background()
	if d, err := r.Take(ctx, "videos.list"); err != nil || !d.Allowed {
		t.Fatalf("take: %+v, %v", d, err)
	}
	late := r.tok.Load() + 1 // the token the next spend carries
	r.gaveUp(ctx, "videos.list", r.ops["videos.list"], late)
	r.reconcile(ctx)
	if n := r.pend.n.Load(); n != 0 {
		t.Fatalf("%d unknown decisions left after reconciling", n)
	}
	d, err := r.Take(ctx, "videos.list")
	if !errors.Is(err, ErrUnavailable) || d.Allowed {
		t.Fatalf("the fenced request: %+v, %v; want refused", d, err)
	}
	if d, err := r.Take(ctx, "videos.list"); err != nil || !d.Allowed {
		t.Fatalf("the next request: %+v, %v; want admitted", d, err)
	}
	if st, err := r.State(ctx); err != nil || st[0].Used != 2 {
		t.Fatalf("state: %+v, %v; want 2 used", st, err)
	}
}

// TestRedisRingExpiresWhateverItsFirstSlot: an instance's receipts ring
// expires like every other key, also when its first admission writes the
// last slot, which makes a new ring as long as a full one.
func TestRedisRingExpiresWhateverItsFirstSlot(t *testing.T) {
	t.Parallel()
	newLimiter := internalRedis(t)
	ctx := context.Background()
	const ring = 32 // RING in window.lua
	for _, slot := range []int64{0, 5, ring - 1} {
		r := newLimiter("ring")
		c := r.client
		if err := r.Heartbeat(ctx); err != nil { // learns the keys' generation, so the first spend is the one
			t.Fatal(err)
		}
		r.tok.Store(slot - 1) // the next spend carries token slot
		if d, err := r.Take(ctx, "videos.list"); err != nil || !d.Allowed {
			t.Fatalf("take: %+v, %v", d, err)
		}
		key := r.receiptKeys(r.inst)[0]
		if ttl, err := c.PTTL(ctx, key).Result(); err != nil || ttl <= 0 {
			t.Errorf("ring begun at slot %d: PTTL %s, %v; want an expiry", slot, ttl, err)
		}
		if n, err := c.StrLen(ctx, key).Result(); err != nil || n != ring*40 {
			t.Errorf("ring begun at slot %d: %d bytes, %v; want %d", slot, n, err, ring*40)
		}
	}
}
