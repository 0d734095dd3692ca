package sim

import (
	"strings"
	"testing"
	"time"
)

// A decision cut at 10:00 was run by Redis (call 7) and given back; the
// worker went ahead unmetered (call u). Redis counting only u holds; a
// client that sent the decision again has Redis count 7 and 8, the ledger
// 8 alone: 7 is found. A look that saw nothing, or none, checked nothing.
func TestCheckFindsADecisionCountedTwiceAfterACut(t *testing.T) {
	at := t0.Add(10 * time.Hour)
	h := history(hourly(24, 1), nil, 5)
	if f := checkCutsCountedOnce(h); len(f) != 0 {
		t.Fatalf("no cut in the shape: %q", f)
	}
	h.RedisCuts = 1
	ms := "1761386400000"
	h.Ledger = []Entry{
		{Pool: "default", Units: 1, At: at, CallID: ms + "-7", GivenBack: true},
		{Pool: "default", Units: 1, At: at, CallID: ms + "-u00000004", Unmetered: true},
	}
	h.CutLooks = []CutLook{{At: at, Counted: map[string][]string{"default": {ms + "-4503599627370500"}}}}
	if f := checkCutsCountedOnce(h); len(f) != 0 {
		t.Fatalf("the cut decision given back, its call unmetered: %q", f)
	}
	h.Ledger = []Entry{{Pool: "default", Units: 1, At: at, CallID: ms + "-8"}}
	h.CutLooks[0].Counted["default"] = []string{ms + "-7", ms + "-8"}
	f := checkCutsCountedOnce(h)
	if len(f) != 1 || !strings.Contains(f[0], "after a decision's connection was cut at 2026-10-25T10:00:00Z, Redis counts call 1761386400000-7 in pool default, which no ledger holds as spent") {
		t.Errorf("the decision sent again: %q", f)
	}
	h.CutLooks[0].Counted = map[string][]string{}
	if f := checkCutsCountedOnce(h); len(f) != 1 || !strings.Contains(f[0], "the cuts checked nothing") {
		t.Errorf("a look that saw no call: %q", f)
	}
	h.CutLooks = nil
	if f := checkCutsCountedOnce(h); len(f) != 1 || !strings.Contains(f[0], "the shape drew 1 cuts of a decision's connection and read 0 after") {
		t.Errorf("no cut taken: %q", f)
	}
}
