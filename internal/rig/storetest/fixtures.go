package storetest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// OpenURL opens the database at url (a SQLite path or a PostgreSQL URL)
// as the program opens it, closed when the test ends.
func OpenURL(t testing.TB, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Video is a video whose every field is filled from its id and title,
// published a day before at.
func Video(id, title string, at time.Time) ingest.Video {
	views, likes, comments := int64(1000), int64(10), int64(1)
	return ingest.Video{ID: id, Title: title, Description: "about " + title,
		Tags: []string{"tag" + id}, ChannelID: "UC" + id, ChannelTitle: "Channel " + id,
		CategoryID: "10", PublishedAt: at.Add(-24 * time.Hour), Duration: "PT3M",
		ViewCount: &views, LikeCount: &likes, CommentCount: &comments}
}

// Page is page number of a run's kind and region, fetched at at.
func Page(kind ingest.PageKind, region string, number int, at time.Time, videos ...ingest.Video) ingest.Page {
	return ingest.Page{Kind: kind, Region: region, Number: number, Videos: videos, Fetched: at}
}

// Run starts a run of kind in region at at, stores pages in it and gives
// its id; the run is left unfinished.
func Run(t testing.TB, db *store.DB, kind ingest.PageKind, region string, at time.Time, pages ...ingest.Page) int64 {
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

// Finished stores a completed chart run of one page of videos at at and
// gives its id.
func Finished(t testing.TB, db *store.DB, region string, at time.Time, videos ...ingest.Video) int64 {
	t.Helper()
	id := Run(t, db, ingest.Trending, region, at, Page(ingest.Trending, region, 1, at, videos...))
	if err := db.FinishRun(context.Background(), id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at}); err != nil {
		t.Fatal(err)
	}
	return id
}

// Count is the number a counting query q gives.
func Count(t testing.TB, db *store.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// Tables lists the tables the migrations built in db, sorted, without
// SQLite's own and the FTS5 index's shadow tables (the index is one table).
func Tables(t testing.TB, db *store.DB) []string {
	t.Helper()
	q := `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'videos_fts_%'`
	if db.Postgres() {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	rows, err := db.Reader().Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// CheckIndex checks that the search index holds the videos' text as it is
// now and nothing of a deleted video: FTS5's own integrity check, or on
// PostgreSQL no document without its video and each video's tsvector equal
// to the one its text makes.
func CheckIndex(t testing.TB, db *store.DB) {
	t.Helper()
	if !db.Postgres() {
		if _, err := db.Writer().Exec(`INSERT INTO videos_fts (videos_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
			t.Errorf("FTS integrity-check: %v", err)
		}
		return
	}
	if n := Count(t, db, `SELECT count(*) FROM video_docs AS d WHERE NOT EXISTS (SELECT 1 FROM videos AS v WHERE v.vid = d.vid)`); n != 0 {
		t.Errorf("the index holds %d documents of deleted videos", n)
	}
	rows, err := db.Reader().Query(`SELECT v.id, v.title, v.description, v.tags, v.channel_title, coalesce(d.doc::text, '')
		FROM videos AS v LEFT JOIN video_docs AS d USING (vid)`)
	if err != nil {
		t.Fatal(err)
	}
	type held struct{ id, doc string }
	var docs []held
	var videos []ingest.Video
	for rows.Next() {
		var v ingest.Video
		var h held
		var tags string
		if err := rows.Scan(&h.id, &v.Title, &v.Description, &tags, &v.ChannelTitle, &h.doc); err != nil {
			rows.Close()
			t.Fatal(err)
		}
		_ = json.Unmarshal([]byte(tags), &v.Tags)
		docs, videos = append(docs, h), append(videos, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for i, v := range videos {
		var want string
		if err := db.Reader().QueryRow(`SELECT ?::tsvector::text`, store.SearchDoc(&v)).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if docs[i].doc != want {
			t.Errorf("video %s: index holds %s, its text makes %s", docs[i].id, docs[i].doc, want)
		}
	}
}
