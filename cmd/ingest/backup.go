package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/dbcopy"
	"github.com/ingestworks/ingest/export"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/util/termtext"
)

func newDBBackupCmd(s *settings) *cobra.Command {
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:   "backup --out FILE",
		Short: "Write a verified copy of a SQLite database while its daemon writes it (costs no quota)",
		Long: `backup copies the SQLite file --db names into FILE with SQLite's backup API,
as one read of it sees it: a daemon writing it goes on, and the copy holds
every row the database held at that moment and none in part. The copy is
then opened and checked (SQLite's quick_check, then each table's rows and a
checksum of them in key order, against the same sums taken in the read the
copy was made of, as db copy sums) before it is renamed to FILE: a file
under FILE's name is always a whole, verified backup.

FILE must not exist, or --force replaces it; a device, a pipe, a directory
or a link that leads to one is never replaced (exit 2). A PostgreSQL --db is
backed up with pg_dump, in its custom format, into FILE the same way, once
pg_restore --list has read it whole; without pg_dump or pg_restore on PATH,
exit 2 naming it.

Restore by stopping the daemon and putting the copy in place of the
database, with no -wal or -shm file of the old one beside it
(docs/operations/backups.md).`,
		Example: `  ingest db backup --db /var/lib/ingest/ingest.db --out /backup/ingest-$(date -u +%Y%m%dT%H%M%SZ).db
  ingest run --backup-to /backup --backup-every 6h --backup-keep 8      # the daemon's own schedule`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDBBackup(cmd.Context(), cmd.OutOrStdout(), s, out, force)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the file to write the backup into: a new file, or a regular one with --force")
	cmd.Flags().BoolVar(&force, "force", false, "replace --out when it is a regular file (never anything else)")
	return cmd
}

func runDBBackup(ctx context.Context, w io.Writer, s *settings, out string, force bool) error {
	file, err := checkBackupOut(s, out, force)
	if err != nil {
		return err
	}
	gone, err := export.RemoveLeftovers(file)
	for _, l := range gone {
		s.logger.Info("removed the partial file of an earlier backup to --out that was killed", "file", l.Name, "bytes", l.Bytes)
	}
	if err != nil {
		s.logger.Warn("could not remove the partial files of earlier backups", "out", out, ingest.LogErr, err)
	}
	done, err := s.host().Backup(ctx, file)
	if err != nil {
		return err
	}
	if store.IsURL(s.db) {
		fmt.Fprintf(w, "%s\t%s\t%d tables\n", done.File, store.Bytes(done.Bytes), done.Tables)
		fmt.Fprintf(s.stderr, "db backup: %s is in %s, written by pg_dump in its custom format: pg_restore --list reads it whole; restore it with pg_restore\n",
			s.dbName(), out)
		return nil
	}
	fmt.Fprintf(w, "%s\t%s\t%d tables\t%s rows\n", done.File, store.Bytes(done.Bytes), done.Tables, termtext.Thousands(done.Rows))
	fmt.Fprintf(s.stderr, "db backup: %s is in %s: quick_check ok, every table's rows and checksum agree with the database's at the backup's moment\n",
		s.dbName(), out)
	return nil
}

// checkBackupOut refuses, before anything is read or written, a backup of
// a PostgreSQL database where pg_dump or pg_restore is not on PATH, and an --out that is missing, is not a regular
// file nor a link to one (export.FileTarget), lies in no writable
// directory, or exists without --force. It returns the file to write.
func checkBackupOut(s *settings, out string, force bool) (string, error) {
	switch {
	case store.IsURL(s.db) && store.DumpTools() != nil:
		return "", usageErrorf("db backup: --db (INGEST_DB) %s is a PostgreSQL database: %v", s.dbName(), store.DumpTools())
	case out == "":
		return "", usageErrorf("db backup: --out (INGEST_DB_BACKUP_OUT) is required: the file to write the backup into")
	case store.IsURL(out):
		return "", usageErrorf("db backup: --out %s: a backup is a file, not a URL (db copy carries a database into PostgreSQL)", store.Redact(out))
	}
	file, err := export.FileTarget(out, dbcopy.BackupInstead)
	if err == nil {
		err = export.CheckPath(file)
	}
	if err != nil {
		return "", usageErrorf("db backup: --out %s: %w", out, err)
	}
	if st, err := os.Stat(file); err == nil && !force {
		return "", usageErrorf("db backup: --out %s: the file exists (%s): give --force to replace it, or another name", out, store.Bytes(st.Size()))
	}
	if same(file, s.db) {
		return "", usageErrorf("db backup: --out %s is the database itself (--db): name another file", out)
	}
	return file, nil
}

