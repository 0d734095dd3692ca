package pace_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

func TestBudgetOf(t *testing.T) {
	t.Parallel()
	const s = time.Second
	window := ingest.Pool{Name: "default", Limit: 100, Reserve: 10, Window: 90 * s}
	tests := []struct {
		name  string
		st    ingest.PoolState
		mine  []pace.Spent
		units float64
	}{
		{"empty: the capacity over the window", ingest.PoolState{Remaining: 90}, nil, 90},
		{"own spend leaves in time: the rate is the horizon's",
			ingest.PoolState{Used: 30, Remaining: 60}, []pace.Spent{{At: t0.Add(-45 * s), Units: 30}}, 90},
		{"own spend leaves late: the rate is what remains until it does",
			ingest.PoolState{Used: 60, Remaining: 30}, []pace.Spent{{At: t0.Add(-30 * s), Units: 60}}, 45},
		{"another worker in the window halves the budget",
			ingest.PoolState{Used: 60, Remaining: 30, Others: 1}, []pace.Spent{{At: t0.Add(-60 * s), Units: 30}}, 45},
		{"two other workers: a third of it",
			ingest.PoolState{Used: 60, Remaining: 30, Others: 2}, []pace.Spent{{At: t0.Add(-60 * s), Units: 30}}, 30},
		{"spend beyond this worker's own, no other worker: the whole",
			ingest.PoolState{Used: 60, Remaining: 30}, []pace.Spent{{At: t0.Add(-60 * s), Units: 30}}, 60},
		{"blocked: nothing", ingest.PoolState{Remaining: 90, BlockedUntil: t0.Add(time.Hour)}, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.st.Pool = "default"
			b := pace.BudgetOf(tc.st, window, t0, tc.mine, 0)
			if math.Abs(b.Units-tc.units) > 1e-9 {
				t.Errorf("units %v, want %v", b.Units, tc.units)
			}
		})
	}
}

// A pool with a window and a day is paced at the rate it holds forever,
// whatever the hour: a day's capacity over 24 hours (25 on the day the
// clocks go back), not what is left until the reset over the hours to it.
// Its horizon, when the plan is made again, is still the reset.
func TestBudgetDayAndWindow(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 1000, Reserve: 50, Window: 24 * time.Hour, Day: ingest.UpstreamZone}
	empty := ingest.PoolState{Pool: "default", Remaining: 950}
	for _, tc := range []struct {
		name string
		at   time.Time
		span time.Duration
	}{
		{"21:45, a 24-hour day", time.Date(2026, 10, 30, 21, 45, 0, 0, ingest.UpstreamZone), 24 * time.Hour},
		{"09:00, a 24-hour day", time.Date(2026, 10, 30, 9, 0, 0, 0, ingest.UpstreamZone), 24 * time.Hour},
		{"00:30 of the 25-hour day", time.Date(2026, 11, 1, 0, 30, 0, 0, ingest.UpstreamZone), 25 * time.Hour},
		{"00:30 of the 23-hour day: the window's 24 hours", time.Date(2026, 3, 8, 0, 30, 0, 0, ingest.UpstreamZone), 24 * time.Hour},
	} {
		b := pace.BudgetOf(empty, pool, tc.at, nil, 0)
		if want := 950 / tc.span.Hours(); math.Abs(b.Rate*3600-want) > 1e-9 {
			t.Errorf("%s: %.3f units an hour, want %.3f", tc.name, b.Rate*3600, want)
		}
		if want := time.UnixMilli(ingest.DayStarts(ingest.UpstreamZone, tc.at)[2]).Sub(tc.at); b.Horizon != want {
			t.Errorf("%s: horizon %v, want the reset in %v", tc.name, b.Horizon, want)
		}
	}
	// Yesterday's spend still in the window: the rate is what the window
	// frees, not the new day's room.
	now := time.Date(2026, 11, 3, 0, 30, 0, 0, ingest.UpstreamZone)
	mine := []pace.Spent{{At: now.Add(-2 * time.Hour), Units: 900}}
	st := ingest.PoolState{Pool: "default", Used: 900, UsedDay: 0, Remaining: 50}
	b := pace.BudgetOf(st, pool, now, mine, 0)
	if want := 50.0 / 22; math.Abs(b.Rate*3600-want) > 1e-9 {
		t.Errorf("after the reset with the window full: %.3f units an hour, want %.3f (what is left until the spend ages out)", b.Rate*3600, want)
	}
	// The day nearly spent, its window (an hour) not: what is left of the
	// day over the hours to the reset.
	hourly := ingest.Pool{Name: "default", Limit: 1000, Reserve: 50, Window: time.Hour, Day: ingest.UpstreamZone}
	late := time.Date(2026, 11, 3, 22, 0, 0, 0, ingest.UpstreamZone)
	st = ingest.PoolState{Pool: "default", Used: 0, UsedDay: 940, Remaining: 10}
	b = pace.BudgetOf(st, hourly, late, nil, 0)
	if want := 10.0 / 2; math.Abs(b.Rate*3600-want) > 1e-9 {
		t.Errorf("the day nearly spent: %.3f units an hour, want %.3f", b.Rate*3600, want)
	}
}

