package wiring

// A database's backups (dbcopy.BackupInto, dbcopy.DumpInto on
// PostgreSQL, dbcopy.Schedule): the database opened here, the backup's
// verification opened as every database is, and its time recorded where
// the daemon's /metrics reads it.

import (
	"context"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/dbcopy"
	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/store"
)

// Backup writes a verified backup of the database --db names into file (a
// new file, or a regular one to replace, as the command checked): SQLite's
// own copy, or pg_dump's on PostgreSQL; then records when it was taken.
func (h *Host) Backup(ctx context.Context, file string) (dbcopy.Backed, error) {
	db, err := h.OpenExisting(ctx)
	if err != nil {
		return dbcopy.Backed{}, err
	}
	defer db.Close()
	at := h.clock().Now()
	var done dbcopy.Backed
	if store.IsURL(h.DSN) {
		done, err = dbcopy.DumpInto(ctx, h.DSN, file)
	} else {
		done, err = dbcopy.BackupInto(ctx, db.DB, file, openBackup)
	}
	if err != nil {
		return done, err
	}
	if err := db.DB.KeepBackedUp(ctx, at); err != nil {
		h.Logger.Warn("the backup is whole, but its time was not recorded: the daemon's ingest_backup_age_seconds does not count it", ingest.LogErr, err)
	}
	return done, nil
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