// same says whether a and b name one file.
func same(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// backupFlags are run's schedule of backups.
type backupFlags struct {
	to         string
	every      time.Duration
	keep       int
	everyGiven bool
	keepGiven  bool
}

func (f *backupFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.to, "backup-to", "", "the daemon backs its SQLite database up into this directory every --backup-every, as ingest db backup does (ingest-TIME.db, UTC), beside its passes; docs/operations/backups.md")
	daysVar(cmd.Flags(), &f.every, "backup-every", 24*time.Hour, "how often the daemon backs up into --backup-to (6h, 1d), at least 1m; on PostgreSQL, given alone, how often ingest db backup is run, for /metrics' ingest_backup_age_seconds")
	cmd.Flags().IntVar(&f.keep, "backup-keep", 7, "how many of its backups the daemon keeps in --backup-to: the oldest past it are removed after each new one")
}

// validate reads the schedule the flags give: nil when --backup-to is not
// given.
func (f *backupFlags) validate(cmd *cobra.Command, s *settings, once bool) (*dbcopy.Backups, error) {
	f.everyGiven, f.keepGiven = cmd.Flags().Changed("backup-every"), cmd.Flags().Changed("backup-keep")
	if f.to == "" && f.everyGiven && !f.keepGiven && !once && store.IsURL(s.db) {
		// PostgreSQL's backups are ingest db backup's, taken by another
		// process: the daemon serves their age against this period.
		if err := checkEvery("--backup-every (INGEST_RUN_BACKUP_EVERY)", f.every); err != nil {
			return nil, err
		}
		return &dbcopy.Backups{Every: f.every}, nil
	}
	switch {
	case f.to == "" && (f.everyGiven || f.keepGiven):
		return nil, usageErrorf("--backup-every and --backup-keep (INGEST_RUN_BACKUP_EVERY, INGEST_RUN_BACKUP_KEEP) need --backup-to (INGEST_RUN_BACKUP_TO): the directory the backups go into")
	case f.to == "":
		return nil, nil
	case once:
		return nil, usageErrorf("--backup-to (INGEST_RUN_BACKUP_TO) is the daemon's schedule: with --once, run ingest db backup after it instead")
	case store.IsURL(s.db):
		return nil, usageErrorf("--backup-to (INGEST_RUN_BACKUP_TO): --db (INGEST_DB) %s is a PostgreSQL database: %v", s.dbName(), store.ErrBackupPostgres)
	case f.keep < 1:
		return nil, usageErrorf("--backup-keep (INGEST_RUN_BACKUP_KEEP): must be at least 1, got %d", f.keep)
	}
	if err := checkEvery("--backup-every (INGEST_RUN_BACKUP_EVERY)", f.every); err != nil {
		return nil, err
	}
	st, err := os.Stat(f.to)
	switch {
	case err != nil:
		return nil, usageErrorf("--backup-to (INGEST_RUN_BACKUP_TO) %s: %v: create the directory (mkdir -p %s)", f.to, err, f.to)
	case !st.IsDir():
		return nil, usageErrorf("--backup-to (INGEST_RUN_BACKUP_TO) %s: is not a directory: name the directory the backups go into", f.to)
	}
	if err := export.CheckPath(filepath.Join(f.to, "ingest.db")); err != nil {
		return nil, usageErrorf("--backup-to (INGEST_RUN_BACKUP_TO) %s: %w", f.to, err)
	}
	return &dbcopy.Backups{Dir: f.to, Every: f.every, Keep: f.keep}, nil
}
