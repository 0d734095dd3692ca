package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/store"
)

// trackFlags are run's view-tracking settings.
type trackFlags struct {
	forText string
	every   time.Duration
	// given: --track-for or --track-every was set; run --once tracks only
	// then (cron's runs would otherwise all pay for it).
	given bool
}

func (t *trackFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.forText, "track-for", "7d", "track the counts of videos a chart showed in this last span (7d, 36h; 0 turns tracking off)")
	cmd.Flags().DurationVar(&t.every, "track-every", jobs.TrackEvery, "read the tracked videos' counts this often (videos.batchGetStats, the stats pool), after the chart passes")
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
	if t.every < jobs.MinEvery {
		return usageErrorf("--track-every: must be at least %s, got %s", jobs.MinEvery, t.every)
	}
	return nil
}

func (t *trackFlags) job(s *settings, p *pipeline, lim jobs.Limiter, drain <-chan struct{}) *jobs.Track {
	span, _ := t.span()
	return &jobs.Track{QuotaKey: p.quotaKey, Costs: s.costs, Limiter: lim, Source: p.source,
		Store: p.db, Logger: s.logger.With(ingest.LogOp, ingest.OpBatchGetStats), For: span, Drain: drain}
}

// trackOnce runs one tracking pass and logs how it ended; a failure is
// logged, not returned: the charts are run's job, tracking an addition.
func trackOnce(ctx context.Context, log *slog.Logger, tr *jobs.Track) jobs.TrackResult {
	start := time.Now()
	res := tr.Run(ctx)
	msg := "tracking"
	switch res.Status {
	case ingest.StatusFailed:
		msg = "tracking failed"
	case ingest.StatusStopped:
		msg = "tracking stopped: the stats quota said no"
	}
	jobs.LogEnd(log, slog.LevelInfo, msg, res.RunEnd, res.Err, "tracked", res.Tracked, ingest.LogCalls, res.Calls,
		ingest.LogUnits, jobs.Sum(res.Units), ingest.LogDuration, time.Since(start))
	return res
}

// trackSchedule puts tracking after the chart passes of every period: in
// the middle of the last region's slot.
func trackSchedule(every time.Duration, regionsN int) jobs.Schedule {
	slots := time.Duration(max(regionsN, len(ingest.DefaultRegions)))
	return jobs.Schedule{Every: every, Offset: every * (2*slots - 1) / (2 * slots)}
}

// keepTracking runs tracking at every slot until ctx ends or drain closes.
// done stops it: once drain has closed (the first signal), the call in
// flight ends and is stored, as a chart pass's page is, and tracking stops
// before the next; otherwise (run failed) it is cancelled at once.
func keepTracking(ctx context.Context, s *settings, tr *jobs.Track, sched jobs.Schedule, drain <-chan struct{}) (done func()) {
	ctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			t := time.NewTimer(time.Until(sched.Next(time.Now())))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-drain:
				t.Stop()
				return
			case <-t.C:
			}
			trackOnce(ctx, s.logger, tr)
		}
	}()
	return func() {
		select {
		case <-drain:
		default:
			cancel()
		}
		<-stopped
		cancel()
	}
}

var _ jobs.TrackStore = (*store.DB)(nil)
