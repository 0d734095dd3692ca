package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ingestworks/ingest/internal/fakeyt"
)

// movedRuns runs `run --once` for regions twice, an hour of the fake's
// clock apart, so that the charts differ between the runs.
func movedRuns(t *testing.T, h *harness, regions string) {
	t.Helper()
	var mu sync.Mutex
	now := fakeyt.Anchor
	h.fake.Move(3, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	h.mustRun(0, "run", "--once", "--regions", regions)
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	h.mustRun(0, "run", "--once", "--regions", regions)
}

func TestExportJSONLAndFilters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	movedRuns(t, h, "GB,AU")
	res := h.mustRun(0, "export", "--since", "2000-01-01", "--region", "gb", "--category", "all", "--format", "jsonl")
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) != 2*fakeyt.ChartLengths["GB"] {
		t.Fatalf("%d lines for GB, want %d", len(lines), 2*fakeyt.ChartLengths["GB"])
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["region"] != "GB" || rec["rank"] != 1.0 || rec["video_id"] == "" {
		t.Errorf("first line = %v", rec)
	}
	if res := h.mustRun(0, "export", "--since", "2000-01-01", "--category", "music", "--format", "jsonl"); res.stdout != "" {
		t.Errorf("no music chart was fetched, yet the export holds %q", res.stdout)
	}
	if res := h.mustRun(0, "export", "--since", "2000-01-01", "--until", "2000-02-01"); strings.Count(res.stdout, "\n") != 1 {
		t.Errorf("an empty range: want the header alone, got %q", res.stdout)
	}
}

func TestExportUsageErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "AU")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export"}, "--since"},
		{[]string{"export", "--since", "yesterday"}, "--since"},
		{[]string{"export", "--since", "2026-11-02", "--until", "2026-11-01"}, "--until"},
		{[]string{"export", "--since", "2026-11-01", "--format", "xlsx"}, "--format"},
		{[]string{"export", "--since", "2026-11-01", "--category", "knitting"}, "--category"},
		{[]string{"export", "--since", "2026-11-01", "--region", "XX1"}, "--region"},
	} {
		res := h.mustRun(2, c.args...)
		if !strings.Contains(res.stderr, c.want) {
			t.Errorf("%v: stderr %q does not name %s", c.args, res.stderr, c.want)
		}
	}
	// A file in a directory that does not exist: the user's to fix, exit 2.
	res := h.mustRun(2, "export", "--since", "2000-01-01", "--out", filepath.Join(h.dir, "no", "such", "dir.csv"))
	if !strings.Contains(res.stderr, "--out") {
		t.Errorf("stderr %q does not name --out", res.stderr)
	}
}

// parquetRow is what the test reads back with parquet-go's own reader.
type parquetRow struct {
	VideoID      string    `parquet:"video_id"`
	TrendingDate time.Time `parquet:"trending_date,timestamp(millisecond)"`
	ViewCount    *int64    `parquet:"view_count,optional"`
	CommentCount *int64    `parquet:"comment_count,optional"`
	Tags         []string  `parquet:"tags,list"`
	Region       string    `parquet:"region"`
	Rank         int32     `parquet:"rank"`
}

func TestExportParquetReadsBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	movedRuns(t, h, "GB,AU")
	out := filepath.Join(h.dir, "trending.parquet")
	h.mustRun(0, "export", "--since", "2000-01-01", "--format", "parquet", "--out", out)
	csvOut := h.mustRun(0, "export", "--since", "2000-01-01", "--format", "csv").stdout
	recs, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	csvRows := recs[1:]

	rows, err := parquet.ReadFile[parquetRow](out)
	if err != nil {
		t.Fatalf("parquet-go cannot read the export: %v", err)
	}
	if len(rows) != len(csvRows) {
		t.Fatalf("%d Parquet rows, %d CSV rows", len(rows), len(csvRows))
	}
	for i, r := range rows {
		c := csvRows[i]
		if r.VideoID != c[0] || r.Region != c[16] || strconv.Itoa(int(r.Rank)) != c[18] ||
			r.TrendingDate.UTC().Format(time.RFC3339) != c[6] || countText(r.ViewCount) != c[8] || countText(r.CommentCount) != c[11] {
			t.Fatalf("row %d: Parquet %+v, CSV %v", i+1, r, c)
		}
	}
	checkParquetSchema(t, out)
	readWithHyparquet(t, out, csvRows)
}

