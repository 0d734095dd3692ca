package pace_test

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"
)

// The days tests run the pools' real shape over real days: a 24-hour
// window and the Pacific day, the November day of 25 hours among them.
// Passes are real (the YouTube client against the fake upstream over
// HTTP, the embedded limiter, the store on a file) on a clock the test
// moves; the fake serves small charts of four one-video pages, so that a
// pass costs its four units and little time. Most sims keep the limiter's
// log in memory, drop the pages and read the ledger through one follower
// (newSimLog); the days of a restart and of a join keep all as a worker.

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
