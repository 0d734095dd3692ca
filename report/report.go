// Package report builds what `ingest report`, the /quota endpoint and the
// dashboard show about a quota key: every pool's use and room, where the
// units went (by operation, by region, by hour), each region's last run and
// next slot, and whether the schedule fits the daily quota.
//
// It reads a limiter's state (StateReader), the store's runs and size,
// what pacing recorded (pace.Records) and how far back the data reaches
// (retention.Held). The schedule it plans is the one timetable a run
// follows (jobs.Timetable), as the run recorded it or the caller's flags
// give it. It imports no limiter backend.
//
// What is where: the quota report ingest report, /quota, /api/v1/quota and
// the operator page share: pools, breakdowns, regions' last and next runs
// (the caller says when each runs next); the plans: a day of the schedule
// (run's start line, the report) and a backfill's pages against the pools,
// counted by the registry's fetches; a backfill's share of what the paced
// plan leaves; freshness (each chart's age, pacing's plan until the reset);
// what ingest history, backfill --list, prune and tokens list print; the
// ledger's reads kept across a server's reports while a stamp says the
// ledger stayed the same (remember.go).
package report

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/retention"
	"github.com/ingestworks/ingest/store"
)

// Store is what the report reads from the database.
type Store interface {
	pace.Records
	LastRuns(ctx context.Context, kind ingest.PageKind) (map[string]store.RunSummary, error)
	// Plan is the pacing daemon's plan of quotaKey (pace's JSON).
	Plan(ctx context.Context, quotaKey string) (plan []byte, at time.Time, ok bool, err error)
}

// NoDB stands in for a database that does not exist yet: nothing spent,
// nothing run.
type NoDB struct{}

func (NoDB) Calls(context.Context, string, time.Time) ([]ingest.Call, error) { return nil, nil }
func (NoDB) LastRuns(context.Context, ingest.PageKind) (map[string]store.RunSummary, error) {
	return map[string]store.RunSummary{}, nil
}
func (NoDB) LastPasses(context.Context, string, time.Time) (map[string]time.Time, error) {
	return map[string]time.Time{}, nil
}
func (NoDB) StoppedPasses(context.Context, time.Time) ([]ingest.Stopped, error) { return nil, nil }
func (NoDB) PassCosts(context.Context, string, time.Time) (map[string]map[string]float64, error) {
	return map[string]map[string]float64{}, nil
}
func (NoDB) Plan(context.Context, string) ([]byte, time.Time, bool, error) {
	return nil, time.Time{}, false, nil
}

// WholePools is the embedded limiter of a host with no database: every
// pool has all its room.
type WholePools struct{ Costs *ingest.Costs }

func (w WholePools) State(context.Context) ([]ingest.PoolState, error) {
	var out []ingest.PoolState
	for _, p := range w.Costs.Pools {
		out = append(out, ingest.PoolState{Pool: p.Name, Limit: p.Limit, Reserve: p.Reserve, Day: p.DayName(), Remaining: p.Capacity()})
	}
	return out, nil
}
func (WholePools) Backend() string { return "sqlite" }

// Sources is what a report is built from.
type Sources struct {
	DB       Store
	Limiter  StateReader
	Costs    *ingest.Costs
	QuotaKey string
	// Timetable is the schedule the plan and the next runs follow: the one
	// a daemon or a cron run recorded, else the flags'.
	Timetable jobs.Timetable
	// Plan is the day's plan the schedule's run recorded (its start line,
	// tracking's units among them); nil: made here from the timetable.
	Plan []PlanLine
	// NewPacer builds the pacer that makes the plan when no daemon
	// published one (pace.go).
	NewPacer NewPacer
	// CostsNote says that the command reads with other costs than the
	// schedule's run spends by, and that the run's are shown; "" when
	// they are the same.
	CostsNote string
	Now       time.Time // required: the house clock's time, that the report is read at
	// ScheduleFrom says where Every came from: the daemon's, --every or
	// default.
	ScheduleFrom string
	NoDatabase   bool
	// Size reads the database's size and oldest chart run; nil leaves
	// them out.
	Size func(context.Context) (store.Size, error)
	// Standing is the key's standing (the standard one when zero); Held
	// reads how far back the data reaches, nil leaving it out (terms.go).
	Standing ingest.Standing
	Held     func(context.Context) (retention.Held, error)
	// Names names a chart's region as the catalogue does ("" for none);
	// nil leaves the names out.
	Names func(chart string) string
	// Floors are, by each later priority of the proxy's plans, the floor
	// of each pool its clients spend down to (ratelimit.APIPlans.Floors);
	// nil when the plans are not known here.
	Floors map[int64]map[string]int64
}

