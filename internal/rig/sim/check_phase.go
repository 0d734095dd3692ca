package sim

import (
	"fmt"
	"time"

	"github.com/ingestworks/ingest/regions"
)

// afterCharts are the entries docs/data.md places in the last region's
// slot of each period, after the chart passes, and how far into it: the
// prune a quarter, tracking its middle. A slot of theirs elsewhere starts
// beside a chart's pass, or before the charts it follows.
var afterCharts = []struct {
	entry string
	part  int
}{{"prune", 4}, {"track", 2}}

// checkAfterCharts: every pass of the prune and of tracking credited to a
// slot ran for one where docs/data.md says, and not before it: once a
// period (--every for the prune, --track-every for tracking), the period's
// last stagger step in, a quarter (the prune) or a half (tracking) into
// that step. The step is the period over the charts' slots, at least the
// default regions' (regions.Stagger), computed here from --regions and
// --every, not read from the schedule. A slot is held at the grain the
// runs table keeps it, the millisecond.
func checkAfterCharts(h *History) []string {
	slots := time.Duration(max(len(h.Charts)*len(h.categories()), len(regions.Default)))
	var out []string
	for _, a := range afterCharts {
		every := h.Every
		if a.entry == "track" {
			every = h.TrackEvery
		}
		if every <= 0 {
			continue
		}
		step := every / slots
		phase := every - step + step/time.Duration(a.part)
		// a run's slot is stored to the millisecond, cut down
		stored := phase.Truncate(time.Millisecond)
		var wrong []string
		for _, p := range h.Passes {
			if p.Entry != a.entry || p.Slot.IsZero() {
				continue
			}
			if got := p.Slot.Sub(time.Unix(0, 0)) % every; got != stored || p.Started.Before(p.Slot) {
				wrong = append(wrong, fmt.Sprintf("%s (started %s), %s into its period", p.Slot.UTC().Format(time.RFC3339),
					p.Started.UTC().Format(time.TimeOnly), got))
			}
		}
		if len(wrong) > 0 {
			out = append(out, fmt.Sprintf("%s: %d passes ran for a slot other than %s into each period of %s (the last of %d slots, 1/%d into it: docs/data.md): %s",
				a.entry, len(wrong), phase, every, slots, a.part, firstFew(wrong)))
		}
	}
	return out
}
