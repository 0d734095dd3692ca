package jobs

import (
	"fmt"
	"time"

	"github.com/ingestworks/ingest/regions"
)

// MinEvery is the shortest schedule period allowed.
const MinEvery = time.Minute

// Schedule is the staggered schedule: every Every, in UTC, the region at
// index i runs at offset i x Every/Slots from the start of each period, so
// that the regions spread over the period instead of all spending at once.
// It satisfies robfig/cron's Schedule interface.
type Schedule struct {
	Every  time.Duration
	Offset time.Duration
	// Step is the stagger's grain: the time between two charts' slots.
	Step time.Duration
}

// Grain is the stagger's step, the time between two charts' slots: a
// paced run --once counts a pass from the start of the grain it started
// in.
func (s Schedule) Grain() time.Duration { return s.Step }

// NextRuns is when each region of a staggered schedule of codes runs
// next, as the report shows it; zero when every cannot be staggered.
func NextRuns(codes []string, every time.Duration) func(i int, now time.Time) time.Time {
	return func(i int, now time.Time) time.Time {
		s, err := Stagger(every, i, len(codes))
		if err != nil {
			return time.Time{}
		}
		return s.Next(now)
	}
}

// Stagger returns the schedule of the region at index i of n. There are at
// least as many slots as default regions, so that a shorter --regions list
// keeps the default regions' slots.
func Stagger(every time.Duration, i, n int) (Schedule, error) {
	if every < MinEvery {
		return Schedule{}, fmt.Errorf("must be at least %s, got %s", MinEvery, every)
	}
	step := every / slots(n)
	return Schedule{Every: every, Offset: time.Duration(i) * step, Step: step}, nil
}

// slots is how many slots a schedule of n charts has: at least as many as
// default regions.
func slots(n int) time.Duration {
	return time.Duration(max(n, len(regions.Default)))
}

// AfterCharts is the schedule of a job that comes after every chart pass
// of a period of n charts: every Every, 1/part into the last slot (2: its
// middle), so that it does not start beside the last chart's pass.
func AfterCharts(every time.Duration, n, part int) Schedule {
	slot := every / slots(n)
	return Schedule{Every: every, Offset: every - slot + slot/time.Duration(part), Step: slot}
}

// Next is the first slot strictly after t. Slots are aligned to the Unix
// epoch in UTC, so every process computes the same ones.
func (s Schedule) Next(t time.Time) time.Time {
	return s.Prev(t).Add(s.Every)
}

// Prev is the latest slot at or before t.
func (s Schedule) Prev(t time.Time) time.Time {
	since := t.UTC().Sub(time.Unix(0, 0).UTC().Add(s.Offset))
	k := since / s.Every
	if since < 0 && since%s.Every != 0 {
		k--
	}
	return time.Unix(0, 0).UTC().Add(s.Offset + k*s.Every)
}

// Missed reports whether the latest slot at or before now passed without a
// run that started at or after it: the daemon was down, so the region runs
// once at once on start.
func (s Schedule) Missed(lastStart, now time.Time) bool {
	return lastStart.Before(s.Prev(now))
}
