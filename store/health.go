package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Health reads a SQLite database at path, which must exist, as ingest
// check does: SQLite's quick_check over every page (the structure of every
// table and index, not whether each index matches its table, which the
// full integrity_check also reads at several times the cost), then the
// free space beside it against what the last day stored. A damaged file
// is a PathError matching ingest.ErrDamaged; a disk with less room than a
// day needs is a DiskFullError. The last day ends at now, the house
// clock's.
func Health(ctx context.Context, path string, now time.Time) (string, error) {
	r, _, err := openReadOnly(ctx, path, false)
	if err != nil {
		return "", fileError(path, err)
	}
	defer r.Close()
	if err := quickCheck(ctx, r, path); err != nil {
		return "", err
	}
	return room(ctx, r, path, now)
}

// quickCheck runs SQLite's quick_check over r's database at path: a
// damaged one is a PathError matching ingest.ErrDamaged.
func quickCheck(ctx context.Context, r *sql.DB, path string) error {
	rows, err := r.QueryContext(ctx, "PRAGMA quick_check(3)")
	if err != nil {
		return fileError(path, err)
	}
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return fileError(path, err)
		}
		for _, l := range strings.Split(line, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "***") {
				found = append(found, l)
			}
		}
	}
	if err := rows.Close(); err != nil {
		return fileError(path, err)
	}
	if err := rows.Err(); err != nil {
		return fileError(path, err)
	}
	if len(found) != 1 || found[0] != "ok" {
		return damaged(path, "SQLite's quick_check found "+strings.Join(found[:min(len(found), 2)], "; "))
	}
	return nil
}

// room compares the free space beside path with what the last day
// stored there: its pages, at the bytes a page has taken in the file so
// far, and RoomPerCall on top.
func room(ctx context.Context, r *sql.DB, path string, now time.Time) (string, error) {
	free, err := FreeBytes(path)
	if err != nil {
		return "quick_check ok; free space unknown on this system", nil
	}
	var all, day, bytes int64
	since := now.Add(-24 * time.Hour).UnixMilli()
	if err := r.QueryRowContext(ctx, `SELECT coalesce(sum(pages), 0), coalesce(sum(CASE WHEN started_ms >= ? THEN pages END), 0),
		(SELECT page_count FROM pragma_page_count) * (SELECT page_size FROM pragma_page_size) FROM runs`, since).Scan(&all, &day, &bytes); err != nil {
		return "", fileError(path, err)
	}
	var dayBytes int64
	if all > 0 {
		dayBytes = day * (bytes / all)
	}
	if free < dayBytes+RoomPerCall {
		return "", &DiskFullError{Path: path, Dir: filepath.Dir(path), Free: free, Day: dayBytes}
	}
	return fmt.Sprintf("quick_check ok; %s free in %s, a day needs %s (the last day's %d pages, and %s kept free before each call)",
		Bytes(free), filepath.Dir(path), Bytes(dayBytes+RoomPerCall), day, Bytes(RoomPerCall)), nil
}
