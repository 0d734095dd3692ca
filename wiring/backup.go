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

// Backup writes a verified backup of the SQLite database --db names into
// file (a new file, or a regular one to replace, as the command checked).
func (h *Host) Backup(ctx context.Context, file string) (dbcopy.Backed, error) {
	if store.IsURL(h.DSN) {
		return dbcopy.DumpInto(ctx, h.DSN, file)
	}
	db, err := h.OpenExisting(ctx)
	if err != nil {
		return dbcopy.Backed{}, err
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
func (h *Host) keepBackups(ctx context.Context, db *Database, b dbcopy.Backups, m *metrics.Backups, stop <-chan struct{}) {
	s := &dbcopy.Schedule{Backups: b, DB: db.DB, Open: openBackup, Observe: m, Clock: h.clock(), Logger: h.Logger}
	s.Run(ctx, stop)
}
