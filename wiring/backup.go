package wiring

// A SQLite database's backups (dbcopy.BackupInto, dbcopy.Schedule): the
// database opened here, the backup's verification opened as every
// database is.

import (
	"context"

	"github.com/ingestworks/ingest/dbcopy"
	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/store"
)

// BackupInstead is what to do with a backup's --out that names a device, a
// pipe or a directory.
const BackupInstead = dbcopy.BackupInstead

// Backed is a backup made (dbcopy.Backed).
type Backed = dbcopy.Backed

// Backups is run's schedule of backups (dbcopy.Backups).
type Backups = dbcopy.Backups

// Backup writes a verified backup of the SQLite database --db names into
// file (a new file, or a regular one to replace, as the command checked).
func (h *Host) Backup(ctx context.Context, file string) (Backed, error) {
	if store.IsURL(h.DSN) {
		return Backed{}, configErrorf("db backup: --db (INGEST_DB) %s: %w", h.DBName(), store.ErrBackupPostgres)
	}
	db, err := h.OpenExisting(ctx)
	if err != nil {
		return Backed{}, err
	}
	defer db.Close()
	return dbcopy.BackupInto(ctx, db.DB, file, openBackup)
}

// openBackup opens a backup to verify it.
func openBackup(ctx context.Context, path string) (*store.DB, error) {
	b, err := OpenExisting(ctx, path)
	if err != nil {
		return nil, err
	}
	return b.DB, nil
}

// keepBackups runs the daemon's schedule of backups of db until ctx ends
// or stop is closed (dbcopy.Schedule.Run).
func (h *Host) keepBackups(ctx context.Context, db *Database, b Backups, m *metrics.Backups, stop <-chan struct{}) {
	s := &dbcopy.Schedule{Backups: b, DB: db.DB, Open: openBackup, Observe: m, Clock: h.clock(), Logger: h.Logger}
	s.Run(ctx, stop)
}
