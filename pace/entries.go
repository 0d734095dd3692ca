package pace

import (
	"strings"

	"github.com/ingestworks/ingest"
)

// Priorities of the schedule's entries: a region's own chart, its
// category charts, the refresh of the videos kept rows show (before the
// terms' 30 days run out), then tracking.
const (
	PriorityChart    = 0
	PriorityCategory = 1
	PriorityRefresh  = 2
	PriorityTracking = 3
)

// ChartPriority is a chart's level by its name: a region's own chart (US)
// first, its category charts (US/10) a level below.
func ChartPriority(chart string) int {
	if strings.Contains(chart, "/") {
		return PriorityCategory
	}
	return PriorityChart
}

// ChartGuess is a chart pass's cost until one is measured: a chart of 200
// videos, four pages of videos.list.
func ChartGuess(costs *ingest.Costs) map[string]float64 {
	return guess(costs, ingest.OpVideosList, 4)
}

// RefreshGuess is a refresh's cost until one is measured: one call of
// videos.list (50 videos).
func RefreshGuess(costs *ingest.Costs) map[string]float64 {
	return guess(costs, ingest.OpVideosList, 1)
}

// TrackGuess is a tracking pass's cost until one is measured: one call of
// videos.batchGetStats. A first pass always runs and is measured, and a
// dearer one re-plans.
func TrackGuess(costs *ingest.Costs) map[string]float64 {
	return guess(costs, ingest.OpBatchGetStats, 1)
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

// Daily is what the charts spend a day outside their passes, by pool: the
// category names each region's first pass of a day reads.
func Daily(costs *ingest.Costs, charts []string) map[string]float64 {
	regions := 0
	for _, c := range charts {
		if ChartPriority(c) == PriorityChart {
			regions++
		}
	}
	return guess(costs, ingest.OpCategoriesList, int64(regions))
}
