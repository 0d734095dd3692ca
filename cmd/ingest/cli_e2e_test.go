package main

// End-to-end tests of the CLI's own promises: what it logs, prints and
// checks says what it stored and did.

import (
	"fmt"
	"strings"
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

// While the limiter cannot be reached, the report's used and remaining come
// from the ledger, and the units spent unmetered are spent: the upstream
// charged them, so REMAINING is less by them (JSON and text alike).
func TestReportDuringOutageSubtractsUnmeteredUnits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis().Stop()
	h.mustRun(0, "run", "--once", "--regions", "US")
	_, units := fullPassUnits(h.fake, "US")
	if got := queryInt(t, openDB(t, h.db()), `SELECT coalesce(sum(units), 0) FROM ledger WHERE pool = 'default' AND unmetered = 1`); got != units {
		t.Fatalf("ledger holds %d unmetered units, want %d: the outage did not happen as planned", got, units)
	}
	rep := h.report()
	used, limit, reserve, remaining, _, _ := rep.pool(t, "default")
	if rep.UsedFrom != "ledger" || used != units || remaining != limit-reserve-units {
		t.Errorf("report during the outage: used_from %q, used %d, remaining %d; want ledger, %d, %d (%d-%d-%d unmetered)",
			rep.UsedFrom, used, remaining, units, limit-reserve-units, limit, reserve, units)
	}
	text := h.mustRun(0, "report").stdout
	if got := poolColumn(text, "default", "REMAINING"); got != fmt.Sprint(limit-reserve-units) {
		t.Errorf("report text: REMAINING %q in the default pool's row, want %d:\n%s", got, limit-reserve-units, text)
	}
}

// poolColumn is one cell of the report's pool table, by the column's
// heading (headings of two words are one; "5 in 24h" is one cell).
func poolColumn(text, pool, column string) string {
	var heads []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.NewReplacer("USED (WINDOW)", "USED_WINDOW", "USED TODAY", "USED_TODAY").Replace(line)
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "POOL":
			heads = f
		case len(f) > 0 && f[0] == pool && heads != nil:
			f = append(f[:4], f[6:]...) // "5 in 24h" is one cell
			for i, h := range heads {
				if h == column && i < len(f) {
					return f[i]
				}
			}
		}
	}
	return ""
}
