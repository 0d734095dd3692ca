package pace_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/fakeyt"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
)

// The days tests run the pools' real shape over real days: a 24-hour
// window and the Pacific day, the November day of 25 hours among them.
// Passes are real (the YouTube client against the fake upstream over
// HTTP, the embedded limiter, the store on a file) on a clock the test
// moves; the fake serves small charts of four one-video pages, so that a
// pass costs its four units and little time.

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
	// completed is each chart's completed passes, by start.
	completed map[string][]time.Time
	// over is, for each region's own chart, the largest age it reached
	// over its planned cadence.
	over float64
}

func newSim(t *testing.T, costs string, at time.Time, codes, cats []string) *sim {
	t.Helper()
	w, fake := newWorldOf(t, costs, at)
	fake.SetChartShape(4, 1)
	s := &sim{t: t, w: w, fake: fake, start: at, completed: map[string][]time.Time{}}
	for _, cat := range append([]string{""}, cats...) {
		for _, code := range codes {
			s.passes = append(s.passes, &jobs.Pass{Region: code, Category: cat, QuotaKey: "q", Costs: w.costs,
				Limiter: w, Source: w.client, Sink: w.db, Categories: w.db, Logger: quiet(), Now: w.clock})
		}
	}
	for i := range s.passes {
		sl, err := jobs.Stagger(every, i, len(s.passes))
		if err != nil {
			t.Fatal(err)
		}
		s.slots = append(s.slots, sl)
	}
	return s
}

// pacer is a worker's pacer of the sim's charts, as cmd/ingest makes it.
func (s *sim) pacer() *pace.Pacer {
	var entries []pace.Entry
	for i, p := range s.passes {
		entries = append(entries, pace.Entry{Name: p.Chart(), Priority: pace.ChartPriority(p.Chart()), Floor: every,
			Cost: pace.ChartGuess(s.w.costs), Slots: s.slots[i]})
	}
	pc := pace.New(s.w.costs.Pools, s.w.limiter.State, entries)
	pc.Now, pc.Logger, pc.Refresh = s.w.clock, quiet(), every
	pc.History = pace.FromRecords(s.w.db, "q", s.w.costs.Pools)
	pc.Daily = map[string]float64{ingest.DefaultPool: float64(len(regions8))}
	pc.LastPass = s.w.db.LastStart
	return pc
}

// pass runs the i-th chart when pc says it is due at slot, unless a run of
// it started at or after slot (another process on the database ran it),
// as the daemon's runner does.
func (s *sim) pass(pc *pace.Pacer, i int, slot time.Time) {
	ctx := context.Background()
	p := s.passes[i]
	if !pc.Due(ctx, p.Chart(), slot) {
		return
	}
	if last, err := s.w.db.LastStart(ctx, p.Chart()); err == nil && !last.Before(slot) {
		pc.Ran(p.Chart(), nil, ingest.StatusInterrupted)
		return
	}
	res := p.Run(ctx)
	if res.Status == ingest.StatusFailed {
		s.t.Fatalf("%s at %s: %v", p.Chart(), s.w.clock(), res.Err)
	}
	pc.Ran(p.Chart(), res.Units, res.Status)
	if res.Status == ingest.StatusCompleted {
		s.completed[p.Chart()] = append(s.completed[p.Chart()], s.w.clock())
	}
}

