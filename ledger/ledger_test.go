package ledger

import (
	"os"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
)

// The ledger's tests run each once on SQLite and once on a real PostgreSQL
// (internal/rig/storetest), so that both keep one behaviour.

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// both is the open database as the tests use it: the store, which writes
// the runs, and the ledger on it.
type both struct {
	*store.DB
	*Ledger
}

// eachStore runs fn as a subtest on each kind of database.
func eachStore(t *testing.T, fn func(t *testing.T, db both)) {
	t.Helper()
	storetest.Each(t, func(t *testing.T, db *store.DB) { fn(t, both{db, New(db)}) })
}
