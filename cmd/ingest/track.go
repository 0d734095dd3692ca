package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/jobs"
)

// trackFlags are run's view-tracking settings.
type trackFlags struct {
	forText string
	every   time.Duration
	budget  int64
	// given: --track-for or --track-every was set; run --once tracks only
	// then (cron's runs would otherwise all pay for it).
	given bool
}

func (t *trackFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.forText, "track-for", "7d", "track the counts of videos a chart showed in this last span (7d, 36h; 0 turns tracking off)")
	cmd.Flags().DurationVar(&t.every, "track-every", jobs.TrackEvery, "read the tracked videos' counts this often (videos.batchGetStats, the stats pool), after the chart passes")
	cmd.Flags().Int64Var(&t.budget, "track-budget", 0, "stats units a day tracking plans on: a video is read every N x --track-every for the best tier N it charted in, all stretched alike to fit (0: what the stats pool holds in a day)")
}

// span is --track-for; zero turns tracking off.
func (t *trackFlags) span() (time.Duration, error) {
	if t.forText == "0" || t.forText == "off" {
		return 0, nil
	}
	return parseKeep(t.forText)
}

func (t *trackFlags) validate(cmd *cobra.Command) error {
	t.given = cmd.Flags().Changed("track-for") || cmd.Flags().Changed("track-every")
	if _, err := t.span(); err != nil {
		return usageErrorf("--track-for: %v (or 0 for no tracking)", err)
	}
	if t.budget < 0 {
		return usageErrorf("--track-budget: must be 0 (what the stats pool holds) or more units a day, got %d", t.budget)
	}
	return checkEvery("--track-every", t.every)
}
