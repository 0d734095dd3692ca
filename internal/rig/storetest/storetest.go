// Package storetest opens the databases tests run on: a SQLite file of a
// test's own (Open, Path), copied from one migrated once per test binary,
// and each database the store opens in turn (Each): SQLite and a real
// PostgreSQL (internal/rig/pgtest), each opened by store.Open as the program
// opens it, so that the packages built on the store keep one behaviour on
// both. A test binary that runs Each hands its run to pgtest.Run in its
// TestMain.
package storetest

import (
	"testing"

	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/store"
)

// Each runs fn as a subtest on each kind of database, closed after it: on
// SQLite, a database of the test's own as Open gives it.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, Open(t)) })
	t.Run("postgres", func(t *testing.T) {
		fn(t, OpenURL(t, pgtest.URL(t)))
	})
}
