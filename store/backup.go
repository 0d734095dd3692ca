package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
)

// ErrBackupPostgres: a backup of a PostgreSQL database is pg_dump's,
// whose dumps its own tools restore.
var ErrBackupPostgres = errors.New("a PostgreSQL database is backed up by ingest db backup --out FILE (pg_dump), from a timer or cron, and restored with pg_restore; give --backup-every alone for /metrics to hold the newest one's age")

// backupStep is how many pages one step of a backup copies: between two
// steps the backup sees whether it was asked to stop.
const backupStep = 1024

// Backup copies the SQLite database db into the file into, page for page,
// through SQLite's backup API, as one read of it sees it while writers go
// on; during is handed the connection that read is made on, in the read,
// so that what it reads (a table's sums) is what the copy holds. into must
// be new or an empty file.
func (db *DB) Backup(ctx context.Context, into string, during func(*sql.Conn) error) error {
	if db.Postgres() {
		return ErrBackupPostgres
	}
	c, err := db.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("backup %s: %w", db.path, err)
	}
	defer c.Close()
	// A read transaction begun here, and held through the copy and
	// during, is the one snapshot both read: the backup API takes the
	// connection's transaction when it has one.
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("backup %s: %w", db.path, err)
	}
	defer c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	var n int64
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		return fmt.Errorf("backup %s: %w", db.path, err)
	}
	if err := c.Raw(func(dc any) error { return copyPages(ctx, dc, into) }); err != nil {
		return fmt.Errorf("backup %s: %w", db.path, fileError(db.path, err))
	}
	if err := during(c); err != nil {
		return fmt.Errorf("backup %s: %w", db.path, err)
	}
	return oneFile(ctx, into)
}

// oneFile turns the copy at path, a WAL database as its source is, to
// SQLite's rollback journal: a backup is then one file, which a reader
// opens read-only with no -wal or -shm beside it, and which a daemon
// started on it turns back to WAL.
func oneFile(ctx context.Context, path string) error {
	w, err := sql.Open(driverName, "file:"+path)
	if err != nil {
		return fmt.Errorf("copy into %s: %w", path, err)
	}
	defer w.Close()
	if _, err := w.ExecContext(ctx, "PRAGMA journal_mode=DELETE"); err != nil {
		return fmt.Errorf("copy into %s: %w", path, err)
	}
	return w.Close()
}

// backuper is modernc's connection as the backup API takes it.
type backuper interface {
	NewBackup(dst string) (*sqlite.Backup, error)
}

// copyPages copies every page the connection dc reads into the file into,
// a step at a time.
func copyPages(ctx context.Context, dc any, into string) error {
	c, ok := dc.(backuper)
	if !ok {
		return fmt.Errorf("the SQLite driver (%T) has no backup API", dc)
	}
	b, err := c.NewBackup(into)
	if err != nil {
		return fmt.Errorf("open %s: %w", into, err)
	}
	for more := true; more; {
		if err := ctx.Err(); err != nil {
			b.Finish()
			return err
		}
		if more, err = b.Step(backupStep); err != nil {
			b.Finish()
			return fmt.Errorf("copy into %s: %w", into, err)
		}
	}
	if err := b.Finish(); err != nil {
		return fmt.Errorf("copy into %s: %w", into, err)
	}
	return nil
}

// QuickCheck runs SQLite's quick_check over every page of db (what ingest
// check runs): a damaged file is a PathError matching ingest.ErrDamaged.
func (db *DB) QuickCheck(ctx context.Context) error {
	if db.Postgres() {
		return nil
	}
	return quickCheck(ctx, db.r, db.path)
}
