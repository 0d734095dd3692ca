package jobs

import (
	"log/slog"

	"github.com/ingestworks/ingest"
)

// ChartPasses makes one pass per chart: for each region, for each
// category ("" the unfiltered chart), a copy of like with its logger
// naming the chart. Their order is the schedule's: the order in which
// the daemon staggers them.
func ChartPasses(codes, categories []string, like Pass, log *slog.Logger) []*Pass {
	var passes []*Pass
	for _, code := range codes {
		for _, cat := range categories {
			pass := like
			pass.Region, pass.Category = code, cat
			pass.Logger = log.With(ingest.LogRegion, pass.Chart())
			passes = append(passes, &pass)
		}
	}
	return passes
}

// ChartNames names the charts ChartPasses makes of codes and categories,
// in the same order: US, US/10, GB, GB/10...
func ChartNames(codes, categories []string) []string {
	var names []string
	for _, p := range ChartPasses(codes, categories, Pass{}, slog.New(slog.DiscardHandler)) {
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
