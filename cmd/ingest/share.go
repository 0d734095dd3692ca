package main

import (
	"context"

	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/wiring"
)

// A backfill's share: without --max-units, a backfill takes only what the
// daemon's plan leaves in the pools until their reset.

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
	plan, err := s.host().PlanShare(ctx, db, lim, key)
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
