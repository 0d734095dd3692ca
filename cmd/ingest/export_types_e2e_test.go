package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// duckDBVersion is the DuckDB the export's types are checked with, from
// npm with its prebuilt library, pinned so that the check's verdict is
// the same on every run.
const duckDBVersion = "@duckdb/node-api@1.5.6-r.1"

// duckTypes is run by node: for each export file, DuckDB's DESCRIBE of its
// own reader over it, and each time column's instants as epoch seconds.
const duckTypes = `
import { DuckDBInstance } from '@duckdb/node-api';
const [csv, jsonl, parquet] = process.argv.slice(2);
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const out = { version: (await c.runAndReadAll('select version()')).getRows()[0][0], types: {}, instants: {} };
for (const [f, from] of [['csv', "read_csv('" + csv + "')"], ['jsonl', "read_json('" + jsonl + "')"], ['parquet', "read_parquet('" + parquet + "')"]]) {
  const d = await c.runAndReadAll('DESCRIBE SELECT * FROM ' + from);
  out.types[f] = Object.fromEntries(d.getRowObjectsJson().map(r => [r.column_name, r.column_type]));
  const t = await c.runAndReadAll('SELECT string_agg(coalesce(epoch(publishedAt)::varchar, \'null\') || \'/\' || epoch(trending_date)::varchar, \' \') FROM ' + from);
  out.instants[f] = t.getRows()[0][0];
}
console.log(JSON.stringify(out));
`

// exportTypeExceptions are the columns whose DuckDB type may differ by
// format, each for a reason of the format, not of the export (docs/data.md).
var exportTypeExceptions = map[string]map[string]string{
	// CSV has no lists: the dataset's tags joined by "|".
	"tags": {"csv": "VARCHAR", "jsonl": "VARCHAR[]", "parquet": "VARCHAR[]"},
	// JSON has no time: the text carries its zone (Z), and DuckDB's JSON
	// reader before 1.6 types such text TIMESTAMP, the same instant in UTC.
	"publishedAt":   {"csv": "TIMESTAMP WITH TIME ZONE", "jsonl": "TIMESTAMP", "parquet": "TIMESTAMP WITH TIME ZONE"},
	"trending_date": {"csv": "TIMESTAMP WITH TIME ZONE", "jsonl": "TIMESTAMP", "parquet": "TIMESTAMP WITH TIME ZONE"},
}

