package export

import (
	"context"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/internal/rig/passtest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
)

// TestCSVFollowsTheDatasetLayout: two passes of GB and AU, an hour of the
// upstream's clock apart so that their charts differ, written to a CSV
// file: the dataset's columns first, a row for each entry of each run in
// the order the store holds them, with their counts, hidden comments said,
// each video's thumbnail, and each run's chart in its own rank order.
func TestCSVFollowsTheDatasetLayout(t *testing.T) {
	t.Parallel()
	db := movedRuns(t, "GB", "AU")
	out := writeAll(t, db, "csv")
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("the export is not CSV: %v", err)
	}
	want := []string{"video_id", "title", "publishedAt", "channelId", "channelTitle", "categoryId",
		"trending_date", "tags", "view_count", "likes", "dislikes", "comment_count", "thumbnail_link",
		"comments_disabled", "ratings_disabled", "description"}
	if !slices.Equal(recs[0][:len(want)], want) {
		t.Fatalf("header = %v, want the dataset's %v first", recs[0], want)
	}
	rows := recs[1:]
	if n := 2 * (fakeyt.ChartLengths["GB"] + fakeyt.ChartLengths["AU"]); len(rows) != n {
		t.Fatalf("%d rows, want %d (two runs of GB and AU)", len(rows), n)
	}
	stored := storedEntries(t, db)
	hidden := 0
	for i, r := range rows {
		if got := strings.Join([]string{r[0], r[16], r[18], r[8], r[11]}, " "); got != stored[i] {
			t.Errorf("row %d: %q, stored %q", i+1, got, stored[i])
		}
		if r[11] == "" {
			hidden++
			if r[13] != "True" {
				t.Errorf("row %d: hidden comments but comments_disabled = %q", i+1, r[13])
			}
		}
		if !strings.HasPrefix(r[12], "https://i.ytimg.com/vi/"+r[0]+"/") || r[10] != "0" {
			t.Errorf("row %d: thumbnail %q, dislikes %q", i+1, r[12], r[10])
		}
	}
	if hidden == 0 {
		t.Error("no row with hidden comments; the fixtures have some")
	}
	// A run's rows are in rank order; the second run's chart moved.
	first, second := idsOf(rows, "GB", 0), idsOf(rows, "GB", 1)
	if slices.Equal(first, second) {
		t.Error("GB's two runs exported the same chart; the fake's clock moved between them")
	}
}

// movedRuns fills a store with two passes of regions, an hour of the fake
// upstream's clock apart, so that the charts differ between the runs.
func movedRuns(t *testing.T, regions ...string) *store.DB {
	t.Helper()
	db := storetest.Open(t)
	up := passtest.New(t, db)
	var mu sync.Mutex
	now := fakeyt.Anchor
	up.Fake.Move(3, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	up.Fill(t, regions...)
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	up.Fill(t, regions...)
	return db
}

// writeAll writes every row db holds in format to a file of the test's
// own, as export --since 2000-01-01 --out does, and gives its path.
func writeAll(t *testing.T, db *store.DB, format string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "trending."+format)
	filter := store.ExportFilter{Since: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), Until: time.Now()}
	if err := WriteFile(out, func(w io.Writer) error { return Write(context.Background(), db, filter, format, w, nil) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// storedEntries reads every trending entry straight from the database, in
// the order an export writes them: id, region, rank, views, comments.
func storedEntries(t *testing.T, db *store.DB) []string {
	t.Helper()
	rows, err := db.Reader().Query(`SELECT v.id, r.region, e.rank, coalesce(e.view_count, ''), coalesce(e.comment_count, '')
		FROM trending_entries e JOIN videos v ON v.vid = e.vid JOIN runs r ON r.id = e.run_id
		ORDER BY r.started_ms, r.id, e.rank`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, region, rank, views, comments string
		if err := rows.Scan(&id, &region, &rank, &views, &comments); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join([]string{id, region, rank, views, comments}, " "))
	}
	return out
}

// idsOf returns the ids of region's n-th run in the CSV rows.
func idsOf(rows [][]string, region string, n int) []string {
	var out []string
	run := -1
	for _, r := range rows {
		if r[16] != region {
			continue
		}
		if r[18] == "1" {
			run++
		}
		if run == n {
			out = append(out, r[0])
		}
	}
	return out
}
