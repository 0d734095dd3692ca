package pace_test

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/fakeyt"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// The days tests run the pools' real shape over real days: a 24-hour
// window and the Pacific day, the November day of 25 hours among them.
// Passes are real (the YouTube client against the fake upstream over
// HTTP, the embedded limiter, the store on a file) on a clock the test
// moves; the fake serves small charts of four one-video pages, so that a
// pass costs its four units and little time. Most sims keep the limiter's
// log in memory, drop the pages and read the ledger through one follower
// (newSimLog); the days of a restart and of a join keep all as a worker.

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

// On the tight pool, from three start hours, a daemon and a paced run
// --once every 10 minutes each spend at the pool's sustainable rate from
// day 2 on: every region's own chart runs in every hour of every day, the
// November day included, the category charts share what is left, and the
// limiter refuses nothing.
func TestDaysTightPool(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	days := simDays(t)
	for _, mode := range []string{"daemon", "cron"} {
		for _, at := range [][2]int{{0, 30}, {9, 0}, {21, 45}} {
			t.Run(fmt.Sprintf("%s/%02d:%02d", mode, at[0], at[1]), func(t *testing.T) {
				t.Parallel()
				start := dayStart(at[0], at[1])
				s := newSim(t, tightCosts, start, regions8, categories)
				end := start.Add(time.Duration(days) * 24 * time.Hour)
				s.deploy(mode, start, end)
				all := s.figures(s.settled(), end)
				steady := s.figures(start.Add(24*time.Hour).Truncate(time.Hour), end)
				t.Logf("all days: %v", all)
				t.Logf("days 2-%d: %v", days, steady)
				if all.gaps != 0 {
					t.Errorf("%d region-hours without a pass of the region's own chart: %s", all.gaps, all.gapList)
				}
				if all.refused != 0 {
					t.Errorf("the limiter refused %d calls, want none", all.refused)
				}
				if target := 950.0 / 24; float64(steady.units) < 0.85*target*float64(days-1)*24 {
					t.Errorf("days 2-%d spent %d units, under 85%% of the sustainable %.0f", days, steady.units, target*float64(days-1)*24)
				}
				if steady.cats == 0 {
					t.Errorf("no category chart ran from day 2 on: the budget left after the own charts went unspent")
				}
			})
		}
	}
}

