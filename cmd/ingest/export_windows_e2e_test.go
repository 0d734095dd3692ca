package main

import (
	"bytes"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// Windows exported one after another while a daemon lands runs on a slow
// upstream hold every row of every run exactly once, and only runs that
// have ended: a window whose end finds a run in flight waits for it. Then
// the checks a new user loading them into a warehouse makes, with nothing
// to reconcile by hand: each run's printed time finds that run again, in
// /api/v1/charts/R?at= and in ingest chart --at; days_on_chart is the
// count of the export's own UTC days; a hidden count is null in each
// format.
func TestExportWindowsWhileRunsLand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(120, 30) // four pages a chart
	h.fake.SetLatency(400 * time.Millisecond)
	daemon := h.startFor(10*time.Minute, "run", "--every", "1m", "--regions", "GB,DE,FR,BR,AU")
	db := openDB(t, h.db())
	for !daemonStored(db) { // the daemon's first run creates the database
		if _, exited := daemon.wait(200 * time.Millisecond); exited {
			t.Fatalf("the daemon exited before its first run:\n%s", daemon.out.String())
		}
	}
	seen := map[string]windowRow{} // by run_id/rank
	since, waited, windows := "2000-01-01T00:00:00Z", 0, 0
	deadline := time.Now().Add(8 * time.Minute) // the daemon's runs, not a timing of the export
	for waited == 0 || queryInt(t, db, `SELECT count(DISTINCT region) FROM runs WHERE kind = 'trending' AND status = 'completed'`) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("no export found a run in flight (%d waited) before the deadline:\n%s", waited, daemon.out.String())
		}
		until := time.Now().UTC().Format(time.RFC3339Nano)
		res := exportWindow(t, h, since, until)
		if strings.Contains(res.stderr, "waiting for the window's runs still in flight") {
			waited++
		}
		windowRows(t, res.stdout, seen, since+"/"+until)
		since, windows = until, windows+1
		// the next window a few seconds on, as a job exporting back to
		// back would, unless the daemon stopped meanwhile
		if _, exited := daemon.wait(2 * time.Second); exited {
			t.Fatalf("the daemon exited:\n%s", daemon.out.String())
		}
	}
	daemon.signal(t, syscall.SIGTERM)
	if _, exited := daemon.wait(cmdTimeout); !exited {
		t.Fatal("the daemon did not stop on SIGTERM")
	}
	windowRows(t, exportWindow(t, h, since, "").stdout, seen, since+"/now")
	stored := queryInt(t, db, `SELECT count(*) FROM trending_entries AS e JOIN runs AS r ON r.id = e.run_id WHERE r.kind = 'trending'`)
	if int64(len(seen)) != stored {
		t.Errorf("the windows hold %d rows, the database %d", len(seen), stored)
	}
	t.Logf("%d windows, %d of them waited for a run in flight, %d rows", windows+1, waited, len(seen))
	runsFoundAgain(t, h, seen)
	hiddenIsNull(t, h, db)
}

// windowRow is what the warehouse checks read of an exported row.
type windowRow struct {
	RunID     int64           `json:"run_id"`
	Rank      int             `json:"rank"`
	RunStatus string          `json:"run_status"`
	VideoID   string          `json:"video_id"`
	Region    string          `json:"region"`
	At        string          `json:"trending_date"`
	DayUTC    string          `json:"trending_day_utc"`
	Likes     json.RawMessage `json:"likes"`
}

