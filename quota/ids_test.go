package quota_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/ledger"
)

// heldRecorder keeps the calls a limiter records until flush writes them
// to the ledger: a call decided, its write still on its way.
type heldRecorder struct {
	ledger *ledger.Ledger
	mu     sync.Mutex
	calls  []ingest.Call
}

func (h *heldRecorder) RecordCall(_ context.Context, c ingest.Call) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, c)
	return nil
}
func (h *heldRecorder) RecordBlock(ctx context.Context, b ingest.Block) error {
	return h.ledger.RecordBlock(ctx, b)
}
func (h *heldRecorder) RecordGiveBack(ctx context.Context, c ingest.Call, at time.Time) error {
	return h.ledger.RecordGiveBack(ctx, c, at)
}

func (h *heldRecorder) flush(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.calls {
		if err := h.ledger.RecordCall(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	h.calls = nil
}

// TestLimitersNeverShareAnID runs a Redis limiter and the embedded one on
// the ledger of one database, as while moving off Redis: Redis decides a
// call whose write to the ledger is still on its way when the embedded
// limiter decides one in the same millisecond, each counter at its first.
// The two ids differ, both calls reach the ledger, and the embedded
// limiter's floor, at its next decision, counts both units.
func TestLimitersNeverShareAnID(t *testing.T) {
	ctx := context.Background()
	key := "both"
	db := openDB(t, filepath.Join(t.TempDir(), "shared.db"), false)
	led := ledger.New(bare{db, false})
	costs := floorCosts(t)
	held := &heldRecorder{ledger: led}
	r, err := newRedis(newClient(t, redistest.Start(t).Addr), limOpts{QuotaKey: key, Costs: costs, Timeout: 5 * time.Second,
		Logger: quiet, Record: held})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ApplyConfig(ctx); err != nil {
		t.Fatal(err)
	}
	rd, err := r.Take(ctx, ingest.Caller{}, "videos.list")
	if err != nil || !rd.Allowed {
		t.Fatalf("redis take: %+v, %v", rd, err)
	}
	e, err := newSQLite(db, limOpts{QuotaKey: key, Costs: costs, Timeout: 5 * time.Second, Logger: quiet, Record: led,
		Clock: clock.Func(func() time.Time { return rd.At })})
	if err != nil {
		t.Fatal(err)
	}
	ed, err := e.Take(ctx, ingest.Caller{}, "videos.list")
	if err != nil || !ed.Allowed {
		t.Fatalf("embedded take: %+v, %v", ed, err)
	}
	if !ed.At.Equal(rd.At) {
		t.Fatalf("the embedded limiter decided at %s, not in Redis's millisecond %s", ed.At, rd.At)
	}
	if ed.ID == rd.ID {
		t.Fatalf("both limiters gave the call id %s", ed.ID)
	}
	held.flush(t)
	calls, err := led.Calls(ctx, key, rd.At.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 {
		t.Fatalf("the ledger holds %d calls, want Redis's %s and the embedded limiter's %s: %+v", len(calls), rd.ID, ed.ID, calls)
	}
	if d, err := e.Take(ctx, ingest.Caller{}, "videos.list"); err != nil || !d.Allowed {
		t.Fatalf("embedded take after the ledger has both: %+v, %v", d, err)
	}
	st, err := e.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st[0].Used != 3 {
		t.Fatalf("the embedded limiter's floor counts %d used, want both calls' and its next one's 3", st[0].Used)
	}
}
