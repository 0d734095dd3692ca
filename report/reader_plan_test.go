package report_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/report"
)

// newPacer builds a reader's pacer as the wiring builds every pacer: the
// costs' pools, and the history of quotaKey in records.
func newPacer(c *ingest.Costs, records pace.Records, quotaKey string, cfg pace.Config) (*pace.Pacer, error) {
	cfg.Pools, cfg.History = c.Pools, pace.FromRecords(records, quotaKey, c.Pools)
	return pace.New(cfg)
}

// sharedPools is a limiter whose pools another worker spends in: used
// beyond this worker's ledger, and others workers besides it.
type sharedPools struct {
	costs  *ingest.Costs
	used   int64
	others int
}

func (s sharedPools) State(context.Context) ([]ingest.PoolState, error) {
	var out []ingest.PoolState
	for _, p := range s.costs.Pools {
		out = append(out, ingest.PoolState{Pool: p.Name, Limit: p.Limit, Reserve: p.Reserve, Day: p.DayName(),
			Used: s.used, Remaining: max(p.Capacity()-s.used, 0), Others: s.others})
	}
	return out, nil
}
func (sharedPools) Backend() string { return "redis" }

// A reader (report, /quota) has no spend of its own in flight: the plan
// it makes now, with no daemon's to show, counts another worker's spend
// in the pools as that worker's at once, at its first look, a share of
// each pool for this worker and the rate halved.
func TestReaderPlanCountsAnotherWorkerAtOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	c := costs.Default()
	tt := jobs.Timetable{Charts: []regions.Chart{{Code: "US", Tier: 1, Depth: 200}, {Code: "GB", Tier: 1, Depth: 200}},
		Every: time.Hour}
	planOf := func(others int) *report.Freshness {
		t.Helper()
		src := report.Sources{DB: report.NoDB{}, Limiter: sharedPools{costs: c, used: 1000, others: others}, Costs: c,
			QuotaKey: "k", Now: now, Timetable: tt, NewPacer: newPacer}
		f, err := report.Pace(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	alone, shared := planOf(0), planOf(1)
	if alone.Shared {
		t.Fatalf("alone on the pools, the plan counts on a share of them: %+v", alone.Pools)
	}
	if !shared.Shared {
		t.Fatalf("another worker spends 1000 units beyond this one's ledger, and the reader's plan counts on the whole pools: %+v",
			shared.Pools)
	}
	for i, p := range shared.Pools {
		if whole := alone.Pools[i].Rate; p.Rate > whole/2+1e-9 {
			t.Errorf("pool %s: the reader's plan spends %.1f units an hour beside another worker, want at most half of %.1f",
				p.Pool, p.Rate, whole)
		}
	}
}