// runsFoundAgain asks for each exported run by its printed time
// (trending_date), through the API of a server on the database and through
// ingest chart --at, and wants that run, whose days_on_chart are the
// distinct trending_day_utc of each video's rows up to it.
func runsFoundAgain(t *testing.T, h *harness, rows map[string]windowRow) {
	t.Helper()
	base := startServe(t, h)
	runs := map[int64]windowRow{}
	for _, r := range rows {
		runs[r.RunID] = r
	}
	for id, r := range runs {
		status, body := get(t, base+"/api/v1/charts/"+r.Region+"?at="+r.At)
		var api struct {
			RunID int64 `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(body), &api); status != 200 || err != nil || api.RunID != id {
			t.Errorf("/api/v1/charts/%s?at=%s: %d, run %d, want run %d, printed at that time: %.200s", r.Region, r.At, status, api.RunID, id, body)
		}
		var cli struct {
			RunID   int64 `json:"run_id"`
			Entries []struct {
				ID   string `json:"id"`
				Days *int   `json:"days_on_chart"`
			} `json:"entries"`
		}
		res := h.mustRun(0, "chart", r.Region, "--at", r.At, "--derived", "on", "--json", "--limit", "200")
		if err := json.Unmarshal([]byte(res.stdout), &cli); err != nil || cli.RunID != id {
			t.Errorf("ingest chart %s --at %s: run %d, want run %d (%v)", r.Region, r.At, cli.RunID, id, err)
			continue
		}
		for _, e := range cli.Entries {
			days := map[string]bool{}
			for _, o := range rows {
				if o.VideoID == e.ID && o.Region == r.Region && o.At <= r.At {
					days[o.DayUTC] = true
				}
			}
			if e.Days == nil || *e.Days != len(days) {
				t.Errorf("run %d: %s's days_on_chart %s, the export's UTC days of it %d", id, e.ID, orNull(e.Days), len(days))
			}
		}
	}
	t.Logf("%d runs found again by their printed time", len(runs))
}

// hiddenIsNull exports every run in the three formats and wants a count
// the upstream hid (likes, stored NULL) null in each, and every other
// count present.
func hiddenIsNull(t *testing.T, h *harness, db *sql.DB) {
	t.Helper()
	hidden := map[string]bool{}
	rows, err := db.Query(`SELECT e.run_id, e.rank FROM trending_entries AS e WHERE e.like_count IS NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var run, rank int64
		if err := rows.Scan(&run, &rank); err != nil {
			t.Fatal(err)
		}
		hidden[fmt.Sprintf("%d/%d", run, rank)] = true
	}
	rows.Close()
	if len(hidden) == 0 {
		t.Fatal("no stored entry hides its likes: the check checks nothing")
	}
	got := map[string]map[string]bool{"csv": {}, "jsonl": {}, "parquet": {}}
	for format := range got {
		out := filepath.Join(h.dir, "all."+format)
		h.mustRun(0, "export", "--since", "2000-01-01", "--out", out)
		for key, null := range likesOf(t, format, fileBytes(t, out)) {
			if null {
				got[format][key] = true
			}
		}
		if fmt.Sprint(got[format]) != fmt.Sprint(hidden) {
			t.Errorf("%s: likes null at %d rows, want the %d the upstream hid, and only those", format, len(got[format]), len(hidden))
		}
	}
}

// likesOf reads an export's likes by run_id/rank: true where null.
func likesOf(t *testing.T, format string, b []byte) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	switch format {
	case "csv":
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, name := range recs[0] {
			col[name] = i
		}
		for _, r := range recs[1:] {
			out[r[col["run_id"]]+"/"+r[col["rank"]]] = r[col["likes"]] == ""
		}
	case "jsonl":
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var r windowRow
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("%d/%d", r.RunID, r.Rank)] = string(r.Likes) == "null"
		}
	case "parquet":
		rs, err := parquet.Read[struct {
			RunID int64  `parquet:"run_id"`
			Rank  int64  `parquet:"rank"`
			Likes *int64 `parquet:"likes,optional"`
		}](bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			out[fmt.Sprintf("%d/%d", r.RunID, r.Rank)] = r.Likes == nil
		}
	}
	return out
}

// exportWindow exports [since, until) (until now when "") as JSON lines,
// failing unless it exits 0 with rows or 3 with none.
func exportWindow(t *testing.T, h *harness, since, until string) result {
	t.Helper()
	args := []string{"export", "--since", since, "--format", "jsonl"}
	if until != "" {
		args = append(args, "--until", until)
	}
	res := h.run(args...)
	if empty := res.stdout == ""; (res.code != 0 || empty) && (res.code != 3 || !empty) {
		t.Fatalf("export %s: want exit 0 with rows or 3 with none, got %s", strings.Join(args, " "), res)
	}
	return res
}

