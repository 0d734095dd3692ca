package store

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/ledger"
)

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

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
func run(t testing.TB, db *DB, kind ingest.PageKind, region string, at time.Time, pages ...ingest.Page) int64 {
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

// integrityCheck checks that the search index holds the videos' text as
// it is now: FTS5's own check, or on PostgreSQL each video's tsvector
// against the one its text makes.
func integrityCheck(t *testing.T, db *DB) {
	t.Helper()
	if isPG(db) {
		pgIntegrityCheck(t, db)
		return
	}
	if _, err := db.Writer().Exec(`INSERT INTO videos_fts (videos_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("FTS integrity-check: %v", err)
	}
}

func pgIntegrityCheck(t *testing.T, db *DB) {
	t.Helper()
	rows, err := db.Reader().Query(`SELECT v.id, v.title, v.description, v.tags, v.channel_title,
		  coalesce(d.doc::text, ''), coalesce(d.regions::text, ''),
		  coalesce((SELECT array_to_tsvector(array_agg(region))::text FROM video_regions AS r WHERE r.vid = v.vid), '')
		FROM videos AS v LEFT JOIN video_docs AS d USING (vid)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, title, desc, tags, channel, doc, regions, inRegions string
		if err := rows.Scan(&id, &title, &desc, &tags, &channel, &doc, &regions, &inRegions); err != nil {
			t.Fatal(err)
		}
		var want string
		if err := db.Reader().QueryRow(`SELECT $1::tsvector::text`, tsDoc(title, desc, tagList(tags), channel)).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if doc != want {
			t.Errorf("video %s: index holds %s, its text makes %s", id, doc, want)
		}
		if regions != inRegions {
			t.Errorf("video %s: index holds regions %q, video_regions %q", id, regions, inRegions)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// indexedDocs counts the videos the search index holds words of.
func indexedDocs(t *testing.T, db *DB) int {
	t.Helper()
	if isPG(db) {
		return count(t, db, `SELECT count(*) FROM video_docs`)
	}
	return count(t, db, `SELECT count(*) FROM videos_fts_docsize`)
}

func count(t *testing.T, db *DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Reader().QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func TestSavePageStoresEverything(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		p1 := page(ingest.Trending, "US", 1, t0, vid("a", "First"), vid("b", "Second"))
		p2 := page(ingest.Trending, "US", 2, t0, vid("c", "Third"))
		id := run(t, db, ingest.Trending, "US", t0, p1, p2)

		v, ok, err := db.Video(ctx, "b")
		if err != nil || !ok {
			t.Fatalf("Video(b) = %v, %v", ok, err)
		}
		want := vid("b", "Second")
		if v.Title != want.Title || v.Description != want.Description || strings.Join(v.Tags, ",") != "tagb" ||
			v.ChannelID != want.ChannelID || v.ChannelTitle != want.ChannelTitle || v.CategoryID != "10" ||
			!v.PublishedAt.Equal(want.PublishedAt) || v.Duration != "PT3M" || *v.ViewCount != 1000 ||
			*v.LikeCount != 10 || *v.CommentCount != 1 || !v.FirstSeen.Equal(t0) || !v.LastSeen.Equal(t0) {
			t.Errorf("Video(b) = %+v, want %+v first/last seen %v", v, want, t0)
		}
		// Rank runs over the whole chart: page 2 starts at PageSize+1.
		for id, want := range map[string]int{"a": 1, "b": 2, "c": PageSize + 1} {
			if got := count(t, db, `SELECT e.rank FROM trending_entries e JOIN videos v USING (vid) WHERE v.id = ?`, id); got != want {
				t.Errorf("rank of %s = %d, want %d", id, got, want)
			}
		}
		r, err := db.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.RunID != id || r.Pages != 2 || r.Videos != 3 || r.Status != ingest.StatusRunning {
			t.Errorf("run = %+v, want id %d, 2 pages, 3 videos, running", r, id)
		}
		if n := count(t, db, `SELECT count(*) FROM search_results`); n != 0 {
			t.Errorf("search_results = %d after trending pages, want 0", n)
		}
	})
}

func TestResaveSamePage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		a, b := vid("a", "Football highlights"), vid("b", "Cooking pasta")
		id := run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, a, b))
		before := indexedDocs(t, db)

		a.ViewCount, a.LikeCount = i64(5000), i64(77)
		later := t0.Add(time.Minute)
		if err := db.SavePage(ctx, id, page(ingest.Trending, "US", 1, later, a, b)); err != nil {
			t.Fatal(err)
		}
		integrityCheck(t, db)
		if got := indexedDocs(t, db); got != before {
			t.Errorf("FTS documents = %d after re-save, want %d", got, before)
		}
		if got := count(t, db, `SELECT count(*) FROM videos`); got != 2 {
			t.Errorf("videos = %d, want 2", got)
		}
		if got := count(t, db, `SELECT count(*) FROM trending_entries`); got != 2 {
			t.Errorf("trending entries = %d, want 2 (one per run, region, video)", got)
		}
		v, _, _ := db.Video(ctx, "a")
		if *v.ViewCount != 5000 || *v.LikeCount != 77 || !v.LastSeen.Equal(later) || !v.FirstSeen.Equal(t0) {
			t.Errorf("after re-save: views %d likes %d first %v last %v; want 5000 77 %v %v",
				*v.ViewCount, *v.LikeCount, v.FirstSeen, v.LastSeen, t0, later)
		}
		hist, _ := entries(db, "a")
		if len(hist) != 1 || hist[0].Views == nil || *hist[0].Views != 5000 || !hist[0].At.Equal(later) {
			t.Errorf("history = %+v, want one point with 5000 views at %v", hist, later)
		}
		if r, _ := db.Run(ctx, id); r.Pages != 1 || r.Videos != 2 {
			t.Errorf("run pages/videos = %d/%d after re-save, want 1/2", r.Pages, r.Videos)
		}
		hits, err := db.Search(ctx, "football", SearchOptions{})
		if err != nil || len(hits) != 1 {
			t.Errorf("Search(football) = %v, %v; want one hit", hits, err)
		}
	})
}

func TestTextChangeUpdatesIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		a := vid("a", "Zebra documentary")
		id := run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, a))
		// The title alone changes first: each column's guard must fire.
		a.Title = "Okapi documentary"
		if err := db.SavePage(ctx, id, page(ingest.Trending, "US", 1, t0.Add(time.Minute), a)); err != nil {
			t.Fatal(err)
		}
		if hits, _ := db.Search(ctx, "okapi", SearchOptions{}); len(hits) != 1 {
			t.Errorf("Search(okapi) after a title change = %d hits, want 1", len(hits))
		}
		a.Title, a.Description, a.Tags, a.ChannelTitle = "Giraffe documentary", "tall", []string{"savanna"}, "Wild TV"
		if err := db.SavePage(ctx, id, page(ingest.Trending, "US", 1, t0.Add(time.Hour), a)); err != nil {
			t.Fatal(err)
		}
		integrityCheck(t, db)
		for q, want := range map[string]int{"zebra": 0, "giraffe": 1, "documentary": 1, "tagA": 0, "savanna": 1, "wild": 1, "tall": 1, "about": 0, "okapi": 0} {
			hits, err := db.Search(ctx, q, SearchOptions{})
			if err != nil || len(hits) != want {
				t.Errorf("Search(%q) = %d hits, %v; want %d", q, len(hits), err, want)
			}
		}
	})
}

