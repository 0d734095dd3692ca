package regions

import (
	"testing"
	"time"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestStaggerSlots(t *testing.T) {
	tests := []struct {
		name  string
		every time.Duration
		i     int
		now   string
		next  string
	}{
		{"US on the hour", time.Hour, 0, "2026-11-21T09:10:00Z", "2026-11-21T10:00:00Z"},
		{"GB 7m30s past", time.Hour, 1, "2026-11-21T09:10:00Z", "2026-11-21T10:07:30Z"},
		{"CA 52m30s past", time.Hour, 7, "2026-11-21T09:10:00Z", "2026-11-21T09:52:30Z"},
		{"exactly on a slot is not next", time.Hour, 0, "2026-11-21T09:00:00Z", "2026-11-21T10:00:00Z"},
		{"every 10m: 75s apart", 10 * time.Minute, 3, "2026-11-21T09:00:00Z", "2026-11-21T09:03:45Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Stagger(tt.every, tt.i, 8)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Next(mustTime(t, tt.now)).Format(time.RFC3339); got != tt.next {
				t.Fatalf("Next(%s) = %s, want %s", tt.now, got, tt.next)
			}
		})
	}
}

// A list shorter than the default regions keeps the default regions'
// slots: its second region runs where the second default region would.
func TestStaggerKeepsTheDefaultSlots(t *testing.T) {
	want := time.Hour / time.Duration(len(Default))
	for _, n := range []int{1, 2, len(Default)} {
		if s, _ := Stagger(time.Hour, 1, n); s.Offset != want {
			t.Errorf("Stagger(1h, 1, %d).Offset = %s, want %s", n, s.Offset, want)
		}
	}
}

// A job after the charts runs in the last slot, however few charts the
// schedule runs: after every chart pass of the period.
func TestAfterChartsRunsInTheLastSlot(t *testing.T) {
	n := len(Default)
	last, _ := Stagger(time.Hour, n-1, n)
	want := last.Offset + (time.Hour-last.Offset)/2
	for _, given := range []int{1, n} {
		if got := AfterCharts(time.Hour, given, 2).Offset; got != want {
			t.Errorf("AfterCharts(1h, %d, 2).Offset = %s, want %s", given, got, want)
		}
	}
	more, _ := Stagger(time.Hour, n, n+1)
	if got := AfterCharts(time.Hour, n+1, 4).Offset; got <= more.Offset || got >= time.Hour {
		t.Errorf("AfterCharts(1h, %d, 4).Offset = %s, want inside the last slot (after %s)", n+1, got, more.Offset)
	}
}

func TestStaggerRejectsShortPeriod(t *testing.T) {
	if _, err := Stagger(59*time.Second, 0, 8); err == nil {
		t.Fatal("Stagger(59s): want an error, the minimum is 1m")
	}
}

func TestMissed(t *testing.T) {
	s, _ := Stagger(time.Hour, 1, 8) // slots at hh:07:30
	now := mustTime(t, "2026-11-21T09:30:00Z")
	tests := []struct {
		last string
		want bool
	}{
		{"2026-11-21T09:07:31Z", false}, // ran in the latest slot
		{"2026-11-21T08:07:30Z", true},  // the 09:07:30 slot passed without a run
		{"0001-01-01T00:00:00Z", true},  // never ran
	}
	for _, tt := range tests {
		if got := s.Missed(mustTime(t, tt.last), now); got != tt.want {
			t.Errorf("Missed(last=%s) = %v, want %v", tt.last, got, tt.want)
		}
	}
}

// NextRuns staggers the regions as the daemon does, and says nothing for
// a period that cannot be staggered.
func TestNextRuns(t *testing.T) {
	t.Parallel()
	now := mustTime(t, "2026-11-23T08:00:30Z")
	next := NextRuns([]Chart{{"US", 1, 200}, {"GB", 1, 200}}, time.Hour)
	for i := range 2 {
		s, err := Stagger(time.Hour, i, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got := next(i, now); !got.Equal(s.Next(now)) || !got.After(now) {
			t.Errorf("region %d: next %s, want %s", i, got, s.Next(now))
		}
	}
	if got := NextRuns([]Chart{{"US", 1, 200}}, 0)(0, now); !got.IsZero() {
		t.Errorf("a zero period: next %s, want none", got)
	}
}

// A tier-N chart's slots come every N periods of --every, at its index's
// offset in them: the tier-3 charts of a schedule spread over three
// periods rather than crowding the first, and tier 1's are those of a
// schedule without tiers.
func TestStaggerByTier(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		chart        Chart
		i, n         int
		every, start time.Duration
	}{
		{Chart{"US", 1, 200}, 1, 8, time.Hour, 7*time.Minute + 30*time.Second},
		{Chart{"JP", 3, 50}, 1, 10, 3 * time.Hour, 18 * time.Minute},
		{Chart{"JP", 3, 50}, 9, 10, 3 * time.Hour, 162 * time.Minute},
	} {
		s, err := tt.chart.Stagger(time.Hour, tt.i, tt.n)
		if err != nil || s.Every != tt.every || s.Offset != tt.start {
			t.Errorf("%v, %d of %d: %+v, %v; want every %s at %s", tt.chart, tt.i, tt.n, s, err, tt.every, tt.start)
		}
	}
	if _, err := (Chart{"JP", 3, 50}).Stagger(30*time.Second, 0, 1); err == nil {
		t.Error("a tier-3 chart at --every 30s: want an error, --every is under the minimum whatever the tier")
	}
}

// NextRuns is when each chart of a staggered schedule runs next, by its
// index; zero when every cannot be staggered.
func NextRuns(charts []Chart, every time.Duration) func(i int, now time.Time) time.Time {
	return func(i int, now time.Time) time.Time {
		s, err := charts[i].Stagger(every, i, len(charts))
		if err != nil {
			return time.Time{}
		}
		return s.Next(now)
	}
}
