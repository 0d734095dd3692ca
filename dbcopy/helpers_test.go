package dbcopy

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

// The stores' fixtures are internal/rig/storetest's, shared with the other
// packages built on the store.
var (
	open           = storetest.OpenURL
	count          = storetest.Count
	tablesOf       = storetest.Tables
	integrityCheck = storetest.CheckIndex
)

func vid(id, title string) ingest.Video { return storetest.Video(id, title, t0) }

// run starts a run in region at at and stores a page of videos in it.
func run(t testing.TB, db *store.DB, kind ingest.PageKind, region string, at time.Time, videos ...ingest.Video) {
	t.Helper()
	storetest.Run(t, db, kind, region, at, storetest.Page(kind, region, 1, at, videos...))
}

// Copy is a copy in one step: Bulk, then both sides summed in the
// snapshot it read.
func Copy(ctx context.Context, src, dst *store.DB, progress func(done, total int64)) ([]TableSums, error) {
	return copyThen(ctx, src, dst, progress, true)
}
