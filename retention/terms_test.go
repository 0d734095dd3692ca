package retention

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
)

// termsWorld stores, around now = t0: a chart run 40 days old and one 10
// days old (ten videos each), a video only a 40-day-old run showed but
// tracked 5 days ago, a backfill 40 days old and one 5 days old, and
// category names 40 days old.
func termsWorld(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	for _, age := range []int{40, 10} {
		at := t0.Add(-time.Duration(age) * 24 * time.Hour)
		var vs []ingest.Video
		for i := 0; i < 10; i++ {
			vs = append(vs, vid(fmt.Sprintf("c%d-%d", age, i), fmt.Sprint("chart video ", age, i)))
		}
		id := run(t, db, ingest.Trending, "US", at, page(ingest.Trending, "US", 1, at, vs...))
		if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SaveStats(ctx, []ingest.VideoStats{{ID: "c40-0", ViewCount: 9, At: t0.Add(-5 * 24 * time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	for _, age := range []int{40, 5} {
		at := t0.Add(-time.Duration(age) * 24 * time.Hour)
		run(t, db, ingest.Search, "DE", at, page(ingest.Search, "DE", 1, at, vid(fmt.Sprint("s", age), "found")))
	}
	if err := db.SaveCategories(ctx, "US", []ingest.Category{{ID: "10", Title: "Music"}}, t0.Add(-40*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
}

// termsCut is the standard standing's retention at t0.
func termsCut() Retention {
	cut := t0.Add(-ingest.DataFor)
	return Retention{Before: cut, VideosBefore: cut, OrphansBefore: cut, SearchBefore: cut, CategoriesBefore: cut, GoneBefore: cut}
}

// TestPruneTermsLeavesNothingOlderThanThirtyDays: under the standard
// standing's cuts, nothing fetched more than 30 days ago stays, whatever
// points at it: a video the charts showed 40 days ago goes with the
// counts tracking read since; what Beyond counted first is what went.
func TestPruneTermsLeavesNothingOlderThanThirtyDays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		termsWorld(t, db)
		r := termsCut()
		r.Batch = 3
		want, err := Count(ctx, db, r)
		if err != nil {
			t.Fatal(err)
		}
		if want.Runs != 1 || want.Entries != 10 || want.Videos != 11 || want.Search != 1 || want.Categories != 1 {
			t.Errorf("beyond = %+v, want 1 run with 10 entries, 11 videos (10 charted, 1 found), 1 result, 1 category", want)
		}
		got, err := Prune(ctx, db, r)
		if err != nil {
			t.Fatal(err)
		}
		if got.Runs != 1 || got.Entries != 10 || got.Videos != 11 || got.Search != 1 || got.Categories != 1 || got.Stats != 1 {
			t.Errorf("pruned %+v, want 1 run, 10 entries, 11 videos, 1 result, 1 category, 1 tracked count", got)
		}
		if did := (Beyond{Runs: got.Runs, Entries: got.Entries, Stats: got.Stats, Videos: got.Videos, Search: got.Search,
			Categories: got.Categories, Ledger: got.Ledger}); did != want {
			t.Errorf("counted %+v, pruned %+v: the count is not what the prune does", want, did)
		}
		cut := msOf(r.Before)
		for q, want := range map[string]int{
			`SELECT count(*) FROM videos WHERE last_seen_ms < ?`:                                       0,
			`SELECT count(*) FROM trending_entries WHERE fetched_ms < ?`:                               0,
			`SELECT count(*) FROM search_results WHERE fetched_ms < ?`:                                 0,
			`SELECT count(*) FROM categories WHERE fetched_ms < ?`:                                     0,
			`SELECT count(*) FROM video_days WHERE last_ms < ? OR vid NOT IN (SELECT vid FROM videos)`: 0,
			`SELECT count(*) FROM videos WHERE last_seen_ms >= ?`:                                      11,
			`SELECT count(*) FROM category_fetches WHERE fetched_ms < ?`:                               0,
		} {
			if n := count(t, db, q, cut); n != want {
				t.Errorf("%s = %d, want %d", q, n, want)
			}
		}
		if n := count(t, db, `SELECT count(*) FROM video_stats`); n != 0 {
			t.Errorf("%d tracked counts of a video gone for its age left", n)
		}
		if n := count(t, db, `SELECT count(*) FROM runs WHERE kind = 'search'`); n != 2 {
			t.Errorf("%d backfill runs, want both kept (our own record)", n)
		}
		held, err := ReadHeld(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		for name, at := range map[string]time.Time{"stat": held.Stat, "video": held.Video, "search": held.Search} {
			if at.Before(r.Before) {
				t.Errorf("oldest %s held %s, before the cut %s", name, at, r.Before)
			}
		}
		if !held.Category.IsZero() {
			t.Errorf("a category name held from %s", held.Category)
		}
		integrityCheck(t, db)
		if n := searchCount(t, db, "chart video"); n != 10 {
			t.Errorf("search finds %d chart videos, want the 10 kept: the index still holds deleted ones", n)
		}
	})
}

// searchCount is how many videos a search finds.
func searchCount(t *testing.T, db *store.DB, q string) int {
	t.Helper()
	hits, err := db.Search(context.Background(), q, store.SearchOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(hits)
}

// TestRefreshAndGone: the videos kept rows show are fetched again oldest
// first, and a refresh keeps them; one the upstream no longer returns goes
// with its rows and leaves a tombstone of its id and day.
func TestRefreshAndGone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		termsWorld(t, db)
		orphan := t0.Add(-35 * 24 * time.Hour)
		run(t, db, ingest.Search, "DE", orphan) // a run with no results: nothing shows these
		if err := db.Refreshed(ctx, []ingest.Video{vid("lonely", "nobody shows me")}, orphan); err != nil {
			t.Fatal(err)
		}
		ids, err := db.ToRefresh(ctx, t0.Add(-ingest.RefreshAfter), 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 11 || ids[0] == "lonely" {
			t.Fatalf("to refresh: %v, want the 10 charted and 1 found 40 days ago, not the one nothing shows", ids)
		}
		v := vid("c40-1", "a new title")
		if err := db.Refreshed(ctx, []ingest.Video{v}, t0); err != nil {
			t.Fatal(err)
		}
		if n := count(t, db, `SELECT count(*) FROM videos WHERE id = 'c40-1' AND title = 'a new title' AND last_seen_ms = ?`, msOf(t0)); n != 1 {
			t.Error("the refreshed video's text and time were not stored")
		}
		if ids, _ = db.ToRefresh(ctx, t0.Add(-ingest.RefreshAfter), 100); len(ids) != 10 {
			t.Errorf("to refresh after one was: %d, want 10", len(ids))
		}
		n, err := Gone(ctx, db, []string{"c10-3", "never-held"}, t0)
		if err != nil || n != 1 {
			t.Fatalf("gone = %d, %v; want 1", n, err)
		}
		if c := count(t, db, `SELECT count(*) FROM trending_entries AS e JOIN videos AS v ON v.vid = e.vid WHERE v.id = 'c10-3'`); c != 0 {
			t.Errorf("%d entries of a gone video left", c)
		}
		for id, want := range map[string]bool{"c10-3": true, "never-held": true, "c10-4": false} {
			at, err := db.GoneAt(ctx, id)
			if err != nil || at.IsZero() == want {
				t.Errorf("GoneAt(%s) = %v, %v; want gone %v", id, at, err, want)
			}
		}
		if c := count(t, db, `SELECT count(*) FROM videos_gone`); c != 2 {
			t.Errorf("%d tombstones, want 2", c)
		}
		if _, err := Prune(ctx, db, Retention{Before: t0.Add(-60 * 24 * time.Hour), GoneBefore: t0.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		if c := count(t, db, `SELECT count(*) FROM videos_gone`); c != 0 {
			t.Errorf("%d tombstones older than GoneBefore left", c)
		}
		integrityCheck(t, db)
	})
}