// Report is everything `ingest report` shows.
type Report struct {
	QuotaKey     string
	NoDatabase   bool   // no database on this host yet
	ScheduleFrom string // where the plan's period came from
	Backend      string
	// Whole: no limiter was read, there being no database to hold the
	// embedded one yet (WholePools).
	Whole      bool
	BackendErr error // the limiter did not answer: used comes from the ledger
	Pools      []Pool
	Operations []Op
	ByRegion   []RegionUnits
	// ByClient is what each of the proxy's clients took over the last
	// day, and LeftToClients what they may still take by pool; both nil
	// when no client spent within the day (clients.go). LeftByPriority is
	// LeftToClients for the clients of each later priority, below the
	// floor the earlier ones' shares keep; nil without Sources.Floors.
	ByClient       []ClientUnits
	LeftToClients  map[string]int64
	LeftByPriority map[int64]map[string]int64
	Regions        []Region
	Hourly         map[string][24]int64 // per pool, index 23 is the current hour
	HourStart      time.Time            // start of the hour at index 0
	UpstreamReset  time.Time
	Plan           []PlanLine
	// Tiers is what each tier of the schedule's regions gets from the
	// plan at the pools' sustainable rates, as the run told at start.
	Tiers     []TierLine
	CostsNote string // the costs shown are the schedule's run's, not the command's
	Now       time.Time
	Storage   *store.Size // nil: not read (no database)
	Clock     *Clock      // nil: the upstream's time never read (clock.go)
	Freshness *Freshness  // nil: no schedule (pace.go)
	Terms     *Terms      // terms.go
	// Undecided is, while the limiter cannot tell a new Redis from one
	// that lost its data, what it says to run in each case; "" otherwise.
	Undecided string
}

// undecider is a limiter that can say it cannot tell a new Redis from a
// wiped one (quota.Redis).
type undecider interface {
	Undecided(ctx context.Context) (string, error)
}

// Pool is one pool's state with its window and unmetered units.
type Pool struct {
	Window time.Duration
	ingest.PoolState
	Unmetered int64 // units admitted unmetered in the window (limiter unreachable)
	FailOpen  ingest.FailOpen
}

// Op is what one operation took over the last day.
type Op struct {
	Op    string
	Calls int
	Units map[string]int64
}

// RegionUnits is what one region's calls took over the last day.
type RegionUnits struct {
	Region string
	Calls  int
	Units  map[string]int64
}

// Region is a region's last run and next slot.
type Region struct {
	Code    string
	Name    string // the catalogue's name of its region; "" when none
	Status  ingest.RunStatus
	LastRun time.Time
	Pages   int
	Videos  int
	Units   int64
	NextRun time.Time // zero: none planned (a chart the plan dropped)
	// NextFrom: NextRun is the time from which the chart is due, and the
	// cron that starts a paced run --once runs it at its first start after.
	NextFrom bool
	Message  string
	RetryAt  time.Time
}

// StateReader is what the report needs of a limiter.
type StateReader interface {
	State(ctx context.Context) ([]ingest.PoolState, error)
	Backend() string
}

// oneRead is db for one report or plan: each of the ledger's reads (the
// window's calls, the passes) made once and shared by every part that
// asks for it, the report being of one moment.
func oneRead(db Store, now time.Time) Store {
	return &Remembered{Store: db, Keep: time.Hour, Clock: moment(now), Stamp: func(context.Context, string) (string, error) { return "", nil }}
}

// moment is a clock that stands at one time: a report's.
type moment time.Time

func (m moment) Now() time.Time { return time.Time(m) }

