package sim

import (
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// checkRoomInDay: paced, a pass starts only where the pool's day holds it
// too, as checkRoomAtStart holds its window: a pool with a calendar day
// counts both, and a pass that finds no room at its slot waits there for
// it (docs/explanation/pacing.md), so one started on a spent day is
// stopped midway by the limiter, its slot spent. At each of the daemon's
// chart passes, the pool's limit less reserve, less what the fake charged
// in the pool's calendar day before that instant, holds the chart's pass
// and, for a category chart, a round of the own charts after it, each
// counted as checkRoomAtStart counts it. The day is read from a second
// and the upstream's latency past its midnight, so that a call the
// limiter admitted the day before is not counted in it; what the limiter
// may have counted short (a wrong Date, a loss) is let be as there.
func checkRoomInDay(h *History) []string {
	if h.NoPace {
		return nil
	}
	pages, cats, dropped := h.fewestPages(), h.fewestCategoryPages(), h.ownDroppedAt()
	calls := inTime(h.Calls)
	var out []string
	for _, pool := range h.Costs.Pools {
		per := h.pageUnits(pool.Name)
		if per == 0 || pool.Day == nil {
			continue
		}
		var round int64
		for _, c := range h.Charts {
			round += pages[c.Code] * per
		}
		var short []string
		n := 0
		for _, r := range h.Runs {
			need := pages[r.Region] * per
			if r.Category != "" {
				need = round + cats[chartName(r.Region, r.Category)]*per
			}
			day := time.UnixMilli(ingest.DayStarts(pool.Day, r.Started)[1])
			if h.beside(r) || h.peers(r) || (r.Category != "" && dropped(r.Started)) || h.limiterBehind(r.Started, r.Started.Sub(day)) {
				continue
			}
			n++
			used := calls.chargedBefore(pool.Name, day.Add(h.Latency+time.Second), r.Started)
			if left := pool.Capacity() - used; left < need {
				short = append(short, fmt.Sprintf("%s at %s with %d left of the %d it needs", chartName(r.Region, r.Category), r.Started.UTC().Format(time.RFC3339), left, need))
			}
		}
		if len(short) > 0 {
			out = append(out, fmt.Sprintf("pool %s: %d of %d chart passes started where the pool's day did not hold them (a category chart: and a round of the regions' own charts after it): %s",
				pool.Name, len(short), n, firstFew(short)))
		}
	}
	return out
}
