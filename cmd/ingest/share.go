package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

// A backfill's share: without --max-units, a backfill takes only what the
// daemon's plan leaves in the pools until their reset.

// planShare is what the daemon's recorded schedule leaves a backfill
// (report.PlanShare), staggered as the daemon staggers it.
func planShare(ctx context.Context, db *store.DB, lim report.StateReader, s *settings, key string) (*report.Freshness, error) {
	return report.PlanShare(ctx, db, lim, s.costs, key, wiring.Stagger)
}

// takeShare caps the backfill to the whole pages the plan leaves room for
// and says so; false when that is not one page, and the backfill does not
// start.
func takeShare(out io.Writer, job *jobs.Backfill, plan *report.Freshness, cost map[string]int64) bool {
	share := plan.ShareOf(cost)
	line := share.Line(job.Query.Region, cost)
	if share.Units == 0 {
		fmt.Fprintf(out, "%s; nothing was called (give --max-units to take a share anyway)\n", line)
		return false
	}
	job.MaxUnits, job.Share = share.Units, "the share the daemon's plan leaves"
	fmt.Fprintln(out, line)
	return true
}

// dryRunShare is the plan's share as dryRun says it, in units (all pools),
// when the operator gives no --max-units; "" when they do.
func dryRunShare(ctx context.Context, s *settings, job *jobs.Backfill, cost map[string]int64) (string, int64, error) {
	if job.MaxUnits > 0 {
		return "", 0, nil
	}
	var db *store.DB
	var lim report.StateReader = report.WholePools{Costs: s.costs}
	key := ""
	if s.host().DBExists() {
		var err error
		if db, err = openExisting(ctx, s); err != nil {
			return "", 0, err
		}
		defer db.Close()
		if key, err = reportQuotaKey(ctx, s, db); err != nil {
			return "", 0, err
		}
		l, closeLimiter, err := s.openLimiter(db, key)
		if err != nil {
			return "", 0, err
		}
		defer closeLimiter()
		lim = l
	}
	plan, err := planShare(ctx, db, lim, s, key)
	if err != nil {
		return "", 0, err
	}
	share := plan.ShareOf(cost)
	line := share.Line(job.Query.Region, cost)
	if share.Units == 0 {
		line += "; a run would call nothing (give --max-units to take a share anyway)"
	}
	return line, share.Units, nil
}
