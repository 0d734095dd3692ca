package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// upgradeStatusesCursorsSchedule lets runs end interrupted or skipped,
// names every backfill cursor by its parts (with an open-ended --until
// kept as ” instead of the time it first ran), and adds the schedule
// table. SQLite cannot alter a CHECK, so runs and backfill_cursors are
// rebuilt with their rows; the foreign keys into runs are checked at
// commit, when every run is back under its id.
func upgradeStatusesCursorsSchedule(ctx context.Context, tx *sql.Tx) error {
	steps := []string{
		`PRAGMA defer_foreign_keys = ON`,
		`CREATE TEMP TABLE runs_copy AS SELECT * FROM runs`,
		`DROP TABLE runs`,
		runsV2,
		`INSERT INTO runs SELECT * FROM temp.runs_copy`,
		`DROP TABLE temp.runs_copy`,
		`CREATE INDEX runs_last ON runs (kind, region, id)`,
		`CREATE TEMP TABLE cursors_copy AS SELECT * FROM backfill_cursors`,
		`DROP TABLE backfill_cursors`,
		cursorsV2,
		`INSERT INTO backfill_cursors (key, page_token, pages, videos, units, reached, done, updated_ms)
		 SELECT key, page_token, pages, videos, units, reached, done, updated_ms FROM temp.cursors_copy`,
		`DROP TABLE temp.cursors_copy`,
		scheduleV2,
	}
	for _, s := range steps {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%.40s: %w", strings.TrimSpace(s), err)
		}
	}
	return rekeyCursors(ctx, tx)
}

// oldCursor is a cursor as version 1 named it: region|since|until|query,
// where an absent --until was written as the time of the first run.
type oldCursor struct {
	key                  string
	region, since, until string
	query                string
	untilT               time.Time
}

// rekeyCursors fills the new columns from the old keys. An old key whose
// until is the moment a search run of its region started (within two
// minutes before it) was open-ended: it takes the open-ended key, and that
// moment becomes the publishedBefore its searches keep sending. When two
// old cursors name the same open-ended backfill, the one furthest along
// takes the name; the others keep their dated one.
func rekeyCursors(ctx context.Context, tx *sql.Tx) error {
	olds, err := readOldCursors(ctx, tx)
	if err != nil {
		return err
	}
	taken := map[string]bool{}
	for _, c := range olds {
		until, before, key := c.until, c.until, c.key
		open, err := startedAt(ctx, tx, c)
		if err != nil {
			return err
		}
		if newKey := strings.Join([]string{c.region, c.since, "", c.query}, "|"); open && !taken[newKey] {
			taken[newKey], until, key = true, "", newKey
		}
		if _, err := tx.ExecContext(ctx, `UPDATE backfill_cursors SET key = ?, region = ?, since = ?,
			until = ?, query = ?, before = ? WHERE key = ?`, key, c.region, c.since, until, c.query, before, c.key); err != nil {
			return fmt.Errorf("rekey cursor %q: %w", c.key, err)
		}
	}
	return nil
}

func readOldCursors(ctx context.Context, tx *sql.Tx) ([]oldCursor, error) {
	rows, err := tx.QueryContext(ctx, `SELECT key FROM backfill_cursors ORDER BY pages DESC, updated_ms DESC`)
	if err != nil {
		return nil, fmt.Errorf("read cursors: %w", err)
	}
	defer rows.Close()
	var out []oldCursor
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			return nil, fmt.Errorf("read cursors: %w", err)
		}
		parts := strings.SplitN(key, "|", 4)
		if len(parts) != 4 {
			continue // not a key version 1 wrote; left as it is
		}
		c := oldCursor{key: key, region: parts[0], since: parts[1], until: parts[2], query: parts[3]}
		c.untilT, _ = time.Parse(time.RFC3339, c.until)
		out = append(out, c)
	}
	return out, rows.Err()
}

// startedAt says whether a search run of c's region started within two
// minutes after c's until: the until was the run's own "now".
func startedAt(ctx context.Context, tx *sql.Tx, c oldCursor) (bool, error) {
	if c.untilT.IsZero() {
		return false, nil
	}
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE kind = 'search' AND region = ?
		AND started_ms BETWEEN ? AND ?`, c.region, c.untilT.UnixMilli(), c.untilT.Add(2*time.Minute).UnixMilli()).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("runs of cursor %q: %w", c.key, err)
	}
	return n > 0, nil
}

const runsV2 = `CREATE TABLE runs (
  id          INTEGER PRIMARY KEY,
  region      TEXT    NOT NULL,
  kind        TEXT    NOT NULL CHECK (kind IN ('trending', 'search')),
  status      TEXT    NOT NULL CHECK (status IN ('running', 'completed', 'stopped', 'interrupted',
                                                 'skipped', 'failed')),
  started_ms  INTEGER NOT NULL,
  finished_ms INTEGER,
  pages       INTEGER NOT NULL DEFAULT 0,   -- highest page number stored
  videos      INTEGER NOT NULL DEFAULT 0,   -- entries stored by this run
  message     TEXT    NOT NULL DEFAULT '',
  retry_at_ms INTEGER                       -- a stopped run: when it could go on
)`

const cursorsV2 = `CREATE TABLE backfill_cursors (
  key        TEXT    PRIMARY KEY,
  region     TEXT    NOT NULL DEFAULT '',
  since      TEXT    NOT NULL DEFAULT '',   -- RFC 3339
  until      TEXT    NOT NULL DEFAULT '',   -- RFC 3339; '': open-ended
  query      TEXT    NOT NULL DEFAULT '',
  before     TEXT    NOT NULL DEFAULT '',   -- RFC 3339: the publishedBefore its searches send,
                                            -- fixed at its first page so page tokens stay valid
  page_token TEXT    NOT NULL DEFAULT '',
  pages      INTEGER NOT NULL DEFAULT 0,
  videos     INTEGER NOT NULL DEFAULT 0,
  units      INTEGER NOT NULL DEFAULT 0,
  reached    TEXT    NOT NULL DEFAULT '',   -- RFC 3339: how far back it got
  done       INTEGER NOT NULL DEFAULT 0 CHECK (done IN (0, 1)),
  updated_ms INTEGER NOT NULL
) WITHOUT ROWID`

const scheduleV2 = `CREATE TABLE schedule (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  every_ms   INTEGER NOT NULL,
  regions    TEXT    NOT NULL,              -- comma-separated, in schedule order
  updated_ms INTEGER NOT NULL
)`
