package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// dayRuns stores three runs of the GB chart over two days: a at rank 1
// then 2 (its views growing), b only in the day's first run, c the next
// day; publishedAt carries milliseconds that every format must drop.
func dayRuns(t *testing.T, path string) (day time.Time, runs []int64) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	day = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	video := func(id string, views int64) ingest.Video {
		return ingest.Video{ID: id, Title: "T " + id, ChannelID: "UC" + id, ChannelTitle: "C", CategoryID: "10",
			PublishedAt: day.Add(-time.Hour + 250*time.Millisecond), Duration: "PT1M", ViewCount: &views}
	}
	for _, r := range []struct {
		at     time.Duration
		videos []ingest.Video
	}{
		{10*time.Hour + 1500*time.Millisecond, []ingest.Video{video("a", 100), video("b", 50)}},
		{15 * time.Hour, []ingest.Video{video("x", 1), video("a", 200)}},
		{33 * time.Hour, []ingest.Video{video("c", 7)}},
	} {
		at := day.Add(r.at)
		id, err := db.StartRun(ctx, "GB", "", ingest.Trending, at)
		if err == nil {
			err = db.SavePage(ctx, id, ingest.Page{Kind: ingest.Trending, Region: "GB", Number: 1, Videos: r.videos, Fetched: at.Add(time.Second)})
		}
		if err == nil {
			err = db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at})
		}
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, id)
	}
	return day, runs
}

var secondsZ = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

