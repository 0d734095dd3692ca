package report

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/store"
)

// Freshness is how old each chart is and what pacing plans until each
// pool's reset, as `run --pace` plans it from the same limiter state, the
// charts' last passes and this database's ledger.
type Freshness struct {
	Pools  []PoolPace
	Charts []ChartAge
}

// PoolPace is one pool's side of the plan.
type PoolPace struct {
	Pool      string
	Budget    float64   // what this host may spend by Reset
	Reset     time.Time // the pool's next day start, or its window's end
	Projected float64   // what the paced plan spends by Reset
	Fixed     float64   // what every chart at --every would spend by Reset
	// RunsOut is when the fixed cadence would empty the pool at the
	// current rate; zero when it lasts to Reset.
	RunsOut time.Time
}

// ChartAge is a chart's age and its planned cadence.
type ChartAge struct {
	Chart string
	Age   time.Duration // since its latest completed pass started; -1 never
	Every time.Duration // planned; pace.Never when it cannot run before the reset
	Floor time.Duration // --every
}

// AgeText is the chart's age to the second, "never" before its first
// completed pass.
func (c ChartAge) AgeText() string {
	if c.Age < 0 {
		return "never"
	}
	return ShortDuration(c.Age.Round(time.Second))
}

// EveryText is the planned cadence to the second.
func (c ChartAge) EveryText() string {
	if c.Every == pace.Never {
		return "not before the reset"
	}
	return ShortDuration(c.Every.Round(time.Second))
}

// freshness plans the schedule's charts as the paced daemon does: a
// chart's cost is its last completed pass's, four pages until it has one;
// this ledger's calls are this host's own spend.
func (r *Report) freshness(src Sources, last map[string]store.RunSummary, calls []ingest.Call, now time.Time) {
	if src.Every <= 0 || len(src.Regions) == 0 {
		return
	}
	r.Freshness = r.plan(src, last, calls, now)
}

// plan is the paced plan of src's charts (none: every pool's budget is
// left) against the pools r read.
func (r *Report) plan(src Sources, last map[string]store.RunSummary, calls []ingest.Call, now time.Time) *Freshness {
	var entries []pace.Entry
	for _, chart := range src.Regions {
		entries = append(entries, pace.Entry{Name: chart, Priority: pace.ChartPriority(chart), Floor: src.Every,
			Cost: passCost(src.Costs, last[chart])})
	}
	var budgets []pace.Budget
	for _, p := range r.Pools {
		pool, ok := src.Costs.Pool(p.Pool)
		if !ok {
			continue
		}
		budgets = append(budgets, pace.BudgetOf(p.PoolState, pool, now, spent(calls, p.Pool)))
	}
	plan := pace.Make(budgets, entries)
	f := &Freshness{}
	for _, b := range budgets {
		pp := PoolPace{Pool: b.Pool, Budget: b.Units, Reset: now.Add(b.Horizon), Projected: plan.Spend[b.Pool], Fixed: plan.Fixed[b.Pool]}
		if d, ok := plan.RunsOut[b.Pool]; ok {
			pp.RunsOut = now.Add(d)
		}
		f.Pools = append(f.Pools, pp)
	}
	for _, e := range entries {
		age := time.Duration(-1)
		if run, ok := last[e.Name]; ok && run.Status == ingest.StatusCompleted {
			age = now.Sub(run.Started)
		}
		f.Charts = append(f.Charts, ChartAge{Chart: e.Name, Age: age, Every: plan.Every[e.Name], Floor: e.Floor})
	}
	return f
}

// Pace plans the schedule in src as the paced daemon does, from the
// limiter's state (the ledger's when the limiter does not answer), the
// charts' last passes and the ledger: what Build shows as Freshness, for a
// command that needs only the plan (a backfill's share). With no charts
// in src the plan spends nothing and leaves each pool's budget.
func Pace(ctx context.Context, src Sources) (*Freshness, error) {
	now := src.Now
	if now.IsZero() {
		now = time.Now()
	}
	calls, err := src.DB.Calls(ctx, src.QuotaKey, now.Add(-max(longestWindow(src.Costs), 24*time.Hour)))
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	r := &Report{}
	r.pools(ctx, src, calls, now)
	last, err := src.DB.LastRuns(ctx, ingest.Trending)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	return r.plan(src, last, calls, now), nil
}

// Left is what the plan leaves in each pool by its reset: the pool's
// budget less the paced charts' projected spend, never below zero.
func (f *Freshness) Left() map[string]float64 {
	out := map[string]float64{}
	for _, p := range f.Pools {
		out[p.Pool] = max(p.Budget-p.Projected, 0)
	}
	return out
}

