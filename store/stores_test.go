package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/pgtest"
)

// The store conformance suite: a test that calls eachStore runs once
// against SQLite (a file in the test's temp dir) and once against a real
// PostgreSQL (internal/rig/pgtest), so that both stores keep one behaviour, as
// river's driver tests keep its drivers'. A test that opens a store
// directly is about SQLite alone (pragmas, the WAL, file paths, upgrades of
// older files).

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// opener opens a new, empty store of one kind for a test.
type opener struct {
	name string
	url  func(t testing.TB) string
}

var openers = []opener{
	{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "ingest.db") }},
	{"postgres", pgtest.URL},
}

// eachStore runs fn as a subtest on each kind of store.
func eachStore(t *testing.T, fn func(t *testing.T, db *DB)) {
	t.Helper()
	for _, o := range openers {
		t.Run(o.name, func(t *testing.T) {
			fn(t, openURL(t, o.url(t)))
		})
	}
}

func openURL(t testing.TB, url string) *DB {
	t.Helper()
	db, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// failInserts makes every insert into table fail, in the store's own
// trigger language.
func failInserts(t *testing.T, db *DB, table string) {
	t.Helper()
	stmts := []string{`CREATE TRIGGER boom BEFORE INSERT ON ` + table + ` BEGIN SELECT RAISE(ABORT, 'boom'); END`}
	if isPG(db) {
		stmts = []string{
			`CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'boom'; END $$`,
			`CREATE TRIGGER boom BEFORE INSERT ON ` + table + ` FOR EACH ROW EXECUTE FUNCTION boom()`,
		}
	}
	for _, q := range stmts {
		if _, err := db.Writer().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}