// countText is a count as the CSV spells it: empty when hidden.
func countText(n *int64) string {
	if n == nil {
		return ""
	}
	return strconv.FormatInt(*n, 10)
}

// checkParquetSchema checks the file's columns and their types.
func checkParquetSchema(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"video_id": "BYTE_ARRAY", "view_count": "INT64", "trending_date": "INT64",
		"rank": "INT32", "comments_disabled": "BOOLEAN"}
	for _, field := range pf.Schema().Fields() {
		if typ, ok := want[field.Name()]; ok {
			if got := field.Type().Kind().String(); got != typ {
				t.Errorf("column %s: %s, want %s", field.Name(), got, typ)
			}
			delete(want, field.Name())
		}
	}
	if len(want) > 0 {
		t.Errorf("columns missing from the Parquet schema: %v", want)
	}
}

// readWithHyparquet reads the file with an independent reader (hyparquet,
// from npm, run by node) when node and npm are here; otherwise it says so.
func readWithHyparquet(t *testing.T, path string, csvRows [][]string) {
	t.Helper()
	dir := hyparquetDir(t)
	if dir == "" {
		return
	}
	script, err := filepath.Abs("testdata/readparquet.mjs")
	if err != nil {
		t.Fatal(err)
	}
	mjs := filepath.Join(dir, "readparquet.mjs")
	body, _ := os.ReadFile(script)
	if err := os.WriteFile(mjs, body, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("node", mjs, path).Output()
	if err != nil {
		t.Fatalf("hyparquet could not read the export: %v", err)
	}
	var got struct {
		NumRows int              `json:"num_rows"`
		Columns []string         `json:"columns"`
		Rows    []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.NumRows != len(csvRows) || len(got.Rows) != len(csvRows) || !slices.Contains(got.Columns, "thumbnail_link") {
		t.Fatalf("hyparquet: %d rows (%d read), columns %v; want %d rows", got.NumRows, len(got.Rows), got.Columns, len(csvRows))
	}
	for i, r := range got.Rows {
		c := csvRows[i]
		if r["video_id"] != c[0] || r["title"] != c[1] || r["description"] != c[15] {
			t.Fatalf("hyparquet row %d: %v, CSV %v", i+1, r, c[:3])
		}
	}
	t.Logf("hyparquet read %d rows, %d columns", got.NumRows, len(got.Columns))
}

var hyparquetOnce struct {
	sync.Once
	dir string
	why string
}

// hyparquetDir installs hyparquet once per test binary into a cache
// directory, and returns it; "" (logged) when node or npm cannot.
func hyparquetDir(t *testing.T) string {
	hyparquetOnce.Do(func() {
		if _, err := exec.LookPath("node"); err != nil {
			hyparquetOnce.why = "node is not installed"
			return
		}
		dir := filepath.Join(os.TempDir(), "ingest-test-hyparquet")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "hyparquet")); err == nil {
			hyparquetOnce.dir = dir
			return
		}
		os.MkdirAll(dir, 0o755)
		cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, "hyparquet@1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			hyparquetOnce.why = "npm install hyparquet: " + err.Error() + ": " + stderr.String()
			return
		}
		hyparquetOnce.dir = dir
	})
	if hyparquetOnce.dir == "" {
		t.Logf("no independent Parquet reader (%s): checked with parquet-go's reader and the schema only", hyparquetOnce.why)
	}
	return hyparquetOnce.dir
}
