package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Rolling upgrades on a shared PostgreSQL: one host's newer binary
// migrates the database while an older one still runs on another. The
// older one must not write rows the newer schema could misread, so every
// write transaction of the store first takes the migration lock shared
// (a migration holds it alone: the write waits for it to commit) and reads
// the schema step; a step past this binary's refuses the write with a
// *VersionError naming the upgrade. A SQLite file has one host: its
// writer and a migration take the same file lock, and a newer file is
// refused when it is opened.

// guard: a SQLite file is checked when it is opened.
func (sqliteDialect) guard(context.Context, *sql.Tx, string) error { return nil }

func (pgDialect) guard(ctx context.Context, tx *sql.Tx, path string) error {
	// Two statements: read committed takes each one's snapshot as it
	// starts, so the step is read after the lock, and so after any
	// migration that held it.
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock_shared(?1)`, int64(pgLockKey)); err != nil {
		return fmt.Errorf("wait for a migration: %w", err)
	}
	var step sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(step) FROM schema_version`).Scan(&step); err != nil {
		return fmt.Errorf("read the schema step: %w", err)
	}
	if int(step.Int64) > PGSchemaVersion {
		return &VersionError{Path: path, Have: int(step.Int64), Want: PGSchemaVersion}
	}
	return nil
}
