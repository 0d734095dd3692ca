package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/ingestworks/ingest/store"
)

// DiskFull is what SQLite says when the disk under db's file is full, met
// for real: a write through db's one writer connection, which may not grow
// the file (PRAGMA max_page_count), the room given back after. A test
// hands it to a part that writes the same file (the ledger, the embedded
// limiter, the API's counts) to see how that part's error reads.
func DiskFull(t testing.TB, db *store.DB) error {
	t.Helper()
	ctx := context.Background()
	w := db.Writer()
	var was, pages int64
	if err := w.QueryRowContext(ctx, `PRAGMA max_page_count`).Scan(&was); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ExecContext(ctx, `CREATE TABLE storetest_fill (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	if err := w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		t.Fatal(err)
	}
	_, full := w.ExecContext(ctx, `INSERT INTO storetest_fill VALUES (zeroblob(1048576))`)
	if _, err := w.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, was)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ExecContext(ctx, `DROP TABLE storetest_fill`); err != nil {
		t.Fatal(err)
	}
	if full == nil {
		t.Fatal("storetest: a write past the file's room went through: no full disk to hand on")
	}
	return full
}
