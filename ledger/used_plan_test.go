package ledger

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// A pool's use in its window is read from that pool's calls alone, by
// key, pool and time, on SQLite: not from every pool's calls of the
// window, each looked at for its pool, which made each pool's read (the
// limiter's, at every take and every report) grow with every other pool's
// calls, tracking's above all.
func TestUsedReadsItsPoolAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t)
	now := time.Now().UnixMilli()
	for i, q := range usedSQL {
		rows, err := db.Reader().QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, now-24*3600*1000, 0, "k", "stats", now-25*3600*1000)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, line := range plan {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "SEARCH" && (f[1] == "ledger" || f[1] == "l") && !strings.Contains(line, "pool=?") {
				t.Errorf("read %d: a pool's use reads every pool's calls: %s\nplan: %s", i, line, strings.Join(plan, " | "))
			}
		}
	}
}
