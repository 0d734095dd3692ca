package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/report"
)

// The key's standing is one common setting, shown by check and report,
// and a bad value is exit 2 naming it.
func TestStandingIsASetting(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if out := h.mustRun(0, "check", "--offline").stdout; !strings.Contains(out, "terms") || !strings.Contains(out, "standard: statistics kept 30d") {
		t.Errorf("check does not show the standard standing:\n%s", out)
	}
	var rep report.JSON
	if err := json.Unmarshal([]byte(h.mustRun(0, "report", "--json").stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Terms == nil || rep.Terms.Standing != "standard" || rep.Terms.StatsDays != 30 || rep.Terms.Derived {
		t.Errorf("report terms = %+v, want standard, 30 days, no derived figures", rep.Terms)
	}
	ext := []string{"--standing", "extended", "--stats-retention", "400d", "--derived", "on"}
	if err := json.Unmarshal([]byte(h.mustRun(0, append([]string{"report", "--json"}, ext...)...).stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Terms.Standing != "extended" || rep.Terms.StatsDays != 400 || rep.Terms.DataDays != 30 || !rep.Terms.Derived {
		t.Errorf("report terms = %+v, want extended, 400 days of statistics, 30 of other data, derived on", rep.Terms)
	}
	if out := h.mustRun(0, "report").stdout; !strings.Contains(out, "Terms: standard") {
		t.Errorf("report text does not show the standing:\n%s", out)
	}
	for _, c := range []struct {
		env, value, want string
	}{
		{"INGEST_STANDING", "gold", "INGEST_STANDING"},
		{"INGEST_STATS_RETENTION", "31d", "standard standing"},
		{"INGEST_STATS_RETENTION", "forever", "INGEST_STATS_RETENTION"},
		{"INGEST_DERIVED", "maybe", "INGEST_DERIVED"},
	} {
		h2 := newHarness(t)
		h2.set(c.env, c.value)
		for _, cmd := range [][]string{{"report"}, {"run", "--once"}, {"check", "--offline"}} {
			if res := h2.mustRun(2, cmd...); !strings.Contains(res.stderr, c.want) {
				t.Errorf("%s=%s %v: stderr %q does not say %q", c.env, c.value, cmd, res.stderr, c.want)
			}
		}
		if h2.fake.Requests() != 0 {
			t.Errorf("%s=%s: the upstream was called", c.env, c.value)
		}
	}
}

// A database an older version kept for 40 days is not pruned by
// surprise: run exits 2 before anything is spent, naming the two ways on;
// a command that reads warns once; prune --terms --dry-run says what would
// go and deletes nothing; prune --terms deletes it; then run runs. The
// history is the top of each chart (topOfCharts): its age is the point,
// not its size.
func TestUpgradedDatabaseIsNotPrunedBySurprise(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	buildHistory(t, h.db(), 40, topOfCharts([]string{"GB", "AU"})...)
	db := openDB(t, h.db())
	runs := queryInt(t, db, `SELECT count(*) FROM runs`)
	res := h.mustRunGrowing(2, "run", "--once", "--regions", "GB")
	for _, want := range []string{"older than the standard standing allows", "prune --terms --dry-run", "prune --terms", "--standing extended"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("run on a 40-day database: stderr does not say %q:\n%s", want, res.stderr)
		}
	}
	if n := h.fake.Requests(); n != 0 {
		t.Errorf("run on a 40-day database called the upstream %d times", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM runs`); n != runs {
		t.Errorf("run on a 40-day database changed the runs: %d, then %d", runs, n)
	}
	h.mustRunGrowing(2, "run", "--every", "1h", "--regions", "GB") // the daemon too
	res = h.mustRunGrowing(0, "search", "football")
	if n := strings.Count(res.stderr, "older than the standard standing allows"); n != 1 {
		t.Errorf("search warned %d times, want once:\n%s", n, res.stderr)
	}
	res = h.mustRunGrowing(0, "prune", "--terms", "--dry-run")
	if !strings.Contains(res.stderr, "would delete") || queryInt(t, db, `SELECT count(*) FROM runs`) != runs {
		t.Errorf("prune --dry-run: want what would go, and nothing deleted:\n%s", res)
	}
	// Under an extended standing that allows the 40 days, run runs.
	h.mustRunGrowing(0, "run", "--once", "--regions", "GB", "--standing", "extended", "--stats-retention", "60d")
	before := h.fake.Requests()
	h.mustRunGrowing(2, "run", "--once", "--regions", "GB") // standard again: no surprise either
	if h.fake.Requests() != before {
		t.Error("run under a standing lowered from extended called the upstream")
	}
	res = h.mustRunGrowing(0, "prune", "--terms")
	if !strings.Contains(res.stderr, "deleting") || !strings.Contains(res.stdout, "pruned") {
		t.Errorf("prune --terms: want the counts before and what it pruned:\n%s", res)
	}
	cut := time.Now().Add(-30 * 24 * time.Hour).UnixMilli()
	for _, q := range []string{`SELECT count(*) FROM runs WHERE kind = 'trending' AND started_ms < ?`,
		`SELECT count(*) FROM trending_entries WHERE fetched_ms < ?`, `SELECT count(*) FROM video_stats WHERE at_ms < ?`,
		`SELECT count(*) FROM videos WHERE last_seen_ms < ?`, `SELECT count(*) FROM categories WHERE fetched_ms < ?`} {
		if n := queryInt(t, db, q, cut); n != 0 {
			t.Errorf("after prune --terms, %s = %d", q, n)
		}
	}
	if n := queryInt(t, db, `SELECT count(*) FROM ledger`); n == 0 {
		t.Error("prune --terms emptied the ledger: our own record")
	}
	h.mustRunGrowing(0, "run", "--once", "--regions", "GB")
	if res := h.mustRunGrowing(0, "search", "football"); strings.Contains(res.stderr, "standing allows") {
		t.Errorf("search still warns after prune --terms:\n%s", res.stderr)
	}
}
