package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/seedtest"
	"github.com/ingestworks/ingest/internal/rig/yeardb"
	"github.com/ingestworks/ingest/report"
)

// buildDays writes days of hourly runs of GB and AU, ending this hour, at
// the harness's database.
func buildDays(t *testing.T, h *harness, days int) {
	t.Helper()
	buildHistory(t, h.db(), days, "GB", "AU")
}

func TestPruneKeepsTheLastDaysAndTheQuotaWindow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// The commands' clock reads the coming 12:30 UTC and the history ends
	// in the hour before: a day kept in whole UTC days holds half a day of
	// runs whatever the host's hour, where just after 00:00 it holds none.
	host := time.Now()
	midday := host.UTC().Truncate(24 * time.Hour).Add(12*time.Hour + 30*time.Minute)
	if midday.Before(host) {
		midday = midday.Add(24 * time.Hour)
	}
	offset := h.clockAt(midday)
	clockNow := func() time.Time { return time.Now().Add(offset) }
	buildHistoryTo(t, h.db(), 3, midday.Truncate(time.Hour).Add(-time.Hour), "GB", "AU")
	before, _ := os.Stat(h.db())
	starts := runStarts(t, h.db())
	h.set("INGEST_KEEP", "1d")
	t0 := clockNow()
	res := h.mustRunGrowing(0, "prune", "--json")
	var got report.PrunedJSON
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	db := openDB(t, h.db())
	now := clockNow()
	day := now.Add(-24 * time.Hour).UnixMilli()
	if n := queryInt(t, db, `SELECT count(*) FROM runs WHERE started_ms < ?`, day); n != 0 {
		t.Errorf("%d runs older than a day left", n)
	}
	// A day's runs at most: statistics go in whole days, so those that
	// started at or after the 00:00 UTC that follows prune's now less a
	// day, which was between t0's and now's (an hour may have begun since
	// the build).
	kept := func(at time.Time) (n int64) {
		cut := at.Add(-24 * time.Hour)
		if d := cut.Truncate(24 * time.Hour); !d.Equal(cut) {
			cut = d.Add(24 * time.Hour)
		}
		for _, ms := range starts {
			if ms >= cut.UnixMilli() {
				n++
			}
		}
		return n
	}
	if n := kept(now); n == 0 {
		t.Fatalf("the history keeps no run at %s: nothing to hold the oldest run to", now)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM runs`); n < kept(now) || n > kept(t0) {
		t.Errorf("%d runs kept, want a day's: %d to %d", n, kept(now), kept(t0))
	}
	if n := queryInt(t, db, `SELECT count(*) FROM trending_entries e JOIN runs r ON r.id = e.run_id`); n != queryInt(t, db, `SELECT count(*) FROM trending_entries`) {
		t.Error("entries left without their run")
	}
	// The ledger stays for the quota's span (25 hours), longer than --keep.
	span := now.Add(-25 * time.Hour).UnixMilli()
	if n := queryInt(t, db, `SELECT count(*) FROM ledger WHERE at_ms >= ? AND at_ms < ?`, span+60_000, day); n == 0 {
		t.Error("the ledger inside the quota's span was pruned with the runs")
	}
	if n := queryInt(t, db, `SELECT count(*) FROM ledger WHERE at_ms < ?`, span); n != 0 {
		t.Errorf("%d ledger rows older than the quota's span left", n)
	}
	h.set("INGEST_QUOTA_KEY", yeardb.QuotaKey)
	var rep report.JSON
	if err := json.Unmarshal([]byte(h.mustRun(0, "report", "--json").stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if st := rep.Storage; st == nil || st.Bytes == 0 || !st.Shrinks || st.OldestRun == nil || *st.OldestRun < time.UnixMilli(day).UTC().Format(time.RFC3339) {
		t.Errorf("report storage = %+v, want the size and an oldest run within the day kept", st)
	}
	if text := h.mustRun(0, "report").stdout; !strings.Contains(text, "oldest chart run") {
		t.Errorf("report text lacks the database line:\n%s", text)
	}
	after, _ := os.Stat(h.db())
	if got.Runs < 90 || got.FreedBytes == 0 || after.Size() >= before.Size() || got.OldestRun == nil {
		t.Errorf("pruned %+v; file %d bytes then %d: want about two days of runs gone and a smaller file",
			got, before.Size(), after.Size())
	}
}

// runStarts lists when the database's runs started (ms).
func runStarts(t *testing.T, path string) []int64 {
	t.Helper()
	db := openDB(t, path)
	defer db.Close()
	rows, err := db.Query(`SELECT started_ms FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var ms int64
		if err := rows.Scan(&ms); err != nil {
			t.Fatal(err)
		}
		out = append(out, ms)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPruneUsageErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, keep := range []string{"0d", "soon", "-3h"} {
		res := h.mustRun(2, "prune", "--keep", keep)
		if !strings.Contains(res.stderr, "--keep") {
			t.Errorf("prune --keep %q: stderr %q does not name --keep", keep, res.stderr)
		}
	}
	h.set("INGEST_KEEP", "forever")
	if res := h.mustRun(2, "prune"); !strings.Contains(res.stderr, "--keep") {
		t.Errorf("INGEST_KEEP=forever: stderr %q does not name --keep", res.stderr)
	}
	h.set("INGEST_KEEP", "31d")
	for _, args := range [][]string{{"prune"}, {"run", "--once"}} {
		if res := h.mustRun(2, args...); !strings.Contains(res.stderr, "--keep") || !strings.Contains(res.stderr, "standard standing") {
			t.Errorf("%v with INGEST_KEEP=31d: stderr %q does not name --keep and the standing", args, res.stderr)
		}
	}
	if res := h.mustRun(2, "prune", "--terms", "--keep", "1d"); !strings.Contains(res.stderr, "--terms") {
		t.Errorf("prune --terms --keep: stderr %q does not name --terms", res.stderr)
	}
}

