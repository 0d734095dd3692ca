package pace_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// The scarcity sweep drives the real pacer over days against a ledger and
// a limiter kept in memory: the pools' window and Pacific day, a pass
// charged as its pages, the category names a region reads once a day. It
// leaves out what the days tests above hold with real parts (the client,
// the store, the limiter on a file), so that it can try every pool size an
// operator may pick at every region and at eight, across both days the
// clocks change, with restarts and downtimes drawn at random.

// lite is one worker of the sweep: its pools, charts and what its ledger
// holds, on a limiter (book) it may share with workers of other
// databases.
type lite struct {
	*book
	by     int // the worker, its database: the ledger its calls are in
	t      *testing.T
	costs  *ingest.Costs
	pools  []ingest.Pool
	passes []jobs.Entry
	cost   []int64 // a pass's units, by chart
	region []string
	tier   []int
	bound  time.Duration
	// last is each chart's latest completed pass as the store records it;
	// completed all of them.
	last      map[string]time.Time
	completed map[string][]time.Time
	cats      map[string]time.Time // when each region last read its category names
	plan      *pace.Status         // the last plan the worker published
	first     time.Time            // the deployment's start
	caughtUp  map[time.Time]bool   // the starts of passes a start's catch-up ran
}

// book is the limiter's clock and what it admitted, and refused, of
// every worker on the key.
type book struct {
	now     time.Time
	calls   []liteCall
	refused int
	workers int // how many have a ledger on it
}

type liteCall struct {
	at    time.Time
	units int64
	by    int
}

// newLite is a deployment of charts (and their categories' charts) on the
// shipped pools with the default pool's limit - reserve at capacity.
func newLite(t *testing.T, capacity int, charts []regions.Chart, cats []string, bound time.Duration, at time.Time) *lite {
	t.Helper()
	text := strings.Replace(shippedCostsText, "default: {limit: 10000, reserve: 500,", fmt.Sprintf("default: {limit: %d, reserve: 0,", capacity), 1)
	c, err := costs.Load("costs.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	l := &lite{book: &book{now: at, workers: 1}, t: t, costs: c, pools: c.Pools, bound: bound, first: at, last: map[string]time.Time{},
		completed: map[string][]time.Time{}, cats: map[string]time.Time{}, caughtUp: map[time.Time]bool{}}
	n := len(charts) * (1 + len(cats))
	i := 0
	for _, cat := range append([]string{""}, cats...) {
		for _, ch := range charts {
			p := &jobs.Pass{Region: ch.Code, Category: cat, Tier: ch.Tier, Pages: ch.Pages(), QuotaKey: "q", Costs: c}
			e := p.Entry()
			if e.Slots, err = ch.Stagger(every, i, n); err != nil {
				t.Fatal(err)
			}
			l.passes = append(l.passes, e)
			l.cost = append(l.cost, int64(ch.Pages()))
			l.region = append(l.region, ch.Code)
			l.tier = append(l.tier, max(ch.Tier, 1))
			i++
		}
	}
	return l
}

// join is another worker, of another database, with l's charts on l's
// limiter: it starts with a ledger and a store of its own.
func (l *lite) join() *lite {
	o := *l
	o.by, l.workers = l.workers, l.workers+1
	o.last, o.completed, o.cats, o.caughtUp, o.plan = map[string]time.Time{}, map[string][]time.Time{}, map[string]time.Time{}, map[time.Time]bool{}, nil
	o.first = l.now
	return &o
}