// Build reads the limiter and the store and builds the report.
func Build(ctx context.Context, src Sources) (*Report, error) {
	now := src.Now
	if now.IsZero() {
		return nil, errNoNow
	}
	r := &Report{QuotaKey: src.QuotaKey, Backend: src.Limiter.Backend(), Now: now,
		UpstreamReset: ingest.UpstreamReset(now), NoDatabase: src.NoDatabase, ScheduleFrom: src.ScheduleFrom}
	_, r.Whole = src.Limiter.(WholePools)
	src.DB = oneRead(src.DB, now)
	window := longestWindow(src.Costs)
	// Read once from where the plan's history reads (pace.HistorySince),
	// which is a little earlier; the report's own figures start later.
	since := now.Add(-max(window, 24*time.Hour))
	from := pace.HistorySince(src.Costs.Pools, now)
	if since.Before(from) {
		from = since
	}
	calls, err := src.DB.Calls(ctx, src.QuotaKey, from)
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	calls = slices.DeleteFunc(calls, func(c ingest.Call) bool { return c.At.Before(since) })
	r.pools(ctx, src, calls, now)
	r.breakdowns(src.Costs, calls, now)
	if r.ByClient = byClient(calls); r.ByClient != nil {
		if err := r.leftToClients(ctx, src); err != nil {
			return nil, err
		}
	}
	last, err := src.DB.LastRuns(ctx, ingest.Trending)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	r.regionRows(src, last, now)
	if r.Plan, r.CostsNote = src.Plan, src.CostsNote; r.Plan == nil {
		r.Plan = Plan(src.Costs, Schedule{Timetable: src.Timetable}, last)
	}
	if len(src.Timetable.Charts) > 0 && src.Timetable.Every > 0 {
		r.Tiers = Tiers(src.Costs, Schedule{Timetable: src.Timetable, Last: last})
	}
	if err := r.freshness(ctx, src); err != nil {
		return nil, err
	}
	if src.Size != nil {
		sz, err := src.Size(ctx)
		if err != nil {
			return nil, err
		}
		r.Storage = &sz
	}
	if err := r.terms(ctx, src); err != nil {
		return nil, err
	}
	return r, nil
}

// longestWindow is the widest pool window: how far back the ledger matters.
func longestWindow(c *ingest.Costs) time.Duration {
	var w time.Duration
	for _, p := range c.Pools {
		w = max(w, p.Window)
	}
	return w
}

// pools asks the limiter; when it does not answer, the ledger stands in.
func (r *Report) pools(ctx context.Context, src Sources, calls []ingest.Call, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	states, err := src.Limiter.State(ctx)
	if err != nil {
		r.BackendErr = err
		states = ledgerStates(src.Costs, calls, now)
	}
	for _, st := range states {
		pool, _ := src.Costs.Pool(st.Pool)
		r.Pools = append(r.Pools, Pool{PoolState: st, Window: pool.Window, Unmetered: unmetered(calls, pool, now), FailOpen: pool.FailOpen})
	}
	if u, ok := src.Limiter.(undecider); ok && err == nil {
		r.Undecided, _ = u.Undecided(ctx)
	}
}

// ledgerStates rebuilds the pools' use from the ledger's calls, the
// unmetered ones included: the upstream charged them, and the limiter
// counts them too once it answers again and they are written into it.
func ledgerStates(costs *ingest.Costs, calls []ingest.Call, now time.Time) []ingest.PoolState {
	var out []ingest.PoolState
	for _, p := range costs.Pools {
		st := ingest.PoolState{Pool: p.Name, Limit: p.Limit, Reserve: p.Reserve, Day: p.DayName()}
		var dayStart time.Time
		if p.Day != nil {
			dayStart = time.UnixMilli(ingest.DayStarts(p.Day, now)[1])
		}
		for _, c := range calls {
			if c.At.After(now.Add(-p.Window)) {
				st.Used += unitsIn(c.Charges, p.Name)
			}
			if p.Day != nil && !c.At.Before(dayStart) {
				st.UsedDay += unitsIn(c.Charges, p.Name)
			}
		}
		st.Remaining = max(0, p.Capacity()-max(st.Used, st.UsedDay))
		st.FreeAt = ledgerFreeAt(p, st, dearest(costs, p.Name), calls, now)
		out = append(out, st)
	}
	return out
}

