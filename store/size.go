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
