package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// spentBy is a default pool of 10 units over six hours and each Pacific
// day, spent by ten chart pages the upstream charged at at, and the
// daemon's log saying a pass stopped at refused with retry_at told (zero:
// none).
func spentBy(t *testing.T, at, refused, told time.Time) *History {
	h := &History{Config: Config{Shape: scarceOver(t, 12, 2, 6*time.Hour), Start: t0}, Log: filepath.Join(t.TempDir(), "daemon.log")}
	for i := range 10 {
		h.Calls = append(h.Calls, Call{Sent: at, At: at, Worker: WorkerDaemon, Path: "/youtube/v3/videos", Kind: KindChart, Region: "US",
			Status: 200, Charged: map[string]int64{"default": int64(i + 1)}})
	}
	line := "time=" + refused.UTC().Format(time.RFC3339Nano) + " level=INFO msg=pass region=US status=stopped pages=0 videos=0 units=0 remaining=0 duration=0s "
	if !told.IsZero() {
		line += "retry_at=" + told.UTC().Format(time.RFC3339) + " "
	}
	line += "detail=\"quota refused videos.list\"\n"
	if err := os.WriteFile(h.Log, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestCheckHoldsARetryToWhenThePoolsHoldTheCallAgain(t *testing.T) {
	// spent the Pacific day before (it ends at 07:00 UTC), the window
	// frees the call six hours and a delivery bound after the pages
	spent, refused := t0.Add(6*time.Hour), t0.Add(8*time.Hour)
	window := spent.Add(6*time.Hour + 20*time.Second)
	if f := checkFreeTimes(spentBy(t, spent, refused, window)); len(f) != 0 {
		t.Fatalf("told the window's end: %q", f)
	}
	dayEnd := time.Date(2026, 10, 26, 7, 0, 0, 0, time.UTC)
	f := checkFreeTimes(spentBy(t, spent, refused, dayEnd))
	if len(f) != 1 || !strings.Contains(f[0], "1 of 1 retry times the daemon logged for a refused call are not when the pools hold it again: videos.list refused at 2026-10-25T08:00:00Z, told to retry at 2026-10-26T07:00:00Z, where the upstream's charges hold it again at 2026-10-25T12:00:20Z") {
		t.Errorf("told the day's end where the window frees sooner: %q", f)
	}
	// spent this Pacific day, whose window frees first: the day's end
	spent, refused = t0.Add(7*time.Hour+30*time.Minute), t0.Add(14*time.Hour)
	if f := checkFreeTimes(spentBy(t, spent, refused, dayEnd)); len(f) != 0 {
		t.Fatalf("told the day's end: %q", f)
	}
	f = checkFreeTimes(spentBy(t, spent, refused, time.Time{}))
	if len(f) != 1 || !strings.Contains(f[0], "told to retry at null, where the upstream's charges hold it again at 2026-10-26T07:00:00Z") {
		t.Errorf("no time told for a spent day: %q", f)
	}
	// refused by the upstream before its day was spent: its reset
	h := spentBy(t, spent, refused, dayEnd)
	h.Calls = h.Calls[:5]
	h.Calls[4].Status = 403
	if f := checkFreeTimes(h); len(f) != 0 {
		t.Fatalf("told the reset after the upstream's refusal: %q", f)
	}
}

func TestCheckHoldsFreeAtOnTheOperatorsAPIToTheCharges(t *testing.T) {
	spent, read := t0.Add(6*time.Hour), t0.Add(8*time.Hour)
	h := spentBy(t, spent, read, spent.Add(6*time.Hour+20*time.Second))
	look := func(free map[string]time.Time) []string {
		h.Operator = []OperatorRead{{At: read, Answered: read, Free: free}}
		return checkFreeTimes(h)
	}
	if f := look(map[string]time.Time{"default": spent.Add(6*time.Hour + 20*time.Second), "search": {}, "stats": {}}); len(f) != 0 {
		t.Fatalf("free_at the window's end, null for pools with room: %q", f)
	}
	f := look(map[string]time.Time{"default": {}, "search": {}, "stats": time.Date(2026, 10, 26, 7, 0, 0, 0, time.UTC)})
	if len(f) != 1 || !strings.Contains(f[0], "2 of 3 pools' free_at on /api/v1/quota are not when the pool holds its dearest call again: pool default read at 2026-10-25T08:00:00Z: free_at null, where the upstream's charges hold its dearest call again at 2026-10-25T12:00:20Z; pool stats read at 2026-10-25T08:00:00Z: free_at 2026-10-26T07:00:00Z, where the upstream's charges hold its dearest call again now (room)") {
		t.Errorf("null for a full pool, the day's end for one with room: %q", f)
	}
}

func TestCheckFindsAnOwnPoolSpentPastItsLimit(t *testing.T) {
	h := &History{Config: Config{Shape: scarceTwoPools(t, 300, 50, 6*time.Hour, 12, 2, 3*time.Hour), Start: t0, Exhaust: true}}
	page := func(at time.Time) Call {
		return Call{Sent: at, At: at, Worker: WorkerDaemon, Path: "/youtube/v3/videos", Kind: KindChart, Region: "US", Status: 200}
	}
	for i := range 10 {
		h.Calls = append(h.Calls, page(t0.Add(time.Duration(i)*time.Minute)))
	}
	if f := checkOwnPools(h); len(f) != 0 {
		t.Fatalf("ten pages in trending's ten: %q", f)
	}
	// the eleventh within the window: trending counted past its limit
	h.Calls = append(h.Calls, page(t0.Add(2*time.Hour)))
	f := checkOwnPools(h)
	if len(f) != 1 || !strings.Contains(f[0], "pool trending (costs.yaml's own): the calls that reached the upstream drew 11 units in the 3h0m0s to 2026-10-25T02:00:00Z, over its limit less reserve (10)") {
		t.Errorf("eleven in the window: %q", f)
	}
	// past the window, the first pages have left it
	h.Calls[10] = page(t0.Add(3*time.Hour + 30*time.Second))
	if f := checkOwnPools(h); len(f) != 0 {
		t.Errorf("the eleventh after the first left the window: %q", f)
	}
	// a workload meant to spend it that never came near
	h.Calls = h.Calls[:3]
	if f := checkOwnPools(h); len(f) != 1 || !strings.Contains(f[0], "its limit was never reached") {
		t.Errorf("three of ten: %q", f)
	}
}
