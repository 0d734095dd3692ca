package pace_test

// The simulation the days tests run on (the days in *days_test.go): the
// pools' shapes they spend, a sim of the charts' real passes on a clock
// the test moves, the ways a deployment runs them (a daemon, cron, a
// restart), and the figures a day is judged by.

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// tightCosts is shaped like the shipped pools but small: the eight
// regions' own charts hourly fit (768 units a day), their sixteen
// category charts hourly (1,536 more) do not.
const tightCosts = `pools:
  default: {limit: 1000, reserve: 50, window: 24h, day: America/Los_Angeles}
  search:  {limit: 100,  reserve: 5,  window: 24h, day: America/Los_Angeles}
  stats:   {limit: 1000, reserve: 0,  window: 24h, day: America/Los_Angeles}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`

var (
	regions8   = []string{"US", "GB", "DE", "FR", "IN", "BR", "AU", "CA"}
	categories = []string{"10", "24"}
	pacific    = ingest.UpstreamZone
	every      = time.Hour
)

// dayStart is a start at hh:mm Pacific on the Saturday before the
// November change, so that seven days hold the 25-hour day.
func dayStart(hh, mm int) time.Time {
	return time.Date(2026, 10, 30, hh, mm, 0, 0, pacific)
}

// sim is one deployment over days: its world, its workers' charts, and
// what it saw.
type sim struct {
	t      *testing.T
	w      *world
	fake   *fakeyt.Fake
	passes []*jobs.Pass
	slots  []jobs.Schedule
	start  time.Time
	every  time.Duration // --every
	// completed is each chart's completed passes, by start.
	completed map[string][]time.Time
	// over is, for each region's own chart, the largest age it reached
	// over its planned cadence; oldest the largest age it reached.
	over   float64
	oldest time.Duration
	// charts are the regions' charts by code, with their tier and depth;
	// bound is --max-stale (0: the default).
	charts map[string]regions.Chart
	bound  time.Duration
	// spent is what each chart's passes spent in the default pool, by
	// Unix hour.
	spent map[string]map[int64]int64
	// late, when set, is how long after its slot a pass starts (a lease,
	// store or database slow to answer); lateness's few seconds when zero.
	late time.Duration
	// log, when set, is the pacers' logger; quiet when nil.
	log *slog.Logger
	// records, when set, is what every pacer of the sim reads its history
	// from; a new reader of the database for each when nil.
	records pace.Records
}

func newSim(t *testing.T, costs string, at time.Time, codes, cats []string) *sim {
	return newSimEvery(t, costs, at, codes, cats, every)
}

// newSimEvery is a sim whose charts are staggered over period (--every).
func newSimEvery(t *testing.T, costs string, at time.Time, codes, cats []string, period time.Duration) *sim {
	return newSimCharts(t, costs, at, regions.Charts(codes...), cats, period)
}

// newSimCharts is a sim of charts, each at its tier and depth, staggered
// as the daemon staggers them over period (--every).
func newSimCharts(t *testing.T, costs string, at time.Time, charts []regions.Chart, cats []string, period time.Duration) *sim {
	t.Helper()
	return newSimLog(t, costs, at, charts, cats, period, false)
}

// newSimOnFile is newSim with the limiter's log and the passes' pages on
// the file and each new pacer reading the ledger whole, as a worker does,
// rather than the log in memory (memLog), the pages dropped (runsOnly)
// and the pacers reading through one follower (oneFollower).
func newSimOnFile(t *testing.T, costs string, at time.Time, codes, cats []string) *sim {
	t.Helper()
	return newSimLog(t, costs, at, regions.Charts(codes...), cats, every, true)
}

