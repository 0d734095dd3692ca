package quota_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
)

// testClockRowAhead: the embedded limiter's clock row is edited 2 hours
// ahead (of a 1-hour window) after 60 units were admitted. Believing it
// would slide the window past them (160 admitted); the limiter must not,
// and must go on deciding: the pool fills to exactly its capacity.
func testClockRowAhead(t *testing.T, db *sql.DB, l limiter, key string) {
	ctx := context.Background()
	for i := range 60 {
		if d, err := l.Take(ctx, ingest.Caller{}, "videos.list"); err != nil || !d.Allowed {
			t.Fatalf("call %d: %+v, %v", i+1, d, err)
		}
	}
	if _, err := db.Exec(`UPDATE quota_clock SET last_ms = last_ms + $1 WHERE quota_key = $2`, (2 * time.Hour).Milliseconds(), key); err != nil {
		t.Fatal(err)
	}
	n := 0
	for range 2 * capacity {
		d, err := l.Take(ctx, ingest.Caller{}, "videos.list")
		if err != nil {
			t.Fatalf("after the edit: %v", err)
		}
		if d.Allowed {
			n++
		}
	}
	t.Logf("clock row +2h after 60 admitted: %d more admitted; %d / %d", n, 60+n, capacity)
	if 60+n != capacity {
		t.Fatalf("%d admitted in the window; want %d", 60+n, capacity)
	}
}

func TestSQLiteFaultClockRowAhead(t *testing.T) {
	t.Parallel()
	db := openDB(t, filepath.Join(t.TempDir(), "clock.db"), false)
	l, err := newSQLite(db, limOpts{QuotaKey: "clock", Costs: faultCosts(t, false), Timeout: 5 * time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	testClockRowAhead(t, db, l, "clock")
}

func TestPostgresFaultClockRowAhead(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	l := pgLimiter(t, url, limOpts{QuotaKey: "clock", Costs: faultCosts(t, false), Timeout: 5 * time.Second})
	testClockRowAhead(t, rawPG(t, url), l, "clock")
}
