package storetest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ingestworks/ingest/store"
)

// Open opens a SQLite database of the test's own in its temporary
// directory, as store.Open opens the program's, closed when the test
// ends. It starts as a copy of one database migrated once per test
// binary, with a ledger id of its own, as a new file has: a test that opens
// many pays for one migration.
func Open(t testing.TB) *store.DB {
	t.Helper()
	path := copied(t)
	db, err := store.Open(context.Background(), path)
	if err == nil {
		err = newLedgerID(db)
	}
	if err != nil {
		t.Fatalf("storetest: %s: %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Path is such a database's file, in the test's temporary directory, for
// a test that opens it itself (read only, say) or hands it to a program.
func Path(t testing.TB) string {
	t.Helper()
	path := copied(t)
	db, err := store.Open(context.Background(), path)
	if err == nil {
		err = newLedgerID(db)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatalf("storetest: %s: %v", path, err)
	}
	return path
}

// copied writes the migrated database's file in the test's temporary
// directory.
func copied(t testing.TB) string {
	t.Helper()
	tmpl.once.Do(func() { tmpl.file, tmpl.err = migrated() })
	if tmpl.err != nil {
		t.Fatalf("storetest: a migrated database: %v", tmpl.err)
	}
	path := filepath.Join(t.TempDir(), "ingest.db")
	if err := os.WriteFile(path, tmpl.file, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// tmpl is the migrated database's file, built by the first test that asks.
var tmpl struct {
	once sync.Once
	file []byte
	err  error
}

// migrated is the file of a new database, migrated and closed (its
// write-ahead log checkpointed into it).
func migrated() ([]byte, error) {
	dir, err := os.MkdirTemp("", "storetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ingest.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// newLedgerID gives a copy the id that the migration gives each new
// database: the shared limiter tells databases apart by it.
func newLedgerID(db *store.DB) error {
	_, err := db.Writer().Exec(`UPDATE ledger_notes SET value = lower(hex(randomblob(8))) WHERE name = 'ledger_id'`)
	return err
}
