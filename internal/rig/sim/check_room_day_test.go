package sim

import (
	"strings"
	"testing"
)

// US a page hourly on a default pool of units a day over a window of 6
// hours: the window always holds a pass, the day holds only the first
// units of them, the pass at its midnight read as the day before's
// (the limiter may have admitted it then); paced only.
func TestCheckFindsAPassStartedOnASpentDay(t *testing.T) {
	day := func(units int) *History {
		h := history(hourly(24, 1), nil, 1)
		for i := range h.Runs {
			h.Runs[i].Pages = 1
		}
		h.Costs = poolCosts(t, units, "6h")
		return h
	}
	if f := checkRoomInDay(day(24)); len(f) != 0 {
		t.Errorf("24 pages a day on a day of 24: %q", f)
	}
	h := day(20)
	if f := checkRoomAtStart(h); len(f) != 0 {
		t.Errorf("the window of 6 hours holds every pass: %q", f)
	}
	if f := checkRoomInDay(h); len(f) != 1 || !strings.Contains(f[0], "pool default: 3 of 24 chart passes started where the pool's day did not hold them") ||
		!strings.Contains(f[0], "US at 2026-10-25T21:00:00Z with 0 left of the 1 it needs") {
		t.Errorf("24 pages a day on a day of 20: %q", f)
	}
	h.NoPace = true
	if f := checkRoomInDay(h); len(f) != 0 {
		t.Errorf("--pace=false: %q", f)
	}
}
