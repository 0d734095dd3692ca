package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// TestParquetOfMovedRunsReadsBack: the Parquet file of two moved runs holds the rows
// of the CSV, in its order, with the dataset's column types, as parquet-go
// and an independent reader (hyparquet) read it.
func TestParquetOfMovedRunsReadsBack(t *testing.T) {
	t.Parallel()
	db := movedRuns(t, "GB", "AU")
	out := writeAll(t, db, "parquet")
	csvOut, err := os.ReadFile(writeAll(t, db, "csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(csvOut)).ReadAll()
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

// parquetRow is what the test reads back with parquet-go's own reader.
type parquetRow struct {
	VideoID      string    `parquet:"video_id"`
	TrendingDate time.Time `parquet:"trending_date,timestamp(millisecond)"`
	ViewCount    *int64    `parquet:"view_count,optional"`
	CommentCount *int64    `parquet:"comment_count,optional"`
	Tags         []string  `parquet:"tags,list"`
	Region       string    `parquet:"region"`
	Rank         int64     `parquet:"rank"`
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
		"rank": "INT64", "comments_disabled": "BOOLEAN"}
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
