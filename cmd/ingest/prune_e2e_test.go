package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/yeardb"
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
	buildDays(t, h, 3)
	before, _ := os.Stat(h.db())
	starts := runStarts(t, h.db())
	h.set("INGEST_KEEP", "1d")
	t0 := time.Now()
	res := h.mustRunGrowing(0, "prune", "--json")
	var got report.PrunedJSON
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	db := openDB(t, h.db())
	now := time.Now()
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

// A dry run is the prune: on a history of random length and regions and a
// random --keep, `prune --dry-run --json` says the same counts as the
// `prune --json` run after it, the ledger's rows included, field for field
// but the bytes (the copy the dry run pruned is not the file), and deletes
// nothing.
func TestPruneDryRunIsThePrune(t *testing.T) {
	t.Parallel()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	pool := []string{"US", "GB", "IN", "DE", "JP"}
	for i := range 3 {
		days := 3 + rng.IntN(20)
		regions := pool[:1+rng.IntN(len(pool))]
		keep := fmt.Sprintf("%dd", 1+rng.IntN(days+2))
		t.Run(fmt.Sprintf("%d days of %s, --keep %s", days, strings.Join(regions, ","), keep), func(t *testing.T) {
			h := newHarness(t)
			buildHistory(t, h.db(), days, regions...)
			before := fileBytes(t, h.db())
			dry := h.mustRunGrowing(0, "prune", "--keep", keep, "--dry-run", "--json")
			if !bytes.Equal(before, fileBytes(t, h.db())) {
				t.Errorf("prune --dry-run changed the database")
			}
			real := h.mustRunGrowing(0, "prune", "--keep", keep, "--json")
			var got, want map[string]any
			if err := json.Unmarshal([]byte(dry.stdout), &got); err != nil {
				t.Fatalf("prune --dry-run --json: %v\n%s", err, dry)
			}
			if err := json.Unmarshal([]byte(real.stdout), &want); err != nil {
				t.Fatalf("prune --json: %v\n%s", err, real)
			}
			for _, k := range []string{"database_bytes", "freed_bytes", "free_kept_bytes"} {
				delete(got, k)
				delete(want, k)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("run %d: prune --dry-run --json %v\nprune --json          %v", i, got, want)
			}
		})
	}
}
