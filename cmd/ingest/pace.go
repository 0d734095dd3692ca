package main

import (
	"context"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/store"
)

// watchPace puts the daemon's charts and tracking under a pacer (run
// --pace, the default) and serves each chart's age and the plan on
// /metrics. Each entry keeps its staggered slots (--every, --track-every);
// the pacer's schedule fires only at the slots its planned cadence needs,
// so a schedule that fits the day runs exactly as without it, and one that
// does not is spread over the day instead of spending the pool by morning.
// Pruning spends no quota and keeps its own slots.
func watchPace(s *settings, f *runFlags, p *pipeline, d *jobs.Daemon, m *metrics.Metrics, last map[string]store.RunSummary) {
	col := &metrics.Pace{Ages: metrics.NewAges(last)}
	observe := d.Runner.Observe
	var pc *pace.Pacer
	if f.pace {
		pc = newPacer(s, f.every, p, d)
		d.ScheduleFor = func(e jobs.Entry) cron.Schedule { return pc.Schedule(e.Name, e.Slots) }
		col.Status = pc.Status
	}
	d.Runner.Observe = func(e jobs.Entry, end jobs.Ended, took time.Duration, slot time.Time) {
		if observe != nil {
			observe(e, end, took, slot)
		}
		if end.Pass != nil && end.Status == ingest.StatusCompleted {
			col.Ages.Set(e.Name, time.Now().Add(-took))
		}
		if pc != nil && end.Units != nil {
			pc.Ran(e.Name, end.Units, end.Status)
		}
	}
	m.Register(col)
}

// newPacer plans the daemon's charts at their kind's priority (a region's
// own chart first, its category charts a level below), each never more
// often than every, and tracking a level below them, never more often
// than --track-every.
func newPacer(s *settings, every time.Duration, p *pipeline, d *jobs.Daemon) *pace.Pacer {
	var entries []pace.Entry
	for _, pass := range d.Runner.Passes {
		e := pass.Entry()
		entries = append(entries, pace.Entry{Name: e.Name, Priority: int(e.Kind), Floor: every, Cost: pace.ChartGuess(s.costs)})
	}
	if d.Track != nil {
		e := d.Track.Entry()
		entries = append(entries, pace.Entry{Name: e.Name, Priority: pace.PriorityTracking, Floor: d.TrackEvery,
			Cost: pace.TrackGuess(s.costs)})
	}
	pc := pace.New(s.costs.Pools, p.limiter.State, entries)
	pc.Measure = func(ctx context.Context, since time.Time) (map[string]map[string]float64, error) {
		return p.db.PassCosts(ctx, p.quotaKey, since)
	}
	pc.Logger, pc.Refresh = s.logger, every
	s.logger.Info("pacing: each chart's and tracking's cadence follows the pools' budgets until their reset, never faster than --every and --track-every",
		"every", every)
	return pc
}

// overNote ends the warning of a schedule that cannot fit the quota: what
// the daemon does about it.
func overNote(f *runFlags) string {
	if f.pace && !f.once {
		return " (pacing spreads the charts over the upstream's day instead, each at most every --every; --strict refuses to start)"
	}
	return " (the limiter will stop passes when the quota runs out; --strict refuses to start)"
}
