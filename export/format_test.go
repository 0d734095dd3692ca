package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

func ptr(n int64) *int64 { return &n }

// rows are two entries of one run: one with everything, one that hides
// its likes and comments and has no tags and no publication time.
func rows() []store.ExportRow {
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	full := store.ExportRow{StoredVideo: store.StoredVideo{Video: ingest.Video{ID: "a1", Title: "One, \"quoted\"",
		Description: "line\nbreak", Tags: []string{"x", "y z"}, ChannelID: "UC1", ChannelTitle: "Chan",
		CategoryID: "10", PublishedAt: at.Add(-time.Hour + 500*time.Millisecond), Thumbnail: "https://i/1.jpg",
		AudioLanguage: "en", Language: "en-GB"}},
		TrendingAt: at, FetchedAt: at, Views: ptr(1234), Likes: ptr(5), Comments: ptr(0), Region: "GB", Chart: "10", Rank: 1, RunID: 7,
		CategoryTitle: "Music", RunStatus: ingest.StatusCompleted, Complete: true}
	hidden := store.ExportRow{StoredVideo: store.StoredVideo{Video: ingest.Video{ID: "b2", Title: "Two"}},
		TrendingAt: at, FetchedAt: at, Views: ptr(9), Region: "GB", Rank: 2, RunID: 7, RunStatus: ingest.StatusStopped, RanksLost: 3}
	return []store.ExportRow{full, hidden}
}

func encode(t *testing.T, format string, w *bytes.Buffer) {
	t.Helper()
	enc, err := New(format, w)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows() {
		if err := enc.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCSVSpellsTheDataset(t *testing.T) {
	var b bytes.Buffer
	encode(t, "csv", &b)
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0], ","); !strings.HasPrefix(got, "video_id,title,publishedAt,channelId") {
		t.Fatalf("header %s", got)
	}
	// the dataset's layout, then the run's, then the video's further
	// fields in the store's order: the languages first
	if got := recs[0][20:22]; strings.Join(got, ",") != "defaultAudioLanguage,defaultLanguage" {
		t.Errorf("the further columns begin %q, want the languages", got)
	}
	if got := recs[0][len(recs[0])-9 : len(recs[0])-4]; strings.Join(got, ",") != "category_name,video_url,chart_name,trending_day,category_name_local" {
		t.Errorf("the columns before the run's end are %q, want the ones read from the others", got)
	}
	if got := recs[0][len(recs[0])-4 : len(recs[0])-2]; strings.Join(got, ",") != "run_status,complete" {
		t.Errorf("the columns after them are %q, want how the run ended", got)
	}
	if got := recs[0][len(recs[0])-2:]; strings.Join(got, ",") != "trending_day_utc,ranks_lost" {
		t.Errorf("the last columns are %q, want the UTC day, then the ranks the run's pages lost", got)
	}
	want := [][]string{
		{"a1", "One, \"quoted\"", "2026-11-21T08:00:00Z", "UC1", "Chan", "10", "2026-11-21T09:00:00Z", "x|y z",
			"1234", "5", "0", "0", "https://i/1.jpg", "False", "False", "line\nbreak", "GB", "10", "1", "7"},
		{"b2", "Two", "", "", "", "", "2026-11-21T09:00:00Z", "[None]",
			"9", "", "0", "", "", "True", "True", "", "GB", "", "2", "7"},
	}
	derived := [][]string{{"Music", "https://www.youtube.com/watch?v=a1", "music", "2026-11-21", "", "completed", "True", "2026-11-21", "0"},
		{"", "https://www.youtube.com/watch?v=b2", "all", "2026-11-21", "", "stopped", "False", "2026-11-21", "3"}}
	for i, r := range rows() {
		for _, f := range furtherFields {
			switch x := f.Value(&r.Video).(type) {
			case string:
				want[i] = append(want[i], x)
			case *int64:
				want[i] = append(want[i], count(x))
			}
		}
	}
	if want[0][20] != "en" || want[0][21] != "en-GB" {
		t.Fatalf("the rows' languages are not the further columns: %q", want[0][20:])
	}
	for i := range want {
		want[i] = append(want[i], derived[i]...)
	}
	for i, w := range want {
		if got := recs[i+1]; strings.Join(got, "\x00") != strings.Join(w, "\x00") {
			t.Errorf("row %d:\ngot  %q\nwant %q", i+1, got, w)
		}
	}
}

