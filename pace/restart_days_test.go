package pace_test

// The restart's and the second process's days: a daemon restarted at
// midday, or at a moment drawn from the seed, costs nothing, and a second
// process joining on the same database shares the plan. Both keep the
// limiter's log, the pages and the ledger's reads as a worker has them.

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/seedtest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/pace"
)

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

// daysSeed is the days tests' fixed seed, the one make test runs them on.
const daysSeed = 20261125

// seed is the days tests' random seed: INGEST_PACE_SEED's ("random" draws
// one from the kernel, a number replays it), else daysSeed; logged so that
// a failure can be run again.
func seed(t *testing.T) int64 {
	t.Helper()
	return int64(seedtest.Seed(t, "INGEST_PACE_SEED", daysSeed))
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
