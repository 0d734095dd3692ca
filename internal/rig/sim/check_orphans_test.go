package sim

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/store"
)

func TestCheckFindsRowsWhoseParentIsGone(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "ingest.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := history(hourly(3, 1), nil, 1)
	if h.Orphans, err = readOrphans(ctx, db); err != nil {
		t.Fatal(err)
	}
	if f := checkOrphans(h); len(f) != 0 {
		t.Fatalf("a database whose every row has its parent: %q", f)
	}
	// a connection without the foreign keys, as a DSN that lost them opens
	conn, err := db.Writer().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{`PRAGMA foreign_keys = OFF`,
		`INSERT INTO video_regions (vid, region) VALUES (4242, 'US'), (4243, 'GB')`,
		`PRAGMA foreign_keys = ON`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if h.Orphans, err = readOrphans(ctx, db); err != nil {
		t.Fatal(err)
	}
	if f := checkOrphans(h); len(f) != 1 || !strings.Contains(f[0], "rows whose parent is gone: video_regions -> videos: 2") {
		t.Errorf("two regions of a video that is not there: %q", f)
	}
}
