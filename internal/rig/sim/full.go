package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/ingestworks/ingest/store"
)

// fill makes the disk under the daemon's database full for d: its writer
// connection may not grow the file past the pages it has
// (PRAGMA max_page_count), so that a write that needs a new page fails
// as on a full disk, "database or disk is full", until the room comes
// back; reads, and writes that fit the pages there are, go on. The
// pragma is the connection's own, set through the store's one writer
// connection, which it hands to one caller at a time; a process started
// meanwhile has room. It returns when the room came back, and whether
// the daemon's database was open to fill.
func fill(db *store.DB, d time.Duration) (bool, error) {
	if db == nil {
		return false, nil
	}
	ctx := context.Background()
	w := db.Writer()
	var was, pages int64
	if err := w.QueryRowContext(ctx, `PRAGMA max_page_count`).Scan(&was); err != nil {
		return false, fmt.Errorf("fill the disk: %w", err)
	}
	if err := w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		return false, fmt.Errorf("fill the disk: %w", err)
	}
	if _, err := w.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		return false, fmt.Errorf("fill the disk: %w", err)
	}
	time.Sleep(d)
	if _, err := w.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, was)); err != nil {
		return true, fmt.Errorf("give the disk its room back: %w", err)
	}
	return true, nil
}
