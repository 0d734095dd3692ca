package sim

import (
	"slices"
	"sort"
	"time"
)

// callsInTime are the upstream's calls and whether they are in the order
// of their times, as the upstream keeps them (a history made by hand may
// not be). In order, the calls of a span are found by a search, where a
// walk from the first call for every run or read went over the whole
// history again; out of order, they are walked as before.
type callsInTime struct {
	calls  []Call
	sorted bool
}

func inTime(calls []Call) callsInTime {
	return callsInTime{calls, slices.IsSortedFunc(calls, func(a, b Call) int { return a.At.Compare(b.At) })}
}

// until is how many calls lead up to t: those before the first call not
// before t.
func (c callsInTime) until(t time.Time) int {
	if c.sorted {
		return sort.Search(len(c.calls), func(i int) bool { return !c.calls[i].At.Before(t) })
	}
	for i, call := range c.calls {
		if !call.At.Before(t) {
			return i
		}
	}
	return len(c.calls)
}

// chargedBefore is what the fake charged pool after from and before to:
// the count of the last call before to less that of the last one by from
// among them.
func (c callsInTime) chargedBefore(pool string, from, to time.Time) int64 {
	k := c.until(to)
	j := -1
	if c.sorted {
		j = sort.Search(k, func(i int) bool { return c.calls[i].At.After(from) }) - 1
	} else {
		for i, call := range c.calls[:k] {
			if !call.At.After(from) {
				j = i
			}
		}
	}
	var lo, hi int64
	if j >= 0 {
		lo = c.calls[j].Charged[pool]
	}
	if k > 0 {
		hi = c.calls[k-1].Charged[pool]
	}
	return hi - lo
}

// chargedIn is what the upstream charged pool ("" every pool) for the
// calls it answered from from to before to, and that keep says belong.
func (c callsInTime) chargedIn(pool string, from, to time.Time, keep func(Call) bool) int64 {
	calls := c.calls
	if c.sorted {
		calls = calls[c.until(from):c.until(to)]
	}
	var n int64
	for _, call := range calls {
		if call.At.Before(from) || !call.At.Before(to) || (keep != nil && !keep(call)) {
			continue
		}
		for _, ch := range chargeOf(call) {
			if pool == "" || ch.Pool == pool {
				n += ch.Units
			}
		}
	}
	return n
}
