package store

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// withTextJSON has db store pages and counts as before the statements
// read their JSON as JSONB: json_each hands each video's object on as
// text, which every field read from it parsed again.
func withTextJSON(b *testing.B, db *DB) {
	q := *db.q
	for _, s := range []*string{&q.upsertVideos, &q.addRegions, &q.addTrending, &q.addSearch, &q.bumpTrending, &q.bumpSearch, &q.saveStats} {
		*s = strings.ReplaceAll(*s, "jsonb_each(", "json_each(")
	}
	st, err := prepare(context.Background(), db.w, &q)
	if err != nil {
		b.Fatal(err)
	}
	db.st.close()
	db.q, db.st = &q, st
}

// BenchmarkHourlyRunJSONB stores what a chart's hourly run stores (a new
// run of four pages of the same 200 videos, their counts moved, and
// tracking's counts of them) on the statements as they are and, in the
// same loop, on the text-JSON ones before them: "text/jsonb" is how many
// times longer the older took, measured side by side on the same machine.
func BenchmarkHourlyRunJSONB(b *testing.B) {
	now, before := openTest(b), openTest(b)
	withTextJSON(b, before)
	c := newCorpus(4)
	pages := make([]ingest.Page, 4)
	for i := range pages {
		pages[i] = c.page(ingest.Trending, i+1)
	}
	var took [2]time.Duration
	at := t0
	hour := func(db *DB) time.Duration {
		start := time.Now()
		landRun(b, db, "US", pages, at)
		return time.Since(start)
	}
	for b.Loop() {
		at = at.Add(time.Hour)
		for _, p := range pages {
			for i := range p.Videos {
				*p.Videos[i].ViewCount += 100
			}
		}
		took[0] += hour(now)
		took[1] += hour(before)
	}
	b.ReportMetric(float64(took[1])/float64(took[0]), "text/jsonb")
	b.ReportMetric(float64(took[0].Milliseconds())/float64(b.N), "ms/run")
}

