package ingest

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"net/url"
)

// Schema is schema.sql, the whole current schema.
//
//go:embed schema.sql
var Schema string

// SchemaVersion is the PRAGMA user_version that Schema produces.
const SchemaVersion = 1

// SQLiteDSN is the data source name every connection to the database uses.
// Pragmas sit in the DSN so that each pooled connection gets them, busy
// timeout first; WAL lets readers run beside the one writer; immediate
// transactions take the write lock up front instead of failing to upgrade.
func SQLiteDSN(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	}
	q.Set("_txlock", "immediate")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Migrate brings the database to SchemaVersion inside one immediate
// transaction, so that concurrent processes upgrade it once and a failure
// leaves it as it was.
func Migrate(ctx context.Context, db *sql.DB) error {
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
		return fmt.Errorf("migrate: database schema version %d is newer than this binary's %d; upgrade ingest", v, SchemaVersion)
	case v != 0:
		return fmt.Errorf("migrate: no upgrade from schema version %d", v)
	}
	if _, err := tx.ExecContext(ctx, Schema); err != nil {
		return fmt.Errorf("migrate: apply schema.sql: %w", err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return fmt.Errorf("migrate: set user_version: %w", err)
	}
	return tx.Commit()
}
