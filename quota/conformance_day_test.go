package quota_test

// The conformance suite's day tests (runConformance): a pool of 24 hours
// that also counts the Los Angeles calendar day, across its fall-back and
// spring-forward days and past its window, on every backend.

import (
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
)

// dayCosts is one pool of 100 units over 24 hours, with the Los Angeles
// calendar day when day is set.
func dayCosts(t testing.TB, day bool) *ingest.Costs {
	t.Helper()
	zone := ""
	if day {
		zone = ", day: America/Los_Angeles"
	}
	c, err := costs.Parse("day costs", []byte(`pools:
  default: {limit: 100, window: 24h`+zone+`}
operations:
  videos.list: {default: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var la = func() *time.Location { l, _ := time.LoadLocation("America/Los_Angeles"); return l }()

// saturate takes units one at a time at the world moment at until refused,
// and returns how many were admitted and the last decision.
func saturate(t *testing.T, h harness, key string, costs *ingest.Costs, at time.Time) (int, ingest.Decision) {
	n, d, _ := saturateFrom(t, h, key, costs, at)
	return n, d
}

// saturateFrom is saturate, with when the first call was admitted (the
// limiter's clock, which runs from at).
func saturateFrom(t *testing.T, h harness, key string, costs *ingest.Costs, at time.Time) (int, ingest.Decision, time.Time) {
	t.Helper()
	l := h.at(t, key, costs, at.Sub(h.now(t)))
	n := 0
	var first time.Time
	for range 300 {
		d := take(t, l, "videos.list")
		if !d.Allowed {
			return n, d, first
		}
		if n == 0 {
			first = d.At
		}
		n++
	}
	t.Fatalf("at %s: 300 admitted, the pool never filled", at)
	return n, ingest.Decision{}, first
}

// testDayFallBack: 2026-11-01 in Los Angeles lasts 25 hours. A load that
// saturates the pool at its start and again 24h01m later gets the limit
// once with the calendar day, twice with the sliding window alone.
func testDayFallBack(t *testing.T, h harness) {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, la)
	end := time.Date(2026, 11, 2, 0, 0, 0, 0, la)
	if end.Sub(start) != 25*time.Hour {
		t.Fatalf("2026-11-01 in Los Angeles lasts %s, want 25h", end.Sub(start))
	}
	for _, tc := range []struct {
		name string
		day  bool
		want int
	}{{"window and day", true, 100}, {"window alone", false, 200}} {
		key := quotaKey(t) + "." + strings.ReplaceAll(tc.name, " ", "_")
		costs := dayCosts(t, tc.day)
		first, _ := saturate(t, h, key, costs, start.Add(time.Minute))
		second, d := saturate(t, h, key, costs, start.Add(24*time.Hour+2*time.Minute))
		t.Logf("%s: admitted %d + %d = %d inside the 25-hour day", tc.name, first, second, first+second)
		if first+second != tc.want {
			t.Errorf("%s: admitted %d inside the 25-hour day, want %d", tc.name, first+second, tc.want)
		}
		if tc.day && !d.RetryAt.Equal(end) {
			t.Errorf("%s: refused until %s, want the next Los Angeles midnight %s", tc.name, d.RetryAt, end)
		}
		if tc.day {
			if n, _ := saturate(t, h, key, costs, end.Add(time.Minute)); n != 100 {
				t.Errorf("after the reset: admitted %d, want 100 (the window is clear by then)", n)
			}
		}
	}
}

// testDayOutlivesTheWindow: on the 25-hour day, calls that left the 24-hour
// window still count in the day, also once an admission has trimmed the log:
// after 40 units at the day's start, its last hour admits 60, not 100.
func testDayOutlivesTheWindow(t *testing.T, h harness) {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, la)
	key, costs := quotaKey(t), dayCosts(t, true)
	l := h.at(t, key, costs, start.Add(time.Minute).Sub(h.now(t)))
	for i := range 40 {
		if d := take(t, l, "videos.list"); !d.Allowed {
			t.Fatalf("call %d at the day's start: refused %+v", i, d)
		}
	}
	if n, _ := saturate(t, h, key, costs, start.Add(24*time.Hour+2*time.Minute)); n != 60 {
		t.Errorf("the day's last hour admitted %d after 40 at its start, want 60 (the day holds 100)", n)
	}
}

// testDaySpringForward: 2026-03-08 in Los Angeles lasts 23 hours. Right
// after its end the day has room but the 24-hour window does not: the
// refusal names the later of the two, the window's.
func testDaySpringForward(t *testing.T, h harness) {
	start := time.Date(2026, 3, 8, 0, 0, 0, 0, la)
	end := time.Date(2026, 3, 9, 0, 0, 0, 0, la)
	if end.Sub(start) != 23*time.Hour {
		t.Fatalf("2026-03-08 in Los Angeles lasts %s, want 23h", end.Sub(start))
	}
	key, costs := quotaKey(t), dayCosts(t, true)
	// The world clock is set once per limiter and then runs: the window
	// frees a day after the first admission, by the limiter's own clock,
	// however long a loaded machine takes to fill the pool.
	near := func(got, want time.Time) bool { return !got.Before(want) && got.Sub(want) < time.Second }
	first, d, firstAt := saturateFrom(t, h, key, costs, start.Add(time.Minute))
	free := firstAt.Add(24 * time.Hour)
	if firstAt.Before(start) || first != 100 || !near(d.RetryAt, free) {
		t.Fatalf("first: %d admitted, retry %s; want 100, retry when the window frees %s", first, d.RetryAt, free)
	}
	n, d := saturate(t, h, key, costs, end.Add(time.Minute))
	if n != 0 || !near(d.RetryAt, free) {
		t.Fatalf("after the 23-hour day: %d admitted, retry %s; want 0, retry %s (the window, later than the day's end)", n, d.RetryAt, free)
	}
	if s := pool(d, "default"); s.UsedDay != 0 || s.Used != 100 {
		t.Fatalf("after the 23-hour day: used %d, used today %d; want 100 in the window, 0 today", s.Used, s.UsedDay)
	}
}