// BenchmarkSaveStatsPrepared stores tracking's counts of 200 videos as
// SaveStats does, on its statement prepared once, and in the same loop on
// the same database as it did before, the text prepared at every call (the
// path a read-only DB still takes): "unprepared/prepared" is how many times
// longer that took.
func BenchmarkSaveStatsPrepared(b *testing.B) {
	ctx := context.Background()
	db := openTest(b)
	c := newCorpus(5)
	var videos []ingest.Video
	for i := range 4 {
		p := c.page(ingest.Trending, i+1)
		videos = append(videos, p.Videos...)
		run(b, db, ingest.Trending, "US", t0, p)
	}
	at := t0
	save := func() time.Duration {
		at = at.Add(time.Minute)
		stats := make([]ingest.VideoStats, len(videos))
		for i, v := range videos {
			stats[i] = ingest.VideoStats{ID: v.ID, At: at, ViewCount: *v.ViewCount, LikeCount: v.LikeCount, CommentCount: v.CommentCount}
		}
		start := time.Now()
		if err := db.SaveStats(ctx, stats); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var prepared, unprepared time.Duration
	for b.Loop() {
		prepared += save()
		st := db.st
		db.st = nil
		unprepared += save()
		db.st = st
	}
	b.ReportMetric(float64(unprepared)/float64(prepared), "unprepared/prepared")
}

// textRows is SQLite as it was handed a page's rows and tracking's counts
// before they were JSONB: as JSON text, which each statement parsed.
type textRows struct{ sqliteDialect }

func (textRows) pageRows(page ingest.Page) (any, error)          { return pageJSON(page, false) }
func (textRows) statRows(stats []ingest.VideoStats) (any, error) { return statsJSON(stats) }

// BenchmarkHourlyRunRowsJSONB stores a chart's hourly run (four pages of
// the same 200 videos, their counts moved, and tracking's counts of them)
// with the rows handed over as JSONB and, in the same loop, as the JSON
// text before them: "text/jsonb" is how many times longer the text took,
// "alloc-text/jsonb" how many more bytes it allocated.
func BenchmarkHourlyRunRowsJSONB(b *testing.B) {
	now, before := openTest(b), openTest(b)
	before.d = textRows{}
	c := newCorpus(4)
	pages := make([]ingest.Page, 4)
	for i := range pages {
		pages[i] = c.page(ingest.Trending, i+1)
	}
	var took [2]time.Duration
	var alloc [2]uint64
	at := t0
	hour := func(db *DB, i int) {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		landRun(b, db, "US", pages, at)
		took[i] += time.Since(start)
		runtime.ReadMemStats(&m1)
		alloc[i] += m1.TotalAlloc - m0.TotalAlloc
	}
	for b.Loop() {
		at = at.Add(time.Hour)
		for _, p := range pages {
			for i := range p.Videos {
				*p.Videos[i].ViewCount += 100
			}
		}
		hour(now, 0)
		hour(before, 1)
	}
	b.ReportMetric(float64(took[1])/float64(took[0]), "text/jsonb")
	b.ReportMetric(float64(alloc[1])/float64(alloc[0]), "alloc-text/jsonb")
	b.ReportMetric(float64(took[0].Milliseconds())/float64(b.N), "ms/run")
}

// freshRows is SQLite handed each page's rows and each batch of counts in
// bytes made for them alone, as before the bytes were given back for the
// next (releaseRows).
type freshRows struct{ sqliteDialect }

func (freshRows) pageRows(page ingest.Page) (any, error)          { return fresh(pageJSONB(page)) }
func (freshRows) statRows(stats []ingest.VideoStats) (any, error) { return fresh(statsJSONB(stats)) }

// freshJSONB is bytes releaseRows does not keep.
type freshJSONB []byte

func fresh(b []byte, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	c := freshJSONB(bytes.Clone(b))
	releaseRows(b)
	return c, nil
}

// BenchmarkHourlyRunRowsKept stores a chart's hourly run (four pages of
// the same 200 videos, their counts moved, and tracking's counts of them)
// with the rows written into bytes given back by the page before and, in
// the same loop, into bytes made for each page as before: "alloc-fresh/kept"
// is how many more bytes the fresh ones allocated, "fresh/kept" how many
// times longer they took.
func BenchmarkHourlyRunRowsKept(b *testing.B) {
	kept, before := openTest(b), openTest(b)
	before.d = freshRows{}
	c := newCorpus(4)
	pages := make([]ingest.Page, 4)
	for i := range pages {
		pages[i] = c.page(ingest.Trending, i+1)
	}
	var took [2]time.Duration
	var alloc [2]uint64
	at := t0
	hour := func(db *DB, i int) {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		landRun(b, db, "US", pages, at)
		took[i] += time.Since(start)
		runtime.ReadMemStats(&m1)
		alloc[i] += m1.TotalAlloc - m0.TotalAlloc
	}
	for b.Loop() {
		at = at.Add(time.Hour)
		for _, p := range pages {
			for i := range p.Videos {
				*p.Videos[i].ViewCount += 100
			}
		}
		hour(kept, 0)
		hour(before, 1)
	}
	b.ReportMetric(float64(took[1])/float64(took[0]), "fresh/kept")
	b.ReportMetric(float64(alloc[1])/float64(alloc[0]), "alloc-fresh/kept")
}

// landRun stores what a chart's run stores at at: a run of pages in region,
// and tracking's counts of their videos.
func landRun(b *testing.B, db *DB, region string, pages []ingest.Page, at time.Time) {
	ctx := context.Background()
	id, err := db.StartRun(ctx, region, "", ingest.Trending, at)
	if err != nil {
		b.Fatal(err)
	}
	var stats []ingest.VideoStats
	for _, p := range pages {
		p.Fetched = at
		if err := db.SavePage(ctx, id, p); err != nil {
			b.Fatal(err)
		}
		for _, v := range p.Videos {
			stats = append(stats, ingest.VideoStats{ID: v.ID, At: at, ViewCount: *v.ViewCount, LikeCount: v.LikeCount, CommentCount: v.CommentCount})
		}
	}
	if err := db.SaveStats(ctx, stats); err != nil {
		b.Fatal(err)
	}
}
