package pace_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// The days tests of every region the upstream charts, each at its tier and
// depth (--regions all:tier=3:depth=50,default:tier=1).

// tierFigures is what one tier's charts did between from and to.
type tierFigures struct {
	tier    int
	regions int
	// over is the largest age a region's own chart reached over its
	// planned cadence, every: the longest time between two of its
	// completed passes, or since its last, the start's passes left out
	// (a chart caught up at start runs again a cadence after its first
	// slot, docs/explanation/pacing.md).
	over                   float64
	every                  time.Duration
	perHourMin, perHourMax int64 // the default pool, its charts' categories included, by clock hour
}

func (f tierFigures) String() string {
	return fmt.Sprintf("tier %d: %d regions every %s, largest age/cadence %.3f, units/hour %d..%d",
		f.tier, f.regions, f.every.Round(time.Minute), f.over, f.perHourMin, f.perHourMax)
}

// tiers sums the sim's charts by tier, the planned cadences read from pc;
// the ages run to end, the units an hour are from's to end's.
func (s *sim) tiers(pc *pace.Pacer, from, end time.Time) []tierFigures {
	every := map[string]time.Duration{}
	for _, e := range pc.Status().Entries {
		every[e.Name] = e.Every
	}
	by := map[int]*tierFigures{}
	for code, c := range s.charts {
		f := by[c.Tier]
		if f == nil {
			f = &tierFigures{tier: c.Tier, perHourMin: math.MaxInt64}
			by[c.Tier] = f
		}
		f.regions++
		if every[code] != pace.Never { // not dropped
			f.every = max(f.every, every[code])
			f.over = max(f.over, float64(s.longestAge(code, end))/float64(every[code]))
		}
	}
	from, to := from.Truncate(time.Hour), end.Truncate(time.Hour)
	for h := from; h.Before(to); h = h.Add(time.Hour) {
		units := map[int]int64{}
		for chart, hours := range s.spent {
			code, _, _ := strings.Cut(chart, "/")
			units[s.charts[code].Tier] += hours[h.Unix()/3600]
		}
		for tier, f := range by {
			f.perHourMin, f.perHourMax = min(f.perHourMin, units[tier]), max(f.perHourMax, units[tier])
		}
	}
	var out []tierFigures
	for _, f := range by {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b tierFigures) int { return a.tier - b.tier })
	return out
}

// longestAge is the longest chart's own chart went without a completed
// pass until end, its passes of the start's first 10 minutes left out.
func (s *sim) longestAge(chart string, end time.Time) time.Duration {
	runs := s.completed[chart]
	if len(runs) == 0 {
		return end.Sub(s.start)
	}
	var longest time.Duration
	for i := 1; i < len(runs); i++ {
		if runs[i-1].Sub(s.start) >= 10*time.Minute {
			longest = max(longest, runs[i].Sub(runs[i-1]))
		}
	}
	return max(longest, end.Sub(runs[len(runs)-1]))
}

// slotted is the daemon from from to to: each chart runs at its own slots
// (a tier's are its period's), which the grid of daemon, one step for
// every chart, does not hold when the stagger's step is not a whole
// divisor of the time since the Unix epoch.
// After each slot's passes, each (when set) is told the time.
func (s *sim) slotted(from, to time.Time, pc *pace.Pacer, each func(now time.Time)) {
	for now := s.nextSlot(from); now.Before(to); now = s.nextSlot(now) {
		s.advance(now)
		for i := range s.passes {
			if s.slots[i].Prev(now).Equal(now) {
				s.pass(pc, i, now)
			}
		}
		if each != nil {
			each(now)
		}
	}
}

// nextSlot is the first slot of any chart after t.
func (s *sim) nextSlot(t time.Time) time.Time {
	next := s.slots[0].Next(t)
	for _, sl := range s.slots[1:] {
		if n := sl.Next(t); n.Before(next) {
			next = n
		}
	}
	return next
}

