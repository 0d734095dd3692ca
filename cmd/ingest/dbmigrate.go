package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/store"
)

func newDBMigrateCmd(s *settings) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "migrate [--dry-run]",
		Short: "Upgrade the database's schema to this binary's, before the processes that use it are rolled (costs no quota)",
		Long: `migrate brings the schema of the database --db names up to this binary's, as
the first ingest run of a new version would, in one transaction: every step
it lacks, in order, each logged as it is committed (from, to, the step's file
and how long it took). A failure leaves the database as it was.

--dry-run changes nothing: it prints the steps migrate would apply, one a
line (the step's file, from, to), and says the step the database is at.

Dump the database first (ingest db backup, or pg_dump on PostgreSQL): a
migrated database cannot go back but by restoring that dump. On SQLite, stop
the daemon first (a daemon running on the file is refused, exit 2); on PostgreSQL the processes of the older version still
running read on, and their writes are refused until they run this binary
(docs/operations.md, Upgrades).

Exit 0 when the database is at this binary's step (already, or now); 2 when
there is no database at --db, it is newer than this binary, or a daemon runs
on its SQLite file; 1 when it cannot be reached or a step fails.`,
		Example: `  ingest db migrate --db postgres://ingest@db.internal/ingest --dry-run
  ingest db migrate --db /var/lib/ingest/ingest.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDBMigrate(cmd.Context(), cmd.OutOrStdout(), s, dryRun)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the steps migrate would apply and change nothing")
	return cmd
}

func runDBMigrate(ctx context.Context, w io.Writer, s *settings, dryRun bool) error {
	p, err := store.PendingSteps(ctx, s.db)
	switch {
	case errors.Is(err, store.ErrNoDatabase):
		return usageErrorf("db migrate: no ingest database at --db (INGEST_DB) %s: nothing to migrate "+
			"(the first ingest run creates one at this binary's schema)", s.dbName())
	case err != nil:
		return store.OpenRefused(err)
	}
	if len(p.Steps) == 0 {
		fmt.Fprintf(s.stderr, "db migrate: %s is at schema step %d, this binary's: nothing to do\n", s.dbName(), p.Want)
		return nil
	}
	if dryRun {
		for i, step := range p.Steps {
			fmt.Fprintf(w, "%s\t%d -> %d\n", step, p.Have+i, p.Have+i+1)
		}
		fmt.Fprintf(s.stderr, "db migrate --dry-run: %s is at schema step %d; migrate would apply %d steps to reach %d; nothing changed\n",
			s.dbName(), p.Have, len(p.Steps), p.Want)
		return nil
	}
	// A SQLite file has one host: a daemon of the older binary still
	// running on it would go on writing a schema it does not know.
	release, err := store.ClaimDaemon(s.db)
	var running *store.DaemonRunningError
	if errors.As(err, &running) {
		return usageErrorf("db migrate: a daemon runs on %s (%s): stop it first, then migrate and start the new binary", s.dbName(), running.Holder)
	}
	if err != nil {
		return err
	}
	defer release()
	db, err := s.host().OpenStore(ctx)
	if err != nil {
		return err
	}
	db.Close()
	fmt.Fprintf(s.stderr, "db migrate: %s upgraded from schema step %d to %d (%d steps)\n", s.dbName(), p.Have, p.Want, len(p.Steps))
	return nil
}
