package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/regions"
)

// housekeepingPasses are a day of the refresh and the prune at every slot
// of --every 1h, a chart or two among the default regions' eight slots:
// the refresh 3 minutes past each hour, the prune a quarter into the
// hour's last slot (docs/data.md), each hour's refresh first.
func housekeepingPasses() []Pass {
	var out []Pass
	for _, hr := range hourly(24, 1) {
		hour := t0.Add(time.Duration(hr * float64(time.Hour)))
		for _, entry := range housekeeping {
			at := hour.Add(3 * time.Minute)
			if entry == "prune" {
				at = hour.Add(time.Hour - time.Hour/8 + time.Hour/32)
			}
			out = append(out, Pass{Entry: entry, Status: "completed", Started: at, Slot: at})
		}
	}
	return out
}

func TestCheckFindsThePruneOrTrackingAtAnotherSlot(t *testing.T) {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	if f := checkAfterCharts(h); len(f) != 0 {
		t.Fatalf("the prune a quarter into each hour's last slot: %q", f)
	}
	// an eighth into the last slot, as the stagger of four charts and
	// the part of one chart's count would put it
	for i, p := range h.Passes {
		if p.Entry == "prune" && p.Slot.Hour() == 5 {
			h.Passes[i].Slot = p.Slot.Add(-time.Hour / 64)
		}
	}
	f := checkAfterCharts(h)
	if len(f) != 1 || !strings.Contains(f[0], "prune: 1 passes ran for a slot other than 54m22.5s into each period of 1h0m0s") ||
		!strings.Contains(f[0], "2026-10-25T05:53:26Z (started 05:54:22), 53m26.25s into its period") {
		t.Errorf("the prune an eighth into the 5:00 period's last slot: %q", f)
	}
	late := history(hourly(24, 1), hourly(24, 60), 1)
	for i, p := range late.Passes {
		if p.Entry == "prune" && p.Slot.Hour() == 5 {
			late.Passes[i].Started = p.Slot.Add(-time.Second)
		}
	}
	if f := checkAfterCharts(late); len(f) != 1 || !strings.Contains(f[0], "2026-10-25T05:54:22Z (started 05:54:21)") {
		t.Errorf("a prune started before its slot: %q", f)
	}
	// tracking every 5m: the middle of the last of eight slots of 37.5s
	track := history(hourly(24, 1), hourly(24, 60), 1)
	track.TrackEvery = 5 * time.Minute
	at := t0.Add(5*time.Minute - 37500*time.Millisecond + 18750*time.Millisecond)
	track.Passes = append(track.Passes, Pass{Entry: "track", Status: "completed", Started: at, Slot: at})
	if f := checkAfterCharts(track); len(f) != 0 {
		t.Errorf("tracking in the middle of the last slot of 5m: %q", f)
	}
	// every region: 110 slots of an hour, the phase not a whole
	// millisecond; the runs table keeps the slot to the millisecond
	all := history(hourly(24, 1), hourly(24, 60), 1)
	all.Charts = nil
	for i := range 110 {
		all.Charts = append(all.Charts, regions.Chart{Code: fmt.Sprintf("R%d", i)})
	}
	all.Passes = nil
	stored := t0.Add(59*time.Minute + 35454*time.Millisecond)
	all.Passes = append(all.Passes, Pass{Entry: "prune", Status: "completed", Started: stored, Slot: stored})
	if f := checkAfterCharts(all); len(f) != 0 {
		t.Errorf("the prune at every region, its slot as the runs table keeps it: %q", f)
	}
	all.Passes[0].Slot = stored.Add(-time.Millisecond)
	if f := checkAfterCharts(all); len(f) != 1 || !strings.Contains(f[0], "59m35.453s into its period") {
		t.Errorf("the prune at every region a millisecond early: %q", f)
	}
	track.Passes[len(track.Passes)-1].Slot = t0.Add(4 * time.Minute)
	if f := checkAfterCharts(track); len(f) != 1 || !strings.Contains(f[0], "track: 1 passes ran for a slot other than 4m41.25s into each period of 5m0s") {
		t.Errorf("tracking at 4m into its period: %q", f)
	}
}
