// Package storetest runs a test once on each database the store opens:
// SQLite (a file in the test's temporary directory) and a real PostgreSQL
// (internal/pgtest), each opened by store.Open as the program opens it, so
// that the packages built on the store keep one behaviour on both. The
// test binary's TestMain must hand its run to pgtest.Run.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ingestworks/ingest/internal/pgtest"
	"github.com/ingestworks/ingest/store"
)

// Each runs fn as a subtest on each kind of database, closed after it.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
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
			fn(t, db)
		})
	}
}
