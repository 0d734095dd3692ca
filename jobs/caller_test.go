package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/ledger"
)

// A pass's calls are in the limiter's ledger under the pass's own run and
// region, which the meter hands the limiter with each call, so that what a
// run cost is read from the ledger by its run.
func TestPassCallsNameTheirRunAndRegion(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	ctx := context.Background()
	for _, region := range []string{"GB", "FR"} {
		if res := r.pass(region).Run(ctx); res.Status != ingest.StatusCompleted {
			t.Fatalf("pass %s: %s (%v)", region, res.Status, res.Err)
		}
	}
	last, err := r.db.LastRuns(ctx, ingest.Trending)
	if err != nil {
		t.Fatal(err)
	}
	calls, err := ledger.New(r.db).Calls(ctx, "q", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, c := range calls {
		run, ok := last[c.Region]
		if !ok || c.RunID == 0 || c.RunID != run.RunID {
			t.Errorf("call %s (%s) is in the ledger with region %q run %d; want its pass's region and run (%+v)", c.ID, c.Op, c.Region, c.RunID, last)
		}
		seen[c.Region]++
	}
	if seen["GB"] == 0 || seen["FR"] == 0 {
		t.Fatalf("ledger calls by region %v, want both passes' calls", seen)
	}
}

// A block that the upstream's exhausted quota caused is kept in the ledger
// with the operation that met it.
func TestPassBlockNamesTheOperationThatMetIt(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	r.fake.ExhaustQuota(fakeyt.QuotaExceeded)
	ctx := context.Background()
	if res := r.pass("DE").Run(ctx); res.Status != ingest.StatusStopped {
		t.Fatalf("pass: %s (%v), want stopped", res.Status, res.Err)
	}
	rec, err := ledger.New(r.db).Recall(ctx, "q", time.Now().Add(-time.Hour), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Blocks) == 0 {
		t.Fatal("no block in the ledger after the upstream said its quota is exhausted")
	}
	for _, b := range rec.Blocks {
		if _, ok := r.costs.Operations[b.Op]; !ok {
			t.Errorf("block of pool %s kept with operation %q, want the operation that met the exhausted quota", b.Pool, b.Op)
		}
	}
}
