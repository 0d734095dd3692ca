package sim

import (
	"strings"
	"testing"
	"time"
)

func TestCheckFindsTrackingThatFailedWithTheUpstreamAnswering(t *testing.T) {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	for _, m := range hourly(24, 60) {
		h.Passes = append(h.Passes, Pass{Entry: "track", Status: "completed", Started: t0.Add(time.Duration(m * float64(time.Minute)))})
	}
	if f := Check(h); len(f) != 0 {
		t.Fatalf("tracking completed at every slot: %q", f)
	}
	h.Passes[len(h.Passes)-3].Status = "failed" // 21:00
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "track: 1 passes failed with the upstream answering and the disk not full (first at 2026-10-25T21:00:00Z)") {
		t.Errorf("tracking failed at 21:00: %q", f)
	}
	h.Faults = []Fault{{At: t0.Add(21*time.Hour + 30*time.Minute), Calls: 2}}
	if f := Check(h); len(f) != 0 {
		t.Errorf("tracking failed at 21:00, the upstream failing from 21:30, within its slot: %q", f)
	}
}
