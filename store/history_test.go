package store

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// historyFixture stores 40 days of a video on the US and GB charts, a run
// every three hours (the minute moving, so days start mid-run), one page
// stored twice, and tracked counts over its last five days, with view
// counts that go up and down so that "the highest" matters.
func historyFixture(t *testing.T, db *DB) time.Time {
	t.Helper()
	ctx := context.Background()
	start := t0.Add(-40*24*time.Hour + 37*time.Minute)
	for i := 0; i < 40*8; i++ {
		at := start.Add(time.Duration(i)*3*time.Hour + time.Duration(i%7)*time.Minute)
		for j, region := range []string{"US", "GB"} {
			hot := vid("hot", "Hot")
			hot.ViewCount = i64(int64(1000 + i*10 + (i%5)*7 + j))
			hot.LikeCount = i64(int64(i))
			p := page(ingest.Trending, region, 1, at, vid("other", "Other"), hot)
			p.Videos[1].Title = "Hot"
			id := run(t, db, ingest.Trending, region, at, p)
			if i == 100 && j == 0 {
				p.Videos[1].ViewCount = i64(999999) // stored again: counted once, the new count kept
				if err := db.SavePage(ctx, id, p); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at}); err != nil {
				t.Fatal(err)
			}
		}
	}
	last := start.Add(40 * 24 * time.Hour)
	var stats []ingest.VideoStats
	for at := last.Add(-5 * 24 * time.Hour); at.Before(last.Add(2 * 24 * time.Hour)); at = at.Add(50 * time.Minute) {
		stats = append(stats, ingest.VideoStats{ID: "hot", At: at, ViewCount: int64(4000 + at.Minute()*3), LikeCount: i64(3)})
	}
	if err := db.SaveStats(ctx, stats); err != nil {
		t.Fatal(err)
	}
	return start
}

// rawPoint is one reading of the video, from an entry or from tracking.
type rawPoint struct {
	at     int64
	views  int64
	likes  int64
	region string // "" tracking
	rank   int
}

// rawHistory reads every reading of videoID since from, oldest first.
func rawHistory(t *testing.T, db *DB, videoID string, from int64) []rawPoint {
	t.Helper()
	rows, err := db.Reader().Query(`
SELECT e.fetched_ms, e.view_count, e.like_count, e.region, e.rank FROM trending_entries AS e
WHERE e.vid = (SELECT vid FROM videos WHERE id = ?1) AND e.fetched_ms >= ?2
UNION ALL
SELECT s.at_ms, s.view_count, s.like_count, '', 0 FROM video_stats AS s
WHERE s.vid = (SELECT vid FROM videos WHERE id = ?1) AND s.at_ms >= ?2
ORDER BY 1`, videoID, from)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []rawPoint
	for rows.Next() {
		var p rawPoint
		if err := rows.Scan(&p.at, &p.views, &p.likes, &p.region, &p.rank); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// wantHistory is the oracle: the charts folded from every entry since,
// and the counts bucketed from every reading, a bucket a step over the
// last recentDays days and before the first whole day, a day between.
func wantHistory(raw []rawPoint, from int64, step time.Duration) ([]ChartPresence, []CountPoint) {
	var charts []ChartPresence
	last := int64(0)
	for _, p := range raw {
		last = max(last, p.at)
		if p.region == "" {
			continue
		}
		at := time.UnixMilli(p.at).UTC()
		i := slices.IndexFunc(charts, func(c ChartPresence) bool { return c.Region == p.region })
		if i < 0 {
			charts = append(charts, ChartPresence{Region: p.region, First: at, BestRank: p.rank})
			i = len(charts) - 1
		}
		c := &charts[i]
		c.Last, c.LastRank, c.Entries, c.BestRank = at, p.rank, c.Entries+1, min(c.BestRank, p.rank)
	}
	slices.SortFunc(charts, byFirstSeen)
	recent := max(from, last/dayMS*dayMS-(recentDays-1)*dayMS)
	daysFrom := min(nextDay(from), recent)
	bucket := func(ms int64) int64 {
		if ms >= daysFrom && ms < recent {
			return ms / dayMS * dayMS
		}
		return ms / step.Milliseconds() * step.Milliseconds()
	}
	var views []CountPoint
	var keys []int64
	for _, p := range raw {
		k := bucket(p.at)
		if n := len(keys); n > 0 && keys[n-1] == k {
			if p.views > views[n-1].Views {
				views[n-1] = CountPoint{At: time.UnixMilli(p.at).UTC(), Views: p.views, Likes: i64(p.likes)}
			}
			continue
		}
		keys = append(keys, k)
		views = append(views, CountPoint{At: time.UnixMilli(p.at).UTC(), Views: p.views, Likes: i64(p.likes)})
	}
	return charts, views
}

func checkHistory(t *testing.T, db *DB, since time.Time) {
	t.Helper()
	h, ok, err := db.VideoHistory(context.Background(), "hot", since)
	if err != nil || !ok {
		t.Fatalf("VideoHistory(hot, %s) = %v, %v", since, ok, err)
	}
	from := int64(0)
	if !since.IsZero() {
		from = msOf(since)
	}
	charts, views := wantHistory(rawHistory(t, db, "hot", from), from, time.Hour)
	for i := range h.Views {
		h.Views[i].Comments = nil
	}
	if !reflect.DeepEqual(h.Charts, charts) {
		t.Errorf("since %s: charts\n%+v\nwant\n%+v", since, h.Charts, charts)
	}
	if len(h.Views) != len(views) {
		t.Fatalf("since %s: %d view points, want %d", since, len(h.Views), len(views))
	}
	for i := range views {
		if !reflect.DeepEqual(h.Views[i], views[i]) {
			t.Errorf("since %s: view point %d = %s %d, want %s %d", since, i, h.Views[i].At, h.Views[i].Views,
				views[i].At, views[i].Views)
		}
	}
}

// TestHistoryFromDailyRollup checks a long history read from the rollup
// against one folded from every entry and reading: since the start, since
// the middle of a day weeks back, and since a few days back.
func TestHistoryFromDailyRollup(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		start := historyFixture(t, db)
		for _, since := range []time.Time{{}, start.Add(17*24*time.Hour + 5*time.Hour), start.Add(37 * 24 * time.Hour)} {
			checkHistory(t, db, since)
		}
		if n := count(t, db, `SELECT sum(entries) FROM video_days`); n != 40*8*2*2 {
			t.Errorf("video_days counts %d entries, want %d", n, 40*8*2*2)
		}
	})
}

