package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Windows exported one after another while a daemon lands runs on a slow
// upstream hold every row of every run exactly once, and only runs that
// have ended: a window whose end finds a run in flight waits for it.
func TestExportWindowsWhileRunsLand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(120, 30) // four pages a chart
	h.fake.SetLatency(400 * time.Millisecond)
	daemon := h.startFor(10*time.Minute, "run", "--every", "1m", "--regions", "GB,DE,FR,BR,AU,CA")
	db := openDB(t, h.db())
	for !daemonStored(db) { // the daemon's first run creates the database
		if _, exited := daemon.wait(200 * time.Millisecond); exited {
			t.Fatalf("the daemon exited before its first run:\n%s", daemon.out.String())
		}
	}
	seen := map[string]bool{} // run_id/rank
	since, waited, windows := "2000-01-01T00:00:00Z", 0, 0
	deadline := time.Now().Add(8 * time.Minute) // the daemon's runs, not a timing of the export
	for waited == 0 || queryInt(t, db, `SELECT count(*) FROM runs WHERE kind = 'trending' AND status = 'completed'`) < 4 {
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
func windowRows(t *testing.T, out string, seen map[string]bool, window string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var r struct {
			RunID     int64  `json:"run_id"`
			Rank      int    `json:"rank"`
			RunStatus string `json:"run_status"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("window %s: %v in %q", window, err, line)
		}
		key := fmt.Sprintf("%d/%d", r.RunID, r.Rank)
		if seen[key] {
			t.Errorf("window %s: run %d rank %d was in an earlier window too", window, r.RunID, r.Rank)
		}
		if r.RunStatus == "" || r.RunStatus == "running" {
			t.Errorf("window %s: run %d rank %d has run_status %q, want how it ended", window, r.RunID, r.Rank, r.RunStatus)
		}
		seen[key] = true
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
