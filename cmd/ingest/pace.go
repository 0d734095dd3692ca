package main

import (
	"context"
	"encoding/json"
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

// newPacer plans the daemon's entries at their kind's priority (a region's
// own chart first, its category charts a level below, the refresh of kept
// videos below them, tracking last), each never more often than its slots, from this database's
// ledger and runs, and publishes every plan it makes in the database.
func newPacer(s *settings, p *pipeline, d *jobs.Daemon) (*pace.Pacer, error) {
	es, err := d.Entries()
	if err != nil {
		return nil, usageErrorf("%w", err)
	}
	var entries []pace.Entry
	for _, e := range es {
		pe := pace.Entry{Name: e.Name, Priority: int(e.Kind), Floor: e.Slots.Every, Slots: e.Slots}
		switch e.Kind {
		case jobs.KindChart, jobs.KindCategoryChart:
			pe.Cost = pace.ChartGuess(s.costs)
		case jobs.KindRefresh:
			pe.Priority, pe.Cost = pace.PriorityRefresh, pace.RefreshGuess(s.costs)
		case jobs.KindTracking:
			pe.Priority, pe.Cost = pace.PriorityTracking, pace.TrackGuess(s.costs)
		default:
			continue // pruning spends no quota
		}
		entries = append(entries, pe)
	}
	pc := pace.New(s.costs.Pools, p.limiter.State, entries)
	pc.History = pace.FromRecords(p.db, p.quotaKey, s.costs.Pools)
	pc.Daily = pace.Daily(s.costs, d.Runner.Charts())
	pc.LastPass = p.db.LastStart
	pc.Logger, pc.Refresh = s.logger, d.Every
	pc.Publish = func(ctx context.Context, st pace.Status) {
		doc, err := json.Marshal(st)
		if err == nil {
			err = p.db.SavePlan(context.WithoutCancel(ctx), p.quotaKey, st.At, doc)
		}
		if err != nil {
			s.logger.Warn("pace: publish the plan; report and the dashboard show one made from the ledger", ingest.LogErr, err)
		}
	}
	return pc, nil
}
