package store

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// corpus makes videos with Zipf-distributed words: a few very common, many
// rare, like real titles and descriptions.
type corpus struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	words []string
	next  int
}

const vocabulary = 50_000

func newCorpus(seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, 1))
	c := &corpus{r: r, zipf: rand.NewZipf(r, 1.07, 2, vocabulary-1)}
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "qua", "bri", "don", "fel", "gar", "hun", "jor"}
	for i := range vocabulary {
		var b strings.Builder
		for n := i + len(syl); n > 0; n /= len(syl) {
			b.WriteString(syl[n%len(syl)])
		}
		c.words = append(c.words, b.String())
	}
	return c
}

func (c *corpus) text(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = c.words[c.zipf.Uint64()]
	}
	return strings.Join(w, " ")
}

func (c *corpus) video() ingest.Video {
	c.next++
	tags := make([]string, 1+c.r.IntN(8))
	for i := range tags {
		tags[i] = c.text(1 + c.r.IntN(2))
	}
	return ingest.Video{ID: "v" + strconv.Itoa(c.next), Title: c.text(4 + c.r.IntN(8)),
		Description: c.text(10 + c.r.IntN(60)), Tags: tags,
		ChannelID: "UC" + strconv.Itoa(c.r.IntN(5000)), ChannelTitle: c.text(2),
		CategoryID: "10", PublishedAt: t0, Duration: "PT4M13S",
		ViewCount: c.r.Int64N(1e8), LikeCount: i64(c.r.Int64N(1e6)), CommentCount: i64(c.r.Int64N(1e4))}
}

func (c *corpus) page(kind ingest.PageKind, n int) ingest.Page {
	vs := make([]ingest.Video, PageSize)
	for i := range vs {
		vs[i] = c.video()
	}
	return page(kind, "US", n, t0, vs...)
}

// withoutFTS drops the index and its triggers: the baseline.
func withoutFTS(b *testing.B, db *DB) {
	for _, q := range []string{"DROP TRIGGER videos_fts_insert", "DROP TRIGGER videos_fts_update",
		"DROP TRIGGER videos_fts_delete", "DROP TABLE videos_fts"} {
		if _, err := db.Writer().Exec(q); err != nil {
			b.Fatal(err)
		}
	}
}

func benchNewPages(b *testing.B, fts bool) {
	db := openTest(b)
	if !fts {
		withoutFTS(b, db)
	}
	c := newCorpus(1)
	id := run(b, db, ingest.Trending, "US", t0)
	pages := make([]ingest.Page, 0, 64)
	ctx := context.Background()
	n := 0
	for b.Loop() {
		b.StopTimer()
		if len(pages) == 0 {
			for i := 0; i < 64; i++ {
				pages = append(pages, c.page(ingest.Trending, n+i+1))
			}
		}
		p := pages[0]
		pages = pages[1:]
		n++
		b.StartTimer()
		if err := db.SavePage(ctx, id, p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*PageSize)/b.Elapsed().Seconds(), "videos/s")
}

// BenchmarkSavePageNew stores pages of 50 new videos, the FTS index kept in
// sync by the triggers.
func BenchmarkSavePageNew(b *testing.B) { benchNewPages(b, true) }

// BenchmarkSavePageNewNoFTS is the same without the index: the baseline.
func BenchmarkSavePageNewNoFTS(b *testing.B) { benchNewPages(b, false) }

// BenchmarkSavePageUnchanged re-stores pages whose text did not change,
// only their counts: what every hourly run mostly does.
func BenchmarkSavePageUnchanged(b *testing.B) {
	db := openTest(b)
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
			p.Videos[i].ViewCount++
		}
		p.Fetched = p.Fetched.Add(time.Second)
		if err := db.SavePage(ctx, id, p); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n*PageSize)/b.Elapsed().Seconds(), "videos/s")
}

// BenchmarkSearch measures two-word queries over a corpus of
// INGEST_BENCH_VIDEOS videos (200,000 unless set), reporting p50 and p99.
func BenchmarkSearch(b *testing.B) {
	total := 200_000
	if s := os.Getenv("INGEST_BENCH_VIDEOS"); s != "" {
		total, _ = strconv.Atoi(s)
	}
	db := openTest(b)
	c := newCorpus(3)
	ctx := context.Background()
	start := time.Now()
	id := run(b, db, ingest.Trending, "US", t0)
	for n := 1; n*PageSize <= total; n++ {
		if err := db.SavePage(ctx, id, c.page(ingest.Trending, n)); err != nil {
			b.Fatal(err)
		}
	}
	load := time.Since(start)
	start = time.Now()
	if err := db.Optimize(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d videos in %v (%.0f/s), optimize %v", total, load.Round(time.Millisecond),
		float64(total)/load.Seconds(), time.Since(start).Round(time.Millisecond))
	r := rand.New(rand.NewPCG(4, 4))
	for _, class := range []struct {
		name     string
		from, to int // word ranks
	}{{"common", 0, 20}, {"mid", 200, 2000}, {"rare", 10_000, vocabulary}} {
		b.Run(class.name, func(b *testing.B) {
			var lat []time.Duration
			hits := 0
			for b.Loop() {
				q := c.words[class.from+r.IntN(class.to-class.from)] + " " +
					c.words[class.from+r.IntN(class.to-class.from)]
				t := time.Now()
				h, err := db.Search(ctx, q, SearchOptions{})
				lat = append(lat, time.Since(t))
				if err != nil {
					b.Fatal(err)
				}
				hits += len(h)
			}
			slices.Sort(lat)
			ms := func(q float64) float64 {
				return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.99), "p99-ms")
			b.ReportMetric(float64(hits)/float64(len(lat)), "hits/query")
		})
	}
}
