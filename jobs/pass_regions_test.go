package jobs_test

import (
	"context"
	"testing"

	"github.com/ingestworks/ingest"
)

// TestPassStoresRegionsBeyondTheDefaults: regions beyond the defaults, as
// a user names them: every one the catalogue holds is charted upstream, so
// each region's pass stores its chart whole, every video at a rank of its
// own, and none is skipped.
func TestPassStoresRegionsBeyondTheDefaults(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	codes := []string{"JP", "KR", "MX", "ES", "IT", "NG", "ZA", "EG", "SE", "PL"}
	for _, code := range codes {
		if res := r.pass(code).Run(context.Background()); res.Err != nil {
			t.Errorf("%s: the pass ended %s: %v", code, res.Status, res.Err)
		}
	}
	type run struct {
		id             int64
		status         string
		pages, videos  int
		entries, ranks int
	}
	rows, err := r.db.Reader().Query(`SELECT id, region, status, pages, videos,
		(SELECT count(*) FROM trending_entries e WHERE e.run_id = runs.id),
		(SELECT count(DISTINCT rank) FROM trending_entries e WHERE e.run_id = runs.id)
		FROM runs WHERE kind = 'trending' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]run{}
	for rows.Next() {
		var x run
		var region string
		if err := rows.Scan(&x.id, &region, &x.status, &x.pages, &x.videos, &x.entries, &x.ranks); err != nil {
			t.Fatal(err)
		}
		last[region] = x
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(last) != len(codes) {
		t.Errorf("%d regions have a trending run, want %d", len(last), len(codes))
	}
	for _, code := range codes {
		n := r.fake.ChartLength(code)
		x, ok := last[code]
		if !ok {
			t.Errorf("%s: no trending run stored", code)
			continue
		}
		if x.status != string(ingest.StatusCompleted) || x.pages != (n+49)/50 || x.videos != n || x.entries != n {
			t.Errorf("%s: got run %d status %q, pages %d, videos %d, entries %d; want completed, %d pages, %d videos, %d entries",
				code, x.id, x.status, x.pages, x.videos, x.entries, (n+49)/50, n, n)
		}
		if x.ranks != n {
			t.Errorf("%s: got %d distinct ranks in run %d, want %d", code, x.ranks, x.id, n)
		}
	}
}