// every10m is a paced run --once every 10 minutes from from to to, a new
// pacer from the database each time, as cron starts it; it returns the
// last.
func (s *sim) every10m(from, to time.Time) (pc *pace.Pacer) {
	for now := from; now.Before(to); now = now.Add(10 * time.Minute) {
		s.advance(now)
		pc = s.pacer()
		s.once(pc)
	}
	return pc
}

// allRegions is every region of the catalogue as text selects them.
func allRegions(t *testing.T, text string) []regions.Chart {
	t.Helper()
	charts, err := regions.Parse(text, regions.Builtin)
	if err != nil {
		t.Fatal(err)
	}
	return charts
}

// On the shipped pools, every region the upstream charts: the default
// regions whole and hourly, every other region's top 50 every three hours,
// each with its category charts. A daemon and a paced run --once keep
// every region's own chart within its tier's cadence at every step of
// seven days, the November day among them, and the limiter refuses
// nothing.
func TestDaysAllRegions(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	days := simDays(t)
	costs := shippedCosts(t)
	charts := allRegions(t, "all:tier=3:depth=50,default:tier=1:depth=200")
	for _, mode := range []string{"daemon", "cron"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			start := dayStart(9, 0)
			s := newSimCharts(t, costs, start, charts, categories, every)
			days := days
			if mode == "cron" {
				// A new pacer from the database at each cron start: three
				// days cost under half of seven.
				days = min(days, 3)
			}
			end := start.Add(time.Duration(days) * 24 * time.Hour)
			// A daemon's pass starts at its slot, a few seconds late; a
			// cron's at the first start after it is due.
			var pc *pace.Pacer
			late := 5 * time.Second
			if mode == "cron" {
				pc, late = s.every10m(start, end), 10*time.Minute+5*time.Second
			} else {
				pc = s.pacer()
				s.catchUp(pc)
				s.slotted(start, end, pc, nil)
			}
			all := s.figures(s.settled(), end)
			t.Logf("%s, all days: units/hour %d..%d (rate %.1f), %d units, category passes %d, refusals %d",
				mode, all.perHourMin, all.perHourMax, all.rate, all.units, all.cats, all.refused)
			for _, f := range s.tiers(pc, s.settled(), end) {
				t.Logf("%s: %v (rate %.1f), refusals %d", mode, f, all.rate, all.refused)
				if want := time.Duration(f.tier) * every; f.every != want {
					t.Errorf("tier %d planned every %s, want its floor %s: the shipped pools hold every tier at it", f.tier, f.every, want)
				}
				if f.over > 1+float64(late)/float64(f.every) {
					t.Errorf("tier %d: a region's own chart went %.3f of its cadence %s without a pass", f.tier, f.over, f.every)
				}
			}
			if all.refused != 0 {
				t.Errorf("the limiter refused %d calls, want none", all.refused)
			}
		})
	}
}

// keptWatch follows, check by check, since when the plans keep each
// chart, and when they took each back.
type keptWatch struct {
	kept   map[string]time.Time // since when the plans keep each chart (a check's time)
	back   map[string][]time.Time
	looked bool // a check ran before
}

func newKeptWatch() keptWatch {
	return keptWatch{kept: map[string]time.Time{}, back: map[string][]time.Time{}}
}

// see is a check's look at a chart at now: whether the plan keeps it and
// since when; again is when the plans took it back before, when they take
// it back now within a day of that: in and out of the plan.
func (k *keptWatch) see(name string, dropped bool, now time.Time) (since time.Time, kept bool, again time.Time) {
	since, was := k.kept[name]
	switch {
	case dropped:
		delete(k.kept, name)
		return since, false, again
	case !was:
		if k.looked {
			k.back[name] = append(k.back[name], now)
			if b := k.back[name]; len(b) > 1 && now.Sub(b[len(b)-2]) < 24*time.Hour {
				again = b[len(b)-2]
			}
		}
		since = now
		k.kept[name] = since
	}
	return since, true, again
}

