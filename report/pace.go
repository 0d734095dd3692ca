package report

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
)

// Freshness is how old each chart is and the pacing plan: the one the
// daemon that paces the quota key published, or, when none runs, the plan
// the same code makes now from the limiter's state and this database, and
// said so. report, the API, the dashboard and a backfill's share all show
// this one.
type Freshness struct {
	// Daemon: the plan the pacing worker (the daemon, or a paced run
	// --once) published. Otherwise Note says why there is none and the
	// plan was made now.
	Daemon bool
	Note   string
	At     time.Time // when the plan was made
	Shared bool      // other workers spend on the key: this one counts on its share
	// DueFrom: the pacing worker is a paced run --once that cron starts;
	// each chart's Next is the time from which it is due, not a slot.
	DueFrom bool
	Pools   []PoolPace
	Charts  []ChartAge
}

// PoolPace is one pool's side of the plan.
type PoolPace struct {
	Pool      string
	Rate      float64   // units an hour the plan may spend at
	Budget    float64   // what this host may spend by Reset
	Reset     time.Time // the pool's next day start, or its window's end
	Projected float64   // what the paced plan spends by Reset
	Fixed     float64   // what every chart at --every would spend by Reset
	// RunsOut is when the fixed cadence would empty the pool at the
	// current rate; zero when it lasts to Reset.
	RunsOut time.Time
	// FreeAt is when the window frees room; zero when it has room now.
	FreeAt time.Time
	// Left is what the plan leaves over the pool's next window (Window):
	// its rate less what the paced charts spend at, over the window. Taken
	// at once (a backfill), it slows no paced chart.
	Left   float64
	Window time.Duration
}

// ChartAge is a chart's age and its place in the plan.
type ChartAge struct {
	Chart    string
	Priority int
	Age      time.Duration // since its latest completed pass started; -1 never
	Every    time.Duration // planned; pace.Never when it cannot run
	Floor    time.Duration // --every
	Next     time.Time     // its next paced slot (Freshness.DueFrom: the time from which it is due); zero: none planned
	Dropped  bool          // the budget cannot hold it beside the charts above
	// FreeAt is when its pools have room again, for a chart that waits
	// for it.
	FreeAt time.Time
	// Declined is how many of its slots the pacing daemon declined since
	// it started, by reason: slots planned not to run, never missed.
	Declined map[pace.Declined]int
}

// AgeText is the chart's age to the second, "never" before its first
// completed pass.
func (c ChartAge) AgeText() string {
	if c.Age < 0 {
		return "never"
	}
	return ShortDuration(c.Age.Round(time.Second))
}

// EveryText is the planned cadence to the second, or why there is none:
// dropped for want of budget, or waiting for the window to free room.
func (c ChartAge) EveryText() string {
	switch {
	case c.Dropped:
		return "dropped: the budget holds the charts above it"
	case c.Every == pace.Never && !c.FreeAt.IsZero():
		return "waits for room at " + c.FreeAt.In(ingest.UpstreamZone).Format("Jan 2 15:04 MST")
	case c.Every == pace.Never:
		return "waits for room"
	}
	return ShortDuration(c.Every.Round(time.Second))
}

// Charts says which charts a plan is of: the schedule's, in its order
// (Regions), each never more often than Every, at its staggered slots.
type Charts struct {
	Names []string
	Every time.Duration
	Slots func(i int) pace.Slots
}

// Pace is the plan of src's schedule: the one the pacing daemon published
// for src's quota key, unless none did or it is older than twice its
// longest cadence (no daemon paces now); then the plan made now, as the
// daemon would, from the limiter's state and this database's ledger and
// runs. Each chart's age is read from the runs now. With no charts in src
// and no daemon's plan, the plan spends nothing and leaves each pool's
// budget.
func Pace(ctx context.Context, src Sources) (*Freshness, error) {
	now := src.Now
	if now.IsZero() {
		return nil, errNoNow
	}
	src.DB = oneRead(src.DB, now)
	f, err := published(ctx, src, now)
	if err != nil {
		return nil, err
	}
	if f == nil {
		if f, err = computed(ctx, src, now, stateOrLedger(src, now)); err != nil {
			return nil, err
		}
	}
	return f, ages(ctx, src, f, now)
}

