package jobs

import (
	"strings"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// What each kind of run costs the upstream, as pacing plans with it until a
// run is measured: the job layer knows what a run calls, pacing only what
// it is told.

// Guess is what one run of the kind costs until one is measured, by pool;
// nil for a kind that spends no quota (pruning). A chart is 200 videos:
// four pages of videos.list. A refresh is one call of videos.list (50
// videos). Tracking is one call of videos.batchGetStats: a first pass
// always runs and is measured, and a dearer one re-plans.
func (k Kind) Guess(costs *ingest.Costs) map[string]float64 {
	switch k {
	case KindChart, KindCategoryChart:
		return guess(costs, ingest.OpVideosList, wholeChart)
	case KindRefresh:
		return guess(costs, ingest.OpVideosList, 1)
	case KindTracking:
		return guess(costs, ingest.OpBatchGetStats, 1)
	}
	return nil
}

// Guess is what one run of the entry costs until one is measured, by
// pool: a chart pass reads its region's depth, the whole chart at most;
// other kinds cost their kind's guess.
func (e Entry) Guess(costs *ingest.Costs) map[string]float64 {
	if e.Kind.charts() && e.Pages > 0 {
		return guess(costs, ingest.OpVideosList, int64(min(e.Pages, wholeChart)))
	}
	return e.Kind.Guess(costs)
}

// wholeChart is the pages of a whole chart.
const wholeChart = regions.MaxDepth / regions.PageSize

// ChartKind is a chart's kind by its name: a region's own chart (US), or a
// category's (US/10).
func ChartKind(chart string) Kind {
	if strings.Contains(chart, "/") {
		return KindCategoryChart
	}
	return KindChart
}

// DailyCost is what the charts spend a day outside their passes, by pool:
// the category names each region's first pass of a day reads (pass.go).
func DailyCost(costs *ingest.Costs, charts []string) map[string]float64 {
	regions := 0
	for _, c := range charts {
		if ChartKind(c) == KindChart {
			regions++
		}
	}
	return guess(costs, ingest.OpCategoriesList, int64(regions))
}

func guess(costs *ingest.Costs, op string, calls int64) map[string]float64 {
	out := map[string]float64{}
	if charges, err := costs.Op(op); err == nil {
		for _, c := range charges {
			out[c.Pool] = float64(calls * c.Units)
		}
	}
	return out
}
