package sim

import (
	"fmt"
	"time"
)

// chartLimit is how many entries /api/v1/charts serves when the reader
// names no limit (docs/api.md: the default and the cap).
const chartLimit = 200

// checkChartsWhole: a chart a reader was served at a run that had
// completed holds every video the database keeps for that run at the
// end, as far as the API's default limit reaches. The ranks' rule reads
// only the entries served; a chart served short, a filter the reader
// never asked for applied, or a page of entries left out, passes it. A
// video deleted since is gone from what the database keeps, and a run
// the prune took keeps nothing, so neither is asked for.
func checkChartsWhole(h *History) []string {
	if !h.Readers {
		return nil
	}
	var short []string
	for _, s := range h.Served {
		if s.Down || s.Err != "" || !s.Complete || h.onCopy(s.At) {
			continue
		}
		kept := h.Ranked[s.RunID]
		got := map[string]bool{}
		for _, e := range s.Entries {
			got[e.ID] = true
		}
		missing, first := 0, ""
		for _, e := range kept[:min(len(kept), chartLimit)] {
			if got[e.ID] {
				continue
			}
			if missing == 0 {
				first = fmt.Sprintf("%s at rank %d", e.ID, e.Rank)
			}
			missing++
		}
		if missing > 0 {
			short = append(short, fmt.Sprintf("at %s %s's run %d served %d entries and left out %d the database keeps, %s first",
				s.At.UTC().Format(time.RFC3339), s.Region, s.RunID, len(s.Entries), missing, first))
		}
	}
	if len(short) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("whole charts: %d charts served at a completed run left out videos it holds: %s", len(short), firstFew(short))}
}
