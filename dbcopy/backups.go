package dbcopy

// A SQLite database's backups: `ingest db backup --out FILE` and the
// daemon's schedule (run --backup-to DIR). A backup is made by SQLite's
// backup API in one read of the database while its worker writes, opened
// and held to what that read summed (Backup, Verify), written beside its
// name and renamed only then: a file under a backup's name is always one
// that reads and holds every row its source held at its moment.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/export"
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

// Opener opens the database at path read-only (the builder's open): a
// backup opens the file it wrote to verify it.
type Opener func(ctx context.Context, path string) (*store.DB, error)

// BackupInto writes db's backup beside file, verifies it (opened by open)
// and renames it to file.
func BackupInto(ctx context.Context, db *store.DB, file string, open Opener) (Backed, error) {
	tmp, err := export.CreateBeside(file)
	if err != nil {
		return Backed{}, fmt.Errorf("backup: %w", err)
	}
	tmp.Close()
	part := tmp.Name()
	defer removeSQLite(part) // after the rename, only what a failure left
	sums, err := Backup(ctx, db, part)
	if err != nil {
		return Backed{}, err
	}
	if err := verifyBackup(ctx, part, sums, open); err != nil {
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

// DumpInto writes the PostgreSQL database at rawURL into a file beside
// file with pg_dump, has pg_restore read it back whole, and renames it to
// file: as a SQLite backup, a file under file's name is always whole.
func DumpInto(ctx context.Context, rawURL, file string) (Backed, error) {
	tmp, err := export.CreateBeside(file)
	if err != nil {
		return Backed{}, fmt.Errorf("backup: %w", err)
	}
	tmp.Close()
	part := tmp.Name()
	defer os.Remove(part) // after the rename, only what a failure left
	tables, err := store.Dump(ctx, rawURL, part)
	if err != nil {
		return Backed{}, fmt.Errorf("backup: %w", err)
	}
	st, err := os.Stat(part)
	if err != nil {
		return Backed{}, fmt.Errorf("backup: %w", err)
	}
	if err := export.Replace(part, file, BackupInstead); err != nil {
		return Backed{}, fmt.Errorf("backup: %s: %w", file, err)
	}
	return Backed{File: file, Bytes: st.Size(), Tables: tables, Rows: -1}, nil
}

// verifyBackup opens the backup at part read-only and holds it to sums.
func verifyBackup(ctx context.Context, part string, sums []TableSums, open Opener) error {
	b, err := open(ctx, part)
	if err != nil {
		return fmt.Errorf("backup: open the copy to verify it: %w", err)
	}
	differ, err := Verify(ctx, b, sums)
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

// Observer is told of each scheduled backup: when one was taken, or that
// one failed (the daemon's metrics).
type Observer interface {
	Took(at time.Time)
	Failed()
}

// Schedule is the daemon's schedule of backups of one database, with what
// it runs by.
type Schedule struct {
	Backups
	DB      *store.DB
	Open    Opener
	Observe Observer
	Clock   ingest.Clock
	Logger  *slog.Logger
}

// backupPrefix and backupSuffix frame a scheduled backup's name around
// its time (UTC), so that the names sort as the backups were taken.
const (
	backupPrefix = "ingest-"
	backupSuffix = ".db"
	backupStamp  = "20060102T150405Z"
)

// Run backs the database up into b.Dir every b.Every, beside the
// passes (a backup reads, and the passes' writer never waits on it),
// keeping the newest b.Keep, and tells b.Observe each one's time. The
// first is due b.Every after the newest in b.Dir, at once when there is
// none. It returns when ctx ends or stop is closed.
func (b *Schedule) Run(ctx context.Context, stop <-chan struct{}) {
	b.removePartBackups(b.Dir)
	last := newestBackup(b.Dir)
	if !last.IsZero() {
		b.Observe.Took(last)
	}
	for {
		wait := b.Every - clock.Since(b.Clock, last)
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
		last = b.backupNow(ctx)
	}
}

// backupNow takes one scheduled backup and removes those past b.Keep; it
// returns the time the schedule counts the next from: this backup's, or
// now when it failed (the next is tried a period on).
func (b *Schedule) backupNow(ctx context.Context) time.Time {
	at := b.Clock.Now()
	file := filepath.Join(b.Dir, backupPrefix+at.UTC().Format(backupStamp)+backupSuffix)
	done, err := BackupInto(ctx, b.DB, file, b.Open)
	if err != nil {
		if ctx.Err() == nil {
			b.Observe.Failed()
			b.Logger.Warn("backup failed: the next is tried at the next period", "file", file, "every", b.Every, ingest.LogErr, err)
		}
		return at
	}
	b.Observe.Took(at)
	if err := b.DB.KeepBackedUp(ctx, at); err != nil {
		b.Logger.Warn("the backup is whole, but its time was not recorded in the database", "file", file, ingest.LogErr, err)
	}
	b.Logger.Info("backed up the database", "file", file, "bytes", done.Bytes, "rows", done.Rows,
		"took", b.Clock.Now().Sub(at).Round(time.Millisecond))
	for _, old := range backupsPast(b.Dir, b.Keep) {
		if err := os.Remove(old); err != nil {
			b.Logger.Warn("could not remove a backup past --backup-keep", "file", old, ingest.LogErr, err)
		}
	}
	return at
}

// removePartBackups removes what backups killed before their rename (a
// daemon's SIGKILL, a crash) left in dir: .ingest-TIME.db.PID.N, beside
// the name each would have had.
func (b *Schedule) removePartBackups(dir string) {
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
			b.Logger.Info("removed the part of a backup that was killed before it was whole", "file", l.Name, "bytes", l.Bytes)
		}
		if err != nil {
			b.Logger.Warn("could not remove the part of a killed backup", "dir", dir, ingest.LogErr, err)
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
func newestBackup(dir string) time.Time {
	_, times := backups(dir)
	if len(times) == 0 {
		return time.Time{}
	}
	return slices.MaxFunc(times, time.Time.Compare)
}

// backupsPast are the scheduled backups in dir older than the newest keep.
func backupsPast(dir string, keep int) []string {
	names, _ := backups(dir)
	if len(names) <= keep {
		return nil
	}
	return names[:len(names)-keep]
}

// removeSQLite removes a SQLite file with its write-ahead log and shared
// memory beside it.
func removeSQLite(path string) {
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(f)
	}
}
