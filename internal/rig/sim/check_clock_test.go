package sim

import (
	"strings"
	"testing"
	"time"
)

// TestCheckFindsTheClockAskedByABootThatReadIt: the upstream's time asked
// at no quota cost before the first call, and while a wrong Date may have
// had a decision refused on the clock, is let be; asked at a restart with
// the Date right, by a boot whose ledger keeps a reading, it is found.
func TestCheckFindsTheClockAskedByABootThatReadIt(t *testing.T) {
	at := func(hm float64) time.Time { return t0.Add(time.Duration(hm * float64(time.Hour))) }
	skew := Interval{at(4).Add(10 * time.Minute), at(4).Add(30 * time.Minute)}
	for _, c := range []struct {
		name string
		asks []time.Time
		want string
	}{
		{"the fresh boot's first reading", []time.Time{t0}, ""},
		{"inside the wrong Date", []time.Time{t0, at(4).Add(20 * time.Minute)}, ""},
		{"after it, before the first call brings the right Date", []time.Time{t0, at(4.75), at(5).Add(time.Minute)}, ""},
		{"at a start with the Date right", []time.Time{t0, at(3)},
			"the upstream's time was asked 1 times by a boot that had read it, with its Date right and no decision refused on the clock: 2026-10-25T03:00:00Z"},
		{"once the first call after the wrong Date brought the right one", []time.Time{t0, at(5).Add(2 * time.Minute)},
			"asked 1 times by a boot that had read it"},
	} {
		h := history(hourly(24, 1), hourly(24, 60), 1)
		h.Skews, h.Asks = []Interval{skew}, c.asks
		f := Check(h)
		switch {
		case c.want == "" && len(f) != 0:
			t.Errorf("%s: got %q, want nothing", c.name, f)
		case c.want != "" && (len(f) != 1 || !strings.Contains(f[0], c.want)):
			t.Errorf("%s: got %q, want %q", c.name, f, c.want)
		}
	}
}