// An entry planned every 1.5 of its slots runs at two slots of three, and
// a stop for want of quota makes the next decision read the limiter again.
func TestPacerDue(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 100, Window: 300 * time.Second}
	reads := 0
	state := func(context.Context) ([]ingest.PoolState, error) {
		reads++
		return []ingest.PoolState{{Pool: "default", Remaining: 100}}, nil
	}
	// 18 units every 10 s would be 540 in the window: paced to 90/300 s
	// (a tenth of the pool kept as slack), the one entry runs every 60 s.
	now := t0
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{entry("US", 0, 10*time.Second, 18)},
		Clock: clock.Func(func() time.Time { return now })})
	var ran []int
	for i := range 13 {
		now = t0.Add(time.Duration(i) * 10 * time.Second)
		if p.Due(context.Background(), "US", now) {
			ran = append(ran, i)
			p.Ran("US", map[string]int64{"default": 18}, nil, ingest.StatusCompleted)
		}
	}
	if want := []int{0, 6, 12}; !equal(ran, want) {
		t.Errorf("ran at slots %v, want %v", ran, want)
	}
	if reads != 4 {
		t.Errorf("read the limiter %d times, want 4: the first plan, the plan on the first pass's cost, and the room at each later pass let in", reads)
	}
	p.Ran("US", map[string]int64{"default": 20}, nil, ingest.StatusStopped)
	p.Due(context.Background(), "US", now.Add(10*time.Second))
	if reads != 5 {
		t.Errorf("after a stop, read the limiter %d times in all, want 5", reads)
	}
	p.Ran("US", map[string]int64{"default": 40}, nil, ingest.StatusCompleted)
	p.Due(context.Background(), "US", now.Add(20*time.Second))
	if reads != 6 {
		t.Errorf("after a dearer pass, read the limiter %d times in all, want 6", reads)
	}
	if got := p.Status().Entries[0].Cost["default"]; got != (18*3+40)/4.0 {
		t.Errorf("measured cost %v, want the mean of the completed passes, %v", got, (18*3+40)/4.0)
	}
}

// A cost the database measured (earlier processes' passes) is not a
// guess: a new process's first pass of that cost plans nothing again, so
// that a run --once does not read its history after every chart.
func TestPacerMeasuredCostIsNoGuess(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 1000, Window: time.Hour}
	reads, loads := 0, 0
	state := func(context.Context) ([]ingest.PoolState, error) {
		reads++
		return []ingest.PoolState{{Pool: "default", Remaining: 1000}}, nil
	}
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state,
		Entries: []pace.Entry{entry("US", 0, time.Minute, 1), entry("GB", 0, time.Minute, 1)},
		Clock:   clock.Func(func() time.Time { return t0 }),
		History: func(context.Context, time.Time) (pace.History, error) {
			loads++
			return pace.History{Cost: map[string]map[string]float64{"US": {"default": 4}}}, nil
		}})
	for _, name := range []string{"US", "GB"} {
		if !p.Due(context.Background(), name, t0) {
			t.Fatalf("%s not due at the start", name)
		}
		p.Ran(name, map[string]int64{"default": 4}, nil, ingest.StatusCompleted)
		if name == "US" && (reads != 1 || loads != 1) {
			t.Errorf("after US's pass of its measured cost: the limiter read %d times, the history %d; want once each", reads, loads)
		}
	}
	if reads != 3 || loads != 2 {
		t.Errorf("after GB's first pass (its cost a guess): the limiter read %d times, the history %d; want 3 (two plans, and GB's room at its ask) and twice", reads, loads)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A pool the upstream blocked plans nothing until the block ends, then
// plans again: no pass is sent to be refused meanwhile.
func TestPacerBlocked(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 100, Window: 100 * time.Second}
	now := t0
	state := func(context.Context) ([]ingest.PoolState, error) {
		st := ingest.PoolState{Pool: "default", Remaining: 100}
		if now.Before(t0.Add(50 * time.Second)) {
			st.BlockedUntil = t0.Add(50 * time.Second)
		}
		return []ingest.PoolState{st}, nil
	}
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{entry("US", 0, 10*time.Second, 1)},
		Clock: clock.Func(func() time.Time { return now })})
	var ran []int
	for i := range 8 {
		now = t0.Add(time.Duration(i) * 10 * time.Second)
		if p.Due(context.Background(), "US", now) {
			ran = append(ran, i)
			p.Ran("US", map[string]int64{"default": 1}, nil, ingest.StatusCompleted)
		}
	}
	if want := []int{5, 6, 7}; !equal(ran, want) {
		t.Errorf("ran at slots %v, want %v: nothing while blocked, every slot after", ran, want)
	}
}