// TestExportTypesInDuckDB: the same runs exported as CSV, JSON lines and
// Parquet through the binary, read by DuckDB with nothing declared: every
// column has one type in the three (but the format's own exceptions
// above), categoryId and chart numbers as CSV's digits read, rank BIGINT,
// the times with their zone, and each time the same instant in the three.
func TestExportTypesInDuckDB(t *testing.T) {
	t.Parallel()
	dir := duckDBDir(t)
	h := newHarness(t)
	movedRuns(t, h, "GB,AU")
	h.mustRun(0, "run", "--once", "--regions", "GB", "--categories", "music")
	files := map[string]string{}
	for _, f := range []string{"csv", "jsonl", "parquet"} {
		files[f] = filepath.Join(h.dir, "export."+f)
		h.mustRun(0, "export", "--since", "2000-01-01", "--format", f, "--out", files[f])
	}
	script := filepath.Join(dir, "types.mjs")
	if err := os.WriteFile(script, []byte(duckTypes), 0o644); err != nil {
		t.Fatal(err)
	}
	raw, err := exec.Command("node", script, files["csv"], files["jsonl"], files["parquet"]).Output()
	if err != nil {
		t.Fatalf("DuckDB could not read the exports: %v %s", err, stderrOf(err))
	}
	var got struct {
		Version  string                       `json:"version"`
		Types    map[string]map[string]string `json:"types"`
		Instants map[string]string            `json:"instants"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	t.Logf("DuckDB %s", got.Version)
	csvTypes := got.Types["csv"]
	if len(csvTypes) < 22 || len(got.Types["jsonl"]) != len(csvTypes) || len(got.Types["parquet"]) != len(csvTypes) {
		t.Fatalf("columns: %v", got.Types)
	}
	for col, typ := range csvTypes {
		want := map[string]string{"csv": typ, "jsonl": typ, "parquet": typ}
		if ex, ok := exportTypeExceptions[col]; ok {
			want = ex
		}
		for _, f := range []string{"csv", "jsonl", "parquet"} {
			if got.Types[f][col] != want[f] {
				t.Errorf("%s in %s: DuckDB reads %s, want %s (csv %s, jsonl %s, parquet %s)", col, f, got.Types[f][col], want[f],
					got.Types["csv"][col], got.Types["jsonl"][col], got.Types["parquet"][col])
			}
		}
	}
	for col, want := range map[string]string{"categoryId": "BIGINT", "chart": "BIGINT", "rank": "BIGINT", "run_id": "BIGINT",
		"view_count": "BIGINT", "comments_disabled": "BOOLEAN", "video_id": "VARCHAR",
		"category_name": "VARCHAR", "video_url": "VARCHAR", "chart_name": "VARCHAR", "trending_day": "DATE",
		"category_name_local": "VARCHAR", "run_status": "VARCHAR", "complete": "BOOLEAN"} {
		if csvTypes[col] != want {
			t.Errorf("%s: DuckDB reads %s from CSV, want %s", col, csvTypes[col], want)
		}
	}
	if got.Instants["csv"] == "" || got.Instants["csv"] != got.Instants["jsonl"] || got.Instants["csv"] != got.Instants["parquet"] {
		t.Errorf("the times' instants differ by format:\ncsv     %.200s\njsonl   %.200s\nparquet %.200s",
			got.Instants["csv"], got.Instants["jsonl"], got.Instants["parquet"])
	}
	// JSON lines' times are text with their zone.
	line, _, _ := strings.Cut(string(fileBytes(t, files["jsonl"])), "\n")
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"publishedAt", "trending_date"} {
		if s, _ := rec[col].(string); !strings.HasSuffix(s, "Z") {
			t.Errorf("JSON lines' %s = %v: want a time with its zone", col, rec[col])
		}
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

var duckDBOnce struct {
	sync.Once
	dir string
	why string
}

// duckDBDir installs DuckDB's node package once per test binary into a
// directory of the temporary directory, as export's tests install
// hyparquet, and returns it; without node or npm the test is skipped,
// saying why.
func duckDBDir(t *testing.T) string {
	t.Helper()
	duckDBOnce.Do(func() {
		if _, err := exec.LookPath("node"); err != nil {
			duckDBOnce.why = "node is not installed"
			return
		}
		dir := filepath.Join(os.TempDir(), "ingest-test-duckdb-"+strings.NewReplacer("@", "", "/", "-").Replace(duckDBVersion))
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api")); err == nil {
			duckDBOnce.dir = dir
			return
		}
		os.MkdirAll(dir, 0o755)
		cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, duckDBVersion)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			duckDBOnce.why = "npm install " + duckDBVersion + ": " + err.Error() + ": " + stderr.String()
			return
		}
		duckDBOnce.dir = dir
	})
	if duckDBOnce.dir == "" {
		t.Skipf("no DuckDB to read the exports with (%s); export's tests check the types each format declares", duckDBOnce.why)
	}
	return duckDBOnce.dir
}

// The declarations docs/data.md reads CSV and JSON lines with, which carry
// no type of their own: with them, a column has its type whatever the
// file holds.
const (
	csvDeclared  = `read_csv('hourly.csv', header = true, columns = {'video_id': 'VARCHAR', 'title': 'VARCHAR', 'publishedAt': 'TIMESTAMPTZ', 'channelId': 'VARCHAR', 'channelTitle': 'VARCHAR', 'categoryId': 'BIGINT', 'trending_date': 'TIMESTAMPTZ', 'tags': 'VARCHAR', 'view_count': 'BIGINT', 'likes': 'BIGINT', 'dislikes': 'BIGINT', 'comment_count': 'BIGINT', 'thumbnail_link': 'VARCHAR', 'comments_disabled': 'BOOLEAN', 'ratings_disabled': 'BOOLEAN', 'description': 'VARCHAR', 'region': 'VARCHAR', 'chart': 'BIGINT', 'rank': 'BIGINT', 'run_id': 'BIGINT', 'defaultAudioLanguage': 'VARCHAR', 'defaultLanguage': 'VARCHAR', 'category_name': 'VARCHAR', 'video_url': 'VARCHAR', 'chart_name': 'VARCHAR', 'trending_day': 'DATE', 'category_name_local': 'VARCHAR', 'run_status': 'VARCHAR', 'complete': 'BOOLEAN', 'trending_day_utc': 'DATE', 'ranks_lost': 'BIGINT'})`
	jsonDeclared = `read_json('hourly.jsonl', format = 'newline_delimited', columns = {'video_id': 'VARCHAR', 'title': 'VARCHAR', 'publishedAt': 'TIMESTAMPTZ', 'channelId': 'VARCHAR', 'channelTitle': 'VARCHAR', 'categoryId': 'BIGINT', 'trending_date': 'TIMESTAMPTZ', 'tags': 'VARCHAR[]', 'view_count': 'BIGINT', 'likes': 'BIGINT', 'dislikes': 'BIGINT', 'comment_count': 'BIGINT', 'thumbnail_link': 'VARCHAR', 'comments_disabled': 'BOOLEAN', 'ratings_disabled': 'BOOLEAN', 'description': 'VARCHAR', 'region': 'VARCHAR', 'chart': 'BIGINT', 'rank': 'BIGINT', 'run_id': 'BIGINT', 'defaultAudioLanguage': 'VARCHAR', 'defaultLanguage': 'VARCHAR', 'category_name': 'VARCHAR', 'video_url': 'VARCHAR', 'chart_name': 'VARCHAR', 'trending_day': 'DATE', 'category_name_local': 'VARCHAR', 'run_status': 'VARCHAR', 'complete': 'BOOLEAN', 'trending_day_utc': 'DATE', 'ranks_lost': 'BIGINT'})`
)

// duckDeclared is run by node: DuckDB's DESCRIBE of each export read with
// nothing declared, and of the CSV and the JSON lines read as docs/data.md
// declares them.
const duckDeclared = `
import { DuckDBInstance } from '@duckdb/node-api';
const [csv, jsonl, parquet, csvDeclared, jsonDeclared, csvEmpty, jsonlEmpty] = process.argv.slice(2);
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const out = {};
for (const [name, from] of [['csv', "read_csv('" + csv + "')"], ['jsonl', "read_json('" + jsonl + "')"], ['parquet', "read_parquet('" + parquet + "')"],
    ['csv declared', csvDeclared.replace('hourly.csv', csv)], ['jsonl declared', jsonDeclared.replace('hourly.jsonl', jsonl)],
    ['csv empty declared', csvDeclared.replace('hourly.csv', csvEmpty)], ['jsonl empty declared', jsonDeclared.replace('hourly.jsonl', jsonlEmpty)]]) {
  const d = await c.runAndReadAll('DESCRIBE SELECT * FROM ' + from);
  out[name] = Object.fromEntries(d.getRowObjectsJson().map(r => [r.column_name, r.column_type]));
}
console.log(JSON.stringify(out));
`

// TestExportTypesOfAColumnNoRowHolds: a default export (the unfiltered
// charts alone) holds no chart number at all. Parquet declares the column
// BIGINT; CSV and JSON lines declare no type, and DuckDB, guessing from
// values, reads it VARCHAR and JSON, as docs/data.md says; read with the
// declarations docs/data.md gives, every column of CSV and JSON lines has
// Parquet's type (CSV's joined tags aside), and so has every column of an
// empty window's files (exit 3): the header alone, and no byte at all.
func TestExportTypesOfAColumnNoRowHolds(t *testing.T) {
	t.Parallel()
	dir := duckDBDir(t)
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "GB")
	files := map[string]string{}
	for _, f := range []string{"csv", "jsonl", "parquet"} {
		files[f] = filepath.Join(h.dir, "export."+f)
		h.mustRun(0, "export", "--since", "2000-01-01", "--format", f, "--out", files[f])
	}
	for _, f := range []string{"csv", "jsonl"} {
		files["empty "+f] = filepath.Join(h.dir, "empty."+f)
		h.mustRun(3, "export", "--since", "2000-01-01", "--until", "2000-01-02", "--format", f, "--out", files["empty "+f])
	}
	if n := len(fileBytes(t, files["empty jsonl"])); n != 0 {
		t.Errorf("an empty window's JSON lines hold %d bytes, want none", n)
	}
	doc := string(fileBytes(t, filepath.Join("..", "..", "docs", "data.md")))
	for _, d := range []string{csvDeclared, jsonDeclared} {
		if !strings.Contains(doc, d) {
			t.Errorf("docs/data.md does not read the exports as the test does: %s", d)
		}
	}
	script := filepath.Join(dir, "declared.mjs")
	if err := os.WriteFile(script, []byte(duckDeclared), 0o644); err != nil {
		t.Fatal(err)
	}
	raw, err := exec.Command("node", script, files["csv"], files["jsonl"], files["parquet"], csvDeclared, jsonDeclared,
		files["empty csv"], files["empty jsonl"]).Output()
	if err != nil {
		t.Fatalf("DuckDB could not read the exports: %v %s", err, stderrOf(err))
	}
	var got map[string]map[string]string
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"parquet": "BIGINT", "csv": "VARCHAR", "jsonl": "JSON", "csv declared": "BIGINT", "jsonl declared": "BIGINT"} {
		if got[name]["chart"] != want {
			t.Errorf("chart, no row holding one, in %s: DuckDB reads %s, want %s (docs/data.md)", name, got[name]["chart"], want)
		}
	}
	for col, typ := range got["parquet"] {
		for _, name := range []string{"csv declared", "jsonl declared", "csv empty declared", "jsonl empty declared"} {
			if col == "tags" && strings.HasPrefix(name, "csv") {
				continue
			}
			if got[name][col] != typ {
				t.Errorf("%s in %s: DuckDB reads %s, Parquet %s", col, name, got[name][col], typ)
			}
		}
	}
}
