package retention

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/pgtest"
	"github.com/ingestworks/ingest/internal/storetest"
	"github.com/ingestworks/ingest/store"
)

// A test that calls storetest.Each runs once against SQLite (a file in the
// test's temp dir) and once against a real PostgreSQL (internal/pgtest);
// one that opens a store with openTest is about SQLite alone (the WAL, the
// file's size).

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

func openURL(t testing.TB, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openTest opens a SQLite file of the test's own (storetest.Open).
func openTest(t testing.TB) *store.DB {
	t.Helper()
	return storetest.Open(t)
}

// small is a pruner whose steps are small, so that a test's few
// megabytes take many of them.
func small(db *store.DB) *pruner {
	pr := newPruner(db)
	pr.vacuumStep, pr.mergePages, pr.walMark = 64, 64, 256<<10
	return pr
}

func i64(n int64) *int64 { return &n }

func vid(id, title string) ingest.Video {
	return ingest.Video{ID: id, Title: title, Description: "about " + title,
		Tags: []string{"tag" + id}, ChannelID: "UC" + id, ChannelTitle: "Channel " + id,
		CategoryID: "10", PublishedAt: t0.Add(-24 * time.Hour), Duration: "PT3M",
		ViewCount: i64(1000), LikeCount: i64(10), CommentCount: i64(1)}
}

func page(kind ingest.PageKind, region string, number int, at time.Time, videos ...ingest.Video) ingest.Page {
	return ingest.Page{Kind: kind, Region: region, Number: number, Videos: videos, Fetched: at}
}

// run starts a run and stores pages in it.
func run(t testing.TB, db *store.DB, kind ingest.PageKind, region string, at time.Time, pages ...ingest.Page) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := db.StartRun(ctx, region, "", kind, at)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if err := db.SavePage(ctx, id, p); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// finished stores a finished chart run of videos at at.
func finished(t testing.TB, db *store.DB, region string, at time.Time, videos ...ingest.Video) int64 {
	t.Helper()
	id := run(t, db, ingest.Trending, region, at, page(ingest.Trending, region, 1, at, videos...))
	if err := db.FinishRun(context.Background(), id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at}); err != nil {
		t.Fatal(err)
	}
	return id
}

func count(t testing.TB, db *store.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// integrityCheck checks that the search index holds no words of a deleted
// video: FTS5's own check, or on PostgreSQL no document without its video.
func integrityCheck(t *testing.T, db *store.DB) {
	t.Helper()
	if db.Postgres() {
		if n := count(t, db, `SELECT count(*) FROM video_docs AS d WHERE NOT EXISTS (SELECT 1 FROM videos AS v WHERE v.vid = d.vid)`); n != 0 {
			t.Errorf("the index holds %d documents of deleted videos", n)
		}
		return
	}
	if _, err := db.Writer().Exec(`INSERT INTO videos_fts (videos_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("FTS integrity-check: %v", err)
	}
}
