package storetest

import (
	"context"
	"testing"

	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/store"
)

// Each copy of the migrated database is a new database as store.Open
// makes one: at the current schema, empty, with a ledger id of its own.
func TestCopiesAreNewDatabases(t *testing.T) {
	ctx := context.Background()
	ids := map[string]bool{}
	for range 3 {
		for _, db := range []*store.DB{Open(t), opened(t, Path(t))} {
			id, err := ledger.New(db).LedgerID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ids[id] {
				t.Errorf("ledger id %s given twice", id)
			}
			ids[id] = true
			if v, err := store.Version(ctx, db.Path()); err != nil || v != store.SchemaVersion {
				t.Errorf("schema version %d (%v), want %d", v, err, store.SchemaVersion)
			}
			if runs, err := db.ListRuns(ctx, store.RunFilter{Limit: 10}); err != nil || len(runs) != 0 {
				t.Errorf("runs %v (%v), want none", runs, err)
			}
		}
	}
}

func opened(t *testing.T, path string) *store.DB {
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