func TestRunOnceKeepPrunesAfterItsPasses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	buildDays(t, h, 3)
	h.mustRunGrowing(0, "run", "--once", "--regions", "GB", "--keep", "1d")
	db := openDB(t, h.db())
	day := time.Now().Add(-24 * time.Hour).UnixMilli()
	if n := queryInt(t, db, `SELECT count(*) FROM runs WHERE started_ms < ?`, day); n != 0 {
		t.Errorf("%d runs older than --keep 1d left after run --once", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM runs WHERE started_ms >= ?`, time.Now().Add(-time.Minute).UnixMilli()); n != 1 {
		t.Errorf("%d runs from this run --once, want GB's 1", n)
	}
	if res := h.mustRun(2, "run", "--once", "--keep", "a while"); !strings.Contains(res.stderr, "--keep") {
		t.Errorf("bad --keep: stderr %q", res.stderr)
	}
}

// A dry run is the prune: on a history of random length and regions (the
// top of each chart: topOfCharts) and a random --keep, `prune --dry-run
// --json` says the same counts as the `prune --json` run after it, the
// ledger's rows included, field for field, the bytes it frees too (the dry
// run prunes a page-for-page image of the file), and deletes nothing.
func TestPruneDryRunIsThePrune(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(pruneSeed(t), 1))
	pool := []string{"US", "GB", "IN", "DE", "JP"}
	for range 3 {
		days := 3 + rng.IntN(20)
		regions := pool[:1+rng.IntN(len(pool))]
		keep := fmt.Sprintf("%dd", 1+rng.IntN(days+2))
		t.Run(fmt.Sprintf("%d days of %s, --keep %s", days, strings.Join(regions, ","), keep), func(t *testing.T) {
			h := newHarness(t)
			end := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
			buildHistoryTo(t, h.db(), days, end, topOfCharts(regions)...)
			before := fileBytes(t, h.db())
			h.clockAt(betweenRows(end))
			dry := h.mustRunGrowing(0, "prune", "--keep", keep, "--dry-run", "--json")
			if !bytes.Equal(before, fileBytes(t, h.db())) {
				t.Errorf("prune --dry-run changed the database")
			}
			h.clockAt(betweenRows(end))
			real := h.mustRunGrowing(0, "prune", "--keep", keep, "--json")
			samePrune(t, dry, real, true)
		})
	}
}

// On PostgreSQL too, for random retention settings and histories (copied
// from SQLite with db copy), prune --dry-run --json is the prune's JSON
// field for field but the bytes, with its first line's counts, and leaves
// every row where it was; the prune's first line says what its JSON does.
func TestPostgresPruneDryRunIsThePrune(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(pruneSeed(t), 2))
	pool := []string{"US", "GB", "IN", "DE", "JP"}
	for range 2 {
		days := 3 + rng.IntN(30)
		regions := pool[:1+rng.IntN(3)]
		keep := fmt.Sprintf("%dd", 1+rng.IntN(min(days+2, 30)))
		t.Run(fmt.Sprintf("%d days of %s, --keep %s", days, strings.Join(regions, ","), keep), func(t *testing.T) {
			h := newHarness(t)
			end := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
			buildHistoryTo(t, h.db(), days, end, topOfCharts(regions)...)
			target := h.withPostgres()
			h.set("INGEST_DB", filepath.Join(h.dir, "ingest.db"))
			h.mustRunGrowing(0, "db", "copy", "--to", target)
			h.set("INGEST_DB", target)
			pg := openPG(t, target)
			rows := func() string {
				var b strings.Builder
				for _, table := range []string{"runs", "trending_entries", "video_stats", "video_days", "videos", "search_results",
					"categories", "ledger"} {
					fmt.Fprintf(&b, "%s %d, ", table, queryInt(t, pg, `SELECT count(*) FROM `+table))
				}
				return b.String()
			}
			before := rows()
			h.clockAt(betweenRows(end))
			dry := h.mustRunGrowing(0, "prune", "--keep", keep, "--dry-run", "--json")
			if after := rows(); after != before {
				t.Errorf("prune --dry-run changed the database:\nbefore %s\nafter  %s", before, after)
			}
			h.clockAt(betweenRows(end))
			real := h.mustRunGrowing(0, "prune", "--keep", keep, "--json")
			samePrune(t, dry, real, false)
			if before == rows() {
				t.Logf("this history had nothing to prune at --keep %s", keep)
			}
		})
	}
}

