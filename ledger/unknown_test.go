package ledger

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// TestUnknownResolved: a decision of unknown outcome waits in the ledger;
// resolved as admitted, it becomes a call given back (Calls leaves it out);
// resolved as never admitted, it leaves nothing. Resolving twice is fine.
func TestUnknownResolved(t *testing.T) {
	eachStore(t, func(t *testing.T, db both) {
		ctx := context.Background()
		at := time.UnixMilli(1_790_000_000_000).UTC()
		a := ingest.Unknown{QuotaKey: "q", Instance: "i1", Token: 7, Op: "videos.list", At: at,
			Charges: []ingest.Charge{{Pool: "default", Units: 1}, {Pool: "stats", Units: 2}}}
		b := ingest.Unknown{QuotaKey: "q", Instance: "i1", Token: 8, Op: "search.list", At: at.Add(time.Second),
			Charges: []ingest.Charge{{Pool: "search", Units: 1}}}
		for _, u := range []ingest.Unknown{a, b, a} {
			if err := db.RecordUnknown(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		us, err := db.Unknowns(ctx, "q")
		if err != nil || len(us) != 2 || us[0].Token != 7 || len(us[0].Charges) != 2 || us[0].Charges[1] != (ingest.Charge{Pool: "stats", Units: 2}) || !us[0].At.Equal(at) {
			t.Fatalf("unknowns: %+v, %v", us, err)
		}
		call := ingest.Call{QuotaKey: "q", ID: "1790000000100-5", At: at, Op: a.Op, Charges: a.Charges}
		for range 2 {
			if err := db.ResolveUnknown(ctx, a, &call, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.ResolveUnknown(ctx, b, nil, time.Now()); err != nil {
			t.Fatal(err)
		}
		if us, err := db.Unknowns(ctx, "q"); err != nil || len(us) != 0 {
			t.Fatalf("unknowns after resolving: %+v, %v", us, err)
		}
		calls, err := db.Calls(ctx, "q", at.Add(-time.Hour))
		if err != nil || len(calls) != 0 {
			t.Fatalf("calls: %+v, %v; want none (the admitted one was given back)", calls, err)
		}
		var n int
		if err := db.r.QueryRow(`SELECT count(*) FROM ledger l JOIN ledger_given_back g USING (quota_key, call_id)`).Scan(&n); err != nil || n != 2 {
			t.Fatalf("ledger rows given back: %d, %v; want the call's 2 (one per pool)", n, err)
		}
	})
}
