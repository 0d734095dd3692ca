package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
)

// checkPlan prints what the schedule spends in a day against each pool,
// and warns, or with --strict refuses, when it cannot fit. It reads the
// database only if there is one, and writes nothing.
func checkPlan(ctx context.Context, s *settings, f *runFlags, charts []regions.Chart) error {
	if f.once && !f.everyGiven {
		return nil
	}
	sched := report.Schedule{Timetable: f.timetable(charts), Tracked: -1}
	span, _ := f.track.span()
	if span > 0 && (!f.once || f.track.given) {
		sched.TrackEvery, sched.TrackBatch = f.track.every, jobs.TrackBatch
	}
	var last map[string]store.RunSummary
	if db, err := store.OpenExisting(ctx, s.db); err == nil {
		last, _ = db.LastRuns(ctx, ingest.Trending)
		if charted, err := db.ChartedSince(ctx, time.Now().Add(-span)); err == nil && span > 0 {
			sched.Tracked = sched.Timetable.Cadence(f.track.every, f.track.budget, s.costs).PerRun(charted)
		}
		db.Close()
	}
	plan := report.Plan(s.costs, sched, last)
	report.LogPlan(s.logger, plan)
	report.LogTiers(s.logger, report.Tiers(s.costs, sched))
	if unheld := report.Unheld(s.costs, sched); len(unheld) > 0 {
		return usageErrorf("--regions: the pools cannot hold the schedule at all (%s); lengthen --max-stale, drop regions, or raise the pool's limit in --costs",
			strings.Join(unheld, "; "))
	}
	over := report.Overruns(plan)
	if len(over) == 0 {
		return nil
	}
	msg := fmt.Sprintf("the schedule (--every %s, %d charts) cannot fit the quota: %s; lengthen --every or drop regions or categories",
		f.every, len(charts)*len(f.cats), strings.Join(over, "; "))
	if f.strict {
		return usageErrorf("--strict: %s", msg)
	}
	s.logger.Warn(msg + overNote(f))
	return nil
}

// overNote ends the warning of a schedule that cannot fit the quota: what
// the daemon does about it.
func overNote(f *runFlags) string {
	if f.pace && !f.once {
		return " (pacing spreads the charts over the upstream's day instead, each at most every --every; --strict refuses to start)"
	}
	return " (the limiter will stop passes when the quota runs out; --strict refuses to start)"
}
