package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Size is how big the database is and what it holds.
type Size struct {
	Bytes     int64 // pages in use and free, times the page size
	FreeBytes int64 // free pages: reused by new rows, or given back by vacuum
	// Incremental says whether pruning can shrink the file (auto_vacuum
	// incremental, set when the file is created since schema 7).
	Incremental bool
	// OldestRun is when the oldest kept chart run started, zero with none.
	OldestRun time.Time
}

// Size reads the database's size and its oldest run (one index lookup).
func (db *DB) Size(ctx context.Context) (Size, error) {
	return db.d.size(ctx, db)
}

// sqliteSize is Size on SQLite.
func (db *DB) sqliteSize(ctx context.Context) (Size, error) {
	var s Size
	var pages, free, pageSize, mode int64
	var oldest sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT (SELECT page_count FROM pragma_page_count),
		(SELECT freelist_count FROM pragma_freelist_count), (SELECT page_size FROM pragma_page_size),
		(SELECT auto_vacuum FROM pragma_auto_vacuum), (SELECT min(started_ms) FROM runs WHERE kind = 'trending' AND started_ms > 0)`).
		Scan(&pages, &free, &pageSize, &mode, &oldest)
	if err != nil {
		return s, fmt.Errorf("database size: %w", err)
	}
	s.Bytes, s.FreeBytes, s.Incremental, s.OldestRun = pages*pageSize, free*pageSize, mode == 2, timeOf(oldest)
	return s, nil
}

// pgSize is Size on PostgreSQL: the database's size as the server counts
// it; FreeBytes and Incremental say nothing there.
func (db *DB) pgSize(ctx context.Context) (Size, error) {
	var s Size
	var oldest sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT pg_database_size(current_database()),
  (SELECT min(started_ms) FROM runs WHERE kind = 'trending' AND started_ms > 0)`).Scan(&s.Bytes, &oldest)
	if err != nil {
		return s, fmt.Errorf("database size: %w", err)
	}
	s.OldestRun = timeOf(oldest)
	return s, nil
}

// Held is how far back the upstream's data in the database reaches: the
// oldest of each kind, zero when there is none.
type Held struct {
	Stat     time.Time // the oldest chart run kept, or tracked count
	Video    time.Time // the video whose text was fetched longest ago
	Search   time.Time // the oldest backfill result
	Category time.Time // the oldest category name
}

// Held reads how far back the data reaches, by index: cheap at any size.
func (db *DB) Held(ctx context.Context) (Held, error) {
	var runs, stats, videos, search, cats sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT
  (SELECT min(started_ms) FROM runs WHERE kind = 'trending' AND started_ms > 0),
  (SELECT min(at_ms) FROM video_stats), (SELECT min(last_seen_ms) FROM videos),
  (SELECT min(fetched_ms) FROM search_results), (SELECT min(fetched_ms) FROM categories)`).
		Scan(&runs, &stats, &videos, &search, &cats)
	if err != nil {
		return Held{}, fmt.Errorf("how far back the data reaches: %w", err)
	}
	h := Held{Stat: timeOf(runs), Video: timeOf(videos), Search: timeOf(search), Category: timeOf(cats)}
	if s := timeOf(stats); !s.IsZero() && (h.Stat.IsZero() || s.Before(h.Stat)) {
		h.Stat = s
	}
	return h, nil
}
