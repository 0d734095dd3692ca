package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	"github.com/ingestworks/ingest"
)

// upgrade takes a database from one schema version to the next, inside the
// migration's transaction.
type upgrade func(ctx context.Context, tx *sql.Tx) error

// upgrades[i] takes a database from version i+1 to i+2. schema.sql is always
// the result of version 1 followed by every step (TestUpgradesMatchSchema).
var upgrades = []upgrade{
	upgradeQuota2,                  // 1 -> 2: upgrade_quota.go
	upgradeStatusesCursorsSchedule, // 2 -> 3: upgrade_statuses.go
	upgradeSearchIndex,             // 3 -> 4: upgrade_search.go, the normalized search index
	upgradeGiveBack,                // 4 -> 5: upgrade_giveback.go
	upgradeUnknown,                 // 5 -> 6: unknown.go
	upgradeData,                    // 6 -> 7: upgrade_data.go, categories, stats, thumbnails
	upgradeNotes,                   // 7 -> 8: notes.go, the ledger's id and notes
	upgradeTokens,                  // 8 -> 9: tokens.go, the read API's tokens
	upgradeDays,                    // 9 -> 10: upgrade_days.go, the daily rollup of a video's history
}

// SchemaVersion is the PRAGMA user_version of a database this binary writes.
var SchemaVersion = 1 + len(upgrades)

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
// leaves it as it was: a new database gets schema.sql whole, an older one
// each upgrade step it lacks.
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
	case v == 0:
		if _, err := tx.ExecContext(ctx, ingest.Schema); err != nil {
			return fmt.Errorf("migrate: apply schema.sql: %w", err)
		}
	default:
		if err := runUpgrades(ctx, tx, v); err != nil {
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

// runUpgrades applies the steps from version v to SchemaVersion.
func runUpgrades(ctx context.Context, tx *sql.Tx, v int) error {
	for i := v - 1; i < len(upgrades); i++ {
		if err := upgrades[i](ctx, tx); err != nil {
			return fmt.Errorf("migrate: upgrade schema %d to %d: %w", i+1, i+2, err)
		}
	}
	return nil
}

// execAll is an upgrade step made of plain SQL.
func execAll(stmts string) upgrade {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, stmts)
		return err
	}
}
