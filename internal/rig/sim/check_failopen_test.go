package sim

import (
	"strings"
	"testing"
	"time"
)

func TestCheckHoldsUnmeteredCallsToTheFailPolicy(t *testing.T) {
	stalled := func() *History {
		h := history(hourly(24, 1), hourly(24, 60), 1)
		h.Stalls = []time.Time{h.Ledger[3].At}
		h.Ledger[3].Unmetered = true
		return h
	}
	if f := Check(stalled()); len(f) != 0 {
		t.Errorf("a call unmetered at a stall of the Redis: %q", f)
	}
	h := stalled()
	h.Stalls = nil
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "the daemon's database admitted a call unmetered in pool default at 2026-10-25T03:00:00Z, when the limiter could be reached") {
		t.Errorf("a call unmetered with no stall: %q", f)
	}
	h = stalled()
	h.Ledger[3].Peer = true
	h.Stalls[0] = h.Stalls[0].Add(-2 * stallAnswer)
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "the other worker's database admitted a call unmetered in pool default at 2026-10-25T03:00:00Z, when") {
		t.Errorf("a call unmetered past the stall's answer: %q", f)
	}
	h = stalled()
	h.Costs.Pools[0].FailOpen.MaxCost = 0
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "whose fail_open keeps it closed") {
		t.Errorf("a call unmetered in a closed pool: %q", f)
	}
	h = stalled()
	h.Ledger[3].Units, h.Calls[3].Charged["default"] = 2, h.Calls[3].Charged["default"]+1
	for i := 4; i < 24; i++ {
		h.Calls[i].Charged["default"]++
	}
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "a call of 2 units unmetered in pool default at 2026-10-25T03:00:00Z, over its fail_open max_cost 1") {
		t.Errorf("a call dearer than max_cost unmetered: %q", f)
	}
	h = stalled()
	h.Costs.Pools[0].FailOpen.Budget = 2
	for i := 4; i < 6; i++ {
		h.Ledger[i].Unmetered = true
		h.Stalls = append(h.Stalls, h.Ledger[i].At)
	}
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "took 3 units unmetered in pool default in the window ending 2026-10-25T05:00:00Z, over its fail_open budget 2") {
		t.Errorf("unmetered units over the budget in a window: %q", f)
	}
}