// shippedCosts is the costs.yaml the binary ships.
func shippedCosts(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../costs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// On the shipped pools, which hold the eight regions' own charts and their
// category charts hourly many times over, a daemon and a paced run --once
// run every chart every hour of every day from any start hour, and the
// limiter refuses nothing. The charts are one page here: the pools are
// not what binds.
func TestDaysShippedPools(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	days := simDays(t)
	costs := shippedCosts(t)
	for _, mode := range []string{"daemon", "cron"} {
		for _, at := range [][2]int{{0, 30}, {9, 0}, {21, 45}} {
			t.Run(fmt.Sprintf("%s/%02d:%02d", mode, at[0], at[1]), func(t *testing.T) {
				t.Parallel()
				start := dayStart(at[0], at[1])
				s := newSim(t, costs, start, regions8, categories)
				s.fake.SetChartShape(1, 1)
				end := start.Add(time.Duration(days) * 24 * time.Hour)
				s.deploy(mode, start, end)
				all := s.figures(s.settled(), end)
				t.Logf("all days: %v", all)
				if all.gaps != 0 {
					t.Errorf("%d region-hours without a pass of the region's own chart: %s", all.gaps, all.gapList)
				}
				if all.refused != 0 {
					t.Errorf("the limiter refused %d calls, want none", all.refused)
				}
				if want := 16 * 24 * (days - 1); all.cats < want {
					t.Errorf("%d category passes, want at least %d: every category chart hourly fits the shipped pool", all.cats, want)
				}
			})
		}
	}
}

// A daemon restarted at midday on day 2 costs nothing: the restart runs no
// chart younger than its cadence, each region's own chart keeps one pass
// an hour, and the hour of the restart spends no more than the hours
// before it did. A second process on the same database joining on day 3
// shares the plan: nothing is fetched twice for a slot, and the limiter
// still refuses nothing.
func TestDaysRestartAndJoin(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	start := dayStart(9, 0)
	s := newSimOnFile(t, tightCosts, start, regions8, categories)
	restart := dayStart(12, 0).Add(24 * time.Hour)
	join := dayStart(0, 0).Add(48 * time.Hour)
	end := start.Add(time.Duration(max(simDays(t), 4)) * 24 * time.Hour)
	pc := s.pacer()
	s.catchUp(pc)
	s.daemon(start, restart, pc)
	before := s.figures(restart.Add(-12*time.Hour), restart)

	s.w.set(restart)
	pc = s.pacer()
	s.catchUp(pc)
	s.daemon(restart, join, pc)
	after := s.figures(restart, restart.Add(time.Hour))
	t.Logf("the 12 hours before the restart: %v", before)
	t.Logf("the hour of the restart: %v", after)
	if after.perHourMax > before.perHourMax {
		t.Errorf("the restart's hour spent %d units, more than any of the 12 hours before it (%d): the restart cost units",
			after.perHourMax, before.perHourMax)
	}
	cadence := map[string]time.Duration{}
	for _, e := range pc.Status().Entries {
		cadence[e.Name] = e.Every
	}
	for chart, runs := range s.completed {
		for i := 1; i < len(runs); i++ {
			atStart := !runs[i].Before(restart) && runs[i].Before(restart.Add(s.step())) // the catch-up's, started late
			if atStart && runs[i].Sub(runs[i-1]) < cadence[chart]-s.step() {
				t.Errorf("%s ran at the restart, %s after its last pass, under its cadence %s", chart,
					runs[i].Sub(runs[i-1]), cadence[chart].Round(time.Minute))
			}
		}
	}
	for _, code := range regions8 {
		n := 0
		for _, at := range s.completed[code] {
			if !at.Before(restart) && at.Before(restart.Add(time.Hour)) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s ran %d times in the hour of the restart, want once", code, n)
		}
	}

	s.w.set(join)
	second := s.pacer()
	s.daemon(join, end, pc, second)
	joined := s.figures(join, end)
	t.Logf("after the second process joined: %v", joined)
	if joined.gaps != 0 || joined.refused != 0 {
		t.Errorf("after the join: %d region-hours without a pass, %d refusals; want none", joined.gaps, joined.refused)
	}
	for chart, runs := range s.completed {
		for i := 1; i < len(runs); i++ {
			if runs[i-1].Before(join) {
				continue // a start's catch-up is a late pass for the slot before it
			}
			// Starts are recorded after their slots: a grain of the stagger
			// is the tolerance between two of them.
			if runs[i].Sub(runs[i-1]) < every-s.step() {
				t.Errorf("%s ran at %s and again at %s, less than --every apart", chart, runs[i-1].In(pacific).Format("Jan 2 15:04"), runs[i].In(pacific).Format("15:04"))
				break
			}
		}
	}
}

// seed is the days tests' random seed: INGEST_PACE_SEED, or the time,
// logged so that a failure can be run again.
func seed(t *testing.T) int64 {
	t.Helper()
	if v := os.Getenv("INGEST_PACE_SEED"); v != "" {
		var n int64
		if _, err := fmt.Sscan(v, &n); err != nil {
			t.Fatalf("INGEST_PACE_SEED=%q: want a number", v)
		}
		return n
	}
	n := time.Now().UnixNano()
	t.Logf("seed %d (INGEST_PACE_SEED=%d runs it again)", n, n)
	return n
}

// restart stops the sim's daemon at at, whatever the moment, and starts a
// new one on the same database: its catch-up, then the slots after at.
func (s *sim) restart(at, end time.Time) *pace.Pacer {
	s.advance(at)
	pc := s.pacer()
	s.catchUp(pc)
	next := s.grid(at)
	if next.Equal(at) {
		next = next.Add(s.step()) // cron's first slot is strictly after the start
	}
	s.daemon(next, end, pc)
	return pc
}

// restarted is a twin of s (its costs, charts and --every) deployed as a
// daemon from s's start to end and restarted at at, for what a restart
// adds or takes away against s never stopped.
func (s *sim) restarted(costs string, cats []string, at, end time.Time) *sim {
	twin := newSimEvery(s.t, costs, s.start, regions8, cats, s.every)
	pc := twin.pacer()
	twin.catchUp(pc)
	twin.daemon(twin.grid(twin.start.Add(time.Nanosecond)), at, pc)
	twin.restart(at, end)
	return twin
}

// randomMoment is a moment of the day after start, to the millisecond.
func randomMoment(t *testing.T, start time.Time) time.Time {
	rng := rand.New(rand.NewSource(seed(t)))
	return start.Add(24*time.Hour + time.Duration(rng.Int63n(int64(24*time.Hour)))).Truncate(time.Millisecond)
}

// logRestart logs what a restart at at added or took away: the twin's
// figures against the sim never stopped.
func (s *sim) logRestart(twin *sim, at, end time.Time) (figures, int64) {
	s.t.Helper()
	got, want := twin.figures(s.settled(), end), s.figures(s.settled(), end)
	d := got.units - want.units
	s.t.Logf("restarted at %s: %v; the restart adds %+d units", at.In(pacific).Format("Jan 2 15:04:05.000 MST"), got, d)
	return got, d
}

// unitsBetween is what the sim spent in the default pool in [from, to).
func (s *sim) unitsBetween(from, to time.Time) int64 {
	s.t.Helper()
	calls, err := ledger.New(s.w.db).Calls(context.Background(), "q", from)
	if err != nil {
		s.t.Fatal(err)
	}
	var n int64
	for _, c := range calls {
		for _, ch := range c.Charges {
			if ch.Pool == ingest.DefaultPool && c.At.Before(to) {
				n += ch.Units
			}
		}
	}
	return n
}

// A restart at a random moment of day 2 costs nothing: the daemon
// restarted runs each chart when the one never stopped does, with the
// passes' starts recorded after their slots as the daemon records them.
func TestDaysRestartAtRandom(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	rng := rand.New(rand.NewSource(seed(t)))
	start := dayStart(9, 0)
	at := start.Add(24*time.Hour + time.Duration(rng.Int63n(int64(24*time.Hour)))).Truncate(time.Millisecond)
	end := start.Add(3 * 24 * time.Hour)
	control := newSimOnFile(t, tightCosts, start, regions8, categories)
	control.deploy("daemon", start, end)
	s := newSimOnFile(t, tightCosts, start, regions8, categories)
	pc := s.pacer()
	s.catchUp(pc)
	s.daemon(start, at, pc)
	s.restart(at, end)

	from := s.settled()
	got, want := s.figures(from, end), control.figures(from, end)
	hour := at.Truncate(time.Hour)
	t.Logf("restart at %s", at.In(pacific).Format("Jan 2 15:04:05.000 MST"))
	t.Logf("restarted: %v", got)
	t.Logf("never stopped: %v", want)
	t.Logf("the hour of the restart: %d units restarted, %d never stopped; the restart adds %+d units over the three days",
		s.unitsBetween(hour, hour.Add(time.Hour)), control.unitsBetween(hour, hour.Add(time.Hour)), got.units-want.units)
	if got.gaps != 0 {
		t.Errorf("%d region-hours without a pass of the region's own chart: %s", got.gaps, got.gapList)
	}
	if got.refused != 0 {
		t.Errorf("the limiter refused %d calls, want none", got.refused)
	}
	for _, code := range regions8 {
		if g, w := len(s.completed[code]), len(control.completed[code]); g != w {
			t.Errorf("%s ran %d times with the restart, %d without: the restart added or took away passes", code, g, w)
		}
	}
	// A category chart's planned cadence is a fraction of its slots: the
	// credit a running pacer carries between them is not in the database,
	// so a restart may run a category chart's next pass a few slots later,
	// never sooner.
	if d := got.units - want.units; d > 4 || d < -4*int64(len(regions8)*len(categories)) {
		t.Errorf("the restart changed the spend by %+d units: more than one pass added, or more than one pass of each category chart taken away", d)
	}
}

// --every is a floor, not a demand: at --every 10m on a pool that holds
// every region's own chart hourly, every region runs in every hour, as a
// daemon and as a paced run --once every 10 minutes.
func TestDaysShortEvery(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	for _, mode := range []string{"daemon", "cron"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			start := dayStart(9, 0)
			end := start.Add(3 * 24 * time.Hour)
			s := newSimEvery(t, tightCosts, start, regions8, categories, 10*time.Minute)
			s.deploy(mode, start, end)
			f := s.figures(s.settled(), end)
			t.Logf("--every 10m, %s: %v", mode, f)
			if f.gaps != 0 {
				t.Errorf("%d region-hours without a pass of the region's own chart: %s", f.gaps, f.gapList)
			}
			if mode == "daemon" {
				at := randomMoment(t, start)
				r, d := s.logRestart(s.restarted(tightCosts, categories, at, end), at, end)
				if r.gaps != 0 || r.refused != 0 {
					t.Errorf("restarted: %d region-hours without a pass, %d refusals; want none", r.gaps, r.refused)
				}
				if d > 4 || d < -4*int64(len(regions8)) {
					t.Errorf("the restart changed the spend by %+d units: more than one pass added, or more than one pass of each region taken away", d)
				}
			}
			if f.refused != 0 {
				t.Errorf("the limiter refused %d calls, want none", f.refused)
			}
			for _, code := range regions8 {
				if len(s.completed[code]) == 0 {
					t.Errorf("%s never ran in three days", code)
				}
			}
		})
	}
}

