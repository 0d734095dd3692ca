package pace_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/pace"
)

// callsOnly is a database's records holding only its ledger's calls.
type callsOnly []ingest.Call

func (r callsOnly) Calls(context.Context, string, time.Time) ([]ingest.Call, error) { return r, nil }
func (callsOnly) LastPasses(context.Context, string, time.Time) (map[string]time.Time, error) {
	return nil, nil
}
func (callsOnly) PassCosts(context.Context, string, time.Time) (map[string]map[string]float64, error) {
	return nil, nil
}
func (callsOnly) Plan(context.Context, string) ([]byte, time.Time, bool, error) {
	return nil, time.Time{}, false, nil
}

// A backfill's spend on the daemon's database, whatever its region, is the
// worker's own and one-off: the plan counts on the room it frees as it
// leaves the window, as for the daemon's own charts' spend; the same spend
// by a co-tenant's chart pass of a region the daemon does not run is
// counted on going on, and comes out of the rate.
func TestABackfillSpendsAsTheWorkerDoes(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 100, Window: 2 * time.Minute}
	at := t0.Add(-pool.Window + 10*time.Second) // leaves the window in ten seconds
	pass := func(run int64, region string, ops ...string) []ingest.Call {
		var calls []ingest.Call
		for k, op := range ops {
			calls = append(calls, ingest.Call{ID: region + op, At: at.Add(time.Duration(k) * time.Millisecond), Op: op, Region: region, RunID: run,
				Charges: []ingest.Charge{{Pool: "default", Units: 60 / int64(len(ops))}}})
		}
		return calls
	}
	rate := func(calls []ingest.Call) float64 {
		t.Helper()
		state := func(context.Context) ([]ingest.PoolState, error) {
			return []ingest.PoolState{{Pool: "default", Used: 60, Remaining: 40}}, nil
		}
		p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{entry("NL", 0, time.Minute, 4)},
			History: pace.FromRecords(callsOnly(calls), "q", []ingest.Pool{pool}), Clock: clock.Func(func() time.Time { return t0 }), Logger: quiet()})
		st, err := p.Plan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return st.Pools[0].Rate
	}
	own := rate(pass(1, "NL", ingest.OpVideosList))
	backfill := rate(pass(2, "DE", ingest.OpSearchList, ingest.OpVideosList))
	cotenant := rate(pass(3, "DE", ingest.OpVideosList))
	if backfill != own {
		t.Errorf("after a backfill of DE the plan spends %.0f units an hour, where after the same spend by NL's own pass it spends %.0f: the backfill's spend is the worker's, one-off", backfill, own)
	}
	if cotenant >= own {
		t.Errorf("after a co-tenant's pass of DE the plan spends %.0f units an hour, as after NL's own (%.0f): the co-tenant's spend is not counted on going on", cotenant, own)
	}
}