// stateOrLedger reads the limiter's pools, or, when it does not answer,
// rebuilds them from this database's ledger, as the report does.
func stateOrLedger(src Sources, now time.Time) func(context.Context) ([]ingest.PoolState, error) {
	return func(ctx context.Context) ([]ingest.PoolState, error) {
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if st, err := src.Limiter.State(lctx); err == nil {
			return st, nil
		}
		calls, err := src.DB.Calls(ctx, src.QuotaKey, now.Add(-max(longestWindow(src.Costs), 24*time.Hour)))
		if err != nil {
			return nil, fmt.Errorf("read ledger: %w", err)
		}
		return ledgerStates(src.Costs, calls, now), nil
	}
}

// ages sets each chart's age from its latest completed pass in the runs.
func ages(ctx context.Context, src Sources, f *Freshness, now time.Time) error {
	last, err := src.DB.LastPasses(ctx, src.QuotaKey, now.Add(-400*24*time.Hour))
	if err != nil {
		return fmt.Errorf("read runs: %w", err)
	}
	for i, c := range f.Charts {
		f.Charts[i].Age = -1
		if at, ok := last[c.Chart]; ok {
			f.Charts[i].Age = max(now.Sub(at), 0)
		}
	}
	return nil
}

// published is the daemon's plan, or nil (with why in the note of the one
// made instead) when no daemon paces now.
func published(ctx context.Context, src Sources, now time.Time) (*Freshness, error) {
	doc, at, ok, err := src.DB.Plan(ctx, src.QuotaKey)
	if err != nil || !ok {
		return nil, err
	}
	var st pace.Status
	if err := json.Unmarshal(doc, &st); err != nil {
		return nil, nil // a plan this version cannot read: make one
	}
	if st.Stale(now) {
		return nil, nil
	}
	f := of(st)
	f.Daemon, f.At = true, at
	return f, nil
}

// NewPacer builds a pacer of c over the costs' pools and records'
// history of quotaKey: the one construction the daemon's pacer has too,
// handed in by the wiring, so that the plan a reader shows is made the
// way the daemon makes it, never by a second pacer of report's own.
type NewPacer func(costs *ingest.Costs, records pace.Records, quotaKey string, c pace.Config) (*pace.Pacer, error)

// computed is the plan made now of src's charts, from the pools' states.
func computed(ctx context.Context, src Sources, now time.Time, state func(context.Context) ([]ingest.PoolState, error)) (*Freshness, error) {
	st, err := planNow(ctx, src, now, state)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	f := of(st)
	f.Note = "no daemon paces this quota key now; this is the plan one would follow"
	if _, at, ok, err := src.DB.Plan(ctx, src.QuotaKey); err == nil && ok {
		f.Note = fmt.Sprintf("the daemon's last plan is from %s, more than twice its longest cadence ago: no daemon paces now; this is the plan one would follow",
			at.UTC().Format(time.RFC3339))
	}
	return f, nil
}

// planNow is the plan a pacing worker would follow now for src's
// timetable, from the pools' states (state) and src's ledger and runs:
// the pacer as the daemon builds it (src.NewPacer), on a clock stopped at
// now, logging nothing (the daemon logs its own) and keeping nothing. One
// plan is enough: another worker's spend is the limiter's count of the
// workers beside this one, which a plan takes at its first look.
func planNow(ctx context.Context, src Sources, now time.Time, state func(context.Context) ([]ingest.PoolState, error)) (pace.Status, error) {
	if src.NewPacer == nil {
		return pace.Status{}, fmt.Errorf("no pacer's constructor given")
	}
	t := src.Timetable
	charts, err := t.Entries()
	if err != nil {
		return pace.Status{}, err
	}
	pc, err := src.NewPacer(src.Costs, src.DB, src.QuotaKey, pace.Config{State: state, Entries: jobs.PaceEntries(charts, src.Costs),
		Daily: jobs.DailyCost(src.Costs, t.Names()),
		Clock: clock.Func(func() time.Time { return now }), Logger: slog.New(slog.DiscardHandler), Bound: t.MaxStale})
	if err != nil {
		return pace.Status{}, err
	}
	return pc.Plan(ctx)
}