// TestExportPerDay checks --per day against the runs it comes from, the
// one time format of CSV and JSON lines, Parquet's timestamps, run_id, and
// that --out files get the usual umask's mode.
func TestExportPerDay(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, runs := dayRuns(t, h.db())
	out := filepath.Join(h.dir, "daily.csv")
	h.mustRun(0, "export", "--since", "2026-11-20", "--until", "2026-11-22", "--per", "day", "--out", out)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs[1:] {
		got = append(got, strings.Join([]string{r[0], r[6], r[8], r[18], r[19]}, " "))
	}
	want := []string{"x 2026-11-20T00:00:00Z 1 1 " + itoa(runs[1]), "a 2026-11-20T00:00:00Z 200 2 " + itoa(runs[1]),
		"b 2026-11-20T00:00:00Z 50 2 " + itoa(runs[0]), "c 2026-11-21T00:00:00Z 7 1 " + itoa(runs[2])}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("daily rows (id, trending_date, views, rank, run_id):\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if recs[0][19] != "run_id" || recs[1][2] != "2026-11-19T23:00:00Z" {
		t.Errorf("header %v, publishedAt %q", recs[0], recs[1][2])
	}
	mask := syscall.Umask(0)
	syscall.Umask(mask)
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != os.FileMode(0o666&^mask) {
		t.Errorf("--out file mode %v (%v), want %v", fi.Mode().Perm(), err, os.FileMode(0o666&^mask))
	}

	jl := h.mustRun(0, "export", "--since", "2026-11-20", "--until", "2026-11-22", "--format", "jsonl").stdout
	sc := bufio.NewScanner(strings.NewReader(jl))
	for n := 0; sc.Scan(); n++ {
		var row struct {
			Published string `json:"publishedAt"`
			Trending  string `json:"trending_date"`
			RunID     int64  `json:"run_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if !secondsZ.MatchString(row.Published) || !secondsZ.MatchString(row.Trending) || row.RunID == 0 {
			t.Errorf("JSON line %d: publishedAt %q, trending_date %q, run_id %d: want seconds and Z, a run",
				n+1, row.Published, row.Trending, row.RunID)
		}
		if n == 0 && row.Trending != "2026-11-20T10:00:01Z" {
			t.Errorf("first hourly row's trending_date %q, want its run's start 2026-11-20T10:00:01Z", row.Trending)
		}
	}

	pq := filepath.Join(h.dir, "daily.parquet")
	h.mustRun(0, "export", "--since", "2026-11-20", "--until", "2026-11-22", "--per", "day", "--format", "parquet", "--out", pq)
	rows, err := parquet.ReadFile[struct {
		VideoID   string    `parquet:"video_id"`
		Published time.Time `parquet:"publishedAt,timestamp(millisecond)"`
		Trending  time.Time `parquet:"trending_date,timestamp(millisecond)"`
		RunID     int64     `parquet:"run_id"`
	}](pq)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[1].VideoID != "a" || !rows[1].Published.Equal(time.Date(2026, 11, 19, 23, 0, 0, 0, time.UTC)) ||
		!rows[3].Trending.Equal(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)) || rows[1].RunID != runs[1] {
		t.Errorf("Parquet rows %+v", rows)
	}
	checkTimestampColumns(t, pq)
}

// checkTimestampColumns checks that publishedAt and trending_date are
// Parquet timestamps, not text.
func checkTimestampColumns(t *testing.T, path string) {
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
	for _, name := range []string{"publishedAt", "trending_date"} {
		col, ok := pf.Schema().Lookup(name)
		if !ok {
			t.Errorf("no %s column", name)
			continue
		}
		if lt := col.Node.Type().LogicalType(); lt == nil || !strings.HasPrefix(lt.String(), "TIMESTAMP") {
			t.Errorf("%s: logical type %v, want a timestamp", name, lt)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A chart entry's days_on_chart counts the days the export names
// trending_day_utc: two runs of DE an hour apart across Berlin's midnight,
// both on one UTC day, are two days in trending_day and one in
// trending_day_utc, and days_on_chart is 1, at each run's printed time.
func TestDaysOnChartIsTheExportsUTCDays(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	db, err := store.Open(ctx, h.db())
	if err != nil {
		t.Fatal(err)
	}
	night := time.Date(2026, 11, 20, 22, 30, 0, 0, time.UTC) // 23:30 in Berlin
	// The third run starts a second before 00:00 UTC and its page comes
	// after: the chart counts the day the page was fetched.
	crossing := time.Date(2026, 11, 20, 23, 59, 58, 0, time.UTC)
	for _, at := range []time.Time{night, night.Add(time.Hour), crossing} {
		var videos []ingest.Video
		for _, id := range []string{"a", "b", "c"} {
			videos = append(videos, ingest.Video{ID: id, Title: "T " + id, ChannelID: "UC" + id, CategoryID: "10"})
		}
		id, err := db.StartRun(ctx, "DE", "", ingest.Trending, at)
		if err == nil {
			err = db.SavePage(ctx, id, ingest.Page{Kind: ingest.Trending, Region: "DE", Number: 1, Videos: videos, Fetched: at.Add(4 * time.Second)})
		}
		if err == nil {
			err = db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(5 * time.Second)})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	type row struct {
		VideoID string `json:"video_id"`
		At      string `json:"trending_date"`
		Local   string `json:"trending_day"`
		UTC     string `json:"trending_day_utc"`
	}
	var rows []row
	for _, line := range strings.Split(strings.TrimSpace(h.mustRun(0, "export", "--since", "2026-11-01", "--format", "jsonl").stdout), "\n") {
		var r row
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v in %q", err, line)
		}
		rows = append(rows, r)
	}
	days := func(video, upTo string, local bool) int {
		seen := map[string]bool{}
		for _, r := range rows {
			if r.VideoID == video && r.At <= upTo {
				seen[map[bool]string{true: r.Local, false: r.UTC}[local]] = true
			}
		}
		return len(seen)
	}
	if n := days("a", "9999", true); n != 2 {
		t.Errorf("a's rows span %d days of trending_day, want Berlin's two", n)
	}
	for _, at := range []string{night.Format(time.RFC3339), night.Add(time.Hour).Format(time.RFC3339), crossing.Format(time.RFC3339)} {
		var chart struct {
			At      string `json:"at"`
			Entries []struct {
				ID   string `json:"id"`
				Days *int   `json:"days_on_chart"`
			} `json:"entries"`
		}
		res := h.mustRun(0, "chart", "DE", "--at", at, "--derived", "on", "--json")
		if err := json.Unmarshal([]byte(res.stdout), &chart); err != nil {
			t.Fatalf("%v in %s", err, res)
		}
		if chart.At != at || len(chart.Entries) != 3 {
			t.Fatalf("chart DE --at %s: the run at %s with %d entries, want the run printed at it, with 3", at, chart.At, len(chart.Entries))
		}
		for _, e := range chart.Entries {
			if want := days(e.ID, at, false); e.Days == nil || *e.Days != want {
				t.Errorf("chart DE --at %s: %s's days_on_chart %s, want %d, its distinct trending_day_utc in the export", at, e.ID, orNull(e.Days), want)
			}
		}
	}
}

// orNull is a figure as JSON prints it.
func orNull(n *int) string {
	if n == nil {
		return "null"
	}
	return strconv.Itoa(*n)
}
