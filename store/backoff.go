package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// KeptBackoff is the daemons' wait on a failing upstream as the database
// keeps it: the zero Backoff when none was kept, or the last one ended.
// An ended wait's row is gone; one whose Until has passed stays until a
// chart succeeds, so that the next failure doubles its Wait.
func (db *DB) KeptBackoff(ctx context.Context) (ingest.Backoff, error) {
	var b ingest.Backoff
	var until, wait int64
	err := db.r.QueryRowContext(ctx, `SELECT until_ms, wait_ms, in_a_row, blamed, cause FROM backoff WHERE one = 1`).
		Scan(&until, &wait, &b.InARow, &b.Blamed, &b.Cause)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ingest.Backoff{}, nil
	case err != nil:
		return ingest.Backoff{}, fmt.Errorf("read the upstream's backoff: %w", err)
	}
	b.Until, b.Wait = time.UnixMilli(until).UTC(), time.Duration(wait)*time.Millisecond
	return b, nil
}

// KeepBackoff keeps b as the wait every daemon on the database honours;
// the zero Backoff ends it for all.
func (db *DB) KeepBackoff(ctx context.Context, b ingest.Backoff) error {
	var err error
	if b.Until.IsZero() {
		_, err = db.w.ExecContext(ctx, `DELETE FROM backoff`)
	} else {
		_, err = db.w.ExecContext(ctx, `INSERT INTO backoff (one, until_ms, wait_ms, in_a_row, blamed, cause) VALUES (1, ?, ?, ?, ?, ?)
ON CONFLICT (one) DO UPDATE SET until_ms = excluded.until_ms, wait_ms = excluded.wait_ms, in_a_row = excluded.in_a_row,
blamed = excluded.blamed, cause = excluded.cause`,
			b.Until.UnixMilli(), b.Wait.Milliseconds(), b.InARow, b.Blamed, b.Cause)
	}
	if err != nil {
		return fmt.Errorf("keep the upstream's backoff: %w", err)
	}
	return nil
}

// BackedUp is when the newest backup of db was taken (KeepBackedUp); zero
// when none was recorded.
func (db *DB) BackedUp(ctx context.Context) (time.Time, error) {
	var ms int64
	err := db.r.QueryRowContext(ctx, `SELECT at_ms FROM backed_up WHERE one = 1`).Scan(&ms)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("read the newest backup's time: %w", err)
	}
	return time.UnixMilli(ms).UTC(), nil
}

// KeepBackedUp records that a backup of db was taken at at, unless a later
// one was recorded.
func (db *DB) KeepBackedUp(ctx context.Context, at time.Time) error {
	_, err := db.w.ExecContext(ctx, `INSERT INTO backed_up (one, at_ms) VALUES (1, ?)
ON CONFLICT (one) DO UPDATE SET at_ms = excluded.at_ms WHERE backed_up.at_ms < excluded.at_ms`, at.UnixMilli())
	if err != nil {
		return fmt.Errorf("record the backup's time: %w", err)
	}
	return nil
}