// of is a plan as the report shows it.
func of(st pace.Status) *Freshness {
	f := &Freshness{At: st.At, Shared: st.Shared, DueFrom: st.DueFrom}
	free := map[string]time.Time{}
	for _, p := range st.Pools {
		f.Pools = append(f.Pools, PoolPace{Pool: p.Pool, Rate: p.Rate, Budget: p.Budget, Reset: p.End,
			Projected: p.Spend, Fixed: p.Fixed, RunsOut: p.RunsOut, FreeAt: p.FreeAt,
			Left: max(p.Rate-p.Planned, 0) * p.Window.Hours(), Window: p.Window})
		free[p.Pool] = p.FreeAt
	}
	for _, e := range st.Entries {
		c := ChartAge{Chart: e.Name, Priority: e.Priority, Age: -1, Every: e.Every, Floor: e.Floor, Next: e.Next, Dropped: e.Dropped,
			Declined: e.Declined}
		for pool, u := range e.Cost {
			if u > 0 && free[pool].After(c.FreeAt) {
				c.FreeAt = free[pool]
			}
		}
		f.Charts = append(f.Charts, c)
	}
	return f
}

// freshness fills the report's plan: the daemon's, or with a schedule and
// no daemon, the one made now from the pools the report read (the
// ledger's when the limiter does not answer).
func (r *Report) freshness(ctx context.Context, src Sources) error {
	now := r.Now
	f, err := published(ctx, src, now)
	if err != nil {
		return err
	}
	if f == nil && (src.Timetable.Every <= 0 || len(src.Timetable.Charts) == 0) {
		return nil
	}
	if f == nil {
		// The pools as the report has them: the limiter's, or the ledger's
		// when it does not answer.
		states := func(context.Context) ([]ingest.PoolState, error) {
			var out []ingest.PoolState
			for _, p := range r.Pools {
				out = append(out, p.PoolState)
			}
			return out, nil
		}
		if f, err = computed(ctx, src, now, states); err != nil {
			return err
		}
	}
	if err := ages(ctx, src, f, now); err != nil {
		return err
	}
	r.Freshness = f
	r.nextRuns(f)
	return nil
}

// nextRuns gives each region the plan's next run of its chart, none for a
// chart the plan dropped: never the unpaced slot beside a plan that says
// otherwise.
func (r *Report) nextRuns(f *Freshness) {
	for i := range r.Regions {
		for _, c := range f.Charts {
			if c.Chart == r.Regions[i].Code {
				r.Regions[i].NextRun = c.Next
				r.Regions[i].NextFrom = f.DueFrom && !c.Next.IsZero()
			}
		}
	}
}

