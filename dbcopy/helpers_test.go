package dbcopy

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/pgtest"
	"github.com/ingestworks/ingest/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

func open(t testing.TB, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func vid(id, title string) ingest.Video {
	n := int64(1000)
	return ingest.Video{ID: id, Title: title, Description: "about " + title, Tags: []string{"tag" + id},
		ChannelID: "UC" + id, ChannelTitle: "Channel " + id, CategoryID: "10", PublishedAt: t0.Add(-24 * time.Hour),
		Duration: "PT3M", ViewCount: &n, LikeCount: &n, CommentCount: &n}
}

// run starts a run in region at at and stores a page of videos in it.
func run(t *testing.T, db *store.DB, kind ingest.PageKind, region string, at time.Time, videos ...ingest.Video) {
	t.Helper()
	ctx := context.Background()
	id, err := db.StartRun(ctx, region, "", kind, at)
	if err == nil {
		err = db.SavePage(ctx, id, ingest.Page{Kind: kind, Region: region, Number: 1, Videos: videos, Fetched: at})
	}
	if err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, db *store.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// tablesOf lists the tables the migrations built in db, without SQLite's
// own and the FTS5 index's shadow tables (the index is one table).
func tablesOf(t *testing.T, db *store.DB) []string {
	t.Helper()
	q := `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'videos_fts_%'`
	if db.Postgres() {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	rows, err := db.Reader().Query(q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := scanAll(rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got {
		names = append(names, text(r[0]))
	}
	slices.Sort(names)
	return names
}

// integrityCheck checks that the search index holds the videos' text as
// it is now: FTS5's own check, or on PostgreSQL each video's tsvector
// against the one its text makes.
func integrityCheck(t *testing.T, db *store.DB) {
	t.Helper()
	if !db.Postgres() {
		if _, err := db.Writer().Exec(`INSERT INTO videos_fts (videos_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
			t.Errorf("FTS integrity-check: %v", err)
		}
		return
	}
	rows, err := db.Reader().Query(`SELECT v.id, v.title, v.description, v.tags, v.channel_title, coalesce(d.doc::text, '')
		FROM videos AS v LEFT JOIN video_docs AS d USING (vid)`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := scanAll(rows, 6)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		v := ingest.Video{Title: text(r[1]), Description: text(r[2]), ChannelTitle: text(r[4])}
		_ = json.Unmarshal([]byte(text(r[3])), &v.Tags)
		var want string
		if err := db.Reader().QueryRow(`SELECT ?::tsvector::text`, store.SearchDoc(&v)).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if text(r[5]) != want {
			t.Errorf("video %s: index holds %s, its text makes %s", text(r[0]), text(r[5]), want)
		}
	}
}