func TestHiddenCountsAreNull(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		a := vid("a", "Hidden likes")
		a.LikeCount, a.CommentCount = nil, nil
		b := vid("b", "Zero likes")
		b.LikeCount, b.CommentCount = i64(0), i64(0)
		run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, a, b))
		for _, table := range []string{"videos", "trending_entries"} {
			q := `SELECT count(*) FROM trending_entries e JOIN videos v USING (vid) WHERE v.id = ? AND e.like_count IS NULL AND e.comment_count IS NULL`
			if table == "videos" {
				q = `SELECT count(*) FROM videos WHERE id = ? AND like_count IS NULL AND comment_count IS NULL`
			}
			if got := count(t, db, q, "a"); got != 1 {
				t.Errorf("%s: hidden counts of a not NULL", table)
			}
			if got := count(t, db, q, "b"); got != 0 {
				t.Errorf("%s: zero counts of b stored as NULL", table)
			}
		}
		v, _, _ := db.Video(ctx, "a")
		if v.LikeCount != nil || v.CommentCount != nil {
			t.Errorf("Video(a) likes %v comments %v, want nil", v.LikeCount, v.CommentCount)
		}
		hist, _ := entries(db, "a")
		if len(hist) != 1 || hist[0].Likes != nil || hist[0].Comments != nil {
			t.Errorf("history of a = %+v, want hidden counts nil", hist)
		}
	})
}

// entries are every trending entry of the video id, oldest first.
func entries(db *DB, id string) ([]ViewPoint, error) {
	points, _, err := db.RecentEntries(context.Background(), id, 1000)
	return points, err
}

func TestEntriesAcrossRuns(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		a := vid("a", "Rising video")
		r1 := run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, vid("x", "X"), a))
		a.ViewCount = i64(9000)
		t1 := t0.Add(time.Hour)
		r2 := run(t, db, ingest.Trending, "GB", t1, page(ingest.Trending, "GB", 1, t1, a))
		// A search result is not a trending entry.
		s := run(t, db, ingest.Search, "DE", t1, page(ingest.Search, "DE", 1, t1.Add(time.Minute), a))
		got, err := entries(db, "a")
		if err != nil {
			t.Fatal(err)
		}
		want := []ViewPoint{
			{RunID: r1, Region: "US", At: t0, Rank: 2, Views: i64(1000)},
			{RunID: r2, Region: "GB", At: t1, Rank: 1, Views: i64(9000)},
		}
		if len(got) != len(want) {
			t.Fatalf("history = %+v, want %+v", got, want)
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.Views == nil || *g.Views != *w.Views {
				t.Errorf("point %d views = %v, want %d", i, g.Views, *w.Views)
			}
			g.Likes, g.Comments, g.Views, w.Views = nil, nil, nil, nil
			if g != w {
				t.Errorf("point %d = %+v, want %+v", i, g, w)
			}
		}
		if n := count(t, db, `SELECT count(*) FROM search_results WHERE run_id = ?`, s); n != 1 {
			t.Errorf("search results of run %d = %d, want 1", s, n)
		}
		none, err := entries(db, "nope")
		if err != nil || len(none) != 0 {
			t.Errorf("entries of an unknown video = %v, %v; want none", none, err)
		}
	})
}

func TestSavePageIsAtomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		id := run(t, db, ingest.Trending, "US", t0)
		// Fail the page's second statement, after its videos were upserted.
		failInserts(t, db, "trending_entries")
		err := db.SavePage(ctx, id, page(ingest.Trending, "US", 1, t0, vid("a", "Lost"), vid("b", "Lost too")))
		if err == nil {
			t.Fatal("SavePage with a failing statement: got nil error")
		}
		if n := count(t, db, `SELECT count(*) FROM videos`); n != 0 {
			t.Errorf("videos = %d after a failed page, want 0", n)
		}
		integrityCheck(t, db)
		if hits, err := db.Search(ctx, "lost", SearchOptions{}); err != nil || len(hits) != 0 {
			t.Errorf("Search(lost) = %v, %v; want nothing", hits, err)
		}
	})
}

