package main

// End-to-end tests of the CLI's own promises: what it logs, prints and
// checks says what it stored and did.

import (
	"testing"
)

// A run's log counts what the database holds: a video on several regions'
// charts is one video (and one entry per chart), as the tables count it.
func TestRunOnceLogsStoredCounts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "run", "--once", "--log-format", "json", "--log-level", "debug")
	db := openDB(t, h.db())
	runs := lastRuns(t, db, "trending")
	var summary map[string]any
	for _, l := range jsonLines(t, res.stderr) {
		switch l["msg"] {
		case "run --once":
			summary = l
		case "pass":
			region, _ := l["region"].(string)
			if got, want := l["videos"], float64(runs[region].Videos); got != want {
				t.Errorf("pass %s logged videos=%v, its run stored %v", region, got, want)
			}
		}
	}
	if summary == nil {
		t.Fatalf("no run --once line:\n%s", res)
	}
	videos := queryInt(t, db, `SELECT count(*) FROM videos`)
	entries := queryInt(t, db, `SELECT count(*) FROM trending_entries`)
	if videos == entries {
		t.Fatalf("the fake's charts share no video (%d videos, %d entries): the test shows nothing", videos, entries)
	}
	if got := summary["videos"]; got != float64(videos) {
		t.Errorf("run --once logged videos=%v, the database holds %d videos", got, videos)
	}
	if got := summary["entries"]; got != float64(entries) {
		t.Errorf("run --once logged entries=%v, the database holds %d trending entries", got, entries)
	}
}