func TestJSONLKeepsTheCSVNames(t *testing.T) {
	var b bytes.Buffer
	encode(t, "jsonl", &b)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	var hidden map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &hidden); err != nil {
		t.Fatal(err)
	}
	var full map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &full); err != nil {
		t.Fatal(err)
	}
	if full["categoryId"] != 10.0 || full["chart"] != 10.0 {
		t.Errorf("categoryId %v, chart %v: want the number 10 (one type per column, as CSV's digits read)", full["categoryId"], full["chart"])
	}
	for key, want := range map[string]any{"video_id": "b2", "publishedAt": nil, "likes": nil, "comment_count": nil,
		"categoryId": nil, "chart": nil, "view_count": 9.0, "comments_disabled": true, "trending_date": "2026-11-21T09:00:00Z", "dislikes": 0.0} {
		if got, ok := hidden[key]; !ok || got != want {
			t.Errorf("%s: got %v (present %v), want %v", key, got, ok, want)
		}
	}
	if tags, ok := hidden["tags"].([]any); !ok || len(tags) != 0 {
		t.Errorf("tags: got %v, want []", hidden["tags"])
	}
}

func TestParquetReadsBack(t *testing.T) {
	var b bytes.Buffer
	encode(t, "parquet", &b)
	path := filepath.Join(t.TempDir(), "x.parquet")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := parquet.ReadFile[struct {
		VideoID     string     `parquet:"video_id"`
		PublishedAt *time.Time `parquet:"publishedAt,optional,timestamp(millisecond)"`
		Likes       *int64     `parquet:"likes,optional"`
		Rank        int64      `parquet:"rank"`
	}](path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].VideoID != "a1" || got[1].Rank != 2 || got[1].Likes != nil || got[1].PublishedAt != nil {
		t.Fatalf("read back %+v", got)
	}
	if want := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC); !got[0].PublishedAt.Equal(want) {
		t.Errorf("publishedAt %v, want %v (whole seconds, UTC)", got[0].PublishedAt, want)
	}
}

func TestUnknownFormat(t *testing.T) {
	if Known("xml") || !Known("parquet") {
		t.Fatal("Known disagrees with the formats")
	}
	if _, err := New("xml", &bytes.Buffer{}); err == nil {
		t.Fatal("New(xml) gave no error")
	}
}

// The Parquet encoder builds each row column by column: each column of
// every row read back holds its record's value (recordOf, then the further
// fields), a hidden count null, the tags repeated in order.
func TestParquetIsTheRecords(t *testing.T) {
	// more rows than the encoder holds before it writes them
	var want []store.ExportRow
	for i := range 600 {
		r := rows()[i%2]
		r.ID, r.Rank = fmt.Sprintf("%s-%d", r.ID, i), i+1
		want = append(want, r)
	}
	var got bytes.Buffer
	enc, err := New("parquet", &got)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range want {
		if err := enc.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(got.Bytes()), int64(got.Len()))
	if err != nil {
		t.Fatal(err)
	}
	read := make([]parquet.Row, len(want)+1)
	rs := f.RowGroups()[0].Rows()
	n := 0
	for n < len(read) {
		k, err := rs.ReadRows(read[n:])
		n += k
		if err != nil {
			break
		}
	}
	if n != len(want) {
		t.Fatalf("%d rows read back, want %d", n, len(want))
	}
	text := func(v reflect.Value) []string {
		switch x := v.Interface().(type) {
		case string:
			return []string{x}
		case *int64:
			if x == nil {
				return []string{"null"}
			}
			return []string{strconv.FormatInt(*x, 10)}
		case int64, int32, bool:
			return []string{fmt.Sprint(x)}
		case time.Time:
			return []string{strconv.FormatInt(x.UnixMilli(), 10)}
		case *time.Time:
			if x == nil {
				return []string{"null"}
			}
			return []string{strconv.FormatInt(x.UnixMilli(), 10)}
		case []string:
			if len(x) == 0 {
				return []string{"null"}
			}
			return x
		}
		t.Fatalf("no text of %T", v.Interface())
		return nil
	}
	for i, r := range want {
		byColumn := map[string][]string{}
		record, err := recordOf(r)
		if err != nil {
			t.Fatal(err)
		}
		rec := reflect.ValueOf(record)
		for j := range rec.NumField() {
			if name, _, _ := strings.Cut(rec.Type().Field(j).Tag.Get("parquet"), ","); name != "-" {
				byColumn[name] = text(rec.Field(j))
			}
		}
		for _, ff := range furtherFields {
			byColumn[ff.Export] = text(reflect.ValueOf(ff.Value(&r.Video)))
		}
		derived := reflect.ValueOf(derivedOf(&r))
		for j := range derived.NumField() {
			if name, _, _ := strings.Cut(derived.Type().Field(j).Tag.Get("parquet"), ","); name != "-" {
				byColumn[name] = text(derived.Field(j))
			}
		}
		byColumn["run_status"], byColumn["complete"] = []string{string(r.RunStatus)}, []string{strconv.FormatBool(r.Complete)}
		// a date is its days since 1970-01-01
		byColumn["trending_day"] = []string{strconv.FormatInt(derivedOf(&r).TrendingDayDate.Unix()/(24*60*60), 10)}
		byColumn["trending_day_utc"] = []string{strconv.FormatInt(utcDayOf(&r).TrendingDayUTCDate.Unix()/(24*60*60), 10)}
		byColumn["ranks_lost"] = []string{strconv.Itoa(r.RanksLost)}
		gotColumn := map[string][]string{}
		read[i].Range(func(col int, values []parquet.Value) bool {
			name := parquetSchema.Columns()[col][0]
			for _, v := range values {
				s := "null"
				if !v.IsNull() {
					s = v.String()
				}
				gotColumn[name] = append(gotColumn[name], s)
			}
			return true
		})
		if !reflect.DeepEqual(gotColumn, byColumn) {
			t.Errorf("row %d:\n got  %v\n want %v", i+1, gotColumn, byColumn)
		}
	}
}