func TestSavePageRejects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		tr := run(t, db, ingest.Trending, "US", t0)
		for name, tc := range map[string]struct {
			run  int64
			page ingest.Page
		}{
			"no such run":      {tr + 100, page(ingest.Trending, "US", 1, t0, vid("a", "A"))},
			"kind mismatch":    {tr, page(ingest.Search, "US", 1, t0, vid("a", "A"))},
			"unknown kind":     {tr, page("chart", "US", 1, t0, vid("a", "A"))},
			"video without id": {tr, page(ingest.Trending, "US", 1, t0, vid("", "A"))},
		} {
			if err := db.SavePage(ctx, tc.run, tc.page); err == nil {
				t.Errorf("%s: got nil error", name)
			}
		}
		if n := count(t, db, `SELECT count(*) FROM videos`); n != 0 {
			t.Errorf("videos = %d after rejected pages, want 0", n)
		}
	})
}

func TestDuplicateVideoOnPage(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, vid("a", "Twice"), vid("a", "Twice")))
		integrityCheck(t, db)
		if n := count(t, db, `SELECT count(*) FROM trending_entries`); n != 1 {
			t.Errorf("trending entries = %d, want 1", n)
		}
	})
}

func TestRecordCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		search := ingest.Call{QuotaKey: "k", ID: "c2", At: t0.Add(time.Second), Op: "search.list",
			Region: "US", RunID: 7, Charges: []ingest.Charge{{Pool: "default", Units: 100}, {Pool: "search", Units: 1}}}
		list := ingest.Call{QuotaKey: "k", ID: "c1", At: t0, Op: "videos.list", Region: "US",
			Charges: []ingest.Charge{{Pool: "default", Units: 1}}, Unmetered: true}
		other := ingest.Call{QuotaKey: "other", ID: "c1", At: t0, Op: "videos.list",
			Charges: []ingest.Charge{{Pool: "default", Units: 1}}}
		for _, c := range []ingest.Call{search, list, search, other, list} {
			if err := ledger.New(db).RecordCall(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if n := count(t, db, `SELECT count(*) FROM ledger`); n != 4 {
			t.Errorf("ledger rows = %d, want 4 (one per call per pool)", n)
		}
		got, err := ledger.New(db).Calls(ctx, "k", t0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !callEqual(got[0], list) || !callEqual(got[1], search) {
			t.Errorf("Calls = %+v,\nwant %+v", got, []ingest.Call{list, search})
		}
		got, _ = ledger.New(db).Calls(ctx, "k", t0.Add(time.Millisecond))
		if len(got) != 1 || got[0].ID != "c2" {
			t.Errorf("Calls since t0+1ms = %+v, want c2 only", got)
		}
		if keys, err := ledger.New(db).QuotaKeys(ctx); err != nil || strings.Join(keys, ",") != "k,other" {
			t.Errorf("QuotaKeys = %v, %v; want [k other]", keys, err)
		}
		if err := ledger.New(db).RecordCall(ctx, ingest.Call{Op: "videos.list"}); err == nil {
			t.Error("RecordCall without key and id: got nil error")
		}
	})
}

func callEqual(a, b ingest.Call) bool {
	if a.QuotaKey != b.QuotaKey || a.ID != b.ID || !a.At.Equal(b.At) || a.Op != b.Op ||
		a.Region != b.Region || a.RunID != b.RunID || a.Unmetered != b.Unmetered || len(a.Charges) != len(b.Charges) {
		return false
	}
	for i := range a.Charges {
		if a.Charges[i] != b.Charges[i] {
			return false
		}
	}
	return true
}

func TestLastRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		old := run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, vid("a", "A")))
		if err := db.FinishRun(ctx, old, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		t1 := t0.Add(time.Hour)
		us := run(t, db, ingest.Trending, "US", t1, page(ingest.Trending, "US", 1, t1, vid("a", "A"), vid("b", "B")))
		retry := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
		refused := &ingest.RefusedError{Decision: ingest.Decision{Op: "videos.list", RetryAt: retry}}
		end := ingest.RunEnd{Status: ingest.StatusStopped, Message: refused.Error(), At: t1.Add(time.Minute), RetryAt: retry}
		if err := db.FinishRun(ctx, us, end); err != nil {
			t.Fatal(err)
		}
		gb := run(t, db, ingest.Trending, "GB", t1)
		run(t, db, ingest.Search, "DE", t1)
		for i, c := range []ingest.Call{
			{QuotaKey: "k", ID: "1", At: t1, Op: "videos.list", RunID: us, Charges: []ingest.Charge{{Pool: "default", Units: 1}}},
			{QuotaKey: "k", ID: "2", At: t1, Op: "videoCategories.list", RunID: us, Charges: []ingest.Charge{{Pool: "default", Units: 1}}},
			{QuotaKey: "k", ID: "3", At: t1, Op: "search.list", RunID: us, Charges: []ingest.Charge{{Pool: "default", Units: 100}, {Pool: "search", Units: 1}}},
			{QuotaKey: "k", ID: "4", At: t0, Op: "videos.list", RunID: old, Charges: []ingest.Charge{{Pool: "default", Units: 1}}},
		} {
			if err := ledger.New(db).RecordCall(ctx, c); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		runs, err := db.LastRuns(ctx, ingest.Trending)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 {
			t.Fatalf("LastRuns = %+v, want US only (GB's run is in flight)", runs)
		}
		u := runs["US"]
		if u.RunID != us || u.Status != ingest.StatusStopped || u.Videos != 2 || u.Pages != 1 ||
			!u.Started.Equal(t1) || !u.Finished.Equal(t1.Add(time.Minute)) || !u.RetryAt.Equal(retry) ||
			u.Units != 103 || u.PoolUnits["default"] != 102 || u.PoolUnits["search"] != 1 ||
			!strings.Contains(u.Message, "refused") {
			t.Errorf("US = %+v", u)
		}
		if err := db.FinishRun(ctx, gb, ingest.RunEnd{Status: "running", At: t1}); err == nil {
			t.Error("FinishRun(running): got nil error")
		}
		if err := db.FinishRun(ctx, 9999, ingest.RunEnd{Status: ingest.StatusFailed, At: t1}); err == nil {
			t.Error("FinishRun(unknown run): got nil error")
		}
		// A worker died mid-run: the next pass, holding the lease, fails the
		// stale run, which then shows as GB's last run.
		if err := db.AbandonRuns(ctx, "GB", "", ingest.Trending, t1.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		runs, _ = db.LastRuns(ctx, ingest.Trending)
		if g := runs["GB"]; g.RunID != gb || g.Status != ingest.StatusFailed || !g.Finished.Equal(t1.Add(time.Hour)) {
			t.Errorf("GB after AbandonRuns = %+v, want run %d failed", g, gb)
		}
	})
}

func TestCategories(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		if at, err := db.CategoriesFetched(ctx, "US"); err != nil || !at.IsZero() {
			t.Errorf("CategoriesFetched before any = %v, %v; want zero", at, err)
		}
		cats := []ingest.Category{{Region: "US", ID: "10", Title: "Music"}, {Region: "US", ID: "20", Title: "Gaming"}}
		if err := db.SaveCategories(ctx, "US", cats, t0); err != nil {
			t.Fatal(err)
		}
		t1 := t0.Add(24 * time.Hour)
		if err := db.SaveCategories(ctx, "US", cats[:1], t1); err != nil {
			t.Fatal(err)
		}
		if at, err := db.CategoriesFetched(ctx, "US"); err != nil || !at.Equal(t1) {
			t.Errorf("CategoriesFetched = %v, %v; want %v", at, err, t1)
		}
		if at, _ := db.CategoriesFetched(ctx, "GB"); !at.IsZero() {
			t.Errorf("CategoriesFetched(GB) = %v, want zero", at)
		}
		got, err := db.Categories(ctx, "US")
		if err != nil || len(got) != 1 || got[0] != cats[0] {
			t.Errorf("Categories = %+v, %v; want %+v", got, err, cats[:1])
		}
	})
}

