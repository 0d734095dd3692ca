package web

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/yeardb"
	"github.com/ingestworks/ingest/store"
)

// BenchmarkReaderPages serves the reader's pages (the front page, a chart
// by rank and by views, a video, a search in relevance and by views) on
// databases of one day, 30 days and a year (internal/rig/yeardb:
// INGEST_BENCH_DAY_DB, INGEST_BENCH_MONTH_DB, INGEST_BENCH_YEAR_DB), the
// sizes side by side in one run, under the standard standing and with the
// computed figures on (extended), and reports each page's p50, p90 and
// p99. A database not named is left out.
func BenchmarkReaderPages(b *testing.B) {
	ctx := context.Background()
	type sized struct {
		name string
		db   *store.DB
		pick yeardb.Picks
	}
	var sizes []sized
	for _, size := range []string{"day", "month", "year"} {
		path := os.Getenv("INGEST_BENCH_" + map[string]string{"day": "DAY", "month": "MONTH", "year": "YEAR"}[size] + "_DB")
		if path == "" {
			continue
		}
		p, err := yeardb.Pick(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		db, err := store.OpenExisting(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		sizes = append(sizes, sized{size, db, p})
	}
	if len(sizes) == 0 {
		b.Skip("INGEST_BENCH_DAY_DB, INGEST_BENCH_MONTH_DB and INGEST_BENCH_YEAR_DB name the databases (cmd/yeardb builds them)")
	}
	pages := []struct {
		name string
		path func(p yeardb.Picks) string
	}{
		{"front", func(yeardb.Picks) string { return "/" }},
		{"chart", func(yeardb.Picks) string { return "/charts/US" }},
		{"chart-by-views", func(yeardb.Picks) string { return "/charts/US?sort=views" }},
		{"video", func(p yeardb.Picks) string { return "/videos/" + url.PathEscape(p.Chart[0]) }},
		{"search", func(yeardb.Picks) string { return "/search?q=football+highlights" }},
		{"search-by-views", func(yeardb.Picks) string { return "/search?q=football+highlights&sort=views" }},
	}
	for _, pg := range pages {
		for _, derived := range []bool{false, true} {
			standing := map[bool]string{false: "standard", true: "extended"}[derived]
			for _, sz := range sizes {
				s := benchServer(b, sz.db, sz.pick.End)
				s.cfg.Derived = derived
				b.Run(fmt.Sprintf("%s/%s/%s", pg.name, standing, sz.name), func(b *testing.B) { benchRoute(b, s, []string{pg.path(sz.pick)}) })
			}
		}
	}
}
