package pace_test

import (
	"testing"
	"time"

	"github.com/ingestworks/ingest/pace"
)

// A day of 23 or 25 hours changes nothing a short pool keeps: every
// region tiered at --max-stale 3h on 1,200 units a day, each chart the
// plans kept through the ordinary day before a change of the clocks is
// kept through the day of the change and the one after, and is never
// older than its cadence plus a slot, or --max-stale when that is longer
// (docs/operations.md, "Pacing": what a day is).
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