// inverted finds a lower tier whose oldest chart is older, relative to its
// cadence, than a higher tier's (ratio: the largest age/cadence by tier).
func inverted(ratio map[int]float64) (lo, hi int, ok bool) {
	for lo, rl := range ratio {
		for hi, rh := range ratio {
			if lo < hi && rl > max(rh, 1)+0.01 {
				return lo, hi, true
			}
		}
	}
	return 0, 0, false
}

// scarcity watches, hour by hour, the promises a short pool keeps to the
// regions' own charts: no region of a lower tier older, relative to its
// cadence, than every region of a higher tier; no region the plan keeps
// older than --max-stale; no region taken back twice in a day.
type scarcity struct {
	keptWatch
	s     *sim
	worst map[int]float64 // the largest age/cadence each tier reached
	fails int
}

func newScarcity(s *sim) *scarcity {
	return &scarcity{keptWatch: newKeptWatch(), s: s, worst: map[int]float64{}}
}

// check looks at pc's plan now. A region counts from two of its cadences
// after the plans keep it, or after the start: the plan takes back a
// region older than the bound, and a region caught up at start runs again
// up to a cadence and a half on (docs/explanation/pacing.md).
func (sc *scarcity) check(t *testing.T, pc *pace.Pacer) {
	t.Helper()
	s, now := sc.s, sc.s.w.clock()
	ratio := map[int]float64{}
	for _, e := range pc.Status().Entries {
		c, ok := s.charts[e.Name]
		if !ok || e.Priority != 0 {
			continue
		}
		since, kept, again := sc.see(e.Name, e.Dropped, now)
		if !kept {
			continue
		}
		if !again.IsZero() {
			sc.fail(t, "at %s the plan takes %s back, dropped and taken back at %s: in and out of the plan",
				now.In(pacific).Format("Jan 2 15:04"), e.Name, again.In(pacific).Format("Jan 2 15:04"))
		}
		if since.Equal(now) && now.Sub(s.start) < time.Hour {
			since = s.start
			sc.kept[e.Name] = since
		}
		if now.Sub(since) < max(2*e.Every, e.Floor)+time.Hour {
			continue
		}
		age := now.Sub(s.start)
		if runs := s.completed[e.Name]; len(runs) > 0 {
			age = now.Sub(runs[len(runs)-1])
		}
		if age > s.bound+time.Minute {
			sc.fail(t, "at %s %s (tier %d), kept since %s, is %s old, over --max-stale %s", now.In(pacific).Format("Jan 2 15:04"),
				e.Name, c.Tier, since.In(pacific).Format("Jan 2 15:04"), age.Round(time.Second), s.bound)
		}
		r := float64(age) / float64(e.Every)
		ratio[c.Tier] = max(ratio[c.Tier], r)
		sc.worst[c.Tier] = max(sc.worst[c.Tier], r)
	}
	sc.looked = true
	if lo, hi, ok := inverted(ratio); ok {
		sc.fail(t, "at %s tier %d's oldest region is %.3f of its cadence old, tier %d's %.3f: a lower tier older than a higher",
			now.In(pacific).Format("Jan 2 15:04"), lo, ratio[lo], hi, ratio[hi])
	}
}

// fail reports the first few failures, and counts them all.
func (sc *scarcity) fail(t *testing.T, format string, args ...any) {
	t.Helper()
	if sc.fails++; sc.fails <= 6 {
		t.Errorf(format, args...)
	}
}