// A limiter that never answers leaves no plan: the entry runs at its
// floor, as without pacing, and the limiter decides each call.
func TestPacerNoState(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 100, Window: 100 * time.Second}
	state := func(context.Context) ([]ingest.PoolState, error) { return nil, context.DeadlineExceeded }
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{entry("US", 0, 10*time.Second, 50)},
		Clock: clock.System, Logger: quiet()})
	n := 0
	for i := range 5 {
		if p.Due(context.Background(), "US", t0.Add(time.Duration(i)*10*time.Second)) {
			n++
			p.Ran("US", map[string]int64{"default": 50}, nil, ingest.StatusCompleted)
		}
	}
	if n != 5 {
		t.Errorf("ran %d of 5 slots with no plan, want every one", n)
	}
}

// An entry starts with what its age has earned: after a restart, a chart
// fetched off its slots less than half a cadence ago waits for a later
// slot, one never fetched runs at
// once; a pass under way is not granted a second; the plan's next run is
// the first slot where the entry will have earned a pass.
func TestPacerRestart(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 1000, Window: time.Hour}
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Remaining: 1000}}, nil
	}
	slots := jobs.Schedule{Every: time.Minute}
	us, gb := entry("US", 0, time.Minute, 1), entry("GB", 0, time.Minute, 1)
	us.Slots, gb.Slots = slots, slots
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{us, gb},
		Clock: clock.Func(func() time.Time { return t0 }),
		History: func(context.Context, time.Time) (pace.History, error) {
			return pace.History{Last: map[string]time.Time{"US": t0.Add(-20 * time.Second)}}, nil
		}})
	if p.Due(context.Background(), "US", t0) {
		t.Errorf("US fetched 20 s before the restart ran again at once; its cadence is a minute")
	}
	if !p.Due(context.Background(), "GB", t0) {
		t.Errorf("GB, never fetched, did not run at start")
	}
	if p.Due(context.Background(), "GB", t0.Add(time.Minute)) {
		t.Errorf("GB was granted a second pass while its first was under way")
	}
	st := p.Status()
	for _, e := range st.Entries {
		if e.Name == "US" && !e.Next.Equal(t0.Add(time.Minute)) {
			t.Errorf("US's next run %v, want %v: the first slot where it has earned a pass", e.Next, t0.Add(time.Minute))
		}
	}
	p.Ran("GB", map[string]int64{"default": 1}, nil, ingest.StatusCompleted)
	if !p.Due(context.Background(), "GB", t0.Add(2*time.Minute)) {
		t.Errorf("GB, its pass ended, did not run at its next slot")
	}
}

