package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// derivedRows are entries whose day differs by zone: 02:00 UTC is the
// evening before in New York, 20:00 UTC the next morning in Tokyo; a
// day's row (--per day) is dated by its run, in the region's zone too.
func derivedRows() ([]store.ExportRow, [][5]string) {
	video := func(id string) store.StoredVideo {
		return store.StoredVideo{Video: ingest.Video{ID: id, Title: id, CategoryID: "10"}}
	}
	night := time.Date(2026, 11, 21, 2, 0, 0, 0, time.UTC)
	rows := []store.ExportRow{
		{StoredVideo: video("us-night"), TrendingAt: night, FetchedAt: night, Region: "US", Chart: "", CategoryTitle: "Music", CategoryTitleLocal: "Music", Rank: 1, RunID: 1},
		{StoredVideo: video("jp-morning"), TrendingAt: night.Add(18 * time.Hour), FetchedAt: night.Add(18 * time.Hour), Region: "JP", Chart: "20", CategoryTitle: "Music", CategoryTitleLocal: "音楽", Rank: 1, RunID: 2},
		{StoredVideo: video("us-day"), TrendingAt: night.Add(-2 * time.Hour), RunAt: night, Region: "US", Chart: "10", CategoryTitle: "Music", Rank: 1, RunID: 1, Daily: true},
		{StoredVideo: video("-dash_id"), TrendingAt: night, FetchedAt: night, Region: "GB", Chart: "99", Rank: 2, RunID: 3},
	}
	want := [][5]string{
		{"Music", "https://www.youtube.com/watch?v=us-night", "all", "2026-11-20", "Music"},
		{"Music", "https://www.youtube.com/watch?v=jp-morning", "gaming", "2026-11-22", "音楽"},
		{"Music", "https://www.youtube.com/watch?v=us-day", "music", "2026-11-20", ""},
		{"", "https://www.youtube.com/watch?v=-dash_id", "99", "2026-11-21", ""},
	}
	return rows, want
}

func encodeRows(t *testing.T, format string, rows []store.ExportRow) []byte {
	t.Helper()
	var b bytes.Buffer
	enc, err := New(format, &b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := enc.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Each format carries the columns read from the others after every
// column of before, by the same names: the category's name, the video's
// URL, the chart's name (all for the unfiltered chart), the day in the
// region's zone, a date in Parquet, and the category's name in the
// region's language.
func TestDerivedColumnsInEveryFormat(t *testing.T) {
	rows, want := derivedRows()
	got := map[string][][5]string{}

	recs, err := csv.NewReader(bytes.NewReader(encodeRows(t, "csv", rows))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := recs[0]
	before := []string{"video_id", "title", "publishedAt", "channelId", "channelTitle", "categoryId",
		"trending_date", "tags", "view_count", "likes", "dislikes", "comment_count", "thumbnail_link",
		"comments_disabled", "ratings_disabled", "description", "region", "chart", "rank", "run_id",
		"defaultAudioLanguage", "defaultLanguage"}
	if !slices.Equal(head[:len(before)], before) || len(head) != len(before)+5+len(runEndNames)+len(utcDayNames)+len(pagesNames) {
		t.Fatalf("header %q: want the columns of before, in their order, then five, then how the run ended, the UTC day and the ranks lost", head)
	}
	for _, r := range recs[1:] {
		got["csv"] = append(got["csv"], [5]string(r[len(before):len(before)+5]))
	}

	for _, line := range strings.Split(strings.TrimSpace(string(encodeRows(t, "jsonl", rows))), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		var row [5]string
		for i, name := range derivedNames {
			s, ok := m[name].(string)
			if !ok {
				t.Errorf("JSON lines' %s = %v, want a string", name, m[name])
			}
			row[i] = s
		}
		got["jsonl"] = append(got["jsonl"], row)
	}

	file := encodeRows(t, "parquet", rows)
	back, err := parquet.Read[struct {
		CategoryName string    `parquet:"category_name"`
		VideoURL     string    `parquet:"video_url"`
		ChartName    string    `parquet:"chart_name"`
		TrendingDay  time.Time `parquet:"trending_day,date"`
		Local        string    `parquet:"category_name_local"`
	}](bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range back {
		got["parquet"] = append(got["parquet"], [5]string{r.CategoryName, r.VideoURL, r.ChartName, r.TrendingDay.UTC().Format(time.DateOnly), r.Local})
	}
	pf, err := parquet.OpenFile(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	if col, ok := pf.Schema().Lookup("trending_day"); !ok || col.Node.Type().LogicalType().String() != "DATE" {
		t.Errorf("Parquet's trending_day is not a date: %v", col.Node)
	}

	for _, format := range []string{"csv", "jsonl", "parquet"} {
		if !slices.Equal(got[format], want) {
			t.Errorf("%s:\n got  %q\n want %q", format, got[format], want)
		}
	}
}

// Each row carries its day under two names, one calendar each, in every
// format: trending_day in the region's zone, trending_day_utc in UTC, a
// day's row (--per day) as a run's.
func TestTheTwoDaysInEveryFormat(t *testing.T) {
	rows, _ := derivedRows()
	want := [][2]string{{"2026-11-20", "2026-11-21"}, {"2026-11-22", "2026-11-21"}, {"2026-11-20", "2026-11-21"}, {"2026-11-21", "2026-11-21"}}
	got := map[string][][2]string{}
	recs, err := csv.NewReader(bytes.NewReader(encodeRows(t, "csv", rows))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	local, utc := slices.Index(recs[0], "trending_day"), slices.Index(recs[0], "trending_day_utc")
	if utc != len(recs[0])-len(pagesNames)-1 {
		t.Fatalf("header %q: want trending_day_utc after how the run ended", recs[0])
	}
	for _, r := range recs[1:] {
		got["csv"] = append(got["csv"], [2]string{r[local], r[utc]})
	}
	for _, line := range strings.Split(strings.TrimSpace(string(encodeRows(t, "jsonl", rows))), "\n") {
		var m struct {
			Local string `json:"trending_day"`
			UTC   string `json:"trending_day_utc"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		got["jsonl"] = append(got["jsonl"], [2]string{m.Local, m.UTC})
	}
	file := encodeRows(t, "parquet", rows)
	back, err := parquet.Read[struct {
		Local time.Time `parquet:"trending_day,date"`
		UTC   time.Time `parquet:"trending_day_utc,date"`
	}](bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range back {
		got["parquet"] = append(got["parquet"], [2]string{r.Local.UTC().Format(time.DateOnly), r.UTC.UTC().Format(time.DateOnly)})
	}
	for _, format := range []string{"csv", "jsonl", "parquet"} {
		if !slices.Equal(got[format], want) {
			t.Errorf("%s: trending_day and trending_day_utc\n got  %q\n want %q", format, got[format], want)
		}
	}
}