// When the pool cannot hold every region even at --max-stale, the plan
// drops by tier: the highest tier's regions first, the last of --regions
// among them first, never a region of a lower tier, and what it keeps runs
// within its cadence without a refusal. Every hour, no lower tier is older
// relative to its cadence than a higher one, no region kept is older than
// --max-stale, and no region is taken back twice in a day.
func TestDaysAllRegionsScarce(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	costs := strings.Replace(shippedCosts(t), "default: {limit: 10000, reserve: 500,", "default: {limit: 2000, reserve: 100,", 1)
	charts := allRegions(t, "all:tier=3,JP:tier=2,KR:tier=2,MX:tier=2,ES:tier=2,default:tier=1")
	days := min(simDays(t), 4)
	start := dayStart(9, 0)
	end := start.Add(time.Duration(days) * 24 * time.Hour)
	s := newSimCharts(t, costs, start, charts, nil, every)
	s.bound = 3 * time.Hour
	var tier3 []string
	for _, c := range charts {
		if c.Tier == 3 {
			tier3 = append(tier3, c.Code)
		}
	}
	// Every plan, looked at hourly, drops a tail of tier 3 in --regions
	// order, and nothing else.
	fewest, most, hour := len(charts), 0, time.Time{}
	check := func(pc *pace.Pacer) {
		var dropped []string
		for _, e := range pc.Status().Entries {
			if e.Dropped {
				dropped = append(dropped, e.Name)
			}
		}
		fewest, most = min(fewest, len(dropped)), max(most, len(dropped))
		if n := min(len(dropped), len(tier3)); !slices.Equal(dropped, tier3[len(tier3)-n:]) {
			t.Errorf("at %s the plan drops %v, want the last of tier 3 in --regions order", s.w.clock().In(pacific).Format("Jan 2 15:04"), dropped)
		}
	}
	sc := newScarcity(s)
	pc := s.pacer()
	s.catchUp(pc)
	s.slotted(start, end, pc, func(now time.Time) {
		if h := now.Truncate(time.Hour); !h.Equal(hour) {
			hour = h
			check(pc)
			sc.check(t, pc)
		}
	})
	if sc.fails > 0 {
		t.Errorf("%d failures of the hourly checks", sc.fails)
	}
	t.Logf("hourly: the largest age/cadence by tier %v; regions taken back %d times", sc.worst, takenBack(sc.back))
	all := s.figures(s.settled(), end)
	t.Logf("1,900 units a day, --max-stale 3h: the plans drop %d to %d of %d regions, from the end of tier 3's %d; units/hour %d..%d (rate %.1f), refusals %d",
		fewest, most, len(charts), len(tier3), all.perHourMin, all.perHourMax, all.rate, all.refused)
	for _, f := range s.tiers(pc, s.settled(), end) {
		t.Logf("%v", f)
	}
	if fewest == 0 || most == len(tier3) {
		t.Errorf("the plans drop %d to %d of tier 3's %d regions; want some, never all", fewest, most, len(tier3))
	}
	for _, c := range charts {
		if c.Tier == 3 && slices.Index(tier3, c.Code) >= len(tier3)-most {
			continue // dropped by a plan
		}
		if n := len(s.completed[c.Code]); n < days {
			t.Errorf("%s (tier %d), never dropped, ran %d times in %d days; want at least daily", c.Code, c.Tier, n, days)
		}
	}
	if all.refused != 0 {
		t.Errorf("the limiter refused %d calls, want none", all.refused)
	}
}

// A restart tolerates the slow start the running pacer tolerates: at every
// region, with each pass starting 6 s, or 30 s, after its slot (a lease,
// the store or the database slow to answer), a daemon restarted on day 1
// runs every region's own chart as often as its twin never stopped.
func TestDaysLateRestart(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	costs := shippedCosts(t)
	charts := allRegions(t, "all:tier=3:depth=50,default:tier=1:depth=200")
	for _, late := range []time.Duration{6 * time.Second, 30 * time.Second} {
		t.Run(late.String(), func(t *testing.T) {
			t.Parallel()
			start := dayStart(9, 0)
			at, end := start.Add(13*time.Hour+17*time.Minute), start.Add(36*time.Hour)
			control := newSimCharts(t, costs, start, charts, nil, every)
			control.late = late
			pc := control.pacer()
			control.catchUp(pc)
			control.slotted(start, end, pc, nil)

			s := newSimCharts(t, costs, start, charts, nil, every)
			s.late = late
			pc = s.pacer()
			s.catchUp(pc)
			s.slotted(start, at, pc, nil)
			s.advance(at)
			pc = s.pacer()
			s.catchUp(pc)
			s.slotted(at, end, pc, nil)

			lost := 0
			for _, c := range charts {
				if g, w := len(s.completed[c.Code]), len(control.completed[c.Code]); g != w {
					lost += w - g
					if lost < 5 {
						t.Errorf("%s (tier %d) ran %d times with the restart, %d without", c.Code, c.Tier, g, w)
					}
				}
			}
			t.Logf("passes %s late, restart at %s: %d passes lost against the twin never stopped",
				late, at.In(pacific).Format("Jan 2 15:04"), lost)
			if lost != 0 {
				t.Errorf("the restart lost %d passes", lost)
			}
		})
	}
}

