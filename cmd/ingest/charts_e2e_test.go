package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/report"
)

func TestRunOnceFetchesCategoryCharts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.set("INGEST_CATEGORIES", "music,20,trailers")
	res := h.mustRun(0, "run", "--once", "--regions", "US,GB", "--every", "1h", "--log-level", "debug")
	db := openDB(t, h.db())
	for _, c := range []struct {
		region, category, status string
	}{
		{"US", "", "completed"}, {"US", "10", "completed"}, {"US", "20", "completed"}, {"US", "44", "skipped"},
		{"GB", "", "completed"}, {"GB", "10", "completed"}, {"GB", "20", "completed"}, {"GB", "44", "skipped"},
	} {
		if n := queryInt(t, db, `SELECT count(*) FROM runs WHERE region = ? AND category = ? AND status = ?`,
			c.region, c.category, c.status); n != 1 {
			t.Errorf("%s/%s: %d runs %s, want 1\n%s", c.region, c.category, n, c.status, res)
		}
	}
	if n := queryInt(t, db, `SELECT count(*) FROM trending_entries e JOIN videos v ON v.vid = e.vid
		WHERE e.category = '10' AND v.category_id <> '10'`); n != 0 {
		t.Errorf("%d entries of the music chart are not music", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM trending_entries WHERE category = '10'`); n == 0 {
		t.Error("no entries stored for the music charts")
	}
	if !strings.Contains(res.stderr, "charts=8") {
		t.Errorf("the run --once line does not count the 8 charts:\n%s", res.stderr)
	}
	var rep report.JSON
	if err := json.Unmarshal([]byte(h.mustRun(0, "report", "--json", "--regions", "US,GB").stdout), &rep); err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, r := range rep.Regions {
		status[r.Code] = string(r.Status)
	}
	if status["US/10"] != "completed" || status["GB/44"] != "skipped" || status["US"] != "completed" {
		t.Errorf("report statuses = %v, want every chart's", status)
	}
	if res := h.mustRun(2, "run", "--once", "--categories", "knitting"); !strings.Contains(res.stderr, "--categories") {
		t.Errorf("bad category: stderr %q", res.stderr)
	}
}
