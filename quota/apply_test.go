package quota_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/quota"
)

// TestFaultApplyAfterLoss: host a spends 60 of 100, then Redis loses
// everything. A newcomer with an empty ledger is told to apply with --new
// for a key never used, or to restore, or wait; apply without --new asks
// for that intent, and apply refuses, --new or not, whenever a ledger it
// sees holds calls of the span. The operator restores with a's ledger: the
// newcomer then gets the 40 units left, not 100.
func TestFaultApplyAfterLoss(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	ctx := context.Background()
	a := newHost(t, srv.Addr, key, costs, "a", nil)
	a.spendN(60)
	do(t, srv.Addr, "FLUSHALL")
	n := bareHost(t, srv.Addr, key, costs, "n")
	err := n.l.Created(ctx)
	for _, want := range []string{"ingest quota apply --new", "ingest quota restore --ledger", "or wait"} {
		if !errors.Is(err, quota.ErrNotApplied) || !strings.Contains(err.Error(), want) {
			t.Fatalf("the newcomer on a wiped Redis: %v; want ErrNotApplied naming %q", err, want)
		}
	}
	aLedger, _ := a.recall(ctx)
	var past *quota.PastError
	for _, tc := range []struct {
		name   string
		by     *host
		isNew  bool
		others map[string]ingest.Recalled
		want   func(error) bool
	}{
		{"no intent, nothing seen", n, false, nil, func(err error) bool { return errors.Is(err, quota.ErrNotApplied) }},
		{"no intent, a's ledger at hand", n, false, map[string]ingest.Recalled{"a.db": aLedger}, func(err error) bool { return errors.As(err, &past) }},
		{"--new, a's ledger at hand", n, true, map[string]ingest.Recalled{"a.db": aLedger}, func(err error) bool { return errors.As(err, &past) }},
		{"--new on a's own host", a, true, nil, func(err error) bool { return errors.As(err, &past) }},
	} {
		if _, err := tc.by.l.Create(ctx, tc.isNew, tc.others); !tc.want(err) {
			t.Fatalf("apply (%s) on a wiped key: %v", tc.name, err)
		}
	}
	if !strings.Contains(past.Error(), "ingest quota seed") || past.Way != "" {
		t.Fatalf("the refusal on a wiped key, spent on Redis, names the seed too and cannot tell a move from a loss: way %q, %v", past.Way, past)
	}
	if !strings.Contains(past.Error(), "ingest quota restore") {
		t.Fatalf("the refusal does not name the restore: %v", past)
	}
	if _, err := n.l.Restore(ctx, []quota.HostLedger{{ID: "a", Where: "a", Calls: aLedger}}); err != nil {
		t.Fatal(err)
	}
	got := 0
	for range 100 {
		if n.take().Allowed {
			got++
		}
	}
	a.restart()
	late := fill(t, a, n)
	t.Logf("wiped with 60 of 100 spent; the operator restored from a's ledger: the newcomer got %d, then %d more; Redis %d / %d", got, late, used(t, a.l), capacity)
	if got+late != capacity-60 || used(t, a.l) != capacity {
		t.Fatalf("after the restore the newcomer got %d and then %d more; want %d in all, and Redis %d", got, late, capacity-60, capacity)
	}
}

// TestFaultApplyOnAKeyPartlyLost: only the configuration is lost (evicted,
// deleted by hand). The limiter itself still shows the key's past, so even
// --new from a host without a ledger is refused.
func TestFaultApplyOnAKeyPartlyLost(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	a := newHost(t, srv.Addr, key, costs, "a", nil)
	a.spendN(10)
	do(t, srv.Addr, "DEL", "ingest:{"+key+"}:conf")
	n := bareHost(t, srv.Addr, key, costs, "n")
	_, err := n.l.Create(context.Background(), true, nil)
	var past *quota.PastError
	if !errors.As(err, &past) || !strings.Contains(err.Error(), "ledger a") {
		t.Fatalf("apply --new on a key whose configuration alone was lost: %v; want a refusal naming ledger a", err)
	}
}

// TestFaultApplyNewKey: --new on a key nobody used creates it, and apply on a
// key that holds a configuration replaces it, --new or not.
func TestFaultApplyNewKey(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	n := bareHost(t, srv.Addr, key, costs, "n")
	ctx := context.Background()
	ch, err := n.l.Create(ctx, true, nil)
	if err != nil || len(ch) != 1 || ch[0].Old != "" {
		t.Fatalf("apply --new on a new key: %v %v; want the pool set", ch, err)
	}
	if err := n.l.Created(ctx); err != nil {
		t.Fatalf("after apply --new: %v", err)
	}
	if _, err := n.l.Create(ctx, false, nil); err != nil {
		t.Fatalf("apply on a key that holds a configuration: %v", err)
	}
	if !n.take().Allowed {
		t.Fatal("a call on a created key was refused")
	}
}

// Readiness: a key nobody created is ErrNotApplied; a key whose Redis lost
// data while this ledger spent says so; a created key names how Redis
// keeps its data.
func TestFaultReadiness(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	ctx := context.Background()
	if _, err := bareHost(t, srv.Addr, key, costs, "n").l.Readiness(ctx); !errors.Is(err, quota.ErrNotApplied) {
		t.Fatalf("a key nobody created: %v; want ErrNotApplied", err)
	}
	a := newHost(t, srv.Addr, key, costs, "a", nil)
	a.spendN(5)
	detail, err := a.l.Readiness(ctx)
	if err != nil || !strings.HasPrefix(detail, "the limiter holds this costs file's pools; ") || !strings.Contains(detail, "Redis keeps") {
		t.Fatalf("a created key: %q, %v", detail, err)
	}
	do(t, srv.Addr, "FLUSHALL")
	if detail, err = a.l.Readiness(ctx); err != nil || !strings.Contains(detail, "Redis lost data") {
		t.Fatalf("after FLUSHALL, on a host whose ledger spent: %q, %v", detail, err)
	}
}
