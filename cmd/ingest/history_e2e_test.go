package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/report"
)

func TestHistoryShowsChartsAndViews(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	movedRuns(t, h, "GB,AU")
	db := openDB(t, h.db())
	// A video on both GB runs: the chart's top of the first run.
	var id string
	if err := db.QueryRow(`SELECT v.id FROM trending_entries e JOIN videos v ON v.vid = e.vid
		WHERE e.region = 'GB' GROUP BY v.vid HAVING count(*) = 2 ORDER BY min(e.rank) LIMIT 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	res := h.mustRun(0, "history", "--json", "--", id) // ids may start with -
	var got report.HistoryJSON
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	if got.ID != id || len(got.Charts) == 0 || got.Charts[0].Region != "GB" || got.Charts[0].Runs != 2 {
		t.Fatalf("history = %+v, want GB's chart with 2 runs first", got)
	}
	if len(got.Views) == 0 || got.Views[len(got.Views)-1].Views < got.Views[0].Views {
		t.Errorf("views %+v, want a series that grows", got.Views)
	}
	text := h.mustRun(0, "history", "--", id).stdout
	for _, want := range []string{id, "GB", "BEST", "views "} {
		if !strings.Contains(text, want) {
			t.Errorf("history text lacks %q:\n%s", want, text)
		}
	}
	if !strings.ContainsAny(text, "▁▂▃▄▅▆▇█") {
		t.Errorf("history text has no sparkline:\n%s", text)
	}
	if res := h.mustRun(1, "history", "no-such-vid"); !strings.Contains(res.stderr, "no-such-vid") {
		t.Errorf("unknown video: stderr %q", res.stderr)
	}
	h.mustRun(2, "history")
	h.mustRun(2, "history", "--width", "3", "--", id)
	if res := h.mustRun(2, "history", "-pghCU2YJKs"); !strings.Contains(res.stderr, "after --") {
		t.Errorf("an id starting with -: stderr %q does not say to put it after --", res.stderr)
	}
}
