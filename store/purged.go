package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Purged is the data mark (DataMark) the cache named cache was last
// purged up to, and that mark's time; found is false for a cache never
// purged. It is kept in the database, not in a process, so that a landing
// made while every process that purges was down, or while the cache was
// unreachable, is purged by whichever comes first after.
func (db *DB) Purged(ctx context.Context, cache string) (mark string, changed time.Time, found bool, err error) {
	var ms int64
	err = db.r.QueryRowContext(ctx, `SELECT mark, changed_ms FROM purged WHERE cache = ?`, cache).Scan(&mark, &ms)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", time.Time{}, false, nil
	case err != nil:
		return "", time.Time{}, false, fmt.Errorf("purged mark of %s: %w", cache, err)
	}
	return mark, time.UnixMilli(ms).UTC(), true, nil
}

// KeepPurged records that cache took the purge of what moved from was (the
// mark Purged read; found as it said) to mark, changed at changed. It
// keeps it only while the mark kept is still was: two processes that
// purged from the same mark may both send, but the later never moves the
// kept mark past a move only the other purged. ok says it was kept.
func (db *DB) KeepPurged(ctx context.Context, cache, was string, found bool, mark string, changed time.Time) (ok bool, err error) {
	var res sql.Result
	if found {
		res, err = db.w.ExecContext(ctx, `UPDATE purged SET mark = ?, changed_ms = ? WHERE cache = ? AND mark = ?`,
			mark, changed.UnixMilli(), cache, was)
	} else {
		res, err = db.w.ExecContext(ctx, `INSERT INTO purged (cache, mark, changed_ms) VALUES (?, ?, ?)
ON CONFLICT (cache) DO NOTHING`, cache, mark, changed.UnixMilli())
	}
	if err != nil {
		return false, fmt.Errorf("keep purged mark of %s: %w", cache, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("keep purged mark of %s: %w", cache, err)
	}
	return n == 1, nil
}
