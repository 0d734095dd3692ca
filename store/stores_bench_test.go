package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/regions"
)

// BenchmarkStores measures the same work on both stores, side by side:
// pages of new videos and of unchanged ones, the search classes over a
// corpus of INGEST_BENCH_STORE_VIDEOS videos (200,000 unless set), and
// what report reads (the last runs of the default regions after a week of
// hourly runs, and a week of the ledger). scripts/bench.sh prints PostgreSQL's
// figures as ratios of SQLite's.
func BenchmarkStores(b *testing.B) {
	for _, o := range openers {
		if only := os.Getenv("INGEST_BENCH_STORE"); only != "" && only != o.name {
			continue
		}
		b.Run(o.name, func(b *testing.B) {
			b.Run("pages-new", func(b *testing.B) { benchStoreNew(b, openURL(b, o.url(b))) })
			b.Run("pages-unchanged", func(b *testing.B) { benchStoreUnchanged(b, openURL(b, o.url(b))) })
			b.Run("report", func(b *testing.B) { benchStoreReport(b, openURL(b, o.url(b))) })
			db := openURL(b, o.url(b))
			rate := loadCorpus(b, db)
			b.Run("load", func(b *testing.B) {
				for b.Loop() {
				}
				b.ReportMetric(rate, "videos/s")
			})
			c := newCorpus(3)
			for _, class := range searchClasses {
				r := rand.New(rand.NewPCG(4, 4))
				b.Run("search-"+class.name, func(b *testing.B) {
					benchQueries(b, db, false, func() string { return class.make(c, r) })
				})
			}
		})
	}
}

func benchStoreNew(b *testing.B, db *DB) {
	c := newCorpus(1)
	id := run(b, db, ingest.Trending, "US", t0)
	ctx := context.Background()
	n := 0
	for b.Loop() {
		b.StopTimer()
		p := c.page(ingest.Trending, n+1)
		n++
		b.StartTimer()
		if err := db.SavePage(ctx, id, p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*PageSize)/b.Elapsed().Seconds(), "videos/s")
}

func benchStoreUnchanged(b *testing.B, db *DB) {
	c := newCorpus(2)
	ctx := context.Background()
	pages := make([]ingest.Page, 20)
	for i := range pages {
		pages[i] = c.page(ingest.Trending, i+1)
	}
	id := run(b, db, ingest.Trending, "US", t0, pages...)
	n := 0
	for b.Loop() {
		p := pages[n%len(pages)]
		for i := range p.Videos {
			*p.Videos[i].ViewCount++
		}
		p.Fetched = p.Fetched.Add(time.Second)
		if err := db.SavePage(ctx, id, p); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n*PageSize)/b.Elapsed().Seconds(), "videos/s")
}

// benchStoreReport reads what report reads, after a week of hourly runs of
// the default regions (one small page each) and their calls in the ledger.
func benchStoreReport(b *testing.B, db *DB) {
	ctx := context.Background()
	c := newCorpus(5)
	for h := range 7 * 24 {
		at := t0.Add(time.Duration(h-7*24) * time.Hour)
		for _, region := range regions.Default {
			p := c.page(ingest.Trending, 1)
			p.Region, p.Fetched, p.Videos = region, at, p.Videos[:5]
			id := run(b, db, ingest.Trending, region, at, p)
			call := ingest.Call{QuotaKey: "k", ID: fmt.Sprint(region, h), At: at, Op: "videos.list", Region: region,
				RunID: id, Charges: []ingest.Charge{{Pool: "default", Units: 1}}}
			if err := ledger.New(db).RecordCall(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
	}
	for b.Loop() {
		if _, err := db.LastRuns(ctx, ingest.Trending); err != nil {
			b.Fatal(err)
		}
		if _, err := ledger.New(db).DailyUnits(ctx, "k", t0.Add(-7*24*time.Hour), 7); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/report")
}

// loadCorpus stores the search corpus and returns the insert rate.
func loadCorpus(b *testing.B, db *DB) float64 {
	total := 200_000
	if s := os.Getenv("INGEST_BENCH_STORE_VIDEOS"); s != "" {
		total, _ = strconv.Atoi(s)
	}
	c := newCorpus(3)
	ctx := context.Background()
	start := time.Now()
	id := run(b, db, ingest.Trending, "US", t0)
	for n := 1; n*PageSize <= total; n++ {
		if err := db.SavePage(ctx, id, c.page(ingest.Trending, n)); err != nil {
			b.Fatal(err)
		}
	}
	rate := float64(total) / time.Since(start).Seconds()
	if isPG(db) { // as optimize settles FTS5's: the GIN index's pending list merged
		for _, table := range []string{"videos", "video_docs"} {
			if _, err := db.w.ExecContext(ctx, `VACUUM ANALYZE `+table); err != nil {
				b.Fatal(err)
			}
		}
	} else if err := optimize(ctx, db); err != nil {
		b.Fatal(err)
	}
	return rate
}