// newSimLog is newSimCharts with the limiter's log, the pages and the
// pacers' reads as a worker has them (onFile), or the cheaper parts.
func newSimLog(t *testing.T, costs string, at time.Time, charts []regions.Chart, cats []string, period time.Duration, onFile bool) *sim {
	t.Helper()
	w, fake := newWorldLog(t, costs, at, onFile)
	var sink jobs.Sink = w.db
	var records pace.Records
	if !onFile {
		sink = runsOnly{w.db}
		l := ledger.New(w.db)
		records = oneFollower{l, l.Follow("q")}
	}
	fake.SetChartShape(4, 1)
	s := &sim{t: t, w: w, fake: fake, start: at, every: period, completed: map[string][]time.Time{},
		charts: map[string]regions.Chart{}, spent: map[string]map[int64]int64{}, records: records}
	var order []regions.Chart
	for _, cat := range append([]string{""}, cats...) {
		for _, c := range charts {
			s.charts[c.Code] = c
			order = append(order, c)
			s.passes = append(s.passes, &jobs.Pass{Region: c.Code, Category: cat, Tier: c.Tier, Pages: c.Pages(), QuotaKey: "q", Costs: w.costs,
				Limiter: w, Source: w.client, Sink: sink, Categories: w.db, Logger: quiet(), Clock: clock.Func(w.clock)})
		}
	}
	for i, c := range order {
		sl, err := c.Stagger(period, i, len(s.passes))
		if err != nil {
			t.Fatal(err)
		}
		s.slots = append(s.slots, sl)
	}
	return s
}

// runsOnly is the store as the passes' sink, its runs kept and their
// pages dropped: what the pacer reads of a pass is its run (when it
// started, for which slot, how it ended) and the ledger's calls, never its
// pages, and storing the pages was much of what a days test spent. The
// store's own tests hold its pages; the days of a restart and of a second
// process joining (newSimOnFile) store them.
type runsOnly struct{ *store.DB }

func (runsOnly) SavePage(context.Context, int64, ingest.Page) error { return nil }

// oneFollower is the database as every pacer of a sim reads it, the
// ledger's calls through one follower (ledger.Ledger.Follow): each pacer
// after the first reads only the calls written since the one before it
// read, and gets what a reader of its own would read whole (the
// follower's promise, which ledger's tests hold). A new pacer is a
// restart, or a cron's start every 10 minutes, thousands over the days:
// their reads of the whole window were much of what the days spent. The
// days of a restart and of a second process joining (newSimOnFile) read
// it whole at each start, as a new process does.
type oneFollower struct {
	*ledger.Ledger
	read func(ctx context.Context, since time.Time) ([]ingest.Call, error)
}

func (f oneFollower) Follow(string) func(ctx context.Context, since time.Time) ([]ingest.Call, error) {
	return f.read
}

// pacer is a worker's pacer of the sim's charts, as cmd/ingest makes it.
func (s *sim) pacer() *pace.Pacer {
	var entries []jobs.Entry
	for i, p := range s.passes {
		e := p.Entry()
		e.Slots = s.slots[i]
		entries = append(entries, e)
	}
	return newPacer(s.t, pace.Config{Pools: s.w.costs.Pools, State: s.w.limiter.State, Entries: jobs.PaceEntries(entries, s.w.costs),
		Clock: clock.Func(s.w.clock), Logger: cmp.Or(s.log, quiet()), Refresh: s.every, Bound: s.bound,
		History: pace.FromRecords(cmp.Or[pace.Records](s.records, ledger.New(s.w.db)), "q", s.w.costs.Pools),
		Daily:   map[string]float64{ingest.DefaultPool: float64(len(s.charts))}, LastPass: s.w.db.LastStart})
}

// pass runs the i-th chart when pc says it is due at slot, unless a run of
// it started at or after slot (another process on the database ran it),
// as the daemon's runner does.
func (s *sim) pass(pc *pace.Pacer, i int, slot time.Time) { s.run(pc, i, slot, slot) }

// run runs the i-th chart when pc says it is due when asked, unless a run
// of it started at or after slot. The pass starts a little after it was
// granted, as the daemon's do: the lease and the store are asked first.
func (s *sim) run(pc *pace.Pacer, i int, asked, slot time.Time) {
	ctx := context.Background()
	p := s.passes[i]
	if !pc.Due(ctx, p.Chart(), asked) {
		return
	}
	if last, err := s.w.db.LastStart(ctx, p.Chart()); err == nil && !last.Before(slot) {
		pc.Ran(p.Chart(), nil, nil, "")
		return
	}
	if s.late > 0 {
		s.advance(slot.Add(s.late))
	} else {
		s.w.set(s.w.clock().Add(lateness(slot, i)))
	}
	var res jobs.PassResult
	if asked.Equal(slot) {
		res = p.RunFor(ctx, slot) // a daemon's pass at its slot records the slot
	} else {
		res = p.Run(ctx)
	}
	if res.Status == ingest.StatusFailed {
		s.t.Fatalf("%s at %s: %v", p.Chart(), s.w.clock(), res.Err)
	}
	pc.Ran(p.Chart(), res.Units, res.Daily, res.Status)
	if s.spent[p.Chart()] == nil {
		s.spent[p.Chart()] = map[int64]int64{}
	}
	s.spent[p.Chart()][s.w.clock().Unix()/3600] += res.Units[ingest.DefaultPool]
	if res.Status == ingest.StatusCompleted {
		s.completed[p.Chart()] = append(s.completed[p.Chart()], s.w.clock())
	}
}

