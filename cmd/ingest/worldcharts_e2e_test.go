package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/regions"
)

// --regions all reads every chart of the catalogue to its end: the short
// ones, the long ones, none skipped.
func TestRunStoresEveryCataloguedRegion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRunGrowing(0, "run", "--once", "--regions", "all")
	codes := regions.Builtin.Codes()
	checkChartsComplete(t, h, codes...)
	if want := fmt.Sprintf("charts=%d completed=%d ", len(codes), len(codes)); !strings.Contains(res.stderr, want) {
		t.Errorf("run --once does not say %q:\n%s", want, res)
	}
}

// A valid code the upstream charts nothing for is skipped: run --once
// counts it skipped, and report says why; the upstream's answer is
// charged like any other call.
func TestRunSkipsACodeTheUpstreamDoesNotChart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "run", "--once", "--regions", "AQ")
	aq, ok := lastRuns(t, openDB(t, h.db()), "trending")["AQ"]
	if !ok || aq.Status != "skipped" || aq.Entries != 0 {
		t.Fatalf("AQ run %+v, want skipped with no entries\n%s", aq, res)
	}
	if !strings.Contains(res.stderr, "skipped=1") {
		t.Errorf("run --once does not count AQ skipped:\n%s", res)
	}
	if rep := h.mustRun(0, "report"); !strings.Contains(rep.stdout, "no most-popular chart for AQ") {
		t.Errorf("report does not say that AQ has no chart:\n%s", rep)
	}
	if got := ledgerUnits(t, h.db(), "default"); got != h.fake.Charged(testKey) {
		t.Errorf("ledger holds %d units, upstream charged %d", got, h.fake.Charged(testKey))
	}
}

// A region's depth bounds its pass: run --once reads depth/50 pages of
// each chart (one call of videos.list for depth 50), stores the chart's
// top and ends it completed, and the upstream charges exactly those calls
// and each region's category names, nothing more.
func TestRunReadsEachRegionToItsDepth(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	depth := map[string]int{"US": 200, "GB": 50, "JP": 100, "NG": 150}
	res := h.mustRun(0, "run", "--once", "--regions", "US,GB:depth=50,JP:depth=100:tier=2,NG:tier=3:depth=150")
	runs := lastRuns(t, openDB(t, h.db()), "trending")
	var pages int64
	for code, d := range depth {
		videos := min(d, h.fake.ChartLength(code))
		want := pagesFor(videos)
		pages += int64(want)
		if r := runs[code]; r.Status != "completed" || r.Pages != want || r.Videos != videos || r.Entries != videos {
			t.Errorf("%s at depth %d: run %q, %d pages, %d videos, %d entries; want completed, %d pages, %d videos\n%s",
				code, d, r.Status, r.Pages, r.Videos, r.Entries, want, videos, res)
		}
	}
	byOp := h.fake.ChargedByOp(testKey)
	if got, want := h.fake.Charged(testKey), pages+int64(len(depth)); got != want || byOp["videos.list"] != pages {
		t.Errorf("upstream charged %d units (%v), want %d: %d pages of videos.list and %d category lists", got, byOp, want, pages, len(depth))
	}
	if got := ledgerUnits(t, h.db(), "default"); got != h.fake.Charged(testKey) {
		t.Errorf("ledger %d units, upstream charged %d", got, h.fake.Charged(testKey))
	}
}
