package sim

import (
	"strings"
	"testing"
	"time"
)

func TestCheckFindsAChartsSlotsNotServedOnMetrics(t *testing.T) {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	h.Plans = []PlanRead{{At: t0.Add(time.Hour), Units: map[string]int64{}, Slots: map[string]time.Duration{"US": time.Hour}}}
	if f := checkSlotsServed(h); len(f) != 0 {
		t.Fatalf("the chart's slots served: %q", f)
	}
	h.Plans[0].Slots = map[string]time.Duration{"refresh": time.Hour, "track": 5 * time.Minute}
	f := checkSlotsServed(h)
	if len(f) != 2 || !strings.Contains(f[0], "names no slots of the charts: US") || !strings.Contains(f[1], "names slots of what is no chart: refresh, track") {
		t.Errorf("the other entries' slots served, not the chart's: %q", f)
	}
	h.Plans[0].Slots = map[string]time.Duration{"US": 2 * time.Hour}
	if f := checkSlotsServed(h); len(f) != 1 || !strings.Contains(f[0], "says the slots of: US at 2h0m0s, not 1h0m0s") {
		t.Errorf("the chart's slots at twice its period: %q", f)
	}
	h.Plans[0].Slots = nil
	if f := checkSlotsServed(h); len(f) != 0 {
		t.Errorf("/metrics not read: %q", f)
	}
}
