package sim

import (
	"fmt"
	"time"
)

// stallAnswer is how long after a stall of the Redis the worker may still
// be admitting calls unmetered: the decision it gave up on, and those of
// passes beside it that met the same outage, are at the stall's moment,
// as virtual time stands still while the server is stopped.
const stallAnswer = time.Second

// checkFailOpen: a call goes ahead unmetered only while the limiter cannot
// be reached, only in a pool whose fail_open allows its cost, and a
// database's unmetered units in a pool stay within the pool's budget over
// any trailing window (docs/explanation/quota.md, "While Redis cannot be
// reached"). The simulation's limiter is unreachable only during the
// Redis's stalls and at a decision whose connection was cut; the embedded
// limiter never is.
func checkFailOpen(h *History) []string {
	var out []string
	for _, pool := range h.Costs.Pools {
		for _, peer := range []bool{false, true} {
			var rows []Entry
			for _, e := range h.Ledger {
				if e.Unmetered && e.Pool == pool.Name && e.Peer == peer && e.Units > 0 {
					rows = append(rows, e)
				}
			}
			who := "the daemon's database"
			if peer {
				who = "the other worker's database"
			}
			out = append(out, unmeteredOutOfPolicy(h, pool.Name, pool.FailOpen.MaxCost, pool.FailOpen.Budget, pool.Window, rows, who)...)
		}
	}
	return out
}

// unmeteredOutOfPolicy is what rows, one database's unmetered calls in a
// pool, break of the pool's fail_open: a call outside every stall, a call
// dearer than maxCost (zero: the pool is closed), units over budget in a
// window.
func unmeteredOutOfPolicy(h *History, pool string, maxCost, budget int64, window time.Duration, rows []Entry, who string) []string {
	var out []string
	for _, e := range rows {
		at := e.At.UTC().Format(time.RFC3339Nano)
		switch {
		case maxCost == 0:
			out = append(out, fmt.Sprintf("%s admitted a call unmetered in pool %s at %s, whose fail_open keeps it closed", who, pool, at))
		case e.Units > maxCost:
			out = append(out, fmt.Sprintf("%s admitted a call of %d units unmetered in pool %s at %s, over its fail_open max_cost %d", who, e.Units, pool, at, maxCost))
		case !h.inStall(e.At):
			out = append(out, fmt.Sprintf("%s admitted a call unmetered in pool %s at %s, when the limiter could be reached", who, pool, at))
		}
	}
	var sum int64
	lo := 0
	for _, e := range rows {
		sum += e.Units
		for !rows[lo].At.After(e.At.Add(-window)) {
			sum -= rows[lo].Units
			lo++
		}
		if sum > budget && maxCost > 0 {
			return append(out, fmt.Sprintf("%s took %d units unmetered in pool %s in the window ending %s, over its fail_open budget %d",
				who, sum, pool, e.At.UTC().Format(time.RFC3339), budget))
		}
	}
	return out
}

// inStall reports whether t is within stallAnswer of a stall of the Redis.
func (h *History) inStall(t time.Time) bool {
	for _, s := range h.Stalls {
		if !t.Before(s) && !t.After(s.Add(stallAnswer)) {
			return true
		}
	}
	return false
}