// TestUpgradeFillsDailyRollup takes a database back to schema 9 (no
// rollup, no languages, no pacing plans, no tombstones, no recorded
// timetable, no runs' slots, no ledger index by pool, no retitling
// times, no write order, no purged marks or sessions, no kept backoff or backups), opens it, and checks the upgrade filled the
// rollup.
func TestUpgradeFillsDailyRollup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ingest.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	historyFixture(t, db)
	_, err = db.Writer().Exec(`DROP TABLE video_days; DROP TRIGGER video_days_entry; DROP TRIGGER video_days_entry_again;
DROP TRIGGER video_days_stat; DROP TRIGGER video_days_stat_again;
ALTER TABLE videos DROP COLUMN audio_language; ALTER TABLE videos DROP COLUMN language; DROP TABLE pace_plans;
DROP TABLE videos_gone; DROP INDEX search_results_fetched; DROP INDEX categories_fetched; DROP TABLE region_catalogue;
ALTER TABLE schedule DROP COLUMN timetable; ALTER TABLE schedule DROP COLUMN plan; ALTER TABLE schedule DROP COLUMN costs; ALTER TABLE runs DROP COLUMN slot_ms; DROP INDEX ledger_pool;
ALTER TABLE videos DROP COLUMN retitled_ms;
DROP INDEX ledger_written; DROP INDEX ledger_given_back_written; ALTER TABLE ledger DROP COLUMN seq; ALTER TABLE ledger_given_back DROP COLUMN seq; DROP TABLE ledger_seq; DROP TABLE passes;
ALTER TABLE backfill_cursors DROP COLUMN pending; ALTER TABLE categories DROP COLUMN language; DROP TABLE purged; DROP TABLE sessions; DROP TABLE backoff; DROP TABLE backed_up; ALTER TABLE ledger DROP COLUMN client; PRAGMA user_version = 9`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if db, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v := userVersion(t, db); v != SchemaVersion {
		t.Fatalf("user_version %d, want %d", v, SchemaVersion)
	}
	checkHistory(t, db, time.Time{})
	var cache int
	if err := db.Writer().QueryRow(`PRAGMA cache_size`).Scan(&cache); err != nil || cache != -2000 {
		t.Errorf("writer's cache_size after the upgrade: %d (%v), want its default -2000 back", cache, err)
	}
}
