package store

import (
	"context"
	"fmt"
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
	// cjk are words of two or three Han characters; one video in ten
	// carries a run of them, written without spaces as Chinese and
	// Japanese titles are.
	cjk     []string
	cjkZipf *rand.Zipf
	next    int
}

const vocabulary = 50_000

const cjkVocabulary = 5_000

func newCorpus(seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, 1))
	c := &corpus{r: r, zipf: rand.NewZipf(r, 1.07, 2, vocabulary-1), cjkZipf: rand.NewZipf(r, 1.07, 2, cjkVocabulary-1)}
	han := []rune("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坏兴切")
	for range cjkVocabulary {
		w := make([]rune, 2+r.IntN(2))
		for k := range w {
			w[k] = han[r.IntN(len(han))]
		}
		c.cjk = append(c.cjk, string(w))
	}
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
	title := c.text(4 + c.r.IntN(8))
	if c.r.IntN(10) == 0 {
		var run strings.Builder
		for range 3 + c.r.IntN(4) {
			run.WriteString(c.cjk[c.cjkZipf.Uint64()])
		}
		title += " " + run.String()
	}
	return ingest.Video{ID: "v" + strconv.Itoa(c.next), Title: title,
		Description: c.text(10 + c.r.IntN(60)), Tags: tags,
		ChannelID: "UC" + strconv.Itoa(c.r.IntN(5000)), ChannelTitle: c.text(2),
		CategoryID: "10", PublishedAt: t0, Duration: "PT4M13S",
		ViewCount: i64(c.r.Int64N(1e8)), LikeCount: i64(c.r.Int64N(1e6)), CommentCount: i64(c.r.Int64N(1e4))}
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
	benchNewPagesIndex(b, fts, false)
}

func benchNewPagesIndex(b *testing.B, fts, v1 bool) {
	db := openTest(b)
	if !fts {
		withoutFTS(b, db)
	}
	if v1 {
		useV1Index(b, db)
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

// BenchmarkSavePageNewV1 is the same with schema version 1's index
// (unicode61 over the raw text): the "before" of the normalized index.
func BenchmarkSavePageNewV1(b *testing.B) { benchNewPagesIndex(b, true, true) }

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

// searchClasses are the query shapes the search table reports.
var searchClasses = []struct {
	name string
	make func(c *corpus, r *rand.Rand) string
}{
	{"common", func(c *corpus, r *rand.Rand) string { return c.words[r.IntN(20)] + " " + c.words[r.IntN(20)] }},
	{"two-word", func(c *corpus, r *rand.Rand) string {
		return c.words[200+r.IntN(1800)] + " " + c.words[200+r.IntN(1800)]
	}},
	{"rare", func(c *corpus, r *rand.Rand) string {
		return c.words[10_000+r.IntN(vocabulary-10_000)] + " " + c.words[10_000+r.IntN(vocabulary-10_000)]
	}},
	{"cjk", func(c *corpus, r *rand.Rand) string { return c.cjk[r.IntN(500)] }},
	{"prefix", func(c *corpus, r *rand.Rand) string { return c.words[20+r.IntN(180)][:4] + "*" }},
}

// searchCorpus loads INGEST_BENCH_VIDEOS videos (200,000 unless set) with
// today's index (v1: the "before" column) or the new one, and returns the
// database, the insert rate and the index size in bytes.
func searchCorpus(b *testing.B, v1 bool) (*DB, float64, int64) {
	total := 200_000
	if s := os.Getenv("INGEST_BENCH_VIDEOS"); s != "" {
		total, _ = strconv.Atoi(s)
	}
	db := openTest(b)
	if v1 {
		useV1Index(b, db)
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
	if err := optimize(ctx, db); err != nil {
		b.Fatal(err)
	}
	var size int64
	if err := db.Reader().QueryRow(`SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'videos_fts%'`).Scan(&size); err != nil {
		b.Fatal(err)
	}
	return db, rate, size
}

// BenchmarkSearch measures the query classes over the same corpus with
// today's index ("before") and the normalized one ("after"), reporting p50
// and p99 per class, and for each index its insert rate and size (the
// "load" rows).
func BenchmarkSearch(b *testing.B) {
	for _, ix := range []struct {
		name string
		v1   bool
	}{{"before", true}, {"after", false}} {
		if only := os.Getenv("INGEST_BENCH_INDEX"); only != "" && only != ix.name {
			continue
		}
		b.Run(ix.name, func(b *testing.B) {
			db, rate, size := searchCorpus(b, ix.v1)
			b.Run("load", func(b *testing.B) {
				for b.Loop() {
				}
				b.ReportMetric(rate, "videos/s")
				b.ReportMetric(float64(size)/(1<<20), "index-MB")
			})
			c := newCorpus(3)
			for _, class := range searchClasses {
				r := rand.New(rand.NewPCG(4, 4))
				b.Run(class.name, func(b *testing.B) {
					benchQueries(b, db, ix.v1, func() string { return class.make(c, r) })
				})
			}
		})
	}
}

func benchQueries(b *testing.B, db *DB, v1 bool, next func() string) {
	ctx := context.Background()
	var lat []time.Duration
	hits := 0
	for b.Loop() {
		q := next()
		t := time.Now()
		var n int
		var err error
		if v1 {
			var ids []string
			ids, err = searchV1(ctx, db, q, 20)
			n = len(ids)
		} else {
			var h []Hit
			h, err = db.Search(ctx, q, SearchOptions{})
			n = len(h)
		}
		lat = append(lat, time.Since(t))
		if err != nil {
			b.Fatal(err)
		}
		hits += n
	}
	slices.Sort(lat)
	ms := func(q float64) float64 {
		return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
	b.ReportMetric(float64(hits)/float64(len(lat)), "hits/query")
}

// optimize merges the FTS index into one segment, as a long-running
// database's index settles to, so that the search bench measures that
// rather than a freshly loaded index of many segments.
func optimize(ctx context.Context, db *DB) error {
	if _, err := db.w.ExecContext(ctx, `INSERT INTO videos_fts (videos_fts) VALUES ('optimize')`); err != nil {
		return fmt.Errorf("optimize: %w", err)
	}
	return nil
}
