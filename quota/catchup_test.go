package quota_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/ledger"
)

// TestEmbeddedTakesLateCallsInWriteOrder: after the embedded limiter's
// first look, calls another limiter decided reach its ledger late, some
// stamped long before the limiter's last look (a Redis limiter's write
// held up; a clock behind). Each next decision takes every one of them
// into the window, reading only what was written since its last look.
func TestEmbeddedTakesLateCallsInWriteOrder(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, filepath.Join(t.TempDir(), "late.db"), false)
	led := ledger.New(bare{db, false})
	key := "late"
	// Its own calls are recorded apart: the ledger holds only the late ones.
	e, err := newSQLite(db, limOpts{QuotaKey: key, Costs: floorCosts(t), Timeout: 5 * time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	take := func() {
		t.Helper()
		if d, err := e.Take(ctx, ingest.Caller{}, "videos.list"); err != nil || !d.Allowed {
			t.Fatalf("take: %+v, %v", d, err)
		}
	}
	used := func() int64 {
		t.Helper()
		st, err := e.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st[0].Used
	}
	take()
	want := int64(1)
	for i, late := range []time.Duration{time.Minute, 20 * time.Minute, time.Second, 40 * time.Minute} {
		at := time.Now().Add(-late)
		call := ingest.Call{QuotaKey: key, ID: fmt.Sprintf("%d-%d", at.UnixMilli(), 100+i), Op: "videos.list", At: at,
			Charges: []ingest.Charge{{Pool: ingest.DefaultPool, Units: 1}}}
		if err := led.RecordCall(ctx, call); err != nil {
			t.Fatal(err)
		}
		take()
		if want += 2; used() != want {
			t.Fatalf("after a call stamped %s ago reached the ledger and a decision: %d used, want %d", late, used(), want)
		}
	}
}