// daemonStored says the daemon's database holds a run.
func daemonStored(db *sql.DB) bool {
	var n int64
	err := db.QueryRow(`SELECT count(*) FROM runs`).Scan(&n)
	return err == nil && n > 0
}

// windowRows adds a window's JSON lines to seen, failing on a row seen
// before and on a row of a run that had not ended.
func windowRows(t *testing.T, out string, seen map[string]windowRow, window string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var r windowRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("window %s: %v in %q", window, err, line)
		}
		key := fmt.Sprintf("%d/%d", r.RunID, r.Rank)
		if _, ok := seen[key]; ok {
			t.Errorf("window %s: run %d rank %d was in an earlier window too", window, r.RunID, r.Rank)
		}
		if r.RunStatus == "" || r.RunStatus == "running" {
			t.Errorf("window %s: run %d rank %d has run_status %q, want how it ended", window, r.RunID, r.Rank, r.RunStatus)
		}
		seen[key] = r
	}
}

// A window that ends before a run started leaves it to the next window
// and says so: the window, the runs taken and the run left out, and why;
// an export that writes no row warns.
func TestExportSaysWhatItLeftOut(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "GB")
	db := openDB(t, h.db())
	id := queryInt(t, db, `SELECT max(id) FROM runs WHERE kind = 'trending'`)
	started := time.UnixMilli(queryInt(t, db, `SELECT started_ms FROM runs WHERE id = ?`, id)).UTC()
	until := started.Format(time.RFC3339Nano) // the run starts at the window's end: the next window's
	res := h.mustRun(3, "export", "--since", "2000-01-01", "--until", until, "--format", "jsonl")
	if res.stdout != "" {
		t.Errorf("the window before the run holds %q", res.stdout)
	}
	for _, want := range []string{"level=WARN", "exported no rows", "since=2000-01-01T00:00:00Z", "until=" + started.Format(time.RFC3339),
		"runs=0", fmt.Sprintf("run %d (GB, started %s): started after the window's end, the next window's", id, started.Format("2006-01-02T15:04:05.000Z07:00"))} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, res.stderr)
		}
	}
	res = h.mustRun(0, "export", "--since", until, "--format", "jsonl")
	if strings.Count(res.stdout, "\n") == 0 || !strings.Contains(res.stderr, "msg=exported") || !strings.Contains(res.stderr, "runs=1") ||
		strings.Contains(res.stderr, "left_out") {
		t.Errorf("the next window: want the run taken and nothing left out, stderr:\n%s", res.stderr)
	}
}

// A run the quota cut short is exported with its status and as not whole;
// --complete-only leaves it out and says so.
func TestExportCompleteOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(120, 30) // four pages, more than the quota allows
	h.tightCosts(2)
	h.run("run", "--once", "--regions", "GB")
	db := openDB(t, h.db())
	id := queryInt(t, db, `SELECT max(id) FROM runs WHERE kind = 'trending'`)
	status := queryString(t, db, `SELECT status FROM runs WHERE id = ?`, id)
	videos := queryInt(t, db, `SELECT videos FROM runs WHERE id = ?`, id)
	if status != "stopped" || videos == 0 {
		t.Fatalf("run %d: %s with %d videos, want a run the quota stopped part way", id, status, videos)
	}
	res := h.mustRun(0, "export", "--since", "2000-01-01", "--format", "jsonl")
	if n := strings.Count(res.stdout, "\n"); int64(n) != videos || !strings.Contains(res.stdout, `"run_status":"stopped","complete":false`) {
		t.Errorf("the stopped run's %d rows: got %d, want each saying stopped, not complete:\n%.300s", videos, n, res.stdout)
	}
	res = h.mustRun(3, "export", "--since", "2000-01-01", "--format", "jsonl", "--complete-only")
	if want := fmt.Sprintf("run %d (GB, started ", id); res.stdout != "" || !strings.Contains(res.stderr, want) ||
		!strings.Contains(res.stderr, "not whole (stopped), --complete-only") {
		t.Errorf("--complete-only: want no row and run %d named as not whole, got %s", id, res)
	}
}