// shippedCostsText is costs.yaml as the binary ships it, read once.
var shippedCostsText = func() string {
	b, err := os.ReadFile("../costs.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func (l *lite) clock() time.Time { return l.now }

// used is what the window and the day hold at now.
func (l *lite) used(pool ingest.Pool) (window, day int64) {
	from := l.now.Add(-pool.Window)
	dayStart := time.UnixMilli(ingest.DayStarts(pool.Day, l.now)[1])
	for i := len(l.calls) - 1; i >= 0; i-- {
		c := l.calls[i]
		if !c.at.After(from) && c.at.Before(dayStart) {
			break
		}
		if c.at.After(from) {
			window += c.units
		}
		if !c.at.Before(dayStart) {
			day += c.units
		}
	}
	return window, day
}

// state is the limiter's pools as worker l reads them: only the default
// pool is spent in, with the workers of other databases in its window.
func (l *lite) state(context.Context) ([]ingest.PoolState, error) {
	var out []ingest.PoolState
	for _, p := range l.pools {
		st := ingest.PoolState{Pool: p.Name, Limit: p.Limit, Reserve: p.Reserve, Remaining: p.Capacity()}
		if p.Name == ingest.DefaultPool {
			st.Used, st.UsedDay = l.used(p)
			st.Remaining = max(p.Capacity()-max(st.Used, st.UsedDay), 0)
			others := map[int]bool{}
			for _, c := range l.calls {
				if c.by != l.by && c.at.After(l.now.Add(-p.Window)) {
					others[c.by] = true
				}
			}
			st.Others = len(others)
		}
		out = append(out, st)
	}
	return out, nil
}

// history is the worker's database as FromRecords reads it.
func (l *lite) history(_ context.Context, now time.Time) (pace.History, error) {
	h := pace.History{Spent: map[string][]pace.Spent{}, Last: map[string]time.Time{}, Cost: map[string]map[string]float64{}}
	since := pace.HistorySince(l.pools, now)
	for i := len(l.calls) - 1; i >= 0 && l.calls[i].at.After(since); i-- {
		if l.calls[i].by == l.by {
			h.Spent[ingest.DefaultPool] = append(h.Spent[ingest.DefaultPool], pace.Spent{At: l.calls[i].at, Units: l.calls[i].units})
		}
	}
	sl := h.Spent[ingest.DefaultPool]
	for i, j := 0, len(sl)-1; i < j; i, j = i+1, j-1 {
		sl[i], sl[j] = sl[j], sl[i]
	}
	for i, e := range l.passes {
		if at, ok := l.last[e.Name]; ok && now.Sub(at) < 48*time.Hour {
			h.Last[e.Name] = at
			h.Cost[e.Name] = map[string]float64{ingest.DefaultPool: float64(l.cost[i])}
		}
	}
	if l.plan != nil {
		h.Hold(*l.plan)
	}
	return h, nil
}

// pacer is a new worker's pacer, as cmd/ingest makes it.
func (l *lite) pacer() *pace.Pacer {
	regions := map[string]bool{}
	for _, r := range l.region {
		regions[r] = true
	}
	return newPacer(l.t, pace.Config{Pools: l.pools, State: l.state, Entries: jobs.PaceEntries(l.passes, l.costs),
		Clock: clock.Func(l.clock), Logger: quiet(), Refresh: every, Bound: l.bound, History: l.history,
		Daily:    map[string]float64{ingest.DefaultPool: float64(len(regions))},
		LastPass: func(_ context.Context, name string) (time.Time, error) { return l.last[name], nil }})
}

// run runs chart i when pc says it is due when asked, unless a pass of it
// started at or after slot; a pass at its slot records the slot, one off
// it (a catch-up) the time it started.
func (l *lite) run(pc *pace.Pacer, i int, asked, slot time.Time) {
	name := l.passes[i].Name
	if !pc.Due(context.Background(), name, asked) {
		return
	}
	if !l.last[name].Before(slot) {
		pc.Ran(name, nil, nil, "")
		return
	}
	l.now = l.now.Add(lateness(slot, i))
	start := l.now
	if asked.Equal(slot) {
		start = slot
	} else {
		l.caughtUp[start] = true
	}
	units := l.cost[i]
	var daily map[string]int64
	if l.now.Sub(l.cats[l.region[i]]) >= jobs.CategoriesEvery {
		units++
		daily = map[string]int64{ingest.DefaultPool: 1}
	}
	st, _ := l.state(context.Background())
	for _, s := range st {
		if s.Pool == ingest.DefaultPool && s.Remaining < units {
			l.refused++
			pc.Ran(name, nil, nil, ingest.StatusStopped)
			return
		}
	}
	if daily != nil {
		l.cats[l.region[i]] = l.now
	}
	l.calls = append(l.calls, liteCall{at: l.now, units: units, by: l.by})
	l.last[name] = start
	l.completed[name] = append(l.completed[name], start)
	pc.Ran(name, map[string]int64{ingest.DefaultPool: units}, daily, ingest.StatusCompleted)
}

// catchUp is a daemon's start: every chart asked now; one the pacer
// allows runs when its latest slot passed without a start.
func (l *lite) catchUp(pc *pace.Pacer) {
	for i, e := range l.passes {
		l.run(pc, i, l.now, e.Slots.Prev(l.now))
	}
}

// slotted is the daemon from from to to, each chart asked at its slots;
// each, when set, is told the time after each slot's passes.
func (l *lite) slotted(pc *pace.Pacer, from, to time.Time, each func(now time.Time)) {
	slottedAll([]*lite{l}, []*pace.Pacer{pc}, from, to, each)
}

// slottedAll is the daemons of workers on one limiter, each pcs[k]
// worker k's, from from to to: at each slot, each worker's passes in turn.
func slottedAll(workers []*lite, pcs []*pace.Pacer, from, to time.Time, each func(now time.Time)) {
	next := make([][]time.Time, len(workers))
	for k, l := range workers {
		for _, e := range l.passes {
			next[k] = append(next[k], e.Slots.Next(from))
		}
	}
	for {
		now := next[0][0]
		for _, ns := range next {
			for _, n := range ns {
				if n.Before(now) {
					now = n
				}
			}
		}
		if !now.Before(to) {
			return
		}
		if now.After(workers[0].now) {
			workers[0].now = now
		}
		for k, l := range workers {
			for i, e := range l.passes {
				if next[k][i].Equal(now) {
					l.run(pcs[k], i, now, now)
					next[k][i] = e.Slots.Next(now)
				}
			}
		}
		if each != nil {
			each(now)
		}
	}
}

// sweepCase is one deployment of the sweep.
type sweepCase struct {
	charts   []regions.Chart
	cats     []string
	capacity int
	start    time.Time
	seed     int64
}

// sweepWatch checks a lite deployment's promises every hour.
type sweepWatch struct {
	keptWatch
	l     *lite
	t     *testing.T
	up    time.Time                // the latest start (a restart's, a downtime's end)
	every map[string]time.Duration // each chart's cadence at the check before
	// since is each chart's shortest cadence from the check before its
	// latest pass on: the plans its next pass is held to.
	since map[string]time.Duration
	// slowest is each chart's longest cadence its slots keep from the
	// check before its latest pass on, last that of the check before.
	slowest, last map[string]time.Duration
	checked       map[string]int // how many of its passes a check has looked at
	fails         int
	worst         map[int]float64 // the largest age/cadence by tier
	close         int             // pairs of passes closer than the cadence less a step
	gaps          int             // region-hours without a pass the pool could pay (eight regions)
	oldest        time.Duration   // the largest age of a kept chart
	// hourly is, by region, the clock hours at whose both ends the plan
	// kept the region at its floor.
	hourly map[string]map[int64]bool
	prevOK map[string]bool
}

// newSweepWatch watches l from its start.
func newSweepWatch(t *testing.T, l *lite) *sweepWatch {
	return &sweepWatch{keptWatch: newKeptWatch(), l: l, t: t, up: l.first,
		every: map[string]time.Duration{}, since: map[string]time.Duration{}, slowest: map[string]time.Duration{}, last: map[string]time.Duration{}, checked: map[string]int{}, worst: map[int]float64{},
		hourly: map[string]map[int64]bool{}, prevOK: map[string]bool{}}
}

func (w *sweepWatch) fail(format string, args ...any) {
	w.t.Helper()
	if w.fails++; w.fails <= 6 {
		w.t.Errorf(format, args...)
	}
}

// check looks at pc's plan now.
func (w *sweepWatch) check(pc *pace.Pacer) {
	w.t.Helper()
	l, now := w.l, w.l.now
	at := now.In(pacific).Format("Jan 2 15:04 MST")
	ratio := map[int]float64{}
	status := pc.Status()
	for i, e := range status.Entries {
		tier := l.tier[i]
		step := l.passes[i].Slots.Grain()
		// No chart runs twice within its cadence less a step, the cadence
		// the plans gave it before and after the pass.
		runs := l.completed[e.Name]
		if was, ok := w.every[e.Name]; ok {
			// A cadence between two multiples of the floor runs at the
			// slots of both (docs/explanation/pacing.md, "Slots"): the lower is
			// what a pass is held to.
			since, ok := w.since[e.Name]
			if !ok {
				since = was
			}
			cadence := min(since, was, e.Every)
			if len(runs) > w.checked[e.Name] {
				w.since[e.Name] = min(was, e.Every)
			} else {
				w.since[e.Name] = min(since, e.Every)
			}
			if cadence != pace.Never && e.Floor > 0 {
				cadence = cadence / e.Floor * e.Floor
			}
			for j := max(w.checked[e.Name], 1); j < len(runs); j++ {
				// A chart the plan stretched to --max-stale, caught up
				// off its slots, runs at the last slot that keeps the
				// bound: up to a slot before its cadence.
				tolerance := step
				if l.caughtUp[runs[j-1]] && e.Every > e.Floor && cadence+e.Floor > l.bound {
					tolerance = e.Floor
				}
				// A chart that waited at a fresh start keeps a pass's
				// credit for its first cadences (docs/explanation/pacing.md).
				fresh := runs[j-1].Sub(l.first) < 2*max(e.Every, e.Floor)
				if cadence != pace.Never && !fresh && runs[j].Sub(runs[j-1]) < cadence-tolerance {
					w.close++
					w.fail("%s (tier %d) ran at %s and again at %s, under its cadence %s less a step",
						e.Name, tier, runs[j-1].In(pacific).Format("Jan 2 15:04:05"), runs[j].In(pacific).Format("15:04:05"), cadence.Round(time.Second))
				}
			}
		}
		if slots := (e.Every + e.Floor - 1) / e.Floor * e.Floor; len(runs) > w.checked[e.Name] {
			w.slowest[e.Name] = max(w.last[e.Name], slots)
		} else {
			w.slowest[e.Name] = max(w.slowest[e.Name], slots)
		}
		if e.Every != pace.Never {
			w.last[e.Name] = (e.Every + e.Floor - 1) / e.Floor * e.Floor
		}
		w.every[e.Name], w.checked[e.Name] = e.Every, len(runs)
		if e.Priority != 0 {
			continue
		}
		atFloor := !e.Dropped && e.Every == e.Floor && e.Floor == every
		// The hour after a start's may hold no pass: a catch-up is its
		// next slot's pass (docs/explanation/pacing.md, "Restarts cost nothing").
		settled := w.up.Add(time.Hour).Truncate(time.Hour).Add(time.Hour)
		if h := now.Truncate(time.Hour); atFloor && w.prevOK[e.Name] && !h.Add(-time.Hour).Before(settled) {
			if w.hourly[e.Name] == nil {
				w.hourly[e.Name] = map[int64]bool{}
			}
			w.hourly[e.Name][h.Add(-time.Hour).Unix()/3600] = true
		}
		w.prevOK[e.Name] = atFloor
		if !e.Dropped && e.Every == pace.Never {
			w.fail("at %s the plan keeps %s (tier %d) but plans it never", at, e.Name, tier)
		}
		since, kept, again := w.see(e.Name, e.Dropped, now)
		if !kept {
			continue
		}
		if !again.IsZero() {
			w.fail("at %s the plan takes %s back, taken back at %s: in and out of the plan", at, e.Name, again.In(pacific).Format("Jan 2 15:04"))
		}
		// A chart counts from two cadences after the plans keep it, or
		// after the latest start: a start's catch-up runs the charts
		// the pools hold, the rest at their slots after it.
		from := later(since, w.up)
		if now.Sub(from) < max(2*e.Every, e.Floor)+time.Hour {
			continue
		}
		age := now.Sub(l.first)
		if len(runs) > 0 {
			age = now.Sub(runs[len(runs)-1])
		}
		w.oldest = max(w.oldest, age)
		if age > l.bound+time.Minute {
			w.fail("at %s %s (tier %d), kept since %s, is %s old, over --max-stale %s", at, e.Name, tier,
				since.In(pacific).Format("Jan 2 15:04"), age.Round(time.Second), l.bound)
		}
		// Its slots keep a cadence between two multiples of its floor
		// a floor or two apart: the age is held to the higher, of the
		// longest cadence the plans gave it since the check before its
		// latest pass (a plan that shortens it does not age its last).
		r := float64(age) / float64(w.slowest[e.Name])
		ratio[tier] = max(ratio[tier], r)
		w.worst[tier] = max(w.worst[tier], r)
	}
	w.looked = true
	if lo, hi, ok := inverted(ratio); ok {
		w.fail("at %s tier %d's oldest region is %.3f of its cadence old, tier %d's %.3f: a lower tier older than a higher", at, lo, ratio[lo], hi, ratio[hi])
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// sweepSizes is n pool sizes, log-spaced from lo to hi.
func sweepSizes(lo, hi, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = int(math.Round(float64(lo) * math.Pow(float64(hi)/float64(lo), float64(i)/float64(n-1))))
	}
	return out
}

// tierOneFits reports whether a pool of capacity keeps every tier-1
// chart, at at.
func tierOneFits(t *testing.T, capacity int, charts []regions.Chart, cats []string, at time.Time) bool {
	l := newLite(t, capacity, charts, cats, 3*time.Hour, at)
	st, err := l.pacer().Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range st.Entries {
		if e.Priority == 0 && l.tier[i] == 1 && e.Dropped {
			return false
		}
	}
	return true
}

// smallestForTierOne is the smallest pool (limit - reserve) that keeps
// every tier-1 chart, to a unit: tier 1 at its cadence, stretched as far
// as --max-stale.
func smallestForTierOne(t *testing.T, charts []regions.Chart, cats []string, at time.Time) int {
	lo, hi := 1, 9500
	for lo < hi {
		mid := (lo + hi) / 2
		if tierOneFits(t, mid, charts, cats, at) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// sweep runs one case: the daemon from c.start for days, stopped at
// random moments for 20 s to 3 h, its promises checked every hour.
func (c sweepCase) sweep(t *testing.T, days int) *sweepWatch {
	rng := rand.New(rand.NewSource(c.seed))
	end := c.start.Add(time.Duration(days) * 24 * time.Hour)
	var stops []time.Time
	for range 3 {
		stops = append(stops, c.start.Add(2*time.Hour+time.Duration(rng.Int63n(int64(end.Sub(c.start)-4*time.Hour)))).Truncate(time.Millisecond))
	}
	sort.Slice(stops, func(i, j int) bool { return stops[i].Before(stops[j]) })
	downs := make([]time.Duration, len(stops))
	for i := range downs {
		// log-uniform over 20 s to 3 h
		downs[i] = time.Duration(float64(20*time.Second) * math.Pow(float64(3*time.Hour)/float64(20*time.Second), rng.Float64())).Truncate(time.Millisecond)
	}
	l := newLite(t, c.capacity, c.charts, c.cats, 3*time.Hour, c.start)
	w := newSweepWatch(t, l)
	var hour time.Time
	from := c.start
	for k := 0; ; k++ {
		pc := l.pacer()
		l.catchUp(pc)
		to := end
		if k < len(stops) && stops[k].After(from) {
			to = stops[k]
		}
		l.slotted(pc, from, to, func(now time.Time) {
			if h := now.Truncate(time.Hour); !h.Equal(hour) {
				hour = h
				w.check(pc)
			}
		})
		if !to.Before(end) {
			break
		}
		st := pc.Status()
		l.plan = &st
		l.now = later(l.now, to).Add(downs[k])
		t.Logf("down at %s for %s", to.In(pacific).Format("Jan 2 15:04:05.000 MST"), downs[k])
		from, w.up = l.now, l.now
		clear(w.prevOK)
	}
	// With eight regions, every clock hour the plan kept a region at its
	// floor at both ends, from an hour after the latest start, holds a
	// pass of it.
	for name, hours := range w.hourly {
		seen := map[int64]bool{}
		for _, at := range l.completed[name] {
			seen[at.Unix()/3600] = true
		}
		for h := range hours {
			if !seen[h] {
				w.gaps++
				var near []string
				for _, at := range l.completed[name] {
					if d := at.Sub(time.Unix(h*3600, 0)); d > -3*time.Hour && d < 3*time.Hour {
						near = append(near, at.In(pacific).Format("15:04:05"))
					}
				}
				w.fail("%s: no pass in the hour from %s, the plan keeping it hourly; its passes around it %s", name,
					time.Unix(h*3600, 0).In(pacific).Format("Jan 2 15:04 MST"), strings.Join(near, " "))
			}
		}
	}
	if l.refused != 0 {
		w.fail("the limiter refused %d passes, want none", l.refused)
	}
	return w
}

// Scarcity holds at every pool size an operator may pick: from the
// smallest pool that holds tier 1 at its cadence to the shipped one,
// log-spaced, at every region and at eight, from the days before both
// changes of the clocks, with restarts and downtimes of 20 s to 3 h at
// random moments. Every hour: no lower tier is older, relative to its
// cadence, than a higher one; no chart the plan keeps is older than
// --max-stale; no chart is taken back twice within a day; no chart runs
// twice within its cadence less a stagger step; with eight regions, no
// hour the plan keeps a region hourly goes without its pass.
func TestDaysScarcitySweep(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	days := min(simDays(t), 3)
	base := seedOr(t)
	sets := []struct {
		name   string
		charts []regions.Chart
		cats   []string
	}{
		{"all", allRegions(t, "all:tier=3:depth=50,default:tier=1:depth=200"), categories},
		{"8", regions.Charts(regions8...), categories},
	}
	starts := []time.Time{
		time.Date(2026, 3, 7, 9, 0, 0, 0, pacific),   // the 23-hour day is the 8th
		time.Date(2026, 10, 31, 9, 0, 0, 0, pacific), // the 25-hour day is the 1st
	}
	for _, set := range sets {
		lo := smallestForTierOne(t, set.charts, set.cats, starts[1])
		sizes := sweepSizes(lo, 9500, 10)
		if set.name == "all" {
			sizes = append(sizes, 1500) // where tier 1 went over its cadence
		}
		t.Logf("%s: pool sizes %v", set.name, sizes)
		for _, size := range sizes {
			for k := range int64(3) {
				c := sweepCase{charts: set.charts, cats: set.cats, capacity: size, start: starts[k%2], seed: base + k}
				t.Run(fmt.Sprintf("%s/%d/%d", set.name, size, k), func(t *testing.T) {
					t.Parallel()
					w := c.sweep(t, days)
					t.Logf("start %s, seed %d: largest age/cadence by tier %v, largest age of a kept chart %s, %d close pairs, %d hours without a pass",
						c.start.In(pacific).Format("Jan 2"), c.seed, w.worst, w.oldest.Round(time.Minute), w.close, w.gaps)
					if w.fails > 0 {
						t.Errorf("%d failures; INGEST_PACE_SEED=%d replays the case", w.fails, base)
					}
				})
			}
		}
	}
}

// seedOr is the days tests' seed (seed).
func seedOr(t *testing.T) int64 { return seed(t) }