// takenBack is how many times the plans took a region back.
func takenBack(back map[string][]time.Time) int {
	n := 0
	for _, b := range back {
		n += len(b)
	}
	return n
}

// After a downtime of 20 minutes to 3 hours, at every region and at the
// eight default regions with their category charts, each chart is caught
// up once at start and then runs at its slots: the slot after a catch-up
// counts the catch-up as its pass, so no two passes of a chart, in any
// tier, are closer than its cadence less a stagger step, and none is more
// than two cadences apart. With the eight regions, from the first whole
// hour a cadence after the start, no region-hour goes without a pass.
func TestDaysDowntime(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	costs := shippedCosts(t)
	for _, tc := range []struct {
		name   string
		charts []regions.Chart
		cats   []string
		down   time.Duration
	}{
		{"all/20m", allRegions(t, "all:tier=3:depth=50,default:tier=1:depth=200"), nil, 20 * time.Minute},
		{"all/3h", allRegions(t, "all:tier=3:depth=50,default:tier=1:depth=200"), nil, 3 * time.Hour},
		{"8/20m", regions.Charts(regions8...), categories, 20 * time.Minute},
		{"8/1h10m", regions.Charts(regions8...), categories, 70 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := dayStart(9, 0)
			stop := start.Add(10*time.Hour + 7*time.Minute)
			up, end := stop.Add(tc.down), stop.Add(tc.down+9*time.Hour)
			s := newSimCharts(t, costs, start, tc.charts, tc.cats, every)
			pc := s.pacer()
			s.catchUp(pc)
			s.slotted(start, stop, pc, nil)
			s.advance(up)
			pc = s.pacer()
			s.catchUp(pc)
			s.slotted(up, end, pc, nil)
			d := s.downtime(pc, up)
			t.Logf("down %s: after the start, passes %.2f to %.2f of their cadence apart; %d pairs closer than the cadence less a step, %d gaps over two cadences",
				tc.down, d.least, d.worst, d.close, d.far)
			if d.close != 0 || d.far != 0 {
				t.Errorf("%d pairs of passes closer than the cadence less a step, %d more than two cadences apart: %s", d.close, d.far, d.first)
			}
			if tc.cats != nil {
				f := s.figures(up.Add(time.Hour).Truncate(time.Hour).Add(time.Hour), end)
				t.Logf("down %s, eight regions: %v", tc.down, f)
				if f.gaps != 0 {
					t.Errorf("%d region-hours without a pass of the region's own chart: %s", f.gaps, f.gapList)
				}
			}
		})
	}
}

// downFigures is how a sim's passes were spaced from a start on.
type downFigures struct {
	least, worst float64 // the closest and the furthest two passes, over the cadence
	close, far   int     // pairs closer than the cadence less a step; further than two cadences
	first        string
}

// downtime is how the passes of each chart were spaced from the pass
// before up (the last before the downtime) on, against the cadence pc
// planned; the gap over the downtime is not over two cadences' check.
func (s *sim) downtime(pc *pace.Pacer, up time.Time) downFigures {
	cadence := map[string]time.Duration{}
	for _, e := range pc.Status().Entries {
		cadence[e.Name] = e.Every
	}
	d := downFigures{least: math.MaxFloat64}
	for i, p := range s.passes {
		name := p.Chart()
		every := cadence[name]
		if every == pace.Never || every <= 0 {
			continue
		}
		step := s.slots[i].Grain()
		var prev time.Time
		for _, at := range s.completed[name] {
			if !at.Before(up) && !prev.IsZero() {
				gap := at.Sub(prev)
				r := float64(gap) / float64(every)
				d.least, d.worst = min(d.least, r), max(d.worst, r)
				bad := ""
				switch {
				case gap < every-step:
					d.close++
					bad = "close"
				case gap > 2*every+step && !prev.Before(up): // not the downtime's own gap
					d.far++
					bad = "far"
				}
				if bad != "" && d.first == "" {
					d.first = fmt.Sprintf("%s every %s: passes at %s and %s (%s)", name, every.Round(time.Second),
						prev.In(pacific).Format("15:04:05"), at.In(pacific).Format("15:04:05"), bad)
				}
			}
			prev = at
		}
	}
	return d
}