func TestCursor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		since := t0.Add(-48 * time.Hour)
		key := ingest.BackfillID{Region: "us", Since: since, Query: "world cup"}.Key()
		same := ingest.BackfillID{Region: "US", Since: since, Query: "world cup"}.Key()
		other := ingest.BackfillID{Region: "US", Since: since, Query: ""}.Key()
		if key != same || key == other {
			t.Errorf("BackfillID.Key does not name region, dates and query: %q", key)
		}
		if _, ok, err := db.Cursor(ctx, key); ok || err != nil {
			t.Fatalf("Cursor before any = %v, %v; want none", ok, err)
		}
		id := run(t, db, ingest.Search, "US", t0)
		cur := Cursor{Key: key, PageToken: "tok2", Pages: 1, Videos: 2, Units: 101, Reached: t0.Add(-time.Hour)}
		p := page(ingest.Search, "US", 1, t0, vid("a", "A"), vid("b", "B"))
		if err := db.SaveSearchPage(ctx, id, p, cur); err != nil {
			t.Fatal(err)
		}
		got, ok, err := db.Cursor(ctx, key)
		if err != nil || !ok || got.PageToken != "tok2" || got.Pages != 1 || got.Videos != 2 ||
			got.Units != 101 || !got.Reached.Equal(cur.Reached) || got.Done || !got.Updated.Equal(t0) {
			t.Errorf("Cursor = %+v, %v, %v; want %+v", got, ok, err, cur)
		}
		if n := count(t, db, `SELECT count(*) FROM search_results WHERE run_id = ?`, id); n != 2 {
			t.Errorf("search results = %d, want 2", n)
		}
		if n := count(t, db, `SELECT count(*) FROM trending_entries`); n != 0 {
			t.Errorf("trending entries = %d after a search page, want 0", n)
		}
		// The page and the cursor go together: a page that cannot be stored
		// leaves the cursor where it was.
		bad := Cursor{Key: key, PageToken: "tok3", Pages: 2}
		if err := db.SaveSearchPage(ctx, id, page(ingest.Search, "US", 2, t0, vid("", "no id")), bad); err == nil {
			t.Error("SaveSearchPage(bad page): got nil error")
		}
		if err := db.SaveSearchPage(ctx, id, page(ingest.Trending, "US", 2, t0, vid("c", "C")), bad); err == nil {
			t.Error("SaveSearchPage(trending page): got nil error")
		}
		if got, _, _ := db.Cursor(ctx, key); got.PageToken != "tok2" {
			t.Errorf("cursor moved to %q after failed pages, want tok2", got.PageToken)
		}
	})
}

// TestNoStatisticsStoresNull: a video sent without statistics is stored
// with NULL views, in videos and in its trending entry, not 0.
func TestNoStatisticsStoresNull(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		v := vid("live", "Live now")
		v.ViewCount, v.LikeCount, v.CommentCount = nil, nil, nil
		run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, v))
		for _, q := range []string{`SELECT count(*) FROM videos WHERE view_count IS NULL`,
			`SELECT count(*) FROM trending_entries WHERE view_count IS NULL`} {
			if got := count(t, db, q); got != 1 {
				t.Errorf("%s = %d, want 1", q, got)
			}
		}
		got, ok, err := db.Video(context.Background(), "live")
		if err != nil || !ok || got.ViewCount != nil {
			t.Errorf("Video(live) views = %v (%v, %v), want nil", got.ViewCount, ok, err)
		}
	})
}

// Video reads back every field a page stored: a column missing from the
// read model leaves its field empty here.
func TestVideoReadsEveryField(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		want := vid("a", "First")
		want.Thumbnail = "https://i.ytimg.com/vi/a/default.jpg"
		want.AudioLanguage, want.Language = "hi", "en-IN"
		run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, want))
		got, ok, err := db.Video(ctx, "a")
		if err != nil || !ok {
			t.Fatalf("Video(a) = %v, %v", ok, err)
		}
		if !reflect.DeepEqual(got.Video, want) {
			t.Errorf("Video(a) =\n%+v\nwant\n%+v", got.Video, want)
		}
	})
}

// tagList writes a stored JSON array of tags as the text the index holds.
func tagList(js string) string {
	var tags []string
	if json.Unmarshal([]byte(js), &tags) != nil {
		return js
	}
	return strings.Join(tags, ", ")
}
