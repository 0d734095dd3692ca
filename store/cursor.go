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

const cursorColumns = `key, region, since, until, query, before, page_token, pages, videos, units,
  reached, done, updated_ms, pending`

// Cursor returns the cursor named key; ok is false when there is none.
func (db *DB) Cursor(ctx context.Context, key string) (c Cursor, ok bool, err error) {
	c, err = scanCursor(db.r.QueryRowContext(ctx, `SELECT `+cursorColumns+` FROM backfill_cursors WHERE key = ?`, key))
	if errors.Is(err, sql.ErrNoRows) {
		return Cursor{}, false, nil
	}
	if err != nil {
		return Cursor{}, false, fmt.Errorf("cursor %q: %w", key, err)
	}
	return c, true, nil
}

// Cursors returns every backfill's cursor, the latest updated first.
func (db *DB) Cursors(ctx context.Context) ([]Cursor, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+cursorColumns+` FROM backfill_cursors ORDER BY updated_ms DESC, key`)
	if err != nil {
		return nil, fmt.Errorf("cursors: %w", err)
	}
	defer rows.Close()
	var out []Cursor
	for rows.Next() {
		c, err := scanCursor(rows)
		if err != nil {
			return nil, fmt.Errorf("cursors: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cursors: %w", err)
	}
	return out, nil
}

// DeleteCursor forgets a backfill's cursor, so that it starts over; what it
// stored stays.
func (db *DB) DeleteCursor(ctx context.Context, key string) error {
	if _, err := db.w.ExecContext(ctx, `DELETE FROM backfill_cursors WHERE key = ?`, key); err != nil {
		return fmt.Errorf("delete cursor %q: %w", key, err)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

func scanCursor(row scanner) (Cursor, error) {
	var c Cursor
	var since, until, before, reached, pending string
	var updated int64
	err := row.Scan(&c.Key, &c.ID.Region, &since, &until, &c.ID.Query, &before, &c.PageToken,
		&c.Pages, &c.Videos, &c.Units, &reached, &c.Done, &updated, &pending)
	if err != nil {
		return Cursor{}, err
	}
	if pending != "" {
		c.Pending = strings.Split(pending, ",")
	}
	for _, f := range []struct {
		name string
		in   string
		out  *time.Time
	}{{"since", since, &c.ID.Since}, {"until", until, &c.ID.Until}, {"before", before, &c.Before}, {"reached", reached, &c.Reached}} {
		if f.in == "" {
			continue
		}
		if *f.out, err = time.Parse(time.RFC3339Nano, f.in); err != nil {
			return Cursor{}, fmt.Errorf("cursor %q: %s: %w", c.Key, f.name, err)
		}
	}
	c.Updated = time.UnixMilli(updated).UTC()
	return c, nil
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

// SavePending keeps a backfill's cursor with the videos of the page whose
// search was answered (Cursor.Pending), before their details are asked
// for, so that no search is paid for twice.
func (db *DB) SavePending(ctx context.Context, cur Cursor, at time.Time) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error { return saveCursor(ctx, tx, cur, at) })
	if err != nil {
		return fmt.Errorf("save the search of page %d: %w", cur.Pages+1, err)
	}
	return nil
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func saveCursor(ctx context.Context, tx *sql.Tx, c Cursor, at time.Time) error {
	if c.Key == "" {
		return errors.New("cursor has no key")
	}
	_, err := tx.ExecContext(ctx, `
INSERT INTO backfill_cursors (`+cursorColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET page_token = excluded.page_token,
  pages = excluded.pages, videos = excluded.videos, units = excluded.units,
  reached = excluded.reached, done = excluded.done, updated_ms = excluded.updated_ms,
  pending = excluded.pending`,
		c.Key, c.ID.Region, rfc3339(c.ID.Since), rfc3339(c.ID.Until), c.ID.Query, rfc3339(c.Before),
		c.PageToken, c.Pages, c.Videos, c.Units, rfc3339(c.Reached), c.Done, msOf(at), strings.Join(c.Pending, ","))
	return err
}
