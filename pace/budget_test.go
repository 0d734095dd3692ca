package pace_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
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
		{"another worker's spend halves the budget",
			ingest.PoolState{Used: 90, Remaining: 30}, []pace.Spent{{At: t0.Add(-60 * s), Units: 60}}, 45},
		{"blocked: nothing", ingest.PoolState{Remaining: 90, BlockedUntil: t0.Add(time.Hour)}, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.st.Pool = "default"
			b := pace.BudgetOf(tc.st, window, t0, tc.mine)
			if math.Abs(b.Units-tc.units) > 1e-9 {
				t.Errorf("units %v, want %v", b.Units, tc.units)
			}
		})
	}
}

// A pool with a day plans to the day's end: the upstream's reset.
func TestHorizonDay(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 100, Window: 24 * time.Hour, Day: ingest.UpstreamZone}
	now := time.Date(2026, 3, 2, 20, 0, 0, 0, time.UTC) // 12:00 PST
	if got := pace.Horizon(pool, now); got != 12*time.Hour {
		t.Errorf("horizon %v, want 12h to midnight Pacific", got)
	}
	b := pace.BudgetOf(ingest.PoolState{Pool: "default", UsedDay: 40, Used: 40, Remaining: 60}, pool, now, []pace.Spent{{At: now.Add(-time.Hour), Units: 40}})
	if b.Units != 60 {
		t.Errorf("units %v, want the day's 60 left", b.Units)
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
	// 20 units every 10 s would be 600 in the window: paced to 100/300 s,
	// the one entry runs every 60 s.
	p := pace.New([]ingest.Pool{pool}, state, []pace.Entry{entry("US", 0, 10*time.Second, 20)})
	now := t0
	p.Now = func() time.Time { return now }
	var ran []int
	for i := range 13 {
		now = t0.Add(time.Duration(i) * 10 * time.Second)
		if p.Due(context.Background(), "US", now) {
			ran = append(ran, i)
		}
	}
	if want := []int{0, 6, 12}; !equal(ran, want) {
		t.Errorf("ran at slots %v, want %v", ran, want)
	}
	if reads != 1 {
		t.Errorf("read the limiter %d times, want once", reads)
	}
	p.Ran("US", map[string]int64{"default": 20}, ingest.StatusStopped)
	p.Due(context.Background(), "US", now.Add(10*time.Second))
	if reads != 2 {
		t.Errorf("after a stop, read the limiter %d times in all, want 2", reads)
	}
	p.Ran("US", map[string]int64{"default": 40}, ingest.StatusCompleted)
	p.Due(context.Background(), "US", now.Add(20*time.Second))
	if reads != 3 {
		t.Errorf("after a dearer pass, read the limiter %d times in all, want 3", reads)
	}
	if got := p.Status().Entries[0].Cost["default"]; got != 40 {
		t.Errorf("measured cost %v, want 40", got)
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
	p := pace.New([]ingest.Pool{pool}, state, []pace.Entry{entry("US", 0, 10*time.Second, 1)})
	p.Now = func() time.Time { return now }
	var ran []int
	for i := range 8 {
		now = t0.Add(time.Duration(i) * 10 * time.Second)
		if p.Due(context.Background(), "US", now) {
			ran = append(ran, i)
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
	p := pace.New([]ingest.Pool{pool}, state, []pace.Entry{entry("US", 0, 10*time.Second, 50)})
	p.Logger = quiet()
	n := 0
	for i := range 5 {
		if p.Due(context.Background(), "US", t0.Add(time.Duration(i)*10*time.Second)) {
			n++
		}
	}
	if n != 5 {
		t.Errorf("ran %d of 5 slots with no plan, want every one", n)
	}
}

// The schedule adapter fires at the first of the entry's staggered slots
// where it will have earned a pass, and counts it: a chart planned every
// 60 s on 10 s slots fires 60 s after its last firing, on its own offset;
// asked again before the slot it gave, it gives the same one.
func TestSchedule(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 100, Window: 300 * time.Second}
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Remaining: 100}}, nil
	}
	p := pace.New([]ingest.Pool{pool}, state, []pace.Entry{entry("US", 0, 10*time.Second, 20)})
	p.Now = func() time.Time { return t0 }
	base := jobs.Schedule{Every: 10 * time.Second, Offset: 3 * time.Second}
	s := p.Schedule("US", base)
	first := s.Next(t0)
	if want := base.Next(t0); !first.Equal(want) {
		t.Fatalf("first slot %v, want the base's %v", first, want)
	}
	if again := s.Next(t0.Add(time.Second)); !again.Equal(first) {
		t.Fatalf("asked again before its first slot: %v, want the same %v, counted once", again.Sub(t0), first.Sub(t0))
	}
	next := first
	for i := 1; i <= 3; i++ {
		next = s.Next(next)
		if want := first.Add(time.Duration(i) * 60 * time.Second); !next.Equal(want) {
			t.Errorf("firing %d at %v, want %v", i+1, next.Sub(t0), want.Sub(t0))
		}
	}
	if got := p.Schedule("unknown", base).Next(t0); !got.Equal(base.Next(t0)) {
		t.Errorf("an unknown entry's next %v, want the base's", got)
	}
}
