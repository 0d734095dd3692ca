package main

import (
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/store"
)

// watchPace puts the daemon's charts and tracking under a pacer (run
// --pace, the default) and serves each chart's age and the plan on
// /metrics. Each entry keeps its staggered slots (--every, --track-every);
// at each slot the pacer decides whether the entry runs there, so that a
// schedule that fits the pools runs exactly as without it, and one that
// does not is spread at a rate the pools hold forever instead of spending
// them by morning. Pruning spends no quota and keeps its own slots.
func watchPace(s *settings, f *runFlags, p *pipeline, d *jobs.Daemon, m *metrics.Metrics, last map[string]store.RunSummary) error {
	col := &metrics.Pace{Ages: metrics.NewAges(last)}
	observe := d.Runner.Observe
	if f.pace {
		pc, err := newPacer(s, p, d)
		if err != nil {
			return err
		}
		d.Pacer, col.Status = pc, pc.Status
		s.logger.Info("pacing: each chart's and tracking's cadence follows what the pools hold over their window and day, never faster than --every and --track-every",
			"every", f.every)
	}
	d.Runner.Observe = func(e jobs.Entry, end jobs.Ended, took time.Duration, slot time.Time) {
		if observe != nil {
			observe(e, end, took, slot)
		}
		if end.Pass != nil && end.Status == ingest.StatusCompleted {
			col.Ages.Set(e.Name, time.Now().Add(-took))
		}
	}
	m.Register(col)
	return nil
}

// newPacer is the daemon's pacer (wiring.Host.NewPacer).
func newPacer(s *settings, p *pipeline, d *jobs.Daemon) (*pace.Pacer, error) {
	pc, err := s.host().NewPacer(p, d)
	return pc, runtimeError(err)
}
