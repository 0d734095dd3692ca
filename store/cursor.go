package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// Cursor is where a backfill got to; the type lives in the root package,
// where regions' backfill job speaks it.
type Cursor = ingest.Cursor

// CursorKey names the backfill of region between since and until (zero:
// open) for query (empty: any video).
func CursorKey(region string, since, until time.Time, query string) string {
	day := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	return strings.ToUpper(region) + "|" + day(since) + "|" + day(until) + "|" + query
}

// Cursor returns the cursor named key; ok is false when there is none.
func (db *DB) Cursor(ctx context.Context, key string) (c Cursor, ok bool, err error) {
	var reached string
	var done bool
	var updated int64
	err = db.r.QueryRowContext(ctx, `
SELECT key, page_token, pages, videos, units, reached, done, updated_ms
FROM backfill_cursors WHERE key = ?`, key).Scan(&c.Key, &c.PageToken, &c.Pages,
		&c.Videos, &c.Units, &reached, &done, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Cursor{}, false, nil
	}
	if err != nil {
		return Cursor{}, false, fmt.Errorf("cursor %q: %w", key, err)
	}
	if reached != "" {
		if c.Reached, err = time.Parse(time.RFC3339Nano, reached); err != nil {
			return Cursor{}, false, fmt.Errorf("cursor %q: reached: %w", key, err)
		}
	}
	c.Done, c.Updated = done, time.UnixMilli(updated).UTC()
	return c, true, nil
}

// SaveSearchPage stores a backfill's page and its cursor in one
// transaction, so that a resumed backfill neither skips nor repeats a page.
func (db *DB) SaveSearchPage(ctx context.Context, runID int64, page ingest.Page, cur Cursor) error {
	if page.Kind == "" {
		page.Kind = ingest.Search
	}
	if page.Kind != ingest.Search {
		return fmt.Errorf("save search page %d of run %d: a %s page is not a search page", page.Number, runID, page.Kind)
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.savePage(ctx, tx, runID, page); err != nil {
			return err
		}
		return saveCursor(ctx, tx, cur, page.Fetched)
	})
	if err != nil {
		return fmt.Errorf("save search page %d of run %d: %w", page.Number, runID, err)
	}
	return nil
}

// SaveCursor stores a cursor alone, e.g. to mark a backfill done.
func (db *DB) SaveCursor(ctx context.Context, cur Cursor) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error { return saveCursor(ctx, tx, cur, time.Time{}) })
	if err != nil {
		return fmt.Errorf("save cursor %q: %w", cur.Key, err)
	}
	return nil
}

func saveCursor(ctx context.Context, tx *sql.Tx, c Cursor, at time.Time) error {
	if c.Key == "" {
		return errors.New("cursor has no key")
	}
	if at.IsZero() {
		at = time.Now()
	}
	reached := ""
	if !c.Reached.IsZero() {
		reached = c.Reached.UTC().Format(time.RFC3339Nano)
	}
	_, err := tx.ExecContext(ctx, `
INSERT INTO backfill_cursors (key, page_token, pages, videos, units, reached, done, updated_ms)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET page_token = excluded.page_token,
  pages = excluded.pages, videos = excluded.videos, units = excluded.units,
  reached = excluded.reached, done = excluded.done, updated_ms = excluded.updated_ms`,
		c.Key, c.PageToken, c.Pages, c.Videos, c.Units, reached, c.Done, msOf(at))
	return err
}