// Scarcity stretches before it drops: on pools too small for every
// region's own chart hourly, the category charts are dropped, every
// region's own chart is stretched evenly and is never more than a day
// old; only on a pool that cannot hold them all daily are the last
// regions of --regions dropped, and the plan says so.
func TestDaysScarce(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	for _, tc := range []struct {
		limit, reserve int
		drops          int // regions dropped, at the end of --regions
	}{
		{45, 5, 1},
		{120, 10, 0},
		{210, 10, 0},
		{400, 20, 0},
	} {
		t.Run(fmt.Sprint(tc.limit-tc.reserve), func(t *testing.T) {
			t.Parallel()
			costs := strings.Replace(tightCosts, "default: {limit: 1000, reserve: 50,",
				fmt.Sprintf("default: {limit: %d, reserve: %d,", tc.limit, tc.reserve), 1)
			start := dayStart(9, 0)
			end := start.Add(4 * 24 * time.Hour)
			s := newSim(t, costs, start, regions8, categories)
			pc := s.pacer()
			s.catchUp(pc)
			s.daemon(start, end, pc)
			f := s.figures(s.settled(), end)
			if os.Getenv("INGEST_PACE_HOURS") != "" {
				for _, code := range regions8 {
					var at []string
					for _, r := range s.completed[code] {
						at = append(at, r.In(pacific).Format("2 15:04"))
					}
					t.Logf("%s: %s", code, strings.Join(at, " "))
				}
			}
			var dropped, kept []string
			for _, e := range pc.Status().Entries {
				switch {
				case e.Dropped && e.Priority == 0:
					dropped = append(dropped, e.Name)
				case !e.Dropped:
					kept = append(kept, fmt.Sprintf("%s every %s (%d passes)", e.Name, e.Every.Round(time.Minute), len(s.completed[e.Name])))
				}
			}
			t.Logf("%d units a day: %v; runs %s; drops regions %s", tc.limit-tc.reserve, f, strings.Join(kept, ", "), strings.Join(dropped, " "))
			if f.cats != 0 {
				t.Errorf("%d category passes ran on a budget too small for the regions' own charts hourly", f.cats)
			}
			if want := regions8[len(regions8)-tc.drops:]; strings.Join(dropped, " ") != strings.Join(want, " ") {
				t.Errorf("the plan drops regions %v, want %v", dropped, want)
			}
			if f.refused != 0 {
				t.Errorf("the limiter refused %d calls, want none", f.refused)
			}
			if tc.drops > 0 {
				// A pool that cannot hold every region even daily: the
				// window's room, as it frees, goes to the first regions first.
				return
			}
			for _, code := range regions8 {
				if len(s.completed[code]) < 3 {
					t.Errorf("%s ran %d times in four days, want at least daily", code, len(s.completed[code]))
				}
			}
			if f.oldest > 24*time.Hour {
				t.Errorf("a region's own chart reached %s old, over the 24h bound", f.oldest.Round(time.Minute))
			}
			at := randomMoment(t, start)
			r, d := s.logRestart(s.restarted(costs, categories, at, end), at, end)
			if r.oldest > 24*time.Hour || r.refused != 0 {
				t.Errorf("restarted: a region's own chart reached %s old, %d refusals; want at most 24h, none", r.oldest.Round(time.Minute), r.refused)
			}
			if d > 4 || d < -4*int64(len(regions8)) {
				t.Errorf("the restart changed the spend by %+d units: more than one pass added, or more than one pass of each region taken away", d)
			}
		})
	}
}