// ledgerFreeAt is when the ledger's calls leave room in p for cost more
// units (zero: room now): the call whose units, counted from the oldest in
// the window, make up the excess leaves the window, and a full day ends.
// free_at null means room now, so a pool full by the ledger must not
// read as one with room because the limiter did not answer.
func ledgerFreeAt(p ingest.Pool, st ingest.PoolState, cost int64, calls []ingest.Call, now time.Time) time.Time {
	var t time.Time
	if excess := st.Used + cost - p.Capacity(); excess > 0 {
		var freed int64
		for _, c := range calls { // oldest first
			if c.At.After(now.Add(-p.Window)) {
				if freed += unitsIn(c.Charges, p.Name); freed >= excess {
					t = c.At.Add(p.Window)
					break
				}
			}
		}
	}
	if p.Day != nil && st.UsedDay+cost > p.Capacity() {
		if next := time.UnixMilli(ingest.DayStarts(p.Day, now)[2]).UTC(); next.After(t) {
			t = next
		}
	}
	return t.UTC()
}

// dearest is the largest charge any operation makes in pool: what
// free_at is about.
func dearest(costs *ingest.Costs, pool string) int64 {
	var m int64 = 1
	for _, charges := range costs.Operations {
		m = max(m, unitsIn(charges, pool))
	}
	return m
}

func unmetered(calls []ingest.Call, p ingest.Pool, now time.Time) int64 {
	var n int64
	for _, c := range calls {
		if c.Unmetered && c.At.After(now.Add(-p.Window)) {
			n += unitsIn(c.Charges, p.Name)
		}
	}
	return n
}

func unitsIn(charges []ingest.Charge, pool string) int64 {
	for _, ch := range charges {
		if ch.Pool == pool {
			return ch.Units
		}
	}
	return 0
}

// breakdowns: units by operation, by region and by hour over the last day.
func (r *Report) breakdowns(costs *ingest.Costs, calls []ingest.Call, now time.Time) {
	ops, regs := map[string]*Op{}, map[string]*RegionUnits{}
	r.Hourly = map[string][24]int64{}
	r.HourStart = now.Truncate(time.Hour).Add(-23 * time.Hour)
	for _, c := range calls {
		o := ops[c.Op]
		if o == nil {
			o = &Op{Op: c.Op, Units: map[string]int64{}}
			ops[c.Op] = o
		}
		region := c.Region
		if region == "" {
			region = "-"
		}
		g := regs[region]
		if g == nil {
			g = &RegionUnits{Region: region, Units: map[string]int64{}}
			regs[region] = g
		}
		o.Calls++
		g.Calls++
		for _, ch := range c.Charges {
			o.Units[ch.Pool] += ch.Units
			g.Units[ch.Pool] += ch.Units
			if h := int(c.At.Sub(r.HourStart) / time.Hour); h >= 0 && h < 24 {
				row := r.Hourly[ch.Pool]
				row[h] += ch.Units
				r.Hourly[ch.Pool] = row
			}
		}
	}
	for _, o := range ops {
		r.Operations = append(r.Operations, *o)
	}
	sort.Slice(r.Operations, func(i, j int) bool { return r.Operations[i].Op < r.Operations[j].Op })
	for _, g := range regs {
		r.ByRegion = append(r.ByRegion, *g)
	}
	sort.Slice(r.ByRegion, func(i, j int) bool { return r.ByRegion[i].Region < r.ByRegion[j].Region })
}

// regionRows: the scheduled regions, then any other region with runs.
func (r *Report) regionRows(src Sources, last map[string]store.RunSummary, now time.Time) {
	scheduled := src.Timetable.Names()
	codes := append([]string{}, scheduled...)
	var extra []string
	for code := range last {
		if !contains(codes, code) {
			extra = append(extra, code)
		}
	}
	sort.Strings(extra)
	codes = append(codes, extra...)
	next := src.Timetable.Nexts(now)
	for i, code := range codes {
		row := Region{Code: code, Status: ingest.StatusNever}
		if src.Names != nil {
			row.Name = src.Names(code)
		}
		if i < len(scheduled) {
			row.NextRun = next[i]
		}
		if run, ok := last[code]; ok {
			row.Status, row.LastRun, row.Message = run.Status, run.Started, run.Message
			row.Pages, row.Videos, row.Units, row.RetryAt = run.Pages, run.Videos, run.Units, run.RetryAt
		}
		r.Regions = append(r.Regions, row)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// errNoNow is a report asked with no time: it is read at the house
// clock's, which its caller has.
var errNoNow = errors.New("report: Sources.Now is required: the time on the house's clock")