// lateness is how long after its grant the pass of the i-th chart for slot
// starts: 100 ms to 3 s, the same for a slot and a chart in every sim, so
// that two sims that grant the same passes spend alike.
func lateness(slot time.Time, i int) time.Duration {
	h := uint64(slot.UnixMilli())*0x9e3779b97f4a7c15 + uint64(i+1)*0xbf58476d1ce4e5b9
	h ^= h >> 29
	return 100*time.Millisecond + time.Duration(h%2900)*time.Millisecond
}

// catchUp is a daemon's start, as the daemon does it: every chart asked
// now, highest priority first; one the pacer allows runs when its latest
// slot passed without a start.
func (s *sim) catchUp(pc *pace.Pacer) {
	for i := range s.passes {
		s.run(pc, i, s.w.clock(), s.slots[i].Prev(s.w.clock()))
	}
}

// once is a paced run --once: every chart asked now, highest priority
// first.
func (s *sim) once(pc *pace.Pacer) {
	now := s.w.clock()
	for i := range s.passes {
		s.pass(pc, i, now)
	}
}

// step is the stagger's grid.
func (s *sim) step() time.Duration { return s.every / time.Duration(max(len(s.passes), 8)) }

// grid is the first time of the stagger's grid at or after t.
func (s *sim) grid(t time.Time) time.Time {
	g := t.Truncate(s.step())
	if g.Before(t) {
		g = g.Add(s.step())
	}
	return g
}

// daemon walks the clock from from to to (excluded), running each
// worker's charts at their slots.
func (s *sim) daemon(from, to time.Time, pcs ...*pace.Pacer) {
	for now := from; now.Before(to); now = now.Add(s.step()) {
		s.advance(now)
		for i := range s.passes {
			if !s.slots[i].Prev(now).Equal(now) {
				continue
			}
			for _, pc := range pcs {
				s.pass(pc, i, now)
			}
		}
		s.watch(pcs[0])
	}
}

// advance moves the clock to now, unless passes started late took it
// there already: the clock never goes back.
func (s *sim) advance(now time.Time) {
	if now.After(s.w.clock()) {
		s.w.set(now)
	}
}

// cron walks the clock from from to to, starting a paced run --once every
// period: a new pacer from the database each time.
func (s *sim) cron(from, to time.Time, period time.Duration) {
	for now := from; now.Before(to); now = now.Add(s.step()) {
		s.advance(now)
		if now.Sub(from)%period == 0 {
			pc := s.pacer()
			s.once(pc)
			s.watch(pc)
		}
	}
}

// deploy runs the sim from start to end as a daemon (a start's catch-up,
// then the slots) or as a paced run --once every 10 minutes ("cron").
func (s *sim) deploy(mode string, start, end time.Time) {
	if mode == "cron" {
		s.cron(start, end, 10*time.Minute)
		return
	}
	pc := s.pacer()
	s.catchUp(pc)
	s.daemon(start, end, pc)
}

// watch keeps the largest age of a region's own chart over its planned
// cadence.
func (s *sim) watch(pc *pace.Pacer) {
	now := s.w.clock()
	if now.Sub(s.start) < 2*max(s.every, time.Hour) {
		return
	}
	for _, e := range pc.Status().Entries {
		if e.Priority != 0 || e.Every == pace.Never || e.Every <= 0 {
			continue
		}
		runs := s.completed[e.Name]
		if len(runs) == 0 {
			continue
		}
		age := now.Sub(runs[len(runs)-1])
		s.over = max(s.over, float64(age)/float64(max(e.Every, s.every)))
		s.oldest = max(s.oldest, age)
	}
}

