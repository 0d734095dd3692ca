package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/custody"
	"github.com/ingestworks/ingest/dbcopy"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/util/envflag"
	"github.com/ingestworks/ingest/util/termbar"
	"github.com/ingestworks/ingest/wiring"
)

func newDBCmd(s *settings) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db",
		Short: "Move the database: back it up, copy it into another SQLite file or PostgreSQL database, salvage a damaged one, or upgrade its schema",
	}
	var to string
	var live, twoStep bool
	copyCmd := &cobra.Command{
		Use:   "copy --to DST",
		Short: "Copy every table of --db into another database, verified by rows and checksums (costs no quota)",
		Long: `copy carries the database named by --db into DST, a SQLite file or a
postgres:// URL, either way: videos and their text, charts and their entries,
statistics and tracked counts, runs, the quota ledger, the embedded limiter's
state (so that a limiter on DST knows the window's spend), API tokens,
backfill cursors, category names, plans and tombstones. The search index is
built on DST as the videos arrive. Nothing the key's standing (--standing)
no longer allows is copied.

A source a worker is still writing is refused (exit 2, naming the host, the
process and the last pass): a worker (ingest run, ingest backfill) holds a
lease on its database while it runs, renewed every 40 seconds, and its calls after
the copy would stay behind, to be spent again by a worker on the copy. Stop
the worker first. --live copies it all the same, as it is when read: a
SQLite source through a snapshot (DB.copy-XXXXXXXX beside it, made by VACUUM
INTO and removed at the end); a PostgreSQL source in one transaction (a copy
resumed after a kill reads it again).

--two-step copies a big database with a short stop of its worker: the
bulk while the worker still runs (the source notes, by triggers of its own,
each row that changes meanwhile), then the copy says to stop the worker,
waits until its lease is released, and carries only the rows that changed
since. It then says the target is ready (the worker may start on it) and
how long the worker's stop lasted, and sums both sides as they were then.
A two-step copy that stopped goes on when run again; run without
--two-step once the worker has stopped, it carries what changed at once.
A source still written is refused for that last step as for any copy.

A copy of a SQLite file notes where
its source is, and the copy's workers on this host count, when they start,
the calls its source's ledger gained after the copy, for a day.

DST must be new or empty: a database holding data is refused (exit 2). A copy
that stopped (a kill, a lost connection) goes on where it left off when run
again with the same --db and --to. At the end it prints each table's rows and
a checksum of its rows in key order, on both sides: any difference is exit 1.`,
		Example: `  ingest db copy --db ingest.db --to postgres://ingest@db.internal/ingest
  ingest db copy --db postgres://ingest@db.internal/ingest --to small.db
  ingest db copy --db ingest.db --to compact.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDBCopy(cmd.Context(), cmd.OutOrStdout(), s, to, live, twoStep)
		},
	}
	copyCmd.Flags().StringVar(&to, "to", "", "the database to copy into: a SQLite file, or a postgres:// URL")
	envflag.With(copyCmd.Flags().Lookup("to"), "INGEST_DB_COPY_TO")
	copyCmd.Flags().BoolVar(&live, "live", false, "copy a source a worker is still writing, as it is when read (its calls after the copy stay behind)")
	envflag.With(copyCmd.Flags().Lookup("live"), "INGEST_DB_COPY_LIVE")
	copyCmd.Flags().BoolVar(&twoStep, "two-step", false, "copy the bulk while the worker runs, wait for it to stop, then carry what changed since: a short stop")
	envflag.With(copyCmd.Flags().Lookup("two-step"), "INGEST_DB_COPY_TWO_STEP")
	cmd.AddCommand(copyCmd, newDBBackupCmd(s), newDBRecoverCmd(s), newDBMigrateCmd(s))
	return cmd
}

func runDBCopy(ctx context.Context, out io.Writer, s *settings, to string, live, twoStep bool) error {
	if err := checkCopyTarget(s, to); err != nil {
		return err
	}
	if live && twoStep {
		return usageErrorf("db copy: --live and --two-step (INGEST_DB_COPY_LIVE, INGEST_DB_COPY_TWO_STEP) do not go together: " +
			"--two-step waits for the worker to stop, --live does not")
	}
	running, err := s.host().LiveSource(ctx)
	switch {
	case err != nil:
		return err
	case running != nil && twoStep:
		if err := trackSource(ctx, s); err != nil {
			return err
		}
		fmt.Fprintf(s.stderr, "db copy --two-step: a worker writes %s (%s): copying the bulk now, beside it; "+
			"the source notes each row that changes meanwhile\n", s.dbName(), workersOf(running))
	case running != nil && !live:
		return usageErrorf("db copy: %w", running)
	case running != nil && store.IsURL(s.db):
		// A PostgreSQL ledger is every host's on it: a copy taken while
		// they spend could not count what they spend after it.
		return usageErrorf("db copy --live: a worker still writes %s (%s), whose ledger every host on it shares; "+
			"a copy's workers cannot read its calls after the copy (no credential is kept on a copy), so they would spend them again: "+
			"pass --two-step instead of --live, or stop its workers first (docs/operations/growing.md)", s.dbName(), workersOf(running))
	case running != nil:
		fmt.Fprintf(s.stderr, "db copy --live: %s\n", running)
	}
	src, fresh, err := s.host().CopySource(ctx, to, s.terms(), s.stderr)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := s.host().CopyTarget(ctx, to)
	if err != nil {
		return err
	}
	defer dst.Close()
	var bar *termbar.Bar // made once the rows to copy are counted
	made := false
	logged := newProgressLog(s.logger, "db copy: copying rows", s.clock.Now)
	began, rows := s.now(), int64(0)
	err = dbcopy.Bulk(ctx, src.DB, dst.DB, func(n, total int64) {
		if !made {
			bar, made = termbar.New(s.stderr, total, "copying rows"), true
		}
		if bar == nil {
			logged.at(n, total)
		}
		bar.Set(int(n))
		rows = n
	})
	bar.Finish()
	var te *dbcopy.TargetError
	if errors.As(err, &te) {
		if src.Close(); fresh {
			s.host().RemoveSnapshot(to)
		}
		return usageErrorf("db copy: --to %w", err)
	}
	if err != nil {
		return fmt.Errorf("db copy: %w", err)
	}
	ready, err := carryChanges(ctx, s, src.DB, dst.DB, to, running != nil && !twoStep, rows, s.now().Sub(began))
	if err != nil {
		return err
	}
	sums, err := dbcopy.Sums(ctx, src.DB, dst.DB, ready)
	if err != nil {
		return fmt.Errorf("db copy: %w", err)
	}
	if differ := printSums(out, sums); differ > 0 {
		return fmt.Errorf("db copy: %d tables differ between %s and %s: a writer changed the source while it was copied "+
			"(a PostgreSQL source is read anew when a stopped copy goes on), or something changed the target; "+
			"stop every writer of the source, then delete the target and copy again", differ, s.dbName(), store.Redact(to))
	}
	fmt.Fprintf(s.stderr, "copied %s into %s: every table's rows and checksum agree\n", s.dbName(), store.Redact(to))
	if !store.IsURL(s.db) {
		if err := custody.NoteCopySource(ctx, src.Ledger, dst.Ledger, s.db, s.now()); err != nil {
			return fmt.Errorf("db copy: note the source on the target: %w", err)
		}
	}
	src.Close()
	s.host().RemoveSnapshot(to)
	return nil
}

// trackSource makes --db note each row that changes from now on, for the
// second step of a copy.
func trackSource(ctx context.Context, s *settings) error {
	db, err := s.host().CopySourceWrites(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := dbcopy.Track(ctx, db.DB, s.tablesBusy("install the change tracking")); err != nil {
		return fmt.Errorf("db copy: %w", err)
	}
	return nil
}

// tablesBusy says, once, that the source's tables were busy with its
// worker's writes when the copy came to what, and that it tries again.
func (s *settings) tablesBusy(what string) func(error) {
	said := false
	return func(err error) {
		if !said {
			fmt.Fprintf(s.stderr, "db copy: %s is busy with its worker's writes, so the copy cannot %s now (%v): trying again until it can\n",
				s.dbName(), what, err)
			said = true
		}
	}
}

// carryChanges is a copy's second step, when --db notes its changes: it
// waits for --db's workers to stop, then carries what changed since the
// bulk (rows of it copied in took) into the target (and a SQLite source's
// snapshot, which the sums read). live leaves the notes for a copy run
// again once the worker has stopped. ready, called once the sums hold
// their snapshots, says that the target is ready.
func carryChanges(ctx context.Context, s *settings, snap, dst *store.DB, to string, live bool, rows int64, took time.Duration) (ready func(), err error) {
	ready = func() {}
	db, err := s.host().CopySourceWrites(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	switch tracked, err := dbcopy.Tracked(ctx, db.DB); {
	case err != nil:
		return nil, fmt.Errorf("db copy: %w", err)
	case !tracked:
		return ready, nil
	case live:
		fmt.Fprintf(s.stderr, "db copy --live: %s notes its changes for a copy in two steps: run this copy again without --live "+
			"once its worker has stopped, and it carries them\n", s.dbName())
		return ready, nil
	}
	fmt.Fprintf(s.stderr, "db copy: the bulk is copied: %d rows in %s (%.0f rows a second)\n", rows, took.Round(time.Second),
		float64(rows)/max(took.Seconds(), 1e-3))
	stopped, asked := s.now(), false
	for {
		err := wiring.Live(ctx, db)
		var le *wiring.LiveError
		if !errors.As(err, &le) {
			if err != nil {
				return nil, fmt.Errorf("db copy: source: %w", err)
			}
			break
		}
		if !asked {
			fmt.Fprintf(s.stderr, "db copy: stop the worker on %s now (%s): this copy waits for its lease to go, "+
				"then carries what changed since the bulk\n", s.dbName(), workersOf(le))
			asked = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("db copy: stopped while waiting for the worker to stop; run it again once the worker has stopped: %w", ctx.Err())
		case <-clock.After(250 * time.Millisecond):
		}
		stopped = s.now()
	}
	into := []*store.DB{dst}
	if !store.IsURL(s.db) {
		into = append(into, snap)
	}
	c, err := dbcopy.Carry(ctx, db.DB, into...)
	if err == nil {
		err = dbcopy.Untrack(ctx, db.DB, s.tablesBusy("remove the change tracking"))
	}
	if err != nil {
		return nil, fmt.Errorf("db copy: %w", err)
	}
	stop := s.now().Sub(stopped)
	fmt.Fprintf(s.stderr, "db copy: carried what changed since the bulk: %d rows written again, %d deleted, in %s\n",
		c.Written, c.Deleted, stop.Round(time.Millisecond))
	return func() {
		fmt.Fprintf(s.stderr, "db copy: %s is ready: start the worker on it now (the worker's stop so far: %s); "+
			"the sums below read both sides as they are now\n", store.Redact(to), s.now().Sub(stopped).Round(time.Millisecond))
	}, nil
}

// workersOf names the workers of a refusal.
func workersOf(le *wiring.LiveError) string {
	ws := make([]string, len(le.Workers))
	for i, w := range le.Workers {
		ws[i] = fmt.Sprintf("host %s pid %d", w.Host, w.PID)
	}
	return strings.Join(ws, ", ")
}

// checkCopyTarget refuses a --to that is missing, does not parse, or
// names the source.
func checkCopyTarget(s *settings, to string) error {
	if to == "" {
		return usageErrorf("db copy: --to (INGEST_DB_COPY_TO) is required: the database to copy into, a file or a postgres:// URL")
	}
	if err := store.CheckURL(to); err != nil {
		return usageErrorf("db copy: --to: %w", err)
	}
	if !store.IsURL(to) {
		if err := store.CheckPath(to, true); err != nil {
			return usageErrorf("db copy: --to: %w", err)
		}
	}
	if store.Where(to) == store.Where(s.db) {
		return usageErrorf("db copy: --to names the database --db names (%s): copy into another one", s.dbName())
	}
	if !store.Exists(s.db) {
		return usageErrorf("db copy: no database at %s (point --db / INGEST_DB at the one to copy)", s.dbName())
	}
	return nil
}

// printSums prints each table's rows and checksum on both sides, and
// returns how many differ.
func printSums(out io.Writer, sums []dbcopy.TableSums) int {
	differ := 0
	fmt.Fprintf(out, "%-18s %12s %-16s %12s %-16s %s\n", "TABLE", "SOURCE ROWS", "SOURCE SUM", "TARGET ROWS", "TARGET SUM", "")
	for _, t := range sums {
		mark := "ok"
		if !t.Same() {
			mark = "DIFFERS"
			differ++
		}
		fmt.Fprintf(out, "%-18s %12d %-16s %12d %-16s %s\n", t.Table, t.Source.Rows, t.Source.Hash, t.Target.Rows, t.Target.Hash, mark)
	}
	return differ
}
