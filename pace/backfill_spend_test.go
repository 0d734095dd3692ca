package pace_test

import (
	"context"
	"fmt"
	"slices"
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
func (callsOnly) StoppedPasses(context.Context, time.Time) ([]ingest.Stopped, error) { return nil, nil }
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

// stoppedToo is a database's records holding its ledger's calls, the runs
// the quota stopped and the charts' measured costs.
type stoppedToo struct {
	callsOnly
	stopped []ingest.Stopped
	cost    map[string]map[string]float64
}

func (r stoppedToo) StoppedPasses(context.Context, time.Time) ([]ingest.Stopped, error) {
	return r.stopped, nil
}
func (r stoppedToo) PassCosts(context.Context, string, time.Time) (map[string]map[string]float64, error) {
	return r.cost, nil
}

// A co-tenant the limiter stopped is counted at what it asked for, not at
// what it got: its runs go on asking at their cadence, so a plan that took
// the room it was refused for its own would crowd it out again, read it
// as wanting less, and take more, past what the pool sustains.
func TestACotenantTheLimiterStoppedCountsWhatItAskedFor(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 40, Window: 2 * time.Minute}
	cost := map[string]map[string]float64{"US": {"default": 4}} // the co-tenant's measured pass
	// Four runs of US in the last window, 30 s apart: each a pass of 4
	// pages, or, stopped, one page and the limiter's refusal.
	runs := func(stopped ...int) stoppedToo {
		r := stoppedToo{cost: cost}
		for k := range 4 {
			at := t0.Add(-pool.Window + time.Duration(k+1)*30*time.Second - time.Second)
			pages := 4
			if slices.Contains(stopped, k) {
				pages = 1
				r.stopped = append(r.stopped, ingest.Stopped{RunID: int64(k + 1), Chart: "US", Region: "US", Started: at})
			}
			for p := range pages {
				r.callsOnly = append(r.callsOnly, ingest.Call{ID: fmt.Sprint(k, p), At: at.Add(time.Duration(p) * time.Millisecond), Op: ingest.OpVideosList,
					Region: "US", RunID: int64(k + 1), Charges: []ingest.Charge{{Pool: "default", Units: 1}}})
			}
		}
		return r
	}
	rate := func(r stoppedToo) float64 {
		t.Helper()
		state := func(context.Context) ([]ingest.PoolState, error) {
			return []ingest.PoolState{{Pool: "default", Used: 16, Remaining: 24}}, nil
		}
		p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{entry("NL", 0, time.Minute, 4)},
			History: pace.FromRecords(r, "q", []ingest.Pool{pool}), Clock: clock.Func(func() time.Time { return t0 }), Logger: quiet()})
		st, err := p.Plan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return st.Pools[0].Rate
	}
	served, crowded := rate(runs()), rate(runs(1, 3))
	if crowded != served {
		t.Errorf("beside a co-tenant whose runs of 4 units the limiter stopped twice after a unit, the plan spends %.0f units an hour, where beside the same runs served it spends %.0f: it counts the refused units as room",
			crowded, served)
	}
}
