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

// TestRedisFenceRefusesALateRequest: a token reconciled before its request
// reaches Redis is fenced: the request is refused when it arrives, so that
// "never admitted" stays true; the next token is admitted.
func TestRedisFenceRefusesALateRequest(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c, err := NewClient("redis://"+srv.Addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	costs, err := ingest.ParseCosts("fence", []byte("pools:\n  default: {limit: 100, window: 1h}\noperations:\n  videos.list: {default: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRedis(c, Options{QuotaKey: "fence", Costs: costs, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
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