// catchUp is a daemon's start: every chart asked at once for its latest
// slot, highest priority first, as the daemon does.
func (s *sim) catchUp(pc *pace.Pacer) {
	now := s.w.clock()
	for i := range s.passes {
		s.pass(pc, i, s.slots[i].Prev(now))
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
func (s *sim) step() time.Duration { return every / time.Duration(len(s.passes)) }

// daemon walks the clock from from to to (excluded), running each
// worker's charts at their slots.
func (s *sim) daemon(from, to time.Time, pcs ...*pace.Pacer) {
	for now := from; now.Before(to); now = now.Add(s.step()) {
		s.w.set(now)
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

// cron walks the clock from from to to, starting a paced run --once every
// period: a new pacer from the database each time.
func (s *sim) cron(from, to time.Time, period time.Duration) {
	for now := from; now.Before(to); now = now.Add(s.step()) {
		s.w.set(now)
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
	if now.Sub(s.start) < 2*every {
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
		s.over = max(s.over, float64(now.Sub(runs[len(runs)-1]))/float64(max(e.Every, every)))
	}
}

// figures is what a sim measured between from and to.
type figures struct {
	perHourMin, perHourMax int64   // default pool, by clock hour
	gaps                   int     // region-hours without a pass of the region's own chart
	gapList                string  // the first few of them
	over                   float64 // the largest age of an own chart over its cadence
	refused                int
	units                  int64
	cats                   int // category passes completed
}

func (s *sim) figures(from, to time.Time) figures {
	s.t.Helper()
	to = to.Truncate(time.Hour) // whole hours only
	f := figures{perHourMin: math.MaxInt64, over: s.over, refused: s.w.refused}
	calls, err := s.w.db.Calls(context.Background(), "q", from)
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
	return fmt.Sprintf("units/hour %d..%d (target %.1f), %d units, hours without an own chart's pass %d %s, largest age/cadence %.2f, category passes %d, refusals %d",
		f.perHourMin, f.perHourMax, 950.0/24, f.units, f.gaps, f.gapList, f.over, f.cats, f.refused)
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
				all := s.figures(start.Add(time.Hour).Truncate(time.Hour), end)
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
				all := s.figures(start.Add(time.Hour).Truncate(time.Hour), end)
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
	s := newSim(t, tightCosts, start, regions8, categories)
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
			if runs[i].Equal(restart) && runs[i].Sub(runs[i-1]) < cadence[chart] {
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
			if runs[i].Sub(runs[i-1]) < every {
				t.Errorf("%s ran at %s and again at %s, less than --every apart", chart, runs[i-1].In(pacific).Format("Jan 2 15:04"), runs[i].In(pacific).Format("15:04"))
				break
			}
		}
	}
}

// A budget too small for every region's own chart hourly: the category
// charts are dropped first and never run, at start as after; the regions
// are served in --regions order, the first at every slot (or as often as
// the budget allows); the plan says which entries it dropped.
func TestDaysTooSmall(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	for _, tc := range []struct {
		limit, reserve int
		usPasses       int // US's passes in two days, at least
		keeps          []string
	}{
		{45, 5, 10, []string{"US"}},
		{120, 10, 40, []string{"US"}},
		{400, 20, 40, []string{"US", "GB", "DE"}},
	} {
		t.Run(fmt.Sprint(tc.limit-tc.reserve), func(t *testing.T) {
			t.Parallel()
			costs := strings.Replace(tightCosts, "default: {limit: 1000, reserve: 50,",
				fmt.Sprintf("default: {limit: %d, reserve: %d,", tc.limit, tc.reserve), 1)
			start := dayStart(9, 0)
			s := newSim(t, costs, start, regions8, categories)
			pc := s.pacer()
			s.catchUp(pc)
			s.daemon(start, start.Add(48*time.Hour), pc)
			f := s.figures(start, start.Add(48*time.Hour))
			var dropped, kept []string
			for _, e := range pc.Status().Entries {
				if e.Dropped {
					dropped = append(dropped, e.Name)
				} else {
					kept = append(kept, fmt.Sprintf("%s every %s (%d passes)", e.Name, e.Every.Round(time.Minute), len(s.completed[e.Name])))
				}
			}
			t.Logf("%d units a day: %d units in two days, %d refusals; runs %s; drops %s", tc.limit-tc.reserve, f.units, f.refused,
				strings.Join(kept, ", "), strings.Join(dropped, " "))
			if f.cats != 0 {
				t.Errorf("%d category passes ran on a budget too small for the regions' own charts", f.cats)
			}
			for _, code := range tc.keeps {
				if n := len(s.completed[code]); n < tc.usPasses {
					t.Errorf("%s, early in --regions, ran %d times in two days, want at least %d", code, n, tc.usPasses)
				}
			}
			if n := len(s.completed["CA"]); n != 0 {
				t.Errorf("CA, last in --regions, ran %d times, want it dropped", n)
			}
			if len(dropped) < 16+1 || !strings.Contains(strings.Join(dropped, " "), "CA") {
				t.Errorf("the plan drops %v; want every category chart and the last regions", dropped)
			}
			if f.refused != 0 {
				t.Errorf("the limiter refused %d calls, want none", f.refused)
			}
		})
	}
}