// A fresh start with category charts catches every chart up once: a
// chart caught up at start is its next slot's pass (or, started within a
// stagger step after its slot, that slot's), so no chart runs twice in the
// first hour, less the step every slot is allowed, and neither does it in
// a twin restarted within that hour, which has only the recorded starts.
func TestDaysFreshStart(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	rng := rand.New(rand.NewSource(seed(t)))
	for _, at := range []time.Time{dayStart(22, 25), dayStart(0, 0).Add(time.Duration(rng.Int63n(int64(24 * time.Hour)))).Truncate(time.Millisecond)} {
		// Drawn here, not in the parallel cases: the seed alone says when
		// each case restarts.
		again := at.Add(time.Duration(rng.Int63n(int64(time.Hour)))).Truncate(time.Millisecond)
		t.Run(at.Format("15:04:05.000"), func(t *testing.T) {
			t.Parallel()
			s := newSim(t, tightCosts, at, regions8, categories)
			end := at.Add(3 * time.Hour)
			pc := s.pacer()
			s.catchUp(pc)
			s.daemon(s.grid(at.Add(time.Nanosecond)), end, pc)
			first := s.unitsBetween(at, at.Add(time.Hour))
			f := s.figures(at.Add(time.Hour).Truncate(time.Hour), end)
			t.Logf("fresh start at %s: %d units in the first hour (rate %.1f an hour); then %v", at.In(pacific).Format("15:04:05 MST"), first, s.rate(), f)
			for chart, runs := range s.completed {
				if n := passesIn(runs, at, at.Add(time.Hour-s.step())); n > 1 {
					t.Errorf("%s ran %d times in the first hour, want once at most (closest %s apart)", chart, n, closest(runs))
				}
			}
			if f.refused != 0 {
				t.Errorf("the limiter refused %d calls, want none", f.refused)
			}
			twin := s.restarted(tightCosts, categories, again, end)
			t.Logf("restarted at %s: %d units in the first hour; the restart adds %+d units in three hours", again.In(pacific).Format("15:04:05.000 MST"),
				twin.unitsBetween(at, at.Add(time.Hour)), twin.unitsBetween(at, end)-s.unitsBetween(at, end))
			for chart, runs := range twin.completed {
				if n := passesIn(runs, at, at.Add(time.Hour-s.step())); n > 1 {
					t.Errorf("restarted at %s: %s ran %d times in the first hour, want once at most (closest %s apart)", again.Format("15:04:05"), chart, n, closest(runs))
				}
			}
		})
	}
}

// passesIn is how many of runs are in [from, to).
func passesIn(runs []time.Time, from, to time.Time) int {
	n := 0
	for _, r := range runs {
		if !r.Before(from) && r.Before(to) {
			n++
		}
	}
	return n
}

// closest is the least time between two of runs; a day for fewer than two.
func closest(runs []time.Time) time.Duration {
	least := 24 * time.Hour
	for i := 1; i < len(runs); i++ {
		least = min(least, runs[i].Sub(runs[i-1]))
	}
	return least
}
