package store_test

// TestQueryPlansAtScale records every statement the store sends while it
// builds a few days of hourly runs and serves every read (report, search,
// history, export, retention), then asks SQLite for each one's plan on that
// database: a statement that reads a big table's whole history (a SCAN,
// with or without an index, or a SEARCH on a constraint that selects all of
// it, such as every ledger row that has a run, or every run of a region)
// fails the test. A lookup or a time range is what a query must do to keep
// its time at a year.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/yeardb"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/retention"
	"github.com/ingestworks/ingest/store"
)

// bigTables grow with history; a full scan of any of them is a bug.
var bigTables = []string{"runs", "trending_entries", "ledger", "videos", "video_stats", "search_results", "video_regions"}

type recorded struct {
	q    string
	args []any
}

// recorder keeps the first arguments every distinct statement was sent with.
type recorder struct {
	mu   sync.Mutex
	seen map[string]recorded
}

func (r *recorder) add(q string, args []driver.NamedValue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seen[q]; ok {
		return
	}
	vals := make([]any, len(args))
	for i, a := range args {
		vals[i] = a.Value
	}
	r.seen[q] = recorded{q: q, args: vals}
}

var rec = &recorder{seen: map[string]recorded{}}

func init() {
	db, _ := sql.Open("sqlite", ":memory:")
	sql.Register("sqlite-recorded", recDriver{db.Driver()})
	db.Close()
}

type recDriver struct{ d driver.Driver }

// fullConn is what modernc's connections implement and database/sql uses.
type fullConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.ConnBeginTx
}

func (d recDriver) Open(name string) (driver.Conn, error) {
	c, err := d.d.Open(name)
	if err != nil {
		return nil, err
	}
	return &recConn{c.(fullConn)}, nil
}

type recConn struct{ fullConn }

func (c *recConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	rec.add(q, args)
	return c.fullConn.ExecContext(ctx, q, args)
}

func (c *recConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	rec.add(q, args)
	return c.fullConn.QueryContext(ctx, q, args)
}

func (c *recConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	s, err := c.fullConn.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return &recStmt{s.(fullStmt), q}, nil
}

type fullStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

type recStmt struct {
	fullStmt
	q string
}

func (s *recStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	rec.add(s.q, args)
	return s.fullStmt.ExecContext(ctx, args)
}

func (s *recStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	rec.add(s.q, args)
	return s.fullStmt.QueryContext(ctx, args)
}

func TestQueryPlansAtScale(t *testing.T) {
	store.UseDriver("sqlite-recorded")
	defer store.UseDriver("sqlite")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "days.db")
	end := time.Now().UTC().Truncate(time.Hour)
	if err := yeardb.BuildWith(ctx, path, yeardb.Options{Days: 3, End: end, Regions: []string{"GB", "AU", "CA"}}); err != nil {
		t.Fatal(err)
	}
	exerciseReads(t, path, end)
	plain, err := sql.Open("sqlite", store.DSN(path, true))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	checked := 0
	for _, r := range sortedRecorded() {
		if !touchesBig(r.q) || !explainable(r.q) {
			continue
		}
		checked++
		if bad := fullScans(t, plain, r); bad != "" {
			t.Errorf("a full scan of a big table:\n%s\nplan:\n%s", strings.TrimSpace(r.q), bad)
		}
	}
	if checked < 20 {
		t.Errorf("only %d statements checked; the recorder missed the store's queries", checked)
	}
	t.Logf("%d statements on the big tables checked", checked)
}

