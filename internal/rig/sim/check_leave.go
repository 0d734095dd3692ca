package sim

import (
	"fmt"
	"time"
)

// checkLeftRedis: a move off a Redis key that other hosts spent on in the
// window knows their calls or is refused (docs/operations/growing.md,
// "Leaving Redis"). The daemon stopped at the very instant a host new to
// the key spent, and its Redis could not be asked: the seed back with the
// daemon's ledger alone must be refused naming that host, whose calls the
// embedded limiter would spend again; with every host's ledger it moves,
// the host then runs, and the embedded limiter counts each pool's window
// as the upstream charged it, no unit lost, and none counted twice (no more than the
// ledgers admitted and kept, a call exactly a window old among them, as
// the limiter's own edge keeps it).
func checkLeftRedis(h *History) []string {
	lv := h.Leaving
	if lv == nil {
		return nil
	}
	var out []string
	if !namesPeer(lv.Alone, lv.Peer) {
		out = append(out, fmt.Sprintf("at %s, the daemon stopped at the instant a host new to the key spent, the move off Redis with the daemon's ledger alone and the Redis gone was not refused naming that host's ledger %s: %v",
			lv.Stopped.UTC().Format(time.RFC3339), lv.Peer, lv.Alone))
	}
	if lv.Both != nil {
		return append(out, fmt.Sprintf("the move off Redis with every host's ledger failed: %v", lv.Both))
	}
	if lv.Start != nil {
		out = append(out, fmt.Sprintf("moved off Redis with every host's ledger, the host's first run on the embedded limiter failed: %v", lv.Start))
	}
	lk := lv.Look
	for _, p := range h.Costs.Pools {
		charged := windowCharged(h, p.Name, lk.At.Add(-p.Window), lk.At)
		var kept int64
		for _, e := range h.Ledger {
			if e.Pool == p.Name && !e.GivenBack && !e.At.Before(lk.At.Add(-p.Window)) && !e.At.After(lk.At) {
				kept += e.Units
			}
		}
		if used := lk.Used[p.Name]; used < charged || used > kept {
			out = append(out, fmt.Sprintf("at %s, moved off Redis with every ledger, the embedded limiter counted %d units of %s in its window; the upstream charged %d, the ledgers kept %d",
				lk.At.UTC().Format(time.RFC3339), used, p.Name, charged, kept))
		}
	}
	return out
}

// windowCharged is what the upstream charged pool in (from, to]: the fake's
// charges are running totals, a call's the total after it.
func windowCharged(h *History, pool string, from, to time.Time) int64 {
	var before, upTo int64
	for _, c := range h.Calls {
		if !c.At.After(from) {
			before = max(before, c.Charged[pool])
		}
		if !c.At.After(to) {
			upTo = max(upTo, c.Charged[pool])
		}
	}
	return upTo - before
}
