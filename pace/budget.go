package pace

import (
	"sort"
	"time"

	"github.com/ingestworks/ingest"
)

// Spent is units this worker spent in a pool at a time: when they leave
// the pool's window, they can be spent again.
type Spent struct {
	At    time.Time
	Units int64
}

// Horizon is how far a pool's plan reaches from now: to the pool's next
// day start (the upstream's reset) for a pool with a day, over its window
// for one without.
func Horizon(pool ingest.Pool, now time.Time) time.Duration {
	if pool.Day == nil {
		return pool.Window
	}
	return time.UnixMilli(ingest.DayStarts(pool.Day, now)[2]).Sub(now)
}

// BudgetOf is what this worker may spend in a pool until the horizon,
// from the limiter's state of the pool (its Remaining already leaves the
// reserve out) and this worker's own recent spend there (mine, oldest
// first).
//
// The constant rate it allows never asks the limiter for units that are
// not there yet: at every moment of the horizon, what the rate spent by
// then is at most what remains now plus what of this worker's own spend
// has left the window by then. When another worker spends in the pool
// (its use beyond this worker's), this worker counts on half of the room
// left now and of the day's, and on all of its own spend as it leaves the
// window: two workers on one key then plan no more than the pool has
// between them, and a newcomer always gets a share. A blocked pool, or a
// limiter waiting for lost data, has nothing until it ends.
func BudgetOf(st ingest.PoolState, pool ingest.Pool, now time.Time, mine []Spent) Budget {
	b := Budget{Pool: st.Pool, Horizon: Horizon(pool, now)}
	if until := latest(st.BlockedUntil, st.WaitUntil); until.After(now) {
		b.Horizon = until.Sub(now)
		return b
	}
	if b.Horizon <= 0 {
		return b
	}
	room, today := float64(st.Remaining), float64(max(pool.Capacity()-st.UsedDay, 0))
	if others(st, pool.Window, now, mine) > 0 {
		room, today = room/2, today/2
	}
	rate := safeRate(room, pool.Window, b.Horizon, now, mine)
	if pool.Day != nil {
		rate = min(rate, today/b.Horizon.Seconds())
	}
	b.Units = rate * b.Horizon.Seconds()
	return b
}

// safeRate is the largest constant rate, in units a second, that never
// spends more than remaining plus what of mine has left the window by then,
// at any moment up to horizon. It is lowest just before one of mine
// leaves, or at the horizon.
func safeRate(remaining float64, window, horizon time.Duration, now time.Time, mine []Spent) float64 {
	sort.Slice(mine, func(i, j int) bool { return mine[i].At.Before(mine[j].At) })
	freed := remaining
	rate := -1.0
	for _, s := range mine {
		leaves := s.At.Add(window).Sub(now)
		if leaves <= 0 {
			continue // out of the window already: the limiter counts it in remaining
		}
		if leaves > horizon {
			break
		}
		if r := freed / leaves.Seconds(); rate < 0 || r < rate {
			rate = r
		}
		freed += float64(s.Units)
	}
	if r := freed / horizon.Seconds(); rate < 0 || r < rate {
		rate = r
	}
	return max(rate, 0)
}

// others is what other workers spent in the pool's window: its use beyond
// this worker's own.
func others(st ingest.PoolState, window time.Duration, now time.Time, mine []Spent) int64 {
	own := int64(0)
	for _, s := range mine {
		if s.At.After(now.Add(-window)) {
			own += s.Units
		}
	}
	return max(st.Used-own, 0)
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
