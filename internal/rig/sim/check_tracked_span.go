package sim

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/ingestworks/ingest"
)

// checkTrackedInSpan: tracking reads the counts of the videos a chart
// showed in the last --track-for (docs/data.md, "View tracking"), by
// what the upstream
// answered: each of the daemon's batchGetStats calls asks, first of its
// batch, a video some chart page the upstream answered named within
// --track-for before the call, and a slot of --track-every and the
// delivery bound more (a pass reads the span at its start, a page is
// stored after its answer). A tracking that never lets a video go spends
// the stats pool on counts nobody charted, and more every week.
func checkTrackedInSpan(h *History) []string {
	if h.TrackFor <= 0 {
		return nil
	}
	charted := map[string][]time.Time{}
	for _, c := range h.Calls {
		if c.Kind == KindChart && c.Status == http.StatusOK {
			for _, id := range c.IDs {
				charted[id] = append(charted[id], c.At)
			}
		}
	}
	span := h.TrackFor + h.TrackEvery + ingest.Delivery
	var late []string
	n := 0
	for _, c := range h.Calls {
		if c.Kind != KindStats || c.Worker != WorkerDaemon || c.First == "" {
			continue
		}
		n++
		seen := charted[c.First]
		i := sort.Search(len(seen), func(k int) bool { return seen[k].After(c.At) }) // the pages by the call
		switch {
		case i == 0:
			late = append(late, fmt.Sprintf("%s at %s, never charted before", c.First, c.At.UTC().Format(time.RFC3339)))
		case c.At.Sub(seen[i-1]) > span:
			late = append(late, fmt.Sprintf("%s at %s, last charted %s before", c.First, c.At.UTC().Format(time.RFC3339), c.At.Sub(seen[i-1]).Round(time.Minute)))
		}
	}
	if len(late) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("tracking: %d of %d calls asked first for a video no chart showed within --track-for %s (and a slot): %s",
		len(late), n, h.TrackFor, firstFew(late))}
}
