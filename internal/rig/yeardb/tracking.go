package yeardb

import (
	"hash/fnv"
	"math"
	"time"

	"github.com/ingestworks/ingest"
)

// trackBudget is the stats units a day the daemon's tracking plans on by
// default: the shipped stats pool's day.
const trackBudget = 10_000

// due is the videos of charted the daemon's hourly tracking reads at at,
// by the rule of jobs.Cadence, written again here so that the builder
// never imports the job layer it measures: a video at every run when its
// best region (the lowest tier it charted in) is tier 1, at every Nth for
// tier N, which run fixed by its id; every period stretched by the
// smallest whole factor that fits the budget.
func (b *builder) due(charted []ingest.Charted, at time.Time) []string {
	periods := make([]int64, len(charted))
	var reads float64
	for i, v := range charted {
		best := 0
		for _, r := range v.Regions {
			if t := max(b.tiers[r], 1); best == 0 || t < best {
				best = t
			}
		}
		periods[i] = int64(max(best, 1))
		reads += 24 / float64(periods[i])
	}
	if units := math.Ceil(reads / trackBatch); units > trackBudget {
		stretch := int64(math.Ceil(units / trackBudget))
		for i := range periods {
			periods[i] *= stretch
		}
	}
	run := at.UnixNano() / int64(time.Hour)
	var ids []string
	for i, v := range charted {
		h := fnv.New32a()
		h.Write([]byte(v.ID))
		if periods[i] <= 1 || (run+int64(h.Sum32()))%periods[i] == 0 {
			ids = append(ids, v.ID)
		}
	}
	return ids
}