// exerciseReads runs every read and maintenance path of the store once.
func exerciseReads(t *testing.T, path string, end time.Time) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id string
	if err := db.Reader().QueryRow(`SELECT id FROM videos WHERE vid = 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	since := end.Add(-2 * time.Hour)
	steps := []func() error{
		func() error { _, err := db.LastRuns(ctx, ingest.Trending); return err },
		func() error { _, err := db.Run(ctx, 5); return err },
		func() error {
			_, err := ledger.New(db).Recall(ctx, yeardb.QuotaKey, end.Add(-25*time.Hour), end)
			return err
		},
		func() error { _, err := ledger.New(db).QuotaKeys(ctx); return err },
		func() error { _, _, err := db.RecentEntries(ctx, id, 50); return err },
		func() error { _, _, err := db.VideoHistory(ctx, id, end.Add(-24*time.Hour)); return err },
		func() error { _, err := db.Search(ctx, "football", store.SearchOptions{Limit: 20}); return err },
		func() error {
			_, err := db.Search(ctx, "football", store.SearchOptions{Region: "GB", Limit: 20})
			return err
		},
		func() error {
			return db.Export(ctx, store.ExportFilter{Since: since, Until: end, Region: "GB"}, func(store.ExportRow) error { return nil })
		},
		func() error {
			return db.Export(ctx, store.ExportFilter{Since: since, Until: end, Unfiltered: true}, func(store.ExportRow) error { return nil })
		},
		func() error {
			return db.Export(ctx, store.ExportFilter{Since: since, Until: end, PerDay: true}, func(store.ExportRow) error { return nil })
		},
		func() error {
			return db.Export(ctx, store.ExportFilter{Since: since, Until: end, Region: "GB", PerDay: true}, func(store.ExportRow) error { return nil })
		},
		func() error { _, err := db.ExportCount(ctx, store.ExportFilter{Since: since, Until: end}); return err },
		func() error { return db.AbandonRuns(ctx, "GB", "", ingest.Trending, end) },
		func() error {
			return db.SaveStats(ctx, []ingest.VideoStats{{ID: id, ViewCount: 1, At: end}})
		},
		func() error { _, err := db.Size(ctx); return err },
		func() error { _, err := db.SeenOnCharts(ctx, end.Add(-7*24*time.Hour)); return err },
		func() error {
			_, err := retention.Prune(ctx, db, retention.Retention{Before: end.Add(-48 * time.Hour), LedgerBefore: end.Add(-49 * time.Hour), Batch: 500})
			return err
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
}

func sortedRecorded() []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := make([]recorded, 0, len(rec.seen))
	for _, r := range rec.seen {
		out = append(out, r)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].q < out[b].q })
	return out
}

func touchesBig(q string) bool {
	for _, tbl := range bigTables {
		if regexp.MustCompile(`(?i)\b` + tbl + `\b`).MatchString(q) {
			return true
		}
	}
	return false
}

// explainable leaves out the schema's own statements (migration, pragmas).
func explainable(q string) bool {
	s := strings.ToUpper(strings.TrimSpace(q))
	for _, p := range []string{"PRAGMA", "CREATE", "ALTER", "DROP", "BEGIN", "COMMIT", "ROLLBACK", "--"} {
		if strings.HasPrefix(s, p) {
			return false
		}
	}
	return true
}

// historyWalks are index constraints that select a whole history: every
// ledger row of a run (run_id>? is the planner's IS NOT NULL), every run
// of a kind, of a region or of a chart.
var historyWalks = map[string]bool{"run_id>?": true, "kind=?": true, "kind=? AND region=?": true,
	"region=? AND kind=?": true, "kind=? AND region=? AND category=?": true}

var searchRE = regexp.MustCompile(`^SEARCH (\w+) USING .*\((.*)\)`)

// walksHistory says whether a plan line reads a big table whole: a SCAN
// (with or without an index), or a SEARCH whose constraint selects all of
// its history. (A SEARCH that an ORDER BY ... LIMIT or min() stops early
// reads as selective here; the constraints below are what such queries
// need beside it.)
func walksHistory(detail string, names map[string]bool) bool {
	f := strings.Fields(detail)
	if len(f) >= 2 && f[0] == "SCAN" && names[f[1]] {
		return true
	}
	m := searchRE.FindStringSubmatch(detail)
	// runs_running is partial: it holds only the runs in flight.
	return m != nil && names[m[1]] && historyWalks[m[2]] && !strings.Contains(detail, "INDEX runs_running ")
}

// bigNames returns the names a plan may give the big tables in q: their
// own and their aliases (FROM runs AS r is planned as SCAN r).
func bigNames(q string) map[string]bool {
	names := map[string]bool{}
	for _, tbl := range bigTables {
		names[tbl] = true
		re := regexp.MustCompile(`(?i)\b` + tbl + `\s+(?:AS\s+)?(\w+)`)
		for _, m := range re.FindAllStringSubmatch(q, -1) {
			names[m[1]] = true
		}
	}
	return names
}

// fullScans returns the plan's lines that scan a big table, "" if none.
func fullScans(t *testing.T, db *sql.DB, r recorded) string {
	t.Helper()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+r.q, r.args...)
	if err != nil {
		t.Errorf("EXPLAIN QUERY PLAN %s: %v", strings.TrimSpace(r.q), err)
		return ""
	}
	defer rows.Close()
	names := bigNames(r.q)
	var bad, all []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		all = append(all, detail)
		if walksHistory(detail, names) {
			bad = append(bad, detail)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf("  %s\n(full plan: %s)", strings.Join(bad, "\n  "), strings.Join(all, " | "))
}
