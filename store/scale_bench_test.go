package store

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// BenchmarkSavePageAtScale stores pages of 50 new videos, with text as long
// as real descriptions, into the databases of INGEST_BENCH_DAY_DB and
// INGEST_BENCH_YEAR_DB (scratch copies built by scripts/bench.sh), and
// reports the slowest page: the FTS index merges its segments as it grows,
// and one page must never hold the writer for long.
func BenchmarkSavePageAtScale(b *testing.B) {
	for _, size := range []string{"day", "year"} {
		path := os.Getenv("INGEST_BENCH_" + strings.ToUpper(size) + "_DB")
		if path == "" {
			b.Skip("INGEST_BENCH_DAY_DB and INGEST_BENCH_YEAR_DB name the databases (scripts/bench.sh builds them)")
		}
		b.Run(size, func(b *testing.B) { benchSaveAtScale(b, path) })
	}
}

func benchSaveAtScale(b *testing.B, path string) {
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	at := time.Now()
	run, err := db.StartRun(ctx, "US", "", ingest.Trending, at)
	if err != nil {
		b.Fatal(err)
	}
	var slowest time.Duration
	n := 0
	for b.Loop() {
		n++
		page := ingest.Page{Kind: ingest.Trending, Region: "US", Number: n, Fetched: at}
		for i := range PageSize {
			id := fmt.Sprintf("scale-%d-%d-%d", at.UnixNano(), n, i)
			views := int64(1000 * i)
			page.Videos = append(page.Videos, ingest.Video{ID: id, Title: fmt.Sprintf("Scale video %d of page %d: football highlights", i, n),
				Description: strings.Repeat(fmt.Sprintf("words %d %d about the match and the music ", n, i), 25),
				Tags:        []string{"scale", "bench"}, ChannelID: "UCscale", ChannelTitle: "Scale TV", CategoryID: "17",
				PublishedAt: at, Duration: "PT3M", ViewCount: &views})
		}
		start := time.Now()
		if err := db.SavePage(ctx, run, page); err != nil {
			b.Fatal(err)
		}
		slowest = max(slowest, time.Since(start))
	}
	b.ReportMetric(float64(slowest.Microseconds())/1000, "max-ms/page")
}
