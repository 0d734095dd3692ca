package fakeyt

import "time"

// The upstream counts its quota by the day: a bucket spent is refused
// until the next midnight of the project's zone (Pacific, whose days are
// 23 and 25 hours long when its clocks change), then counted from
// nothing. SetQuotaDay makes the fake's caps (SetBucketQuota) do so.

// quotaDay is the calendar day the caps count, when they count one: its
// zone, the start of the day counted, and each key's charge per bucket
// when that day began for it.
type quotaDay struct {
	loc   *time.Location
	start time.Time
	base  map[string]map[string]int64
}

// SetQuotaDay makes every cap count what a key was charged since the last
// midnight of loc by the host's clock (time.Now, which a test's bubble
// makes virtual): a bucket spent is refused until that zone's next
// midnight, as the upstream does. nil counts the fake's lifetime again.
func (f *Fake) SetQuotaDay(loc *time.Location) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.day = quotaDay{loc: loc}
}

// today is key's charge per bucket since its day began, from before, its
// charge over the fake's lifetime. The caller holds f.mu.
func (f *Fake) today(key string, before map[string]int64) map[string]int64 {
	d := &f.day
	if d.loc == nil {
		return before
	}
	l := time.Now().In(d.loc)
	if start := time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, d.loc); !start.Equal(d.start) {
		d.start, d.base = start, map[string]map[string]int64{}
	}
	base, ok := d.base[key]
	if !ok {
		// the key's first call of the day: what it was charged before
		// was charged on an earlier day
		d.base[key] = before
		return map[string]int64{}
	}
	out := make(map[string]int64, len(before))
	for bucket, n := range before {
		out[bucket] = n - base[bucket]
	}
	return out
}
