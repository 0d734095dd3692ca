package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/retention"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/util/envflag"
)

// keepEnv is --keep's environment variable: one name for every command
// that prunes (prune, and the daemon's --keep).
const keepEnv = "INGEST_KEEP"

type pruneFlags struct {
	keep   string
	terms  bool
	dryRun bool
	json   bool
}

func newPruneCmd(s *settings) *cobra.Command {
	f := &pruneFlags{}
	cmd := &cobra.Command{
		Use:   "prune [--terms | --keep DURATION] [--dry-run]",
		Short: "Delete what the key's standing under the upstream's terms no longer keeps, and shrink the file (costs no quota)",
		Long: `prune deletes, in small transactions that never hold the database for long,
what the key's standing (--standing, docs/explanation/terms.md) does not let it keep: the
statistics older than --keep (the finished chart runs started before then with
their entries, the tracked counts read before then; default and at most the
standing's --stats-retention, 30d under standard; the cut moved on to the
next 00:00 UTC, so statistics go in whole days and between --keep less a day
and --keep are kept, never more), and whatever else was
fetched more than 30 days ago: backfill results, category names, and under
standard the videos whose text was not fetched again since, with every row
that points at them; the videos nothing kept shows go too.

It says what it will delete before it does; --dry-run is the prune itself,
kept from the database (SQLite: on a page-for-page image of the file; PostgreSQL: in one
transaction rolled back at its end), printing what the prune would. --terms is the same prune, by name: the one to run on a database an
older version kept for longer, before the first run under the terms.

The quota ledger and the runs' units are our own records, not the
upstream's data: the ledger is kept for at least the quota's longest window
and day (what a limiter refills from). The freed pages go back to the file
system (on databases created by this version; an older file reuses them
instead of growing).`,
		Example: `  ingest prune --terms --dry-run
  ingest prune --terms
  INGEST_KEEP=7d ingest prune --json
  ingest prune --standing extended --stats-retention 400d --keep 400d`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPrune(cmd.Context(), cmd.OutOrStdout(), s, f)
		},
	}
	cmd.Flags().StringVar(&f.keep, "keep", "", "how long to keep statistics: days (7d) or a duration (36h); default and at most what the standing allows. Cut in whole UTC days: between this less a day and this are kept, never more")
	envflag.With(cmd.Flags().Lookup("keep"), keepEnv)
	cmd.Flags().BoolVar(&f.terms, "terms", false, "prune exactly what the standing does not allow (not with --keep)")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "run the prune and keep none of it: the same figures and JSON, nothing deleted")
	cmd.Flags().BoolVar(&f.json, "json", false, "print what was pruned as JSON")
	return cmd
}

// parseKeep reads a span as --keep and every flag that takes one writes
// it: a whole number of days (400d) or weeks (2w), or a Go duration (36h).
func parseKeep(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	var err error
	if n, unit, ok := cutDays(s); ok {
		var k int
		if k, err = strconv.Atoi(n); err == nil {
			d = time.Duration(min(k*unit, 36501)) * 24 * time.Hour
		}
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive number of days (400d), weeks (2w) or a duration (36h), got %q", s)
	}
	if d > maxKeep {
		return 0, fmt.Errorf("want at most %dd (100 years), got %q", maxKeep/(24*time.Hour), s)
	}
	return d, nil
}

// cutDays splits a span in days (7d) or weeks (1w) into its number and
// the days of its unit; ok is false for any other form.
func cutDays(s string) (n string, days int, ok bool) {
	if n, ok = strings.CutSuffix(s, "d"); ok {
		return n, 1, true
	}
	if n, ok = strings.CutSuffix(s, "w"); ok && len(n) < 9 {
		return n, 7, true // a number of weeks short enough not to overflow once in days
	}
	return "", 0, false
}

// maxKeep bounds --keep: past it, days overflow a duration and wrap.
const maxKeep = 36500 * 24 * time.Hour

func runPrune(ctx context.Context, out io.Writer, s *settings, f *pruneFlags) error {
	if f.terms && f.keep != "" {
		return usageErrorf("prune: --terms prunes to the standing's allowance; give it or --keep, not both")
	}
	keep, err := s.checkKeep(f.keep)
	if err != nil {
		return err
	}
	if !s.host().DBExists() {
		return fmt.Errorf("prune: no database at %s (point --db / INGEST_DB at one)", s.dbName())
	}
	db, err := s.host().OpenStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	// One now for the count and the prune: the same cuts.
	now := s.now()
	job := s.pruneJob(db, keep, nil)
	job.Clock = clock.Func(func() time.Time { return now })
	beyond, err := retention.Count(ctx, db.DB, retention.For(job.Cuts(now)))
	if err != nil {
		return err
	}
	verb := "deleting"
	if f.dryRun {
		verb = "would delete"
	}
	fmt.Fprintf(s.stderr, "prune under the %s standing, statistics kept %s: %s %s\n", s.standing.Name(), ingest.Days(keep), verb, beyond)
	// A dry run is the prune (docs/operations.md): on PostgreSQL in one
	// transaction rolled back at its end, on SQLite on a page-for-page
	// image of the file.
	inTx := f.dryRun && db.Postgres()
	if f.dryRun && !inTx {
		copied, drop, err := s.host().DryRunCopy(ctx)
		if err != nil {
			return err
		}
		defer drop()
		db, job = copied, s.pruneJob(copied, keep, nil)
		job.Clock = clock.Func(func() time.Time { return now })
	}
	ps := retention.Store{DB: db.DB, Progress: pruneProgress(s.logger, beyond, s.clock.Now)}
	var left store.Size // the database as a dry run in a transaction left it
	if inTx {
		ps.DryRun = &left
	}
	job.Store = ps
	res := job.Run(ctx)
	if res.Err != nil {
		return res.Err
	}
	pruned := res.Pruned
	size := left
	if !inTx {
		if err := retention.NoteKept(ctx, db.Ledger, keep); err != nil {
			return err
		}
		if size, err = db.Size(ctx); err != nil {
			return err
		}
	}
	if f.json {
		return writeJSON(out, report.PruneJSON(pruned, size))
	}
	if f.dryRun {
		fmt.Fprint(out, "would have ")
	}
	report.Pruned(out, pruned, size)
	return nil
}

// pruneProgress logs, as long work does, the rows a prune has deleted of
// those it counted before it began, on the clock now.
func pruneProgress(log *slog.Logger, beyond retention.Beyond, now func() time.Time) func(ingest.Pruned) {
	logged := newProgressLog(log, "prune: deleting rows", now)
	total := beyond.Runs + beyond.Entries + beyond.Stats + beyond.Videos + beyond.Search + beyond.Categories + beyond.Ledger
	logged.at(0, total) // its clock starts with the prune
	return func(p ingest.Pruned) {
		logged.at(p.Runs+p.Entries+p.Stats+p.Videos+p.Search+p.Categories+p.Ledger, total)
	}
}