// A day of 23 or 25 hours changes nothing a short pool keeps: every
// region tiered at --max-stale 3h on 1,200 units a day, each chart the
// plans kept through the ordinary day before a change of the clocks is
// kept through the day of the change and the one after, and is never
// older than its cadence plus a slot, or --max-stale when that is longer
// (docs/explanation/pacing.md: what a day is).
func TestDaysClocksChangeKeepsTheKept(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	const bound = 3 * time.Hour
	charts := allRegions(t, "all:tier=3:depth=50,default:tier=1:depth=200")
	for _, c := range []struct {
		name   string
		change time.Time // the first day of the new clocks, at its midnight
	}{
		{"25-hour day", time.Date(2026, 11, 1, 0, 0, 0, 0, pacific)},
		{"23-hour day", time.Date(2026, 3, 8, 0, 0, 0, 0, pacific)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := c.change.Add(-15 * time.Hour) // 09:00 the day before
			end := c.change.AddDate(0, 0, 2)
			l := newLite(t, 1200, charts, nil, bound, start)
			kept := map[string]bool{} // kept at every check of the day before, from noon
			for _, e := range jobs0(l) {
				kept[e] = true
			}
			var hour time.Time
			fails := 0
			fail := func(format string, args ...any) {
				if fails++; fails <= 8 {
					t.Errorf(format, args...)
				}
			}
			pc := l.pacer()
			l.catchUp(pc)
			l.slotted(pc, start, end, func(now time.Time) {
				if h := now.Truncate(time.Hour); h.Equal(hour) {
					return
				} else {
					hour = h
				}
				at := now.In(pacific).Format("Jan 2 15:04 MST")
				for _, e := range pc.Status().Entries {
					if !kept[e.Name] {
						continue
					}
					if now.Before(c.change) {
						if now.Sub(start) >= 3*time.Hour && (e.Dropped || e.Every == pace.Never) {
							delete(kept, e.Name) // not kept through the day before
						}
						continue
					}
					if e.Dropped || e.Every == pace.Never {
						fail("at %s the plan drops %s, kept through the day before", at, e.Name)
						continue
					}
					runs := l.completed[e.Name]
					if len(runs) == 0 {
						continue
					}
					slots := (e.Every + e.Floor - 1) / e.Floor * e.Floor
					if age := now.Sub(runs[len(runs)-1]); age > max(slots+e.Floor, bound)+time.Minute {
						fail("at %s %s is %s old: over its cadence %s and a slot, and over --max-stale %s", at, e.Name,
							age.Round(time.Minute), slots, bound)
					}
				}
			})
			if l.refused != 0 {
				t.Errorf("the limiter refused %d passes, want none", l.refused)
			}
			n := 0
			for range kept {
				n++
			}
			if n == 0 {
				t.Fatal("no chart kept through the day before: the test shows nothing")
			}
			var day int64
			for _, call := range l.calls {
				if !call.at.Before(c.change) && call.at.Before(c.change.AddDate(0, 0, 1)) {
					day += call.units
				}
			}
			t.Logf("%d charts kept through the day before; the day of the change spent %d units of 1,200; %d failures", n, day, fails)
		})
	}
}

// jobs0 is the names of l's regions' own charts.
func jobs0(l *lite) []string {
	var out []string
	for i, e := range l.passes {
		if e.Name == l.region[i] {
			out = append(out, e.Name)
		}
	}
	return out
}
