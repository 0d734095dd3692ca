package store

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// TestJSONBIsTheText holds SQLite's JSONB rows of a page and of
// tracking's counts to the JSON text they replaced: SQLite reads both
// back to the same text, whatever the videos' text holds (quotes,
// escapes, control characters, bytes that are not UTF-8, scripts beyond
// ASCII) and whatever the sizes (an object past 255 bytes, a page past
// 64 KB), counts hidden and times unknown.
func TestJSONBIsTheText(t *testing.T) {
	t.Parallel()
	db := openTest(t)
	odd := vid("o\"dd", `a "quoted" \ back\slash, a tab	and a
newline, a bell `+"\x07"+`, not UTF-8 `+"\xff\xfe"+`, 日本語 and 🎬 </script>`)
	odd.Tags = []string{`"`, `\`, "日本", ""}
	odd.LikeCount, odd.CommentCount = nil, nil
	odd.PublishedAt = time.Time{}
	long := vid("long", strings.Repeat("a long title ", 30))
	long.Description = strings.Repeat("w", 70_000)
	bare := vid("bare", "")
	bare.Tags = nil
	for _, p := range []ingest.Page{
		page(ingest.Trending, "US", 1, t0, vid("a", "one")),
		page(ingest.Trending, "US", 3, t0, odd, long, bare),
		page(ingest.Search, "US", 2, t0),
	} {
		text, err := pageJSON(p, false)
		if err != nil {
			t.Fatal(err)
		}
		b, err := pageJSONB(p)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, db, "page", text, b)
	}
	stats := []ingest.VideoStats{
		{ID: "a", At: t0, ViewCount: 12, LikeCount: i64(3), CommentCount: nil},
		{ID: "o\"dd\xff", At: t0.Add(time.Hour), ViewCount: 0, LikeCount: nil, CommentCount: i64(-1)},
	}
	text, err := statsJSON(stats)
	if err != nil {
		t.Fatal(err)
	}
	b, err := statsJSONB(stats)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, db, "stats", text, b)
}

// sameJSON checks that SQLite holds b valid JSONB and reads from it every
// value it reads from the text, by the same paths.
func sameJSON(t *testing.T, db *DB, what, text string, b []byte) {
	t.Helper()
	const values = `(SELECT group_concat(fullkey || ' ' || type || ' ' || quote(atom), char(10)) FROM json_tree(?%d))`
	var valid bool
	var fromText, fromB string
	err := db.Reader().QueryRowContext(context.Background(), `SELECT json_valid(?2, 8), `+
		fmt.Sprintf(values, 1)+`, `+fmt.Sprintf(values, 2), text, b).Scan(&valid, &fromText, &fromB)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !valid {
		t.Errorf("%s: SQLite finds the JSONB invalid", what)
	}
	if fromB != fromText {
		t.Errorf("%s: the JSONB reads as\n%.600s\nwant\n%.600s", what, fromB, fromText)
	}
}

// TestJSONBKeptIsMadeAgain: the bytes of a page given back and taken again
// for another, a small page after a large one and counts after pages, are
// the bytes that page's rows are made of anew, so that nothing of the
// page before reaches the store.
func TestJSONBKeptIsMadeAgain(t *testing.T) {
	long := vid("long", strings.Repeat("a long title ", 30))
	long.Description = strings.Repeat("w", 70_000)
	small := page(ingest.Trending, "US", 2, t0, vid("a", "one"))
	big := page(ingest.Trending, "US", 1, t0, long, vid("b", "two"))
	stats := []ingest.VideoStats{{ID: "a", At: t0, ViewCount: 12, LikeCount: i64(3)}}
	rows := func(make func() ([]byte, error)) []byte {
		b, err := make()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	smallRows := func() ([]byte, error) { return pageJSONB(small) }
	bigRows := func() ([]byte, error) { return pageJSONB(big) }
	statRows := func() ([]byte, error) { return statsJSONB(stats) }
	want := map[string][]byte{}
	for name, make := range map[string]func() ([]byte, error){"small": smallRows, "big": bigRows, "stats": statRows} {
		want[name] = bytes.Clone(rows(make))
	}
	for round, name := range []string{"big", "small", "stats", "big", "stats", "small", "small"} {
		make := map[string]func() ([]byte, error){"small": smallRows, "big": bigRows, "stats": statRows}[name]
		got := rows(make)
		if !bytes.Equal(got, want[name]) {
			t.Fatalf("round %d: %s's rows made in kept bytes are %d bytes %q..., want %d bytes %q...",
				round, name, len(got), got[:min(len(got), 40)], len(want[name]), want[name][:min(len(want[name]), 40)])
		}
		releaseRows(got)
	}
}
