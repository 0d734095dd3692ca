package store

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// BenchmarkRollupTriggers saves chart pages of videos already stored, as
// every hourly run does, into two databases that differ only in the
// daily rollup's triggers (video_days), one page into each in turn, and
// reports each one's time a page and their ratio: what keeping the rollup
// costs a page save.
func BenchmarkRollupTriggers(b *testing.B) {
	ctx := context.Background()
	with, without := openTest(b), openTest(b)
	for _, trig := range []string{"video_days_entry", "video_days_entry_again", "video_days_stat", "video_days_stat_again"} {
		if _, err := without.Writer().Exec(`DROP TRIGGER ` + trig); err != nil {
			b.Fatal(err)
		}
	}
	c := newCorpus(1)
	chart := make([]ingest.Video, 4*PageSize)
	for i := range chart {
		chart[i] = c.video()
	}
	var took [2]time.Duration
	at := t0
	for n := 0; b.Loop(); n++ {
		if n%4 == 0 {
			at = at.Add(time.Hour)
		}
		for k, db := range [2]*DB{with, without} {
			if n%4 == 0 {
				run(b, db, ingest.Trending, "US", at)
			}
			p := page(ingest.Trending, "US", n%4+1, at, grown(chart[n%4*PageSize:(n%4+1)*PageSize], n)...)
			id := lastRun(b, db)
			start := time.Now()
			if err := db.SavePage(ctx, id, p); err != nil {
				b.Fatal(err)
			}
			took[k] += time.Since(start)
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(per(took[0]), "with-us/page")
	b.ReportMetric(per(took[1]), "without-us/page")
	b.ReportMetric(float64(took[0])/float64(took[1]), "with/without")
	b.ReportMetric(0, "ns/op")
}

// grown is vs with their view counts moved on by n, so that every save
// changes counts as an hour's run does.
func grown(vs []ingest.Video, n int) []ingest.Video {
	out := make([]ingest.Video, len(vs))
	for i, v := range vs {
		views := *v.ViewCount + int64(n*1000+i)
		v.ViewCount = &views
		out[i] = v
	}
	return out
}

func lastRun(b *testing.B, db *DB) int64 {
	var id int64
	if err := db.Reader().QueryRow(`SELECT max(id) FROM runs`).Scan(&id); err != nil {
		b.Fatal(err)
	}
	return id
}
