package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/wiring"
)

// A backfill's share: without --max-units, a backfill takes only what the
// daemon's plan leaves in the pools until their reset.

// planShare is what the daemon's recorded schedule leaves a backfill
// (report.PlanShare), staggered as the daemon staggers it.
func planShare(ctx context.Context, db *wiring.Database, lim report.StateReader, s *settings, key string) (*report.Freshness, error) {
	if db == nil {
		return report.PlanShare(ctx, nil, lim, s.costs, key, wiring.Planner, s.now())
	}
	return report.PlanShare(ctx, db, lim, s.costs, key, wiring.Planner, s.now())
}

// takeShare caps the backfill to the whole pages the plan leaves room for,
// of the pages it has left, and says so; false when that is not one page,
// and the backfill does not start.
func takeShare(out io.Writer, job *jobs.Backfill, plan *report.Freshness, cost map[string]int64, pages int) bool {
	share := plan.ShareOf(cost).Within(int64(pages))
	line := share.Line(job.Query.Region, cost)
	if share.Units == 0 {
		fmt.Fprintf(out, "%s; nothing was called (give --max-units to take a share anyway)\n", line)
		return false
	}
	job.MaxUnits, job.Share = share.Units, "the share the daemon's plan leaves"
	fmt.Fprintln(out, line)
	return true
}

// dryRunPools opens, without writing, what a dry run reads: the database
// and its limiter when there is a database, else none, and pools whole.
func dryRunPools(ctx context.Context, s *settings) (db *wiring.Database, lim report.StateReader, key string, closeFn func(), err error) {
	closeFn = func() {}
	if !s.host().DBExists() {
		return nil, report.WholePools{Costs: s.costs}, "", closeFn, nil
	}
	if db, err = openExisting(ctx, s); err != nil {
		return nil, nil, "", closeFn, err
	}
	if key, err = reportQuotaKey(ctx, s, db); err == nil {
		var closeLimiter func()
		if lim, closeLimiter, err = s.host().OpenLimiter(db, key); err == nil {
			return db, lim, key, func() { closeLimiter(); db.Close() }, nil
		}
	}
	db.Close()
	return nil, nil, "", closeFn, err
}

// dryRunShare is the plan's share as dryRun says it, in units (all pools),
// when the operator gives no --max-units.
func dryRunShare(ctx context.Context, s *settings, db *wiring.Database, lim report.StateReader, key string, job *jobs.Backfill,
	cost map[string]int64, pages int) (string, int64, error) {
	plan, err := planShare(ctx, db, lim, s, key)
	if err != nil {
		return "", 0, err
	}
	share := plan.ShareOf(cost).Within(int64(pages))
	line := share.Line(job.Query.Region, cost)
	if share.Units == 0 {
		line += "; a run would call nothing (give --max-units to take a share anyway)"
	}
	return line, share.Units, nil
}
