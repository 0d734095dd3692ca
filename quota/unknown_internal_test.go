package quota

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/redistest"
)

// internalRedis starts a redis-server and returns a maker of limiters on it
// for quota key Q: one pool of 100 an hour, videos.list 1 unit.
func internalRedis(t *testing.T) func(q string) *Redis {
	t.Helper()
	srv := redistest.Start(t)
	c, err := NewClient("redis://"+srv.Addr, 5*time.Second) // a loaded machine, not a fault
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	costs, err := costs.Parse("internal", []byte("pools:\n  default: {limit: 100, window: 1h}\noperations:\n  videos.list: {default: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return func(q string) *Redis {
		r, err := NewRedis(c, q, costs, memLedger(q), NoUpstreamClock, clock.System, Options{Timeout: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.ApplyConfig(context.Background()); err != nil {
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
	if d, err := r.Take(ctx, ingest.Caller{}, "videos.list"); err != nil || !d.Allowed {
		t.Fatalf("take: %+v, %v", d, err)
	}
	late := r.tok.Load() + 1 // the token the next spend carries
	cs, err := resolve(r.opts.Costs, []ingest.Charge{{Pool: "default", Units: 1}})
	if err != nil {
		t.Fatal(err)
	}
	r.gaveUp(ctx, "videos.list", cs, late)
	r.reconcile(ctx)
	if n := r.pend.n.Load(); n != 0 {
		t.Fatalf("%d unknown decisions left after reconciling", n)
	}
	d, err := r.Take(ctx, ingest.Caller{}, "videos.list")
	if !errors.Is(err, ErrUnavailable) || d.Allowed {
		t.Fatalf("the fenced request: %+v, %v; want refused", d, err)
	}
	if d, err := r.Take(ctx, ingest.Caller{}, "videos.list"); err != nil || !d.Allowed {
		t.Fatalf("the next request: %+v, %v; want admitted", d, err)
	}
	if st, err := r.State(ctx); err != nil || st[0].Used != 2 {
		t.Fatalf("state: %+v, %v; want 2 used", st, err)
	}
}

// TestRedisReceiptWrittenOverNamesNoCall: a request that never reached
// Redis is reconciled after a later admission of the same instance wrote
// over its receipt's slot (the ring has 32). That admission's call was made:
// it must not be taken for the unknown one and given back.
func TestRedisReceiptWrittenOverNamesNoCall(t *testing.T) {
	t.Parallel()
	newLimiter := internalRedis(t)
	r := newLimiter("ring")
	ctx := context.Background()
	if d, err := r.Take(ctx, ingest.Caller{}, "videos.list"); err != nil || !d.Allowed {
		t.Fatalf("take: %+v, %v", d, err)
	}
	lost := r.tok.Add(1) // sent, and never reached Redis
	a := r.base(r.opts.Costs.Pools, one)
	a.Token = r.tok.Add(32) // the same slot of the ring
	if rep, err := r.run(ctx, 0, "spend", r.inst, a); err != nil || rep.Code != "ok" {
		t.Fatalf("spend of token %d: %+v, %v", a.Token, rep, err)
	}
	cs, err := resolve(r.opts.Costs, []ingest.Charge{{Pool: "default", Units: 1}})
	if err != nil {
		t.Fatal(err)
	}
	r.gaveUp(ctx, "videos.list", cs, lost)
	r.reconcile(ctx)
	if st, err := r.State(ctx); err != nil || st[0].Used != 2 {
		t.Fatalf("state after reconciling token %d, whose slot token %d wrote over: %+v, %v; want 2 used (both calls were made)",
			lost, a.Token, st, err)
	}
}

// memLedger is a ledger that keeps nothing but its notes and unknowns.
func memLedger(id string) Ledger {
	var m memRoles
	return Ledger{ID: id, Where: "test", Record: m, Recall: m, Grant: m, Notes: &memNotes{}, Unknowns: &memUnknowns{}}
}

type memRoles struct{}

func (memRoles) RecordCall(context.Context, ingest.Call) error                { return nil }
func (memRoles) RecordBlock(context.Context, ingest.Block) error              { return nil }
func (memRoles) RecordGiveBack(context.Context, ingest.Call, time.Time) error { return nil }
func (memRoles) Recall(context.Context, string, time.Time, time.Time) (ingest.Recalled, error) {
	return ingest.Recalled{}, nil
}
func (memRoles) GrantUnmetered(_ context.Context, _ string, _ time.Time, decide func([]ingest.Call) (*ingest.Call, error)) error {
	_, err := decide(nil)
	return err
}

type memUnknowns struct {
	mu   sync.Mutex
	list []ingest.Unknown
}

func (u *memUnknowns) RecordUnknown(_ context.Context, x ingest.Unknown) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.list = append(u.list, x)
	return nil
}

func (u *memUnknowns) Unknowns(context.Context, string) ([]ingest.Unknown, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.list), nil
}

func (u *memUnknowns) ResolveUnknown(_ context.Context, x ingest.Unknown, _ *ingest.Call, _ time.Time) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.list = slices.DeleteFunc(u.list, func(y ingest.Unknown) bool { return y.Token == x.Token && y.Instance == x.Instance })
	return nil
}

// TestRedisReconcileOutlivesItsCaller: the decision or the heartbeat that
// found Redis answering again may be cut short by a stop just after; the
// settling it begun finishes, so that Redis and the ledger are not left
// with one given back and the other still open.
func TestRedisReconcileOutlivesItsCaller(t *testing.T) {
	t.Parallel()
	newLimiter := internalRedis(t)
	r := newLimiter("outlives")
	ctx := context.Background()
	if d, err := r.Take(ctx, ingest.Caller{}, "videos.list"); err != nil || !d.Allowed {
		t.Fatalf("take: %+v, %v", d, err)
	}
	cs, err := resolve(r.opts.Costs, []ingest.Charge{{Pool: "default", Units: 1}})
	if err != nil {
		t.Fatal(err)
	}
	r.gaveUp(ctx, "videos.list", cs, r.tok.Load()+1)
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	r.reconcile(stopped)
	if n := r.pend.n.Load(); n != 0 {
		t.Fatalf("%d unknown decisions left after reconciling on a context a stop ended", n)
	}
	if us, err := r.opts.Unknowns.Unknowns(ctx, "outlives"); err != nil || len(us) != 0 {
		t.Fatalf("the ledger keeps %d unknown decisions (%v), want them settled", len(us), err)
	}
}
