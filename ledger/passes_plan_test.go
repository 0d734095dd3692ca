package ledger

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// Each chart's last pass, asked over a long look-back (the report's ages
// read every run they may count from), is found by seeks down each chart's
// runs, newest first, on SQLite: no read of the runs by time (all of them,
// at that look-back) nor a scan of the table, whose rows grow with every
// chart and every day kept.
func TestLastPassesSeeksEachChart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for h := range 48 {
		for _, region := range []string{"US", "GB", "DE"} {
			id, err := db.StartRun(ctx, region, "", ingest.Trending, t0.Add(time.Duration(h)*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0.Add(time.Duration(h)*time.Hour + time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	rows, err := db.Reader().QueryContext(ctx, "EXPLAIN QUERY PLAN "+lastPassesSQL, string(ingest.Trending), t0.Add(-400*24*time.Hour).UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, line := range plan {
		f := strings.Fields(line)
		scan := len(f) >= 2 && f[0] == "SCAN" && (f[1] == "runs" || f[1] == "r" || f[1] == "x")
		if scan || strings.Contains(line, "runs_started") || strings.Contains(line, "started_ms>") {
			t.Errorf("each chart's last pass reads the runs whole or by time: %s\nplan: %s", line, strings.Join(plan, " | "))
		}
	}
	last, err := New(db).LastPasses(ctx, "k", t0.Add(-400*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(47 * time.Hour); len(last) != 3 || !last["US"].Equal(want) || !last["DE"].Equal(want) {
		t.Errorf("last passes %s, want US, GB and DE at %s", fmt.Sprint(last), want)
	}
}
