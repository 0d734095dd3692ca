package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

type reportFlags struct {
	json    bool
	regions string
	every   time.Duration

	regionsGiven, everyGiven bool
}

func newReportCmd(s *settings) *cobra.Command {
	f := &reportFlags{}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Show how much quota is left, where it went and how each region did",
		Long: `report shows, for the quota key: every pool's limit, reserve, units used in
the trailing window, what remains, when there will be room again and whether
the upstream has blocked it; where the units went (by operation, by region,
by hour); each region's last run and next slot; and whether the schedule fits
the daily quota.

report is read-only: it spends no quota and writes nothing, to Redis or to
the database, and opens the database read-only (a read-only directory will
do). On a host with no database yet it still shows the pools, from the
limiter (Redis knows what other hosts spent), and creates no file. The
quota key is --quota-key, else the hash of YOUTUBE_API_KEY, else the only
quota key the database's ledger knows.

Next runs and the plan follow the schedule a daemon on this database runs
(it records its --every and regions); --every and --regions override it.`,
		Example: `  ingest report
  ingest report --json | jq '.pools[] | {name, remaining}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.regionsGiven, f.everyGiven = cmd.Flags().Changed("regions"), cmd.Flags().Changed("every")
			return runReport(cmd.Context(), cmd.OutOrStdout(), s, f)
		},
	}
	cmd.Flags().BoolVar(&f.json, "json", false, "print one JSON object (the format scripts rely on)")
	cmd.Flags().StringVar(&f.regions, "regions", "", "regions the schedule runs, for next runs and the plan (default the daemon's, else the eight)")
	cmd.Flags().DurationVar(&f.every, "every", time.Hour, "the schedule's period, for next runs and the plan (default the daemon's, else 1h)")
	return cmd
}

func runReport(ctx context.Context, out io.Writer, s *settings, f *reportFlags) error {
	codes, err := regions.Parse(f.regions)
	if err != nil {
		return usageErrorf("--regions: %w", err)
	}
	if f.every < regions.MinEvery {
		return usageErrorf("--every: must be at least %s, got %s", regions.MinEvery, f.every)
	}
	src := reportSources{db: noDB{}, costs: s.costs, regions: codes, every: f.every, scheduleFrom: "--every"}
	db, err := store.OpenExisting(ctx, s.db)
	switch {
	case errors.Is(err, store.ErrNoDatabase):
		src.noDatabase = true
	case err != nil:
		return runtimeError(fmt.Errorf("open database %s: %w", s.db, err))
	default:
		defer db.Close()
		src.db = db
		if err := src.useSchedule(ctx, db, f); err != nil {
			return runtimeError(err)
		}
	}
	if !f.everyGiven && src.scheduleFrom == "--every" {
		src.scheduleFrom = "default"
	}
	if src.quotaKey, err = reportQuotaKey(ctx, s, db); err != nil {
		return err
	}
	l, closeLimiter, err := reportLimiter(s, db, src.quotaKey)
	if err != nil {
		return err
	}
	defer closeLimiter()
	src.limiter = l
	rep, err := buildReport(ctx, src)
	if err != nil {
		return runtimeError(err)
	}
	if f.json {
		return writeJSON(out, rep.JSON())
	}
	rep.Text(out, time.Local)
	return nil
}

// useSchedule takes the daemon's recorded schedule for what the flags do
// not give.
func (src *reportSources) useSchedule(ctx context.Context, db *store.DB, f *reportFlags) error {
	sch, ok, err := db.Schedule(ctx)
	if err != nil || !ok {
		return err
	}
	if !f.everyGiven {
		src.every, src.scheduleFrom = sch.Every, "the daemon's"
	}
	if !f.regionsGiven && len(sch.Regions) > 0 {
		src.regions = sch.Regions
	}
	return nil
}

// reportLimiter opens the limiter for reading. With no database, the
// embedded limiter has spent nothing on this host: its pools are whole.
func reportLimiter(s *settings, db *store.DB, key string) (stateReader, func(), error) {
	if db == nil && s.redisURL == "" {
		return wholePools{costs: s.costs}, func() {}, nil
	}
	return s.openLimiter(db, key)
}

// reportQuotaKey: --quota-key, else the API key's hash, else the one quota
// key in the ledger.
func reportQuotaKey(ctx context.Context, s *settings, db *store.DB) (string, error) {
	if s.quotaKey != "" {
		return s.quotaKey, nil
	}
	if k, err := apiKey(); err == nil {
		return keyHash(k), nil
	}
	var keys []string
	if db != nil {
		var err error
		if keys, err = db.QuotaKeys(ctx); err != nil {
			return "", runtimeError(fmt.Errorf("read quota keys: %w", err))
		}
	}
	switch len(keys) {
	case 1:
		return keys[0], nil
	case 0:
		if db == nil && s.redisURL == "" {
			return "-", nil // nothing spent on this host, and no shared limiter to ask
		}
		return "", usageErrorf("no quota key: set --quota-key / INGEST_QUOTA_KEY or YOUTUBE_API_KEY (the database has spent nothing yet)")
	}
	return "", usageErrorf("the database holds several quota keys (%s): choose one with --quota-key / INGEST_QUOTA_KEY", strings.Join(keys, ", "))
}

// reportStore is what the report reads from the database.
type reportStore interface {
	Calls(ctx context.Context, quotaKey string, since time.Time) ([]ingest.Call, error)
	LastRuns(ctx context.Context, kind ingest.PageKind) (map[string]store.RunSummary, error)
}

// noDB stands in for a database that does not exist yet: nothing spent,
// nothing run.
type noDB struct{}

func (noDB) Calls(context.Context, string, time.Time) ([]ingest.Call, error) { return nil, nil }
func (noDB) LastRuns(context.Context, ingest.PageKind) (map[string]store.RunSummary, error) {
	return map[string]store.RunSummary{}, nil
}

// wholePools is the embedded limiter of a host with no database: every
// pool has all its room.
type wholePools struct{ costs *ingest.Costs }

func (w wholePools) State(context.Context) ([]ingest.PoolState, error) {
	var out []ingest.PoolState
	for _, p := range w.costs.Pools {
		out = append(out, ingest.PoolState{Pool: p.Name, Limit: p.Limit, Reserve: p.Reserve, Day: p.DayName(), Remaining: p.Capacity()})
	}
	return out, nil
}
func (wholePools) Backend() string { return "sqlite" }

type reportSources struct {
	db       reportStore
	limiter  stateReader
	costs    *ingest.Costs
	quotaKey string
	regions  []string
	every    time.Duration
	now      time.Time // time.Now when zero
	// scheduleFrom says where every came from: the daemon's, --every or
	// default.
	scheduleFrom string
	noDatabase   bool
}

// report is everything `ingest report` shows.
type report struct {
	QuotaKey      string
	NoDatabase    bool   // no database on this host yet
	ScheduleFrom  string // where the plan's period came from
	Backend       string
	BackendErr    error // the limiter did not answer: used comes from the ledger
	Pools         []poolReport
	Operations    []opReport
	ByRegion      []regionUnits
	Regions       []regionReport
	Hourly        map[string][24]int64 // per pool, index 23 is the current hour
	HourStart     time.Time            // start of the hour at index 0
	UpstreamReset time.Time
	Plan          []planLine
	Now           time.Time
}

type poolReport struct {
	Window time.Duration
	ingest.PoolState
	Unmetered int64 // units admitted unmetered in the window (limiter unreachable)
}

type opReport struct {
	Op    string
	Calls int
	Units map[string]int64
}

type regionUnits struct {
	Region string
	Calls  int
	Units  map[string]int64
}

type regionReport struct {
	Code    string
	Status  ingest.RunStatus
	LastRun time.Time
	Pages   int
	Videos  int
	Units   int64
	NextRun time.Time
	Message string
	RetryAt time.Time
}

// planLine is what the schedule spends in a day in one pool.
type planLine struct {
	Pool       string
	Regions    int
	Pages      int // pages per pass, all regions together
	RunsPerDay float64
	Units      int64 // per day
	Capacity   int64
}

// stateReader is what the report needs of a limiter.
type stateReader interface {
	State(ctx context.Context) ([]ingest.PoolState, error)
	Backend() string
}

func buildReport(ctx context.Context, src reportSources) (*report, error) {
	now := src.now
	if now.IsZero() {
		now = time.Now()
	}
	r := &report{QuotaKey: src.quotaKey, Backend: src.limiter.Backend(), Now: now,
		UpstreamReset: ingest.UpstreamReset(now), NoDatabase: src.noDatabase, ScheduleFrom: src.scheduleFrom}
	window := longestWindow(src.costs)
	calls, err := src.db.Calls(ctx, src.quotaKey, now.Add(-max(window, 24*time.Hour)))
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	r.pools(ctx, src, calls, now)
	r.breakdowns(src.costs, calls, now)
	last, err := src.db.LastRuns(ctx, ingest.Trending)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	r.regionRows(src, last, now)
	r.plan(src, last)
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
func (r *report) pools(ctx context.Context, src reportSources, calls []ingest.Call, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	states, err := src.limiter.State(ctx)
	if err != nil {
		r.BackendErr = err
		states = ledgerStates(src.costs, calls, now)
	}
	for _, st := range states {
		pool, _ := src.costs.Pool(st.Pool)
		r.Pools = append(r.Pools, poolReport{PoolState: st, Window: pool.Window, Unmetered: unmetered(calls, pool, now)})
	}
}

// ledgerStates rebuilds the pools' use from the ledger's metered calls.
func ledgerStates(costs *ingest.Costs, calls []ingest.Call, now time.Time) []ingest.PoolState {
	var out []ingest.PoolState
	for _, p := range costs.Pools {
		st := ingest.PoolState{Pool: p.Name, Limit: p.Limit, Reserve: p.Reserve, Day: p.DayName()}
		var dayStart time.Time
		if p.Day != nil {
			dayStart = time.UnixMilli(ingest.DayStarts(p.Day, now)[1])
		}
		for _, c := range calls {
			if !c.Unmetered && c.At.After(now.Add(-p.Window)) {
				st.Used += unitsIn(c.Charges, p.Name)
			}
			if !c.Unmetered && p.Day != nil && !c.At.Before(dayStart) {
				st.UsedDay += unitsIn(c.Charges, p.Name)
			}
		}
		st.Remaining = max(0, p.Capacity()-max(st.Used, st.UsedDay))
		out = append(out, st)
	}
	return out
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
func (r *report) breakdowns(costs *ingest.Costs, calls []ingest.Call, now time.Time) {
	ops, regs := map[string]*opReport{}, map[string]*regionUnits{}
	r.Hourly = map[string][24]int64{}
	r.HourStart = now.Truncate(time.Hour).Add(-23 * time.Hour)
	for _, c := range calls {
		o := ops[c.Op]
		if o == nil {
			o = &opReport{Op: c.Op, Units: map[string]int64{}}
			ops[c.Op] = o
		}
		region := c.Region
		if region == "" {
			region = "-"
		}
		g := regs[region]
		if g == nil {
			g = &regionUnits{Region: region, Units: map[string]int64{}}
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
func (r *report) regionRows(src reportSources, last map[string]store.RunSummary, now time.Time) {
	codes := append([]string{}, src.regions...)
	var extra []string
	for code := range last {
		if !contains(codes, code) {
			extra = append(extra, code)
		}
	}
	sort.Strings(extra)
	codes = append(codes, extra...)
	for i, code := range codes {
		row := regionReport{Code: code, Status: ingest.StatusNever}
		if i < len(src.regions) {
			s, _ := regions.Stagger(src.every, i, len(src.regions))
			row.NextRun = s.Next(now)
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

// plan estimates a day of the schedule against each pool's capacity.
func (r *report) plan(src reportSources, last map[string]store.RunSummary) {
	r.Plan = schedulePlan(src.costs, src.regions, src.every, last)
}

// schedulePlan estimates a day of a schedule: regions x pages x runs a
// day, plus one categories call a region a day, against each pool's
// capacity. A region's pages are those of its last completed run, 4 (a
// chart of 200) when it has none.
func schedulePlan(costs *ingest.Costs, codes []string, every time.Duration, last map[string]store.RunSummary) []planLine {
	pages := 0
	for _, code := range codes {
		n := 4
		if run, ok := last[code]; ok && run.Pages > 0 && run.Status == ingest.StatusCompleted {
			n = run.Pages
		}
		pages += n
	}
	runs := float64(24*time.Hour) / float64(every)
	page, _ := costs.Op(ingest.OpVideosList)
	cats, _ := costs.Op(ingest.OpCategoriesList)
	var plan []planLine
	for _, p := range costs.Pools {
		perDay := int64(float64(int64(pages)*unitsIn(page, p.Name))*runs + 0.5)
		perDay += int64(len(codes)) * unitsIn(cats, p.Name)
		plan = append(plan, planLine{Pool: p.Name, Regions: len(codes), Pages: pages,
			RunsPerDay: runs, Units: perDay, Capacity: p.Capacity()})
	}
	return plan
}
