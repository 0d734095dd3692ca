package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/store"
)

// keepEnv is --keep's environment variable: one name for every command
// that prunes (prune, and the daemon's --keep).
const keepEnv = "INGEST_KEEP"

type pruneFlags struct {
	keep string
	json bool
}

func newPruneCmd(s *settings) *cobra.Command {
	f := &pruneFlags{}
	cmd := &cobra.Command{
		Use:   "prune --keep DURATION",
		Short: "Delete chart entries, stats and runs older than --keep, and shrink the file (costs no quota)",
		Long: `prune deletes, in small transactions that never hold the database for long:
the finished chart runs started more than --keep ago with their entries, the
statistics read before then, and the videos nothing kept shows any more.
The quota ledger is kept for at least the quota's longest window and day
(what a limiter refills from), whatever --keep says. Backfill results are
kept. The freed pages go back to the file system (on databases created by
this version; an older file reuses them instead of growing).`,
		Example: `  ingest prune --keep 400d
  INGEST_KEEP=30d ingest prune --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPrune(cmd.Context(), cmd.OutOrStdout(), s, f)
		},
	}
	cmd.Flags().StringVar(&f.keep, "keep", "", "how long to keep: days (400d) or a duration (36h); required")
	withEnv(cmd.Flags().Lookup("keep"), keepEnv)
	cmd.Flags().BoolVar(&f.json, "json", false, "print what was pruned as JSON")
	return cmd
}

// parseKeep reads --keep: a whole number of days (400d) or a Go duration.
func parseKeep(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if n, err = strconv.Atoi(days); err == nil {
			d = time.Duration(min(n, 36501)) * 24 * time.Hour
		}
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive number of days (400d) or a duration (36h), got %q", s)
	}
	if d > maxKeep {
		return 0, fmt.Errorf("want at most %dd (100 years), got %q", maxKeep/(24*time.Hour), s)
	}
	return d, nil
}

// maxKeep bounds --keep: past it, days overflow a duration and wrap.
const maxKeep = 36500 * 24 * time.Hour

func runPrune(ctx context.Context, out io.Writer, s *settings, f *pruneFlags) error {
	if f.keep == "" {
		return usageErrorf("prune: --keep (or %s) is required, e.g. --keep 400d", keepEnv)
	}
	keep, err := parseKeep(f.keep)
	if err != nil {
		return usageErrorf("--keep: %v", err)
	}
	if !s.dbExists() {
		return runtimeError(fmt.Errorf("prune: no database at %s (point --db / INGEST_DB at one)", s.dbName()))
	}
	db, err := s.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	res := (&jobs.Prune{Keep: keep, Span: s.costs.Span(), Store: pruneStore{db}}).Run(ctx)
	if res.Err != nil {
		return runtimeError(res.Err)
	}
	pruned := res.Pruned
	size, err := db.Size(ctx)
	if err != nil {
		return runtimeError(err)
	}
	if f.json {
		return writeJSON(out, pruneJSON(pruned, size))
	}
	fmt.Fprintf(out, "pruned %d runs, %d chart entries, %d stats, %d videos, %d ledger rows; freed %s\n",
		pruned.Runs, pruned.Entries, pruned.Stats, pruned.Videos, pruned.Ledger, megabytes(pruned.Freed))
	fmt.Fprintf(out, "database %s, oldest run %s\n", megabytes(size.Bytes), oldestText(size.OldestRun))
	return nil
}

type prunedJSON struct {
	Runs       int64      `json:"runs"`
	Entries    int64      `json:"entries"`
	Stats      int64      `json:"stats"`
	Videos     int64      `json:"videos"`
	Ledger     int64      `json:"ledger"`
	FreedBytes int64      `json:"freed_bytes"`
	Bytes      int64      `json:"database_bytes"`
	OldestRun  *time.Time `json:"oldest_run"`
}

func pruneJSON(p jobs.Pruned, s store.Size) prunedJSON {
	out := prunedJSON{Runs: p.Runs, Entries: p.Entries, Stats: p.Stats, Videos: p.Videos, Ledger: p.Ledger,
		FreedBytes: p.Freed, Bytes: s.Bytes}
	if !s.OldestRun.IsZero() {
		out.OldestRun = &s.OldestRun
	}
	return out
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func oldestText(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format(time.RFC3339)
}

// pruneStore is the store's retention as the prune job asks for it.
type pruneStore struct{ db *store.DB }

var _ jobs.PruneStore = pruneStore{}

func (p pruneStore) Prune(ctx context.Context, before, ledgerBefore time.Time) (jobs.Pruned, error) {
	r, err := p.db.Prune(ctx, store.Retention{Before: before, LedgerBefore: ledgerBefore})
	return jobs.Pruned{Runs: r.Runs, Entries: r.Entries, Stats: r.Stats, Videos: r.Videos, Ledger: r.Ledger, Freed: r.Freed}, err
}