// pruneSeedFixed is the seed make test draws the dry runs' histories from.
const pruneSeedFixed = 20261128

// pruneSeed is the seed a dry run's histories are drawn from:
// INGEST_PRUNE_SEED's ("random" draws one from the kernel, a number runs a
// failure again), else pruneSeedFixed; logged.
func pruneSeed(t *testing.T) uint64 {
	t.Helper()
	return seedtest.Seed(t, "INGEST_PRUNE_SEED", pruneSeedFixed)
}

// topOfCharts selects the top of each region's chart (depth 50, one page a
// pass): what a dry run must agree with the prune on is the same at any
// depth, and the history's days, regions and --keep stay random; a whole
// chart's history costs four times as much to build and to prune. A prune
// in many batches is retention's own tests'.
func topOfCharts(regions []string) []string {
	out := make([]string, len(regions))
	for i, r := range regions {
		out[i] = r + ":depth=50"
	}
	return out
}

// samePrune holds a dry run's JSON to the prune's, field for field, the
// bytes only when sized is set (a SQLite file's dry run prunes its image;
// PostgreSQL's server counts its own), and each command's first line to its
// own JSON.
func samePrune(t *testing.T, dry, real result, sized bool) {
	t.Helper()
	var got, want map[string]any
	if err := json.Unmarshal([]byte(dry.stdout), &got); err != nil {
		t.Fatalf("prune --dry-run --json: %v\n%s", err, dry)
	}
	if err := json.Unmarshal([]byte(real.stdout), &want); err != nil {
		t.Fatalf("prune --json: %v\n%s", err, real)
	}
	firstLineAgrees(t, "prune --dry-run", dry.stderr, got)
	firstLineAgrees(t, "prune", real.stderr, want)
	for _, k := range []string{"database_bytes", "freed_bytes", "free_kept_bytes"} {
		if !sized {
			delete(got, k)
			delete(want, k)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("prune --dry-run --json %v\nprune --json          %v", got, want)
	}
}

// firstLineAgrees holds what a prune's first line says it deletes to what
// its JSON says it deleted.
func firstLineAgrees(t *testing.T, name, stderr string, js map[string]any) {
	t.Helper()
	line, _, _ := strings.Cut(stderr, "\n")
	var c struct{ runs, entries, stats, videos, search, categories, ledger int64 }
	_, after, _ := strings.Cut(line, "delete ")
	if _, a, ok := strings.Cut(line, "deleting "); ok {
		after = a
	}
	if _, err := fmt.Sscanf(after, "%d chart runs with %d entries, %d tracked counts, %d videos, %d backfill results, %d category names, %d ledger rows",
		&c.runs, &c.entries, &c.stats, &c.videos, &c.search, &c.categories, &c.ledger); err != nil {
		t.Fatalf("%s: first line %q: %v", name, line, err)
	}
	said := map[string]float64{"runs": float64(c.runs), "entries": float64(c.entries), "stats": float64(c.stats),
		"videos": float64(c.videos), "backfill_results": float64(c.search), "categories": float64(c.categories), "ledger": float64(c.ledger)}
	for k, v := range said {
		if js[k] != v {
			t.Errorf("%s: the first line says %s %v, the JSON %v\n%s", name, k, v, js[k], line)
		}
	}
}