// settled is the first whole hour after the start's first cadence: a
// chart caught up at start is counted where it ran, so the clock hour
// after its catch-up may hold no pass of it.
func (s *sim) settled() time.Time {
	return s.start.Add(max(s.every, time.Hour)).Add(time.Hour - time.Nanosecond).Truncate(time.Hour)
}

// figures is what a sim measured between from and to.
type figures struct {
	perHourMin, perHourMax int64   // default pool, by clock hour
	gaps                   int     // region-hours without a pass of the region's own chart
	gapList                string  // the first few of them
	over                   float64 // the largest age of an own chart over its cadence
	oldest                 time.Duration
	rate                   float64 // the default pool's sustainable units an hour
	refused                int
	units                  int64
	cats                   int // category passes completed
}

func (s *sim) figures(from, to time.Time) figures {
	s.t.Helper()
	to = to.Truncate(time.Hour) // whole hours only
	f := figures{perHourMin: math.MaxInt64, over: s.over, oldest: s.oldest, refused: s.w.refused, rate: s.rate()}
	calls, err := ledger.New(s.w.db).Calls(context.Background(), "q", from)
	if err != nil {
		s.t.Fatal(err)
	}
	hours := map[int64]int64{} // by Unix hour
	from, to = from.UTC(), to.UTC()
	for _, c := range calls {
		if c.At.Before(to) {
			for _, ch := range c.Charges {
				if ch.Pool == ingest.DefaultPool {
					hours[c.At.Unix()/3600] += ch.Units
					f.units += ch.Units
				}
			}
		}
	}
	var series []string
	for h := from.Truncate(time.Hour); h.Before(to); h = h.Add(time.Hour) {
		u := hours[h.Unix()/3600]
		f.perHourMin, f.perHourMax = min(f.perHourMin, u), max(f.perHourMax, u)
		series = append(series, fmt.Sprint(u))
	}
	if os.Getenv("INGEST_PACE_HOURS") != "" {
		s.t.Logf("units by hour from %s: %s", from.In(pacific).Format("Jan 2 15:04"), strings.Join(series, " "))
	}
	var gaps []string
	for chart, runs := range s.completed {
		if strings.Contains(chart, "/") {
			for _, at := range runs {
				if !at.Before(from) && at.Before(to) {
					f.cats++
				}
			}
			continue
		}
		seen := map[int64]bool{}
		for _, at := range runs {
			seen[at.Unix()/3600] = true
		}
		for h := from.Truncate(time.Hour); h.Before(to); h = h.Add(time.Hour) {
			if !seen[h.Unix()/3600] {
				f.gaps++
				gaps = append(gaps, chart+"@"+h.In(pacific).Format("Jan 2 15:04"))
			}
		}
	}
	sort.Strings(gaps)
	f.gapList = strings.Join(gaps[:min(len(gaps), 6)], " ")
	return f
}

func (f figures) String() string {
	return fmt.Sprintf("units/hour %d..%d (rate %.1f), %d units, hours without an own chart's pass %d %s, largest age/cadence %.2f (largest age %s), category passes %d, refusals %d",
		f.perHourMin, f.perHourMax, f.rate, f.units, f.gaps, f.gapList, f.over, f.oldest.Round(time.Minute), f.cats, f.refused)
}

// rate is the default pool's capacity over its day, in units an hour.
func (s *sim) rate() float64 {
	for _, p := range s.w.costs.Pools {
		if p.Name == ingest.DefaultPool {
			return float64(p.Capacity()) / 24
		}
	}
	return 0
}

// skipUnderRace skips a days test in the race detector's build: its
// passes are real and many, so make test runs the days tests in a build of
// their own.
func skipUnderRace(t *testing.T) {
	if raceEnabled {
		t.Skip("the days tests run without -race (make test runs them so)")
	}
}

// simDays is how many days the days tests simulate: seven, or fewer under
// INGEST_PACE_DAYS for a quick look.
func simDays(t *testing.T) int {
	if v := os.Getenv("INGEST_PACE_DAYS"); v != "" {
		var n int
		if _, err := fmt.Sscan(v, &n); err == nil && n >= 2 {
			return n
		}
		t.Fatalf("INGEST_PACE_DAYS=%q: want a number of days of at least 2", v)
	}
	return 7
}
