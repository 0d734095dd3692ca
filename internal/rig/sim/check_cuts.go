package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// checkCutsCountedOnce: a decision whose reply a cut connection lost is
// counted once, never twice (docs/contract.md: a decision of unknown
// outcome is settled). The worker cannot know whether Redis ran it; sent
// again, it would be run again, and Redis would count a call no worker
// made. So every call Redis counts from a cut's instant to stallAnswer
// after it, read once the worker has settled the decision (cutLook), is
// one a ledger holds as spent and not given back: the decision it gave up
// on is given back in Redis and in its ledger alike. Cuts that were not
// taken, or whose looks saw no call at all, checked nothing.
func checkCutsCountedOnce(h *History) []string {
	if h.RedisCuts == 0 {
		return nil
	}
	held := map[string]bool{}
	for _, e := range h.Ledger {
		if !e.GivenBack {
			held[e.Pool+" "+countedAs(e.CallID)] = true
		}
	}
	var out []string
	seen := 0
	for _, lk := range h.CutLooks {
		for _, p := range h.Costs.Pools {
			for _, id := range lk.Counted[p.Name] {
				seen++
				if !held[p.Name+" "+id] {
					out = append(out, fmt.Sprintf("after a decision's connection was cut at %s, Redis counts call %s in pool %s, which no ledger holds as spent: a call counted that no worker made",
						lk.At.UTC().Format(time.RFC3339Nano), id, p.Name))
				}
			}
		}
	}
	if seen == 0 {
		out = append(out, fmt.Sprintf("the shape drew %d cuts of a decision's connection and read %d after, and Redis counted no call at any: the cuts checked nothing", h.RedisCuts, len(h.CutLooks)))
	}
	return out
}

// unmeteredSeq is where the sequence of an unmetered call written back
// into Redis starts (docs/explanation/limiter.md, "Call ids name their
// limiter").
const unmeteredSeq = 1 << 52

// countedAs is the id Redis's log counts a ledger's call under: its own,
// and for an unmetered call ("<ms>-u<hex>") the same millisecond with its
// random part above every counter.
func countedAs(id string) string {
	ms, r, ok := strings.Cut(id, "-u")
	n, err := strconv.ParseUint(r, 16, 32)
	if !ok || err != nil {
		return id
	}
	return ms + "-" + strconv.FormatInt(unmeteredSeq+int64(n), 10)
}
