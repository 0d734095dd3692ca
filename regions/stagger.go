package regions

import (
	"fmt"
	"time"
)

// The stagger spreads a schedule's charts over their period, so that they
// do not all spend at once: chart i of n runs at offset i x P/slots from
// the start of each of its periods, P its own period (Chart.Period) and
// slots max(n, len(Default)), so that a shorter --regions list keeps the
// default regions' slots. A tier-N chart's period is N x --every, so its
// slots spread over N periods of tier 1's instead of crowding the first.

// MinEvery is the shortest schedule period allowed.
const MinEvery = time.Minute

// Slots is a chart's staggered slots: every Every, in UTC, at Offset from
// the start of each period, the periods aligned to the Unix epoch so that
// every process computes the same ones. It satisfies robfig/cron's
// Schedule interface.
type Slots struct {
	Every  time.Duration
	Offset time.Duration
	// Step is the stagger's grain: the time between two charts' slots.
	Step time.Duration
}

// Period is the chart's own period under --every: Tier x every, the
// shortest cadence the plan gives it.
func (c Chart) Period(every time.Duration) time.Duration {
	return time.Duration(max(c.Tier, 1)) * every
}

// Stagger is the slots of chart i of n whose period is every.
func Stagger(every time.Duration, i, n int) (Slots, error) {
	if every < MinEvery {
		return Slots{}, fmt.Errorf("must be at least %s, got %s", MinEvery, every)
	}
	step := every / slotsOf(n)
	return Slots{Every: every, Offset: time.Duration(i) * step, Step: step}, nil
}

// Stagger is the slots of the chart, i-th of n, under --every: its period
// is its tier's.
func (c Chart) Stagger(every time.Duration, i, n int) (Slots, error) {
	if every < MinEvery {
		return Slots{}, fmt.Errorf("must be at least %s, got %s", MinEvery, every)
	}
	return Stagger(c.Period(every), i, n)
}

// slotsOf is how many slots a period of n charts has: at least as many as
// default regions.
func slotsOf(n int) time.Duration {
	return time.Duration(max(n, len(Default)))
}

// AfterCharts is the slots of a job that comes after every chart pass of a
// period of n charts: every Every, 1/part into the last slot (2: its
// middle), so that it does not start beside the last chart's pass.
func AfterCharts(every time.Duration, n, part int) Slots {
	slot := every / slotsOf(n)
	return Slots{Every: every, Offset: every - slot + slot/time.Duration(part), Step: slot}
}

// Grain is the stagger's step, the time between two charts' slots: a
// paced run --once counts a pass from the start of the grain it started
// in.
func (s Slots) Grain() time.Duration { return s.Step }

// Next is the first slot strictly after t.
func (s Slots) Next(t time.Time) time.Time {
	return s.Prev(t).Add(s.Every)
}

// Prev is the latest slot at or before t.
func (s Slots) Prev(t time.Time) time.Time {
	since := t.UTC().Sub(time.Unix(0, 0).UTC().Add(s.Offset))
	k := since / s.Every
	if since < 0 && since%s.Every != 0 {
		k--
	}
	return time.Unix(0, 0).UTC().Add(s.Offset + k*s.Every)
}

// Missed reports whether the latest slot at or before now passed without a
// run that started at or after it: the daemon was down, so the chart runs
// once at once on start.
func (s Slots) Missed(lastStart, now time.Time) bool {
	return lastStart.Before(s.Prev(now))
}
