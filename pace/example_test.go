package pace_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
)

// A pacer is built whole from one Config: the pools, how to read their
// state (the limiter's), and the entries it paces, each costed by the job
// layer until a pass is measured. Here two charts share a pool with room
// for both at their shortest cadence, and the plan runs each that often.
func ExampleNew() {
	c := costs.Default()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	state := func(context.Context) ([]ingest.PoolState, error) {
		var out []ingest.PoolState
		for _, p := range c.Pools {
			out = append(out, ingest.PoolState{Pool: p.Name, Limit: p.Limit, Remaining: p.Limit})
		}
		return out, nil
	}
	var entries []pace.Entry
	for _, chart := range []string{"US", "US/10"} {
		kind := jobs.ChartKind(chart)
		entries = append(entries, pace.Entry{Name: chart, Priority: int(kind), Floor: time.Hour, Cost: kind.Guess(c)})
	}
	p, err := pace.New(pace.Config{Pools: c.Pools, State: state, Entries: entries, Clock: clock.Func(func() time.Time { return now })})
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := p.Plan(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range st.Entries {
		fmt.Println(e.Name, "every", e.Every, "costing", e.Cost[ingest.DefaultPool])
	}
	// Output:
	// US every 1h0m0s costing 4
	// US/10 every 1h0m0s costing 4
}
