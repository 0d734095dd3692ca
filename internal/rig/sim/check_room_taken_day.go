package sim

import (
	"time"

	"github.com/ingestworks/ingest"
)

// dayRoom is a pool's calendar day as checkRoomTaken reads it: a pool
// with a day frees room for a waiting pass only where its day holds the
// pass too, and its day frees room at its reset, not as the window
// slides. A pool without a day (its Day nil) always holds it.
type dayRoom struct {
	pool    ingest.Pool
	latency time.Duration
	calls   callsInTime
}

// holds reports whether the pool's day at t leaves need units: its limit
// less reserve, less what the fake charged in it up to t. The day is read
// from a second and the upstream's latency before its midnight, so that a
// call the limiter admitted at the midnight itself, which the new day
// counts, is counted: the rule claims room only where the day surely has
// it.
func (d dayRoom) holds(need int64, t time.Time) bool {
	if d.pool.Day == nil {
		return true
	}
	day := time.UnixMilli(ingest.DayStarts(d.pool.Day, t)[1]).Add(-d.latency - time.Second)
	return d.pool.Capacity()-d.calls.chargedBefore(d.pool.Name, day, t.Add(time.Nanosecond)) >= need
}

// resets are the moments in (from, to) at which the pool's day frees its
// room: a second and the upstream's latency past each midnight.
func (d dayRoom) resets(from, to time.Time) []time.Time {
	if d.pool.Day == nil {
		return nil
	}
	var out []time.Time
	for t := from; t.Before(to); {
		next := time.UnixMilli(ingest.DayStarts(d.pool.Day, t)[2])
		if at := next.Add(d.latency + time.Second); at.Before(to) {
			out = append(out, at)
		}
		t = next
	}
	return out
}

// window is the pool's trailing window, zero for a pool the costs do not
// name.
func (h *History) window(pool string) time.Duration {
	for _, p := range h.Costs.Pools {
		if p.Name == pool {
			return p.Window
		}
	}
	return 0
}