// Left is what the plan leaves in each pool over its next window: the
// pool's rate less what the paced charts spend at, over the window, never
// below zero. A backfill that takes it at once slows no paced chart: the
// window then holds no more than the pool's sustainable rate allows.
func (f *Freshness) Left() map[string]float64 {
	out := map[string]float64{}
	for _, p := range f.Pools {
		out[p.Pool] = p.Left
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

// FreshnessJSON is `pace` in `report --json`.
type FreshnessJSON struct {
	Source string  `json:"source"` // "published": the pacing worker's; "computed": made now
	Note   string  `json:"note,omitempty"`
	MadeAt *string `json:"made_at"`
	Shared bool    `json:"shared"`
	// DueFrom: each next_run is the time from which the chart is due (a
	// paced run --once that cron starts), not a slot.
	DueFrom bool           `json:"due_from"`
	Pools   []PoolPaceJSON `json:"pools"`
	Charts  []ChartAgeJSON `json:"charts"`
}

// PoolPaceJSON is one pool's plan until its reset.
type PoolPaceJSON struct {
	Pool           string  `json:"pool"`
	RatePerHour    float64 `json:"rate_units_per_hour"`
	BudgetUnits    int64   `json:"budget_units"`
	Reset          string  `json:"reset"`
	ProjectedUnits int64   `json:"projected_units"`
	FixedUnits     int64   `json:"fixed_units"`
	FixedRunsOutAt *string `json:"fixed_runs_out_at"` // null: the fixed cadence lasts to the reset
	FreeAt         *string `json:"free_at"`           // null: room now
}

// ChartAgeJSON is one chart's age and place in the plan.
type ChartAgeJSON struct {
	Chart        string   `json:"chart"`
	Priority     int      `json:"priority"`
	AgeSeconds   *int64   `json:"age_seconds"`   // null: never completed
	EverySeconds *float64 `json:"every_seconds"` // planned; null: dropped, or waiting for room
	FloorSeconds float64  `json:"floor_seconds"`
	NextRun      *string  `json:"next_run"` // the paced slot; null: none planned
	Dropped      bool     `json:"dropped"`
}

func (r *Report) freshnessJSON() *FreshnessJSON {
	f := r.Freshness
	if f == nil {
		return nil
	}
	j := &FreshnessJSON{Source: "computed", Note: f.Note, MadeAt: Stamp(f.At), Shared: f.Shared, DueFrom: f.DueFrom,
		Pools: []PoolPaceJSON{}, Charts: []ChartAgeJSON{}}
	if f.Daemon {
		j.Source = "published"
	}
	for _, p := range f.Pools {
		j.Pools = append(j.Pools, PoolPaceJSON{Pool: p.Pool, RatePerHour: math.Round(p.Rate*100) / 100,
			BudgetUnits: int64(math.Floor(p.Budget)), Reset: p.Reset.UTC().Format(time.RFC3339),
			ProjectedUnits: int64(math.Round(p.Projected)), FixedUnits: int64(math.Round(p.Fixed)),
			FixedRunsOutAt: Stamp(p.RunsOut), FreeAt: Stamp(p.FreeAt)})
	}
	for _, c := range f.Charts {
		cj := ChartAgeJSON{Chart: c.Chart, Priority: c.Priority, FloorSeconds: c.Floor.Seconds(),
			NextRun: Stamp(c.Next), Dropped: c.Dropped}
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

// textFreshness prints the pacing lines: whose plan it is; per pool, its
// rate, what the plan spends by the reset and when the fixed cadence would
// run out; per chart, its age, planned cadence and next paced run.
func (r *Report) textFreshness(out io.Writer) {
	f := r.Freshness
	if f == nil {
		return
	}
	if f.Daemon {
		fmt.Fprintf(out, "Pace: the plan the pacing worker follows (run, or run --once --pace), made %s\n", orDash(f.At, "2006-01-02 15:04Z07:00", time.UTC))
	} else {
		fmt.Fprintf(out, "Pace: %s\n", f.Note)
	}
	for _, p := range f.Pools {
		if p.Fixed == 0 {
			continue // the charts take nothing from it
		}
		runsOut := "lasts to the reset"
		if !p.RunsOut.IsZero() {
			runsOut = "runs out at " + p.RunsOut.In(ingest.UpstreamZone).Format("15:04 MST")
		}
		fmt.Fprintf(out, "Pace %s: %.1f units an hour, %d to spend by %s; paced, the charts spend %d; at --every, %d and it %s\n",
			p.Pool, p.Rate, int64(math.Floor(p.Budget)), p.Reset.In(ingest.UpstreamZone).Format("2006-01-02 15:04 MST"),
			int64(math.Round(p.Projected)), int64(math.Round(p.Fixed)), runsOut)
	}
	w := tw(out)
	fmt.Fprintln(w, "CHART\tAGE\tPLANNED EVERY\tNEXT RUN\tFLOOR (--every)")
	for _, c := range f.Charts {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", c.Chart, c.AgeText(), c.EveryText(),
			nextText(c.Next, f.DueFrom), ShortDuration(c.Floor))
	}
	w.Flush()
	if d := declinedText(f.Charts); d != "" {
		fmt.Fprintf(out, "Declined slots since the daemon started (planned, not missed): %s\n", d)
	}
	fmt.Fprintln(out)
}

// declinedText is the slots the pacer declined, chart by chart in the
// plan's order, each reason with its count: "US 1 caught up, GB 2 not
// earned"; "" when none.
func declinedText(charts []ChartAge) string {
	var parts []string
	for _, c := range charts {
		for _, why := range slices.Sorted(maps.Keys(c.Declined)) {
			parts = append(parts, fmt.Sprintf("%s %d %s", c.Chart, c.Declined[why], why))
		}
	}
	return strings.Join(parts, ", ")
}

// nextText is a next run as the tables print it: its slot, "from" the
// time a cron's run --once may run it, or "-" for none.
func nextText(next time.Time, from bool) string {
	if from && !next.IsZero() {
		return "from " + next.UTC().Format("15:04Z07:00")
	}
	return orDash(next, "15:04Z07:00", time.UTC)
}
