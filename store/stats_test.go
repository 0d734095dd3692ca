package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

func TestChartRunCarriesCategoryAndThumbnail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		id, err := db.StartRun(ctx, "GB", "10", ingest.Trending, t0)
		if err != nil {
			t.Fatal(err)
		}
		v := vid("a", "A")
		v.Thumbnail = "https://i.ytimg.com/vi/a/default.jpg"
		if err := db.SavePage(ctx, id, page(ingest.Trending, "GB", 1, t0, v)); err != nil {
			t.Fatal(err)
		}
		// A later page without a thumbnail keeps the one stored.
		run(t, db, ingest.Trending, "US", t0.Add(time.Hour), page(ingest.Trending, "US", 1, t0.Add(time.Hour), vid("a", "A")))
		if n := count(t, db, `SELECT count(*) FROM trending_entries WHERE run_id = ? AND category = '10'`, id); n != 1 {
			t.Errorf("entries of the music chart = %d, want 1", n)
		}
		if n := count(t, db, `SELECT count(*) FROM trending_entries WHERE category = ''`); n != 1 {
			t.Errorf("entries of the unfiltered chart = %d, want 1", n)
		}
		if n := count(t, db, `SELECT count(*) FROM videos WHERE thumbnail = ?`, v.Thumbnail); n != 1 {
			t.Errorf("videos with the thumbnail = %d, want 1", n)
		}
	})
}

func TestSaveStats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, vid("a", "A")))
		stats := []ingest.VideoStats{
			{ID: "a", ViewCount: 2000, LikeCount: i64(20), At: t0.Add(time.Hour)},
			{ID: "a", ViewCount: 3000, At: t0.Add(2 * time.Hour)},
			{ID: "unknown", ViewCount: 5, At: t0.Add(time.Hour)},
		}
		for range 2 { // twice: the same moments are kept once
			if err := db.SaveStats(ctx, stats); err != nil {
				t.Fatal(err)
			}
		}
		if n := count(t, db, `SELECT count(*) FROM video_stats`); n != 2 {
			t.Errorf("video_stats rows = %d, want 2 (an unknown video is dropped, a moment kept once)", n)
		}
		if n := count(t, db, `SELECT count(*) FROM video_stats WHERE like_count IS NULL AND comment_count IS NULL AND view_count = 3000`); n != 1 {
			t.Errorf("hidden counts not stored as NULL")
		}
	})
}

func TestVideoHistoryMergesChartsAndStats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		for i, region := range []string{"US", "GB", "US"} {
			at := t0.Add(time.Duration(i) * time.Hour)
			v := vid("a", "A")
			v.ViewCount = i64(int64(1000 * (i + 1)))
			run(t, db, ingest.Trending, region, at, page(ingest.Trending, region, 1, at, vid("b", "B"), v))
		}
		if err := db.SaveStats(ctx, []ingest.VideoStats{{ID: "a", ViewCount: 9000, At: t0.Add(5 * time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		h, ok, err := db.VideoHistory(ctx, "a", time.Time{})
		if err != nil || !ok {
			t.Fatalf("VideoHistory: ok %v, %v", ok, err)
		}
		if len(h.Charts) != 2 || h.Charts[0].Region != "US" || h.Charts[0].Entries != 2 || h.Charts[0].BestRank != 2 ||
			!h.Charts[0].Last.Equal(t0.Add(2*time.Hour)) {
			t.Errorf("charts = %+v", h.Charts)
		}
		var views []int64
		for _, p := range h.Views {
			views = append(views, p.Views)
		}
		if fmt.Sprint(views) != "[1000 2000 3000 9000]" {
			t.Errorf("views = %v, want [1000 2000 3000 9000] (charts, then tracking)", views)
		}
		if _, ok, _ := db.VideoHistory(ctx, "zzz", time.Time{}); ok {
			t.Error("an unknown video has a history")
		}
	})
}

func TestLastRunsByChart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		us := run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, vid("a", "A")))
		music, err := db.StartRun(ctx, "US", "10", ingest.Trending, t0.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []int64{us, music} {
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		gaming, _ := db.StartRun(ctx, "US", "20", ingest.Trending, t0.Add(2*time.Minute))
		flight := run(t, db, ingest.Trending, "US", t0.Add(3*time.Minute))
		// The unfiltered chart's lease abandons its own runs only.
		if err := db.AbandonRuns(ctx, "US", "", ingest.Trending, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		last, err := db.LastRuns(ctx, ingest.Trending)
		if err != nil {
			t.Fatal(err)
		}
		if len(last) != 2 || last["US"].RunID != flight || last["US/10"].RunID != music || last["US/10"].Category != "10" {
			t.Errorf("LastRuns = %+v, want US (the abandoned run %d) and US/10 (%d); US/20 still running", last, flight, music)
		}
		if n := count(t, db, `SELECT count(*) FROM runs WHERE id = ? AND status = 'running'`, gaming); n != 1 {
			t.Error("abandoning the unfiltered chart's runs failed a category chart's run in flight")
		}
		if err := db.AbandonRuns(ctx, "US", "20", ingest.Trending, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if last, _ := db.LastRuns(ctx, ingest.Trending); last["US/20"].Status != ingest.StatusFailed {
			t.Errorf("US/20 after AbandonRuns = %+v", last["US/20"])
		}
	})
}
