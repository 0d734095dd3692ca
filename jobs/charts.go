package jobs

import (
	"log/slog"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// ChartPasses makes one pass per chart: for each region, for each
// category ("" the unfiltered chart), a copy of like with its logger
// naming the chart, reading the region's depth at its tier. Their order
// is the schedule's: the order in which the daemon staggers them.
func ChartPasses(charts []regions.Chart, categories []string, like Pass, log *slog.Logger) []*Pass {
	var passes []*Pass
	for _, c := range charts {
		for _, cat := range categories {
			pass := like
			pass.Region, pass.Category, pass.Tier, pass.Pages = c.Code, cat, c.Tier, c.Pages()
			pass.Logger = log.With(ingest.LogRegion, pass.Chart())
			passes = append(passes, &pass)
		}
	}
	return passes
}

// ChartNames names the charts ChartPasses makes of charts and categories,
// in the same order: US, US/10, GB, GB/10...
func ChartNames(charts []regions.Chart, categories []string) []string {
	var names []string
	for _, p := range ChartPasses(charts, categories, Pass{}, slog.New(slog.DiscardHandler)) {
		names = append(names, p.Chart())
	}
	return names
}

// Charts names the runner's charts, in the order they are staggered.
func (r *Runner) Charts() []string {
	charts := make([]string, len(r.Passes))
	for i, p := range r.Passes {
		charts[i] = p.Chart()
	}
	return charts
}