// Whether an entry is due is decided slot to slot: a pass recorded up to a
// grain (the stagger's step) after its slot, or recorded with its slot
// however late, counts for that slot, so after a restart the entry runs at
// its next slot, not the one after; a pass caught up at start a grain or
// more after its slot is the pass of the slot after it, so the entry's
// next pass is the slot after that: never less than a cadence after it.
// A restart that has only the recorded start counts alike.
func TestPacerCountsSlots(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 1000, Window: time.Hour}
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Remaining: 1000}}, nil
	}
	slots, err := regions.Stagger(time.Hour, 4, 8)
	if err != nil {
		t.Fatal(err)
	}
	slot := slots.Prev(t0)
	for _, tc := range []struct {
		name  string
		last  time.Time // the latest pass's recorded start; zero: none
		start time.Time // the restart; a catch-up is asked then
		ran   bool      // the catch-up ran
		due   []bool    // at the next three slots
	}{
		{"a pass 100 ms after its slot", slot.Add(100 * time.Millisecond), slot.Add(56 * time.Minute), false, []bool{true, true, true}},
		{"a pass 3 s after its slot", slot.Add(3 * time.Second), slot.Add(59*time.Minute + 59*time.Second), false, []bool{true, true, true}},
		{"a pass 6 s after its slot", slot.Add(6 * time.Second), slot.Add(50 * time.Minute), false, []bool{true, true, true}},
		{"a pass 30 s after its slot", slot.Add(30 * time.Second), slot.Add(50 * time.Minute), false, []bool{true, true, true}},
		{"caught up 4 minutes before its slot", time.Time{}, slot.Add(56 * time.Minute), true, []bool{false, true, true}},
		{"a pass 10 minutes late, its slot recorded", slot, slot.Add(50 * time.Minute), false, []bool{true, true, true}},
		{"caught up 40 minutes before its slot", slot.Add(-time.Hour), slot.Add(20 * time.Minute), true, []bool{false, true, true}},
		{"caught up 20 minutes before its slot", slot.Add(-time.Hour), slot.Add(40 * time.Minute), true, []bool{false, true, true}},
		{"caught up in its own slot's grain, then restarted", slot.Add(2*time.Minute + 20*time.Second), slot.Add(30 * time.Minute), false, []bool{true, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := entry("IN", 0, time.Hour, 1)
			e.Slots = slots
			now := tc.start
			p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{e},
				Clock: clock.Func(func() time.Time { return now }), Logger: quiet(),
				History: func(context.Context, time.Time) (pace.History, error) {
					h := pace.History{Last: map[string]time.Time{}}
					if !tc.last.IsZero() {
						h.Last["IN"] = tc.last
					}
					return h, nil
				}})
			if ran := p.Due(context.Background(), "IN", tc.start); ran != tc.ran {
				t.Fatalf("caught up at start: %v, want %v", ran, tc.ran)
			} else if ran {
				p.Ran("IN", map[string]int64{"default": 1}, nil, ingest.StatusCompleted)
			}
			next := slots.Next(tc.start)
			for _, want := range tc.due {
				now = next.Add(100 * time.Millisecond)
				got := p.Due(context.Background(), "IN", next)
				if got != want {
					t.Errorf("at the slot %s after the start: due %v, want %v", next.Sub(tc.start).Round(time.Second), got, want)
				}
				if got {
					p.Ran("IN", map[string]int64{"default": 1}, nil, ingest.StatusCompleted)
				}
				next = slots.Next(next)
			}
		})
	}
}

// Under a cron (run --once --pace), the plan's next run of an entry is the
// time from which it is due, not a slot; a dropped entry has none.
func TestPacerDueFrom(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 1000, Window: time.Hour}
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Remaining: 1000}}, nil
	}
	slots, err := regions.Stagger(time.Hour, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	us := entry("US", 0, time.Hour, 1)
	us.Slots = slots
	last := t0.Add(-34 * time.Minute)
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{us},
		Clock: clock.Func(func() time.Time { return t0 }), Logger: quiet(), DueFrom: true,
		History: func(context.Context, time.Time) (pace.History, error) {
			return pace.History{Last: map[string]time.Time{"US": last}}, nil
		}})
	st, err := p.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	grain := slots.Grain()
	want := last.Add(-time.Duration(last.Sub(time.Unix(0, 0)) % grain)).Add(time.Hour)
	if !st.DueFrom || !st.Entries[0].Next.Equal(want) {
		t.Errorf("next run %v (due from: %v), want due from %v: the pass's grain and a cadence on", st.Entries[0].Next, st.DueFrom, want)
	}
}

// newPacer is pace.New of c, which the test's c must pass.
func newPacer(t testing.TB, c pace.Config) *pace.Pacer {
	t.Helper()
	p, err := pace.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNewChecksConfig: a pacer is built whole or not at all, and the error
// names the field to fix.
func TestNewChecksConfig(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 100, Window: time.Hour}
	state := func(context.Context) ([]ingest.PoolState, error) { return nil, nil }
	for _, tc := range []struct {
		name  string
		c     pace.Config
		field string
	}{
		{"no pools", pace.Config{State: state}, "Config.Pools"},
		{"no state", pace.Config{Pools: []ingest.Pool{pool}}, "Config.State"},
		{"no clock", pace.Config{Pools: []ingest.Pool{pool}, State: state}, "Config.Clock"},
		{"negative bound", pace.Config{Pools: []ingest.Pool{pool}, State: state, Clock: clock.System, Bound: -time.Minute}, "Config.Bound"},
		{"repeated entry", pace.Config{Pools: []ingest.Pool{pool}, State: state, Clock: clock.System,
			Entries: []pace.Entry{entry("US", 0, time.Minute, 1), entry("US", 0, time.Minute, 1)}}, "Config.Entries[1]"},
	} {
		if _, err := pace.New(tc.c); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: got %v, want an error naming %s", tc.name, err, tc.field)
		}
	}
	if _, err := pace.New(pace.Config{Pools: []ingest.Pool{pool}, State: state, Clock: clock.System}); err != nil {
		t.Errorf("a whole config: %v", err)
	}
}
