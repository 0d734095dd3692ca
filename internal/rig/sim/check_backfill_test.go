package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// backfillHistory is a backfill at 2:00 with --max-units 4 whose two
// pages (a search and its details, a unit each) named a, b and c, stored
// as search results of its runs.
func backfillHistory() *History {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	at := t0.Add(2 * time.Hour)
	h.Calls = []Call{
		{At: at, Path: "/youtube/v3/search", Kind: KindSearch, Status: 200, Region: "US", Category: " 2026-01-01T00:00:00Z 2026-09-01T00:00:00Z",
			IDs: []string{"a", "b"}, Charged: map[string]int64{"search": 1}},
		{At: at.Add(time.Second), Path: "/youtube/v3/videos", Kind: KindDetails, Status: 200, IDs: []string{"a", "b"},
			Charged: map[string]int64{"search": 1, "default": 1}},
		{At: at.Add(2 * time.Second), Path: "/youtube/v3/search", Kind: KindSearch, Status: 200, Region: "US", Page: "p2",
			Category: " 2026-01-01T00:00:00Z 2026-09-01T00:00:00Z", IDs: []string{"c"}, Charged: map[string]int64{"search": 2, "default": 1}},
		{At: at.Add(3 * time.Second), Path: "/youtube/v3/videos", Kind: KindDetails, Status: 200, IDs: []string{"c"},
			Charged: map[string]int64{"search": 2, "default": 2}},
	}
	h.Backfilled = []Backfilled{{Backfill: Backfill{Region: "US", MaxUnits: 4}, Interval: Interval{at, at.Add(4 * time.Second)},
		Results: []string{"a", "b", "c"},
		Said:    "backfill US: completed; this run: 2 pages, 3 videos, default 2, search 2 units; in all: 2 pages, 3 videos\n"}}
	return h
}

func TestCheckHoldsABackfillToItsUnitsItsResultsAndOnePaymentAPage(t *testing.T) {
	if f := checkBackfills(backfillHistory()); len(f) != 0 {
		t.Fatalf("a backfill within its units, its videos stored: %q", f)
	}
	over := backfillHistory()
	over.Backfilled[0].MaxUnits = 3
	if f := checkBackfills(over); len(f) != 1 || !strings.Contains(f[0], "its calls cost 4 units, over its --max-units 3") {
		t.Errorf("4 units at --max-units 3: %q", f)
	}
	lost := backfillHistory()
	lost.Backfilled[0].Results = []string{"a", "c"}
	if f := checkBackfills(lost); len(f) != 1 || !strings.Contains(f[0], "1 of the 3 videos its searches named are not search results of its runs: b") {
		t.Errorf("b not stored: %q", f)
	}
	lost.Forgotten = []Gone{{At: t0, ID: "b"}}
	if f := checkBackfills(lost); len(f) != 0 {
		t.Errorf("b forgotten by the upstream, so not stored: %q", f)
	}
	entries := backfillHistory()
	entries.Backfilled[0].Entries = 3
	if f := checkBackfills(entries); len(f) != 1 || !strings.Contains(f[0], "search runs hold 3 trending entries") {
		t.Errorf("stored as trending entries: %q", f)
	}
	for said, want := range map[string]string{
		"US%!(EXTRA string=backfill %s: %s; this run: %d pages)":                                                      "what it printed holds a format's complaint",
		"backfill DE: completed; this run: 2 pages, 3 videos, default 2, search 2 units; in all: 2 pages, 3 videos\n": "it printed no summary of its run",
		"": "it printed no summary of its run",
	} {
		told := backfillHistory()
		told.Backfilled[0].Said = said
		if f := checkBackfills(told); len(f) != 1 || !strings.Contains(f[0], want) {
			t.Errorf("printed %q: %q", said, f)
		}
	}
	twice := backfillHistory()
	again := twice.Calls[2:]
	for _, c := range again {
		c.At = c.At.Add(24 * time.Hour)
		c.Charged = map[string]int64{"search": c.Charged["search"] + 1, "default": c.Charged["default"] + 1}
		twice.Calls = append(twice.Calls, c)
	}
	f := checkBackfills(twice)
	if len(f) != 1 || !strings.Contains(f[0], "2 times a backfill paid again for what it had: search page \"p2\" of US at 2026-10-25T02:00:02Z and 2026-10-26T02:00:02Z; the details of c") {
		t.Errorf("its second page paid again a day later: %q", f)
	}
	twice.Calls[len(twice.Calls)-2].Cut = true
	if f := checkBackfills(twice); len(f) != 1 || !strings.Contains(f[0], "1 times a backfill paid again for what it had: the details of c") {
		t.Errorf("its second page asked again after its answer was cut short: %q", f)
	}
}

func TestCheckFindsSearchResultsKeptPastTheTermsDays(t *testing.T) {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	h.SearchResults = []time.Time{h.End.Add(-ingest.DataFor - time.Hour)}
	if f := checkSearchPruned(h); len(f) != 0 {
		t.Errorf("a result 30 days and an hour old, at --every 1h: %q", f)
	}
	h.SearchResults = append([]time.Time{h.End.Add(-ingest.DataFor - 2*time.Hour)}, h.SearchResults...)
	if f := checkSearchPruned(h); len(f) != 1 || !strings.Contains(f[0], "1 search results are kept at the end fetched before 2026-09-25T22:30:00Z") {
		t.Errorf("a result 30 days and two hours old: %q", f)
	}
	h.Down = []Interval{{h.End.Add(-time.Hour), h.End}}
	if f := checkSearchPruned(h); len(f) != 0 {
		t.Errorf("the same, the daemon down the last hour: %q", f)
	}
}
