package clients

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ingestworks/ingest/internal/pgtest"
	"github.com/ingestworks/ingest/store"
)

// The clients' tests run each once on SQLite (a file in the test's temp
// dir) and once on a real PostgreSQL (internal/pgtest), each opened by
// store.Open as the program opens it, so that both keep one behaviour.

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// both is the open database as the tests use it: the store, and the
// clients in it.
type both struct {
	*store.DB
	*Clients
}

// eachStore runs fn as a subtest on each kind of database.
func eachStore(t *testing.T, fn func(t *testing.T, db both)) {
	t.Helper()
	for _, o := range []struct {
		name string
		url  func(t testing.TB) string
	}{
		{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "ingest.db") }},
		{"postgres", pgtest.URL},
	} {
		t.Run(o.name, func(t *testing.T) {
			db, err := store.Open(context.Background(), o.url(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			fn(t, both{db, New(db)})
		})
	}
}
