package sim

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ingestworks/ingest/store"
)

// fill makes the disk under the daemon's database full for d. For the
// spell's first part (endsFirst) a run's end alone meets it: the disk
// filled by a pass's own pages, between its last page and its end, the
// write that says the pass completed. Then its writer connection may not
// grow the file past the pages it has (PRAGMA max_page_count), so that a
// write that needs a new page fails as on a full disk, "database or disk
// is full", until the room comes back; reads, and writes that fit the
// pages there are, go on. The pragma is the connection's own, set through
// the store's one writer connection, which it hands to one caller at a
// time; a process started meanwhile has room. It returns when the room
// came back, and whether the daemon's database was open to fill.
func fill(db *store.DB, d time.Duration) (bool, error) {
	if db == nil {
		return false, nil
	}
	ctx := context.Background()
	w := db.Writer()
	restore, err := fillEnds(ctx, w)
	if err != nil {
		return false, fmt.Errorf("fill the disk: %w", err)
	}
	first := min(endsFirst, d)
	time.Sleep(first)
	var was, pages int64
	if err := w.QueryRowContext(ctx, `PRAGMA max_page_count`).Scan(&was); err != nil {
		return true, fmt.Errorf("fill the disk: %w", err)
	}
	if err := w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		return true, fmt.Errorf("fill the disk: %w", err)
	}
	if _, err := w.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		return true, fmt.Errorf("fill the disk: %w", err)
	}
	time.Sleep(d - first)
	if err := restore(); err != nil {
		return true, fmt.Errorf("give the disk its room back: %w", err)
	}
	if _, err := w.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, was)); err != nil {
		return true, fmt.Errorf("give the disk its room back: %w", err)
	}
	return true, nil
}

// endsFirst is how long a full disk meets runs' ends alone: longer than
// the stagger between two charts' slots at the default regions, so that a
// pass ends in it.
const endsFirst = 10 * time.Minute

// fillEnds makes a run's end need room there is not, until restore. A
// full disk fails any write that must grow a file, the write-ahead log's
// included, so a run's end, which rewrites its row where it is, fails as
// its pages' writes do, where the page count's limit alone lets it
// through. The end is made to write into a temporary table whose own page
// count is limited likewise, on the writer connection: SQLite then says
// "database or disk is full" as a full disk would, and the database's
// file holds nothing of it.
func fillEnds(ctx context.Context, w *sql.DB) (restore func() error, err error) {
	var was, pages int64
	if err := w.QueryRowContext(ctx, `PRAGMA temp.max_page_count`).Scan(&was); err != nil {
		return nil, err
	}
	if err := execAll(ctx, w, `CREATE TEMP TABLE sim_full (b BLOB)`,
		`CREATE TEMP TRIGGER sim_full_end AFTER UPDATE OF status ON main.runs WHEN new.status <> 'running'
		BEGIN INSERT INTO sim_full VALUES (zeroblob(65536)); END`); err != nil {
		return nil, err
	}
	if err := w.QueryRowContext(ctx, `PRAGMA temp.page_count`).Scan(&pages); err != nil {
		return nil, err
	}
	if err := execAll(ctx, w, fmt.Sprintf(`PRAGMA temp.max_page_count = %d`, pages)); err != nil {
		return nil, err
	}
	return func() error { // SQLite may have cleared the temporary schema once a write met the full file
		return execAll(ctx, w, `DROP TRIGGER IF EXISTS temp.sim_full_end`, `DROP TABLE IF EXISTS temp.sim_full`,
			fmt.Sprintf(`PRAGMA temp.max_page_count = %d`, was))
	}, nil
}

func execAll(ctx context.Context, w *sql.DB, qs ...string) error {
	for _, q := range qs {
		if _, err := w.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}
