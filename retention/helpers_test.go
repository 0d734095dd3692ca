package retention

import (
	"os"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
)

// A test that calls storetest.Each runs once against SQLite (a file in the
// test's temp dir) and once against a real PostgreSQL (internal/rig/pgtest);
// one that opens a store with openTest is about SQLite alone (the WAL, the
// file's size).

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

// The stores' fixtures are internal/rig/storetest's, shared with the other
// packages built on the store.
var (
	openURL        = storetest.OpenURL
	openTest       = storetest.Open
	page           = storetest.Page
	run            = storetest.Run
	finished       = storetest.Finished
	count          = storetest.Count
	integrityCheck = storetest.CheckIndex
)

// small is a pruner whose steps are small, so that a test's few
// megabytes take many of them.
func small(db *store.DB) *pruner {
	pr := newPruner(db)
	pr.vacuumStep, pr.mergePages, pr.walMark = 64, 64, 256<<10
	return pr
}

func i64(n int64) *int64 { return &n }

func vid(id, title string) ingest.Video { return storetest.Video(id, title, t0) }
