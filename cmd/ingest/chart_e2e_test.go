package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/web"
)

// TestChartPrintsAChart: ingest chart prints a region's stored chart, its
// JSON is the API's, and --language keeps the videos in that language at
// their ranks in the whole chart.
func TestChartPrintsAChart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "IN")
	chartOf := func(args ...string) web.ChartJSON {
		t.Helper()
		res := h.mustRun(0, append([]string{"chart", "IN", "--json", "--limit", "200"}, args...)...)
		var c web.ChartJSON
		if err := json.Unmarshal([]byte(res.stdout), &c); err != nil {
			t.Fatalf("%v\n%s", err, res)
		}
		return c
	}
	all, hi := chartOf(), chartOf("--language", "HI")
	if all.Region != "IN" || len(all.Entries) < 10 || all.Entries[0].Rank != 1 {
		t.Fatalf("chart IN = %d entries from rank %+v, want the whole chart", len(all.Entries), all.Entries)
	}
	rankOf := map[string]int{}
	for _, e := range all.Entries {
		rankOf[e.ID] = e.Rank
	}
	if hi.Language != "hi" || len(hi.Entries) == 0 || len(hi.Entries) >= len(all.Entries) {
		t.Errorf("chart IN in hi: %d of %d entries, want some", len(hi.Entries), len(all.Entries))
	}
	for _, e := range hi.Entries {
		if !strings.HasPrefix(e.AudioLanguage, "hi") && !strings.HasPrefix(e.Language, "hi") || rankOf[e.ID] != e.Rank {
			t.Errorf("chart IN in hi holds %s (%q/%q) at %d, whole chart %d", e.ID, e.AudioLanguage, e.Language, e.Rank, rankOf[e.ID])
		}
	}
	text := h.mustRun(0, "chart", "in", "--language", "hi", "--limit", "3").stdout
	if lines := strings.Split(strings.TrimSpace(text), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[0], "IN · hi chart, run ") ||
		!strings.Contains(lines[2], hi.Entries[0].Title) || !strings.Contains(lines[2], "https://youtu.be/"+hi.Entries[0].ID) {
		t.Errorf("chart IN in hi, 3 videos: want a heading, a header and 3 lines, the first %s, got\n%s", hi.Entries[0].ID, text)
	}
	if res := h.mustRun(1, "chart", "US"); !strings.Contains(res.stderr, "no chart") {
		t.Errorf("a region never fetched: stderr %q, want no chart", res.stderr)
	}
	if res := h.mustRun(1, "chart", "IN", "--category", "music"); !strings.Contains(res.stderr, "ingest run --once --regions IN --categories music stores one") {
		t.Errorf("a category's chart never fetched: stderr %q, want the run that fetches it", res.stderr)
	}
	if res := h.mustRun(1, "chart", "IN", "--at", "2020-01-01T00:00:00Z"); !strings.Contains(res.stderr, "at or before 2020-01-01T00:00:00Z: its earliest run started at ") ||
		strings.Contains(res.stderr, "ingest run") {
		t.Errorf("a chart asked for before its first run: stderr %q, want its earliest run named", res.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"chart"}, "REGION"}, {[]string{"chart", "XX"}, "XX"}, {[]string{"chart", "IN", "--language", "h_"}, "--language"},
		{[]string{"chart", "IN", "--category", "polka"}, "--category"}, {[]string{"chart", "IN", "--at", "yesterday"}, "--at"},
		{[]string{"chart", "IN", "--limit", "0"}, "--limit"},
	} {
		if res := h.mustRun(2, c.args...); !strings.Contains(res.stderr, c.want) {
			t.Errorf("%v: stderr %q does not name %s", c.args, res.stderr, c.want)
		}
	}
}

// The time ingest chart prints for a run, to the second, finds that run
// again with --at, though the run started within that second.
func TestChartAtItsPrintedTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "DE")
	var latest, again web.ChartJSON
	if err := json.Unmarshal([]byte(h.mustRun(0, "chart", "DE", "--json").stdout), &latest); err != nil {
		t.Fatal(err)
	}
	if latest.At == nil {
		t.Fatal("chart DE --json: no at")
	}
	if err := json.Unmarshal([]byte(h.mustRun(0, "chart", "DE", "--json", "--at", *latest.At).stdout), &again); err != nil {
		t.Fatal(err)
	}
	if again.RunID != latest.RunID {
		t.Errorf("--at %s found run %d, want run %d, printed at that time", *latest.At, again.RunID, latest.RunID)
	}
}
