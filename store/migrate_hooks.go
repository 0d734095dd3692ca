package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// sqliteHooks are the steps of migrations/sqlite that must compute beside
// their SQL, by number.
var sqliteHooks = map[int]func(context.Context, *sql.Tx, func() error) error{
	3:  rekeyCursorsAfter, // 0003_statuses.sql
	4:  fillSearchIndex,   // 0004_search_index.sql
	10: withUpgradeCache,  // 0010_days.sql
}

// rekeyCursorsAfter runs step 3's rebuild of runs and backfill_cursors,
// then names every old cursor by its parts.
func rekeyCursorsAfter(ctx context.Context, tx *sql.Tx, apply func() error) error {
	if err := apply(); err != nil {
		return err
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

// fillSearchIndexSQL indexes the next batch of videos after vid ?1.
const fillSearchIndexSQL = `
INSERT INTO videos_fts (rowid, title, description, tags, channel_title)
SELECT vid, ingest_words(title), ingest_words(description),
  ingest_words((SELECT group_concat(value, ' ') FROM json_each(tags))),
  ingest_words(channel_title)
FROM videos WHERE vid > ?1 AND vid <= ?2`

// rebuildBatch is how many videos are indexed between progress lines.
const rebuildBatch = 20_000

// fillSearchIndex replaces version 1's index (unicode61 over the raw
// text) with the normalized one (apply) and indexes every stored video
// again, in the migration's transaction: a failure leaves the old index whole. Large
// databases log a progress line per batch (200,000 videos take about a
// minute).
func fillSearchIndex(ctx context.Context, tx *sql.Tx, apply func() error) error {
	if err := apply(); err != nil {
		return fmt.Errorf("replace search index: %w", err)
	}
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM videos`).Scan(&total); err != nil {
		return fmt.Errorf("count videos: %w", err)
	}
	log := slog.Default().With("step", "search index")
	if total > rebuildBatch {
		log.InfoContext(ctx, "store: rebuilding the search index", "videos", total)
	}
	var last, done int64
	for done < total {
		n, hi, err := fillBatch(ctx, tx, last)
		if err != nil {
			return fmt.Errorf("rebuild search index after video %d: %w", last, err)
		}
		if n == 0 {
			break
		}
		last, done = hi, done+n
		if total > rebuildBatch {
			log.InfoContext(ctx, "store: rebuilding the search index", "done", done, "videos", total)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO videos_fts (videos_fts) VALUES ('optimize')`); err != nil {
		return fmt.Errorf("optimize search index: %w", err)
	}
	return nil
}

// fillBatch indexes up to rebuildBatch videos after vid last and returns
// how many it indexed and the highest vid among them.
func fillBatch(ctx context.Context, tx *sql.Tx, last int64) (n, hi int64, err error) {
	var top sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT max(vid), count(*) FROM (SELECT vid FROM videos WHERE vid > ? ORDER BY vid LIMIT ?)`,
		last, rebuildBatch).Scan(&top, &n)
	if err != nil || !top.Valid {
		return 0, 0, err
	}
	_, err = tx.ExecContext(ctx, fillSearchIndexSQL, last, top.Int64)
	return n, top.Int64, err
}

// withUpgradeCache runs step 10, which fills the daily rollup, with a page
// cache that holds the whole rollup (upgradeCache): the entries come in
// run order, so each upsert lands on a page of another video, and with
// SQLite's small default cache those pages were spilled and read back
// again and again.
func withUpgradeCache(ctx context.Context, tx *sql.Tx, apply func() error) error {
	return withCache(ctx, tx, upgradeCache, apply)
}

// upgradeCache is the page cache of a long upgrade step, in KiB.
const upgradeCache = 128 << 10

// withCache runs f with the connection's page cache at kib KiB, then puts
// back the size it had.
func withCache(ctx context.Context, tx *sql.Tx, kib int, f func() error) error {
	var was int
	if err := tx.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&was); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d`, -kib)); err != nil {
		return err
	}
	err := f()
	_, rerr := tx.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA cache_size = %d`, was))
	return errors.Join(err, rerr)
}
