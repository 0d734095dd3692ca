package sim

import (
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
	return passesHeld(h, "pool's day", func(p ingest.Pool, started time.Time) (time.Time, time.Duration, bool) {
		if p.Day == nil {
			return time.Time{}, 0, false
		}
		day := time.UnixMilli(ingest.DayStarts(p.Day, started)[1])
		return day, started.Sub(day), true
	})
}
