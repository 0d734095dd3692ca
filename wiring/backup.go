package wiring

// A SQLite database's backups: `ingest db backup --out FILE` and the
// daemon's schedule (run --backup-to DIR). A backup is made by SQLite's
// backup API in one read of the database while its worker writes, opened
// and held to what that read summed (dbcopy.Backup, Verify), written
// beside its name and renamed only then: a file under a backup's name is
// always one that reads and holds every row its source held at its moment.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/dbcopy"
	"github.com/ingestworks/ingest/export"
	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/store"
)

// BackupInstead is what to do with a backup's --out that names a device, a
// pipe or a directory.
const BackupInstead = "name a new file, or a regular one with --force"

// Backed is a backup made: where, its size, and the rows it holds.
type Backed struct {
	File   string
	Bytes  int64
	Tables int
	Rows   int64
}

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
	return backupInto(ctx, db, file)
}

// backupInto writes db's backup beside file, verifies it and renames it
// to file.
func backupInto(ctx context.Context, db *Database, file string) (Backed, error) {
	tmp, err := export.CreateBeside(file)
	if err != nil {
		return Backed{}, fmt.Errorf("backup: %w", err)
	}
	tmp.Close()
	part := tmp.Name()
	defer removeFile(part) // after the rename, only what a failure left
	sums, err := dbcopy.Backup(ctx, db.DB, part)
	if err != nil {
		return Backed{}, err
	}
	if err := verifyBackup(ctx, part, sums); err != nil {
		return Backed{}, err
	}
	st, err := os.Stat(part)
	if err != nil {
		return Backed{}, fmt.Errorf("backup: %w", err)
	}
	if err := export.Replace(part, file, BackupInstead); err != nil {
		return Backed{}, fmt.Errorf("backup: %s: %w", file, err)
	}
	b := Backed{File: file, Bytes: st.Size(), Tables: len(sums)}
	for _, s := range sums {
		b.Rows += s.Source.Rows
	}
	return b, nil
}

// verifyBackup opens the backup at part read-only and holds it to sums.
func verifyBackup(ctx context.Context, part string, sums []dbcopy.TableSums) error {
	b, err := OpenExisting(ctx, part)
	if err != nil {
		return fmt.Errorf("backup: open the copy to verify it: %w", err)
	}
	differ, err := dbcopy.Verify(ctx, b.DB, sums)
	if err := errors.Join(err, b.Close()); err != nil {
		return fmt.Errorf("backup: verify the copy: %w", err)
	}
	for _, f := range []string{part + "-wal", part + "-shm"} {
		os.Remove(f) // the verification's read; the copy is whole without them
	}
	if len(differ) > 0 {
		var tables []string
		for _, d := range differ {
			tables = append(tables, fmt.Sprintf("%s (%d rows, the source %d)", d.Table, d.Target.Rows, d.Source.Rows))
		}
		return fmt.Errorf("backup: the copy does not hold what the source held in the read it was made of: %s", strings.Join(tables, ", "))
	}
	return nil
}

// Backups is run's schedule of backups: --backup-to, --backup-every and
// --backup-keep.
type Backups struct {
	Dir   string
	Every time.Duration
	Keep  int
}

// backupPrefix and backupSuffix frame a scheduled backup's name around
// its time (UTC), so that the names sort as the backups were taken.
const (
	backupPrefix = "ingest-"
	backupSuffix = ".db"
	backupStamp  = "20060102T150405Z"
)

// keepBackups backs the database up into b.Dir every b.Every, beside the
// passes (a backup reads, and the passes' writer never waits on it),
// keeping the newest b.Keep, and tells m each one's time. The first is
// due b.Every after the newest in b.Dir, at once when there is none. It
// returns when ctx ends or stop is closed.
func (h *Host) keepBackups(ctx context.Context, db *Database, b Backups, m *metrics.Backups, stop <-chan struct{}) {
	h.removePartBackups(b.Dir)
	last := h.newestBackup(b.Dir)
	if !last.IsZero() {
		m.Took(last)
	}
	for {
		wait := b.Every - clock.Since(h.clock(), last)
		if last.IsZero() {
			wait = 0
		}
		t := clock.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
		last = h.backupNow(ctx, db, b, m)
	}
}

// backupNow takes one scheduled backup and removes those past b.Keep; it
// returns the time the schedule counts the next from: this backup's, or
// now when it failed (the next is tried a period on).
func (h *Host) backupNow(ctx context.Context, db *Database, b Backups, m *metrics.Backups) time.Time {
	at := h.now()
	file := filepath.Join(b.Dir, backupPrefix+at.UTC().Format(backupStamp)+backupSuffix)
	done, err := backupInto(ctx, db, file)
	if err != nil {
		if ctx.Err() == nil {
			m.Failed()
			h.Logger.Warn("backup failed: the next is tried at the next period", "file", file, "every", b.Every, ingest.LogErr, err)
		}
		return at
	}
	m.Took(at)
	h.Logger.Info("backed up the database", "file", file, "bytes", done.Bytes, "rows", done.Rows,
		"took", h.now().Sub(at).Round(time.Millisecond))
	for _, old := range h.backupsPast(b.Dir, b.Keep) {
		if err := os.Remove(old); err != nil {
			h.Logger.Warn("could not remove a backup past --backup-keep", "file", old, ingest.LogErr, err)
		}
	}
	return at
}

// removePartBackups removes what backups killed before their rename (a
// daemon's SIGKILL, a crash) left in dir: .ingest-TIME.db.PID.N, beside
// the name each would have had.
func (h *Host) removePartBackups(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), "."+backupPrefix)
		if !ok {
			continue
		}
		stamp, _, ok := strings.Cut(name, backupSuffix+".")
		if !ok {
			continue
		}
		gone, err := export.RemoveLeftovers(filepath.Join(dir, backupPrefix+stamp+backupSuffix))
		for _, l := range gone {
			h.Logger.Info("removed the part of a backup that was killed before it was whole", "file", l.Name, "bytes", l.Bytes)
		}
		if err != nil {
			h.Logger.Warn("could not remove the part of a killed backup", "dir", dir, ingest.LogErr, err)
		}
	}
}

// backups are the scheduled backups in dir, oldest first, with their
// times.
func backups(dir string) ([]string, []time.Time) {
	entries, _ := os.ReadDir(dir)
	var names []string
	var times []time.Time
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), backupPrefix)
		stamp, ok2 := strings.CutSuffix(stamp, backupSuffix)
		at, err := time.Parse(backupStamp, stamp)
		if !ok || !ok2 || err != nil || !e.Type().IsRegular() {
			continue
		}
		names, times = append(names, filepath.Join(dir, e.Name())), append(times, at)
	}
	return names, times // ReadDir sorts by name, and the names by time
}

// newestBackup is the time of the newest scheduled backup in dir; zero
// when there is none.
func (h *Host) newestBackup(dir string) time.Time {
	_, times := backups(dir)
	if len(times) == 0 {
		return time.Time{}
	}
	return slices.MaxFunc(times, time.Time.Compare)
}

// backupsPast are the scheduled backups in dir older than the newest keep.
func (h *Host) backupsPast(dir string, keep int) []string {
	names, _ := backups(dir)
	if len(names) <= keep {
		return nil
	}
	return names[:len(names)-keep]
}
