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
	// Region is the region of the chart pass that spent them (the
	// daemon's, a run --once's); "" for a backfill's (one-off, a spend of
	// this worker's own), for a call outside a run of a region (tracking,
	// the refresh) and for a spend the pacer counted itself.
	Region string
}

// Horizon is how far a pool's plan reaches from now before it is made
// again: to the pool's next day start (the upstream's reset) for a pool
// with a day, over its window for one without.
func Horizon(pool ingest.Pool, now time.Time) time.Duration {
	if pool.Day == nil {
		return pool.Window
	}
	return time.UnixMilli(ingest.DayStarts(pool.Day, now)[2]).Sub(now)
}

// Sustainable is the rate, in units a second, that the pool holds forever
// against every limit it has at once: its capacity less slack over its
// window, and over the current calendar day when it has one (25 hours on
// the day the clocks go back). Spent at that rate, no trailing window and
// no day ever holds more than the capacity, so the reset is never a
// reason to spend faster and the window is never full when a day begins.
func Sustainable(pool ingest.Pool, now time.Time, slack float64) float64 {
	span := pool.Window
	if pool.Day != nil {
		d := ingest.DayStarts(pool.Day, now)
		span = max(span, time.Duration(d[2]-d[1])*time.Millisecond)
	}
	if span <= 0 {
		return 0
	}
	return max(float64(pool.Capacity())-slack, 0) / span.Seconds()
}

// Holds is the rate, in units a second, at which the pool keeps what it
// keeps: its capacity less slack over the longer of its window and a day
// of 24 hours, whatever the length of the current calendar day. A day of
// 23 or 25 hours moves the rate the day spends at (Sustainable), never
// what the pool keeps: a 25-hour day drops no region it keeps on the
// others, for a day or more, to save the pool's 25th hour
// (docs/explanation/pacing.md: what a day is).
func Holds(pool ingest.Pool, slack float64) float64 {
	span := max(pool.Window, 24*time.Hour)
	if pool.Day == nil {
		span = pool.Window
	}
	if span <= 0 {
		return 0
	}
	return max(float64(pool.Capacity())-slack, 0) / span.Seconds()
}

// beside is what a plan's budget leaves for, beside its entries' passes,
// in a pool (budgetBeside).
type beside struct {
	// outside reports whether a spend of this worker's was a co-tenant's
	// (a chart pass of a region the entries are not); nil when none was.
	outside func(Spent) bool
	// rate is, in units a second, what this worker's database spends in
	// a co-tenant's chart passes (a run --once of other charts beside the
	// daemon) over the pool's last window, which the plan counts on going
	// on: the sustainable rate and the day's are what is left beside it.
	rate float64
	// least is the least room, in units, the constant rate counts the
	// window as having: a round of the regions' own charts, whose passes
	// find no room at a slot wait there for it (fits), so that a full
	// window this moment (a co-tenant's, a burst's) never plans the
	// entries to nothing. A window with that room is read as it is, and
	// what the plan leaves is room it has (a backfill's share).
	least float64
}

// own is mine less the co-tenant's spend.
func (o beside) own(mine []Spent) []Spent {
	if o.outside == nil {
		return mine
	}
	var out []Spent
	for _, s := range mine {
		if !o.outside(s) {
			out = append(out, s)
		}
	}
	return out
}

// budgetBeside is the rate this worker may spend at in a pool, and what that
// rate spends by the horizon, from the limiter's state of the pool and
// this worker's own spend in its window (mine: its ledger's calls), with
// what the plan leaves beside its entries' passes taken out (beside).
//
// The rate is the lowest of three: the pool's sustainable rate (less
// slack, the room a plan of whole passes needs over its average); the
// largest constant rate that never asks the window for units it does not
// have yet (what remains now, plus this worker's own spend as it leaves
// the window); and, for a pool with a day, what the day has left over
// what is left of it. Each is this worker's share of the pool (Share):
// the workers that spend in it then plan no more than it holds between
// them. A blocked pool, or a limiter waiting for lost data, has nothing
// until it ends.
//
// What a co-tenant spent frees room as it leaves the window for the
// co-tenant, which spends it again, not for the entries: the constant
// rate is read from this worker's own spend leaving.
func budgetBeside(st ingest.PoolState, pool ingest.Pool, now time.Time, mine []Spent, slack float64, o beside) Budget {
	b := Budget{Pool: st.Pool, Horizon: Horizon(pool, now), Share: Share(st)}
	if until := latest(st.BlockedUntil, st.WaitUntil); until.After(now) {
		b.Horizon = until.Sub(now)
		return b
	}
	if b.Horizon <= 0 {
		return b
	}
	share := b.Share
	capacity := float64(pool.Capacity())
	rate := share*Sustainable(pool, now, slack) - o.rate
	b.Keep = share * Holds(pool, slack)
	rate = min(rate, safeRate(max(share*max(capacity-float64(st.Used), 0), o.least), pool.Window, now, o.own(mine)))
	if pool.Day != nil {
		rate = min(rate, share*max(capacity-float64(st.UsedDay), 0)/b.Horizon.Seconds()-o.rate)
	}
	b.Rate = max(rate, 0)
	b.Units = b.Rate * b.Horizon.Seconds()
	return b
}

// safeRate is the largest constant rate, in units a second, that never
// spends more than remaining plus what of mine has left the window by then,
// at any moment of the next window. It is lowest just before one of mine
// leaves, or at the window's end.
func safeRate(remaining float64, window time.Duration, now time.Time, mine []Spent) float64 {
	horizon := window
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

// Share is the part of a pool a worker counts on: 1/N, N this worker and
// each worker of another database the limiter saw spend in the pool's
// window (PoolState.Others). A worker's own spends, whichever process of
// its database made them and those in flight, are never another's: the
// limiter tells workers apart by their databases' ledgers, not by units.
func Share(st ingest.PoolState) float64 {
	return 1 / float64(1+max(st.Others, 0))
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
