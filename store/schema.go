package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
)

// WALLimit is the size the WAL is cut back to after a checkpoint
// (journal_size_limit): without it SQLite keeps the WAL at its largest
// until the last connection closes, so one large write (a prune, an
// upgrade) would leave a daemon beside a WAL of that size.
const WALLimit = 64 << 20

// DSN is the data source name every connection to the database uses.
// Pragmas sit in the DSN so that each pooled connection gets them, busy
// timeout first; WAL lets readers run beside the one writer; immediate
// transactions take the write lock up front instead of failing to upgrade.
func DSN(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", WALLimit))
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	}
	q.Set("_txlock", "immediate")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// ReadOnlyDSN is the data source name of a connection that never writes:
// mode=ro, or immutable=1 when the file cannot change under it (a
// read-only directory), which needs no shared-memory file.
func ReadOnlyDSN(path string, immutable bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)")
	if immutable {
		q.Set("immutable", "1")
	} else {
		q.Set("mode", "ro")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Migrate brings the database to SchemaVersion inside one immediate
// transaction, so that concurrent processes upgrade it once and a failure
// leaves it as it was: every numbered file of migrations/sqlite it lacks
// is applied in order, a new database's from the first.
func Migrate(ctx context.Context, db *sql.DB) error {
	if err := incrementalVacuum(ctx, db); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("migrate: read user_version: %w", err)
	}
	switch {
	case v == SchemaVersion:
		return nil
	case v > SchemaVersion:
		return &VersionError{Have: v, Want: SchemaVersion}
	}
	for _, m := range sqliteMigrations[v:] {
		if err := m.apply(ctx, tx, v == 0); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return fmt.Errorf("migrate: set user_version: %w", err)
	}
	return tx.Commit()
}

// incrementalVacuum makes a new, empty database file one that retention can
// shrink (auto_vacuum INCREMENTAL). The mode is written into the file by a
// VACUUM, which costs nothing on an empty file; an older file keeps its
// mode (changing it would rewrite the whole file). It is done here, once,
// and not as a pragma in the DSN: there, every new connection would run it,
// and it waits for the write lock, busy_timeout long, whatever the
// caller's deadline.
func incrementalVacuum(ctx context.Context, db *sql.DB) error {
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
		return fmt.Errorf("migrate: read schema: %w", err)
	}
	if tables > 0 {
		return nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	for _, q := range []string{`PRAGMA auto_vacuum = INCREMENTAL`, `VACUUM`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("migrate: %s: %w", q, err)
		}
	}
	return nil
}