// A category id that is not a number cannot be written in its column's
// type: every format stops, naming the video and the column.
func TestCategoryThatIsNoNumber(t *testing.T) {
	for _, format := range []string{"csv", "jsonl", "parquet"} {
		for _, bad := range []func(*store.ExportRow){
			func(r *store.ExportRow) { r.CategoryID = "music" },
			func(r *store.ExportRow) { r.Chart = "010" },
		} {
			r := rows()[0]
			bad(&r)
			enc, err := New(format, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			err = enc.Write(r)
			if err == nil || !strings.Contains(err.Error(), "video a1") || !strings.Contains(err.Error(), "not a category id") {
				t.Errorf("%s: a category %q/%q wrote with %v", format, r.CategoryID, r.Chart, err)
			}
		}
	}
}

// A tag the "|" join would make ambiguous, or that holds a line break, is
// quoted, its quotes doubled, so that the documented reading (a bare
// [None] is no tags, anything else split on "|" outside quotes) gives the
// tags back, a tag spelt [None] and one over two lines too; plain tags
// stay bare, as the dataset has them.
func TestCSVTagsSplitBack(t *testing.T) {
	for _, tags := range [][]string{
		{"rock", "AC|DC"},
		{`say "hi"`, "x"},
		{"[None]"},
		{"", "a"},
		{"two\nlines", "x"},
		{"carriage\rreturn"},
		{"plain", "two words"},
		nil,
	} {
		joined := joinTags(tags)
		if len(tags) == 0 {
			joined = "[None]" // as Write spells no tags
		}
		got, err := readTags(joined)
		if err != nil || strings.Join(got, "\x00") != strings.Join(tags, "\x00") || len(got) != len(tags) {
			t.Errorf("tags %q joined as %q read back as %q (%v)", tags, joined, got, err)
		}
		if python, err := exec.LookPath("python3"); err == nil {
			out, err := exec.Command(python, "-c", pythonTags, joined).Output()
			if want, _ := json.Marshal(append([]string{}, tags...)); err != nil || strings.TrimSpace(string(out)) != string(want) {
				t.Errorf("tags %q joined as %q: docs/data.md's Python reads %s (%v), want %s", tags, joined, out, err, want)
			}
		}
		if len(tags) > 0 && tags[0] == "plain" && joined != "plain|two words" {
			t.Errorf("plain tags joined as %q, want them bare", joined)
		}
	}
}

// readTags reads CSV's tags as docs/data.md says: a bare [None] is no
// tags; anything else is split on "|" outside double quotes, then unquoted.
func readTags(field string) ([]string, error) {
	if field == "[None]" {
		return nil, nil
	}
	r := csv.NewReader(strings.NewReader(field))
	r.Comma, r.FieldsPerRecord = '|', -1
	return r.Read()
}

// pythonTags is docs/data.md's Python reading of CSV's tags, printing them
// as JSON.
const pythonTags = `import csv, json, sys
tags = sys.argv[1]
print(json.dumps([] if tags == "[None]" else next(csv.reader([tags], delimiter="|")), ensure_ascii=False, separators=(",", ":")))`
