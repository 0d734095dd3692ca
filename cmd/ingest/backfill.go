package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/wiring"
)

type backfillFlags struct {
	region   string
	since    string
	until    string
	query    string
	maxUnits int64
	dryRun   bool
	restart  bool
	list     bool
}

func newBackfillCmd(s *settings) *cobra.Command {
	f := &backfillFlags{}
	cmd := &cobra.Command{
		Use:   "backfill --region R --since DATE",
		Short: "Search a region's videos published in a date window and store them",
		Long: `backfill runs search.list (type=video, by view count) over the videos of one
region published between --since and --until, details each page's videos
with videos.list, and stores them as search results (never as trending
entries) in the same full-text index.

Searches are dear: their pool is small. With the shipped costs.yaml a page
costs, in units by pool: ` + shippedPageCost() + ` (the search and its
details; --costs may price them otherwise). --dry-run prints the plan and its cost first.
--max-units caps what this invocation spends.

backfill is resumable: its cursor is saved with every page, and the same
command continues where it stopped, never paying for a page twice. A
backfill is named by --region, --since, --until as given and --query; no
--until is a value of its own, "open-ended" (its searches keep the end time
of its first page), so the same open-ended command resumes too. --restart
forgets where it got to and starts over; --list shows every backfill the
database knows and where each stands. A refusal by the limiter, --max-units
or a signal stops cleanly (exit 0) and says when the quota has room again.
While the limiter is unreachable the dear search calls are refused (exit 1)
and the upstream is not called.`,
		Example: `  ingest backfill --region DE --since 2026-10-01 --dry-run
  ingest backfill --region DE --since 2026-10-01 --until 2026-11-01 --query fußball --max-units 1010
  ingest backfill --list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBackfill(cmd.Context(), cmd.OutOrStdout(), s, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.region, "region", "", "ISO 3166-1 alpha-2 region code (required)")
	fl.StringVar(&f.since, "since", "", "published at or after this date: 2026-10-01 or RFC 3339 (required)")
	fl.StringVar(&f.until, "until", "", "published before this date (default: open-ended, up to the time of its first page)")
	fl.StringVar(&f.query, "query", "", "search words (default: any video)")
	fl.Int64Var(&f.maxUnits, "max-units", 0, "spend at most this many units in this invocation, every pool's counted together (a page: "+shippedPageCost()+"; 0: no cap)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan and its cost; call nothing, spend nothing")
	fl.BoolVar(&f.restart, "restart", false, "forget where this backfill got to and start it over from its first page")
	fl.BoolVar(&f.list, "list", false, "list the known backfills and where each stands; call nothing")
	return cmd
}

// parseDate takes a day (UTC midnight) or an RFC 3339 time (parseDay).
func parseDate(flag, v string) (time.Time, error) {
	t, err := parseDay(v)
	if err != nil {
		return t, usageErrorf("--%s: want a date like 2026-10-01 or 2026-10-01T12:00:00Z, got %q", flag, v)
	}
	return t, nil
}

// identity reads the flags that name the backfill, and the search it
// starts with (an open-ended one searches up to now).
func (f *backfillFlags) identity(now time.Time) (ingest.BackfillID, ingest.SearchQuery, error) {
	var id ingest.BackfillID
	region, err := parseRegion("--region", f.region)
	switch {
	case err != nil:
		return id, ingest.SearchQuery{}, err
	case region == "":
		return id, ingest.SearchQuery{}, usageErrorf("--region: required, e.g. --region DE")
	}
	if f.since == "" {
		return id, ingest.SearchQuery{}, usageErrorf("--since: required, e.g. --since 2026-10-01")
	}
	since, err := parseDate("since", f.since)
	if err != nil {
		return id, ingest.SearchQuery{}, err
	}
	id = ingest.BackfillID{Region: region, Since: since, Query: strings.TrimSpace(f.query)}
	before := now.UTC().Truncate(time.Second)
	if f.until != "" {
		if id.Until, err = parseDate("until", f.until); err != nil {
			return id, ingest.SearchQuery{}, err
		}
		before = id.Until
	}
	switch {
	case !before.After(since) && f.until == "":
		return id, ingest.SearchQuery{}, usageErrorf("--since %s is not in the past: without --until a backfill searches what was published from --since until now",
			since.Format(time.RFC3339))
	case !before.After(since):
		return id, ingest.SearchQuery{}, usageErrorf("--until %s is not after --since %s", before.Format(time.RFC3339), since.Format(time.RFC3339))
	}
	return id, ingest.SearchQuery{Region: region, After: since, Before: before, Query: id.Query}, nil
}

func runBackfill(ctx context.Context, out io.Writer, s *settings, f *backfillFlags) error {
	if f.list {
		return listBackfills(ctx, out, s)
	}
	id, q, err := f.identity(s.now())
	if err != nil {
		return err
	}
	job := &jobs.Backfill{ID: id, Query: q, MaxUnits: f.maxUnits, Costs: s.costs, Logger: s.logger, Clock: s.clock}
	cost, err := job.PageCost()
	if err != nil {
		return usageErrorf("--costs: %w", err)
	}
	if page := jobs.Sum(cost); f.maxUnits < 0 || (f.maxUnits > 0 && f.maxUnits < page) {
		return usageErrorf("--max-units: one search page costs %d units (%s), all pools together; got %d", page, costs.PoolUnits(cost), f.maxUnits)
	}
	if f.dryRun {
		return dryRun(ctx, out, s, job, cost, f.restart)
	}
	key, err := apiKey()
	if err != nil {
		return err
	}
	prog := newProgress(out, s, job)
	job.Progress = prog.update
	return s.host().Backfill(ctx, key, s.resolveQuotaKey(key), wiring.Backfill{Job: job, Restart: f.restart, Out: out,
		Begin: prog.bar.Start, End: prog.bar.Finish})
}

// listBackfills prints every cursor the database holds, read-only.
func listBackfills(ctx context.Context, out io.Writer, s *settings) error {
	db, err := openExisting(ctx, s)
	if err != nil {
		return err
	}
	defer db.Close()
	curs, err := db.Cursors(ctx)
	if err != nil {
		return err
	}
	return report.Backfills(out, curs)
}

// shippedPageCost is what a backfill page costs by the built-in costs.yaml,
// read from it so that the help cannot drift from the prices.
func shippedPageCost() string {
	cost, err := (&jobs.Backfill{Costs: costs.Default()}).PageCost()
	if err != nil { // the built-in file prices every operation the worker calls
		return "what costs.yaml says"
	}
	return costs.PoolUnits(cost)
}

// dryRun prints the plan: pages at most, units per pool, and whether the
// quota covers it now or when it would.
func dryRun(ctx context.Context, out io.Writer, s *settings, job *jobs.Backfill, cost map[string]int64, restart bool) error {
	db, lim, key, closeFn, openErr := dryRunPools(ctx, s)
	defer closeFn()
	left, share, units, shareErr := jobs.SearchMaxPages, "", int64(0), openErr
	if openErr == nil {
		if n, err := wiring.PagesLeft(ctx, db, job, restart); err == nil {
			left = n
		} else {
			shareErr = err
		}
	}
	pages := left
	if job.MaxUnits == 0 && shareErr == nil && left > 0 {
		share, units, shareErr = dryRunShare(ctx, s, db, lim, key, job, cost, left)
	}
	if share != "" {
		if units == 0 {
			pages = 0
		}
		job.MaxUnits = units
	}
	plan := report.PlanSearch(cost, pages, job.MaxUnits)
	until := job.Query.Before.Format(time.RFC3339)
	if job.ID.OpenEnded() {
		until = "now (open-ended)"
	}
	fmt.Fprintf(out, "Plan: backfill %s, published %s to %s", job.Query.Region,
		job.Query.After.Format(time.RFC3339), until)
	if job.Query.Query != "" {
		fmt.Fprintf(out, ", matching %q", job.Query.Query)
	}
	fmt.Fprintln(out)
	switch {
	case shareErr != nil:
		fmt.Fprintf(out, "  the daemon's plan unknown: %v\n", shareErr)
	case share != "":
		fmt.Fprintf(out, "  %s\n", share)
	}
	switch {
	case left == 0:
		fmt.Fprintln(out, "  already complete: a run calls nothing (--restart starts it over)")
	case left < jobs.SearchMaxPages:
		fmt.Fprintf(out, "  resumes at page %d of at most %d\n", jobs.SearchMaxPages-left+1, jobs.SearchMaxPages)
	}
	fmt.Fprintf(out, "  at most %d pages of 50 videos (the upstream returns at most 500 results a search)\n", plan.Pages)
	fmt.Fprintf(out, "  at most %s units (a page: %s)\n", costs.PoolUnits(plan.Need), costs.PoolUnits(cost))
	var states []ingest.PoolState
	err := openErr
	if err == nil {
		states, err = lim.State(ctx)
	}
	if err != nil {
		fmt.Fprintf(out, "  remaining quota unknown: %v\n", err)
		return nil
	}
	plan.PrintCover(out, states)
	fmt.Fprintln(out, "Nothing was called or spent (--dry-run).")
	return nil
}
