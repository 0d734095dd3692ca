package sim

import (
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// checkTrackingStored: tracking stores the counts it reads (the
// statistics' time series, docs/contract.md), so a pass of it fails only
// for what the daemon cannot help, as the refresh does: the upstream
// failing, refusing or sending a wrong Date, or the disk full, while it
// ran (within its slot). A pass that fails otherwise spent the stats
// pool's units on counts it did not keep.
func checkTrackingStored(h *History) []string {
	var failed []time.Time
	for _, p := range h.Passes {
		if p.Entry == "track" && p.Status == ingest.StatusFailed && !h.failingIn(Interval{p.Started, p.Started.Add(h.TrackEvery)}) {
			failed = append(failed, p.Started)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("track: %d passes failed with the upstream answering and the disk not full (first at %s): the counts they paid for were not kept",
		len(failed), failed[0].UTC().Format(time.RFC3339))}
}