// Share is the units (all pools together) of the whole pages of perPage
// the plan leaves room for in every pool a page draws from: a backfill's
// share when the operator gives it none.
func (f *Freshness) Share(perPage map[string]int64) int64 {
	left := f.Left()
	pages := int64(-1)
	for pool, u := range perPage {
		if u <= 0 {
			continue
		}
		n := int64(math.Floor(left[pool] / float64(u)))
		if pages < 0 || n < pages {
			pages = n
		}
	}
	return max(pages, 0) * sum(perPage)
}

func passCost(costs *ingest.Costs, run store.RunSummary) map[string]float64 {
	out := map[string]float64{}
	if run.Status == ingest.StatusCompleted && len(run.PoolUnits) > 0 {
		for pool, u := range run.PoolUnits {
			out[pool] = float64(u)
		}
		return out
	}
	return pace.ChartGuess(costs)
}

func spent(calls []ingest.Call, pool string) []pace.Spent {
	var out []pace.Spent
	for _, c := range calls {
		if u := unitsIn(c.Charges, pool); u > 0 {
			out = append(out, pace.Spent{At: c.At, Units: u})
		}
	}
	return out
}

// FreshnessJSON is `pace` in `report --json`.
type FreshnessJSON struct {
	Pools  []PoolPaceJSON `json:"pools"`
	Charts []ChartAgeJSON `json:"charts"`
}

// PoolPaceJSON is one pool's plan until its reset.
type PoolPaceJSON struct {
	Pool           string  `json:"pool"`
	BudgetUnits    int64   `json:"budget_units"`
	Reset          string  `json:"reset"`
	ProjectedUnits int64   `json:"projected_units"`
	FixedUnits     int64   `json:"fixed_units"`
	FixedRunsOutAt *string `json:"fixed_runs_out_at"` // null: the fixed cadence lasts to the reset
}

// ChartAgeJSON is one chart's age and cadence.
type ChartAgeJSON struct {
	Chart        string   `json:"chart"`
	AgeSeconds   *int64   `json:"age_seconds"`   // null: never completed
	EverySeconds *float64 `json:"every_seconds"` // planned; null: cannot run before the reset
	FloorSeconds float64  `json:"floor_seconds"`
}

func (r *Report) freshnessJSON() *FreshnessJSON {
	f := r.Freshness
	if f == nil {
		return nil
	}
	j := &FreshnessJSON{Pools: []PoolPaceJSON{}, Charts: []ChartAgeJSON{}}
	for _, p := range f.Pools {
		j.Pools = append(j.Pools, PoolPaceJSON{Pool: p.Pool, BudgetUnits: int64(math.Floor(p.Budget)),
			Reset: p.Reset.UTC().Format(time.RFC3339), ProjectedUnits: int64(math.Round(p.Projected)),
			FixedUnits: int64(math.Round(p.Fixed)), FixedRunsOutAt: Stamp(p.RunsOut)})
	}
	for _, c := range f.Charts {
		cj := ChartAgeJSON{Chart: c.Chart, FloorSeconds: c.Floor.Seconds()}
		if c.Age >= 0 {
			age := int64(c.Age / time.Second)
			cj.AgeSeconds = &age
		}
		if c.Every != pace.Never {
			every := c.Every.Round(time.Second).Seconds()
			cj.EverySeconds = &every
		}
		j.Charts = append(j.Charts, cj)
	}
	return j
}

// textFreshness prints the pacing lines: per pool, what is left, what the
// plan spends by the reset and when the fixed cadence would run out; per
// chart, its age and planned cadence.
func (r *Report) textFreshness(out io.Writer) {
	f := r.Freshness
	if f == nil {
		return
	}
	for _, p := range f.Pools {
		if p.Fixed == 0 {
			continue // the charts take nothing from it
		}
		runsOut := "lasts to the reset"
		if !p.RunsOut.IsZero() {
			runsOut = "runs out at " + p.RunsOut.In(ingest.UpstreamZone).Format("15:04 MST")
		}
		fmt.Fprintf(out, "Pace %s: %d units to spend by %s; paced, the charts spend %d; at --every, %d and it %s\n",
			p.Pool, int64(math.Floor(p.Budget)), p.Reset.In(ingest.UpstreamZone).Format("2006-01-02 15:04 MST"),
			int64(math.Round(p.Projected)), int64(math.Round(p.Fixed)), runsOut)
	}
	w := tw(out)
	fmt.Fprintln(w, "CHART\tAGE\tPLANNED EVERY\tFLOOR (--every)")
	for _, c := range f.Charts {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", c.Chart, c.AgeText(), c.EveryText(), ShortDuration(c.Floor))
	}
	w.Flush()
	fmt.Fprintln(out)
}
