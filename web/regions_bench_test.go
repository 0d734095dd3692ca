package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/yeardb"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/kept"
)

// BenchmarkRegionCount serves the reader's pages (the front page, a
// chart, a video, the busiest video, a search, the worldwide page, its
// JSON and a chart's feed) on a database of the
// default regions' charts and on one of every catalogued region's
// (INGEST_BENCH_FEW_REGIONS_DB and INGEST_BENCH_ALL_REGIONS_DB: bin/ingest
// run --once --regions default, then all, against bin/fakeyt), side by
// side in one run: each page as kept (served from memory) and as built
// (the kept answers dropped before each request), with its p50, p90 and
// p99; the front page also reports its bytes, plain and gzipped.
func BenchmarkRegionCount(b *testing.B) {
	type sized struct {
		name string
		db   *store.DB
		pick yeardb.Picks
	}
	var sizes []sized
	for _, size := range []string{"few", "all"} {
		path := os.Getenv(map[string]string{"few": "INGEST_BENCH_FEW_REGIONS_DB", "all": "INGEST_BENCH_ALL_REGIONS_DB"}[size])
		if path == "" {
			b.Skip("INGEST_BENCH_FEW_REGIONS_DB and INGEST_BENCH_ALL_REGIONS_DB name the databases (docs/reference/api/dashboard.md)")
		}
		p, err := yeardb.Pick(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		db, err := store.OpenExisting(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		sizes = append(sizes, sized{size, db, p})
	}
	pages := []struct {
		name string
		path func(p yeardb.Picks) string
	}{
		{"front", func(yeardb.Picks) string { return "/" }},
		{"chart", func(yeardb.Picks) string { return "/charts/US" }},
		{"video", func(p yeardb.Picks) string { return "/videos/" + url.PathEscape(p.Chart[0]) }},
		{"video-busiest", func(p yeardb.Picks) string { return "/videos/" + url.PathEscape(p.Busiest) }},
		{"search", func(p yeardb.Picks) string { return "/search?q=" + url.QueryEscape(p.Rare) }},
		{"worldwide", func(yeardb.Picks) string { return "/worldwide" }},
		{"worldwide-json", func(yeardb.Picks) string { return "/api/v1/worldwide" }},
		{"chart-feed", func(yeardb.Picks) string { return "/charts/US/feed" }},
	}
	for _, pg := range pages {
		for _, built := range []bool{false, true} {
			for _, sz := range sizes {
				s := benchServer(b, sz.db, sz.pick.End)
				how := map[bool]string{false: "kept", true: "built"}[built]
				b.Run(pg.name+"/"+how+"/"+sz.name, func(b *testing.B) {
					var before func()
					if built {
						before = s.dropKept
					}
					benchRequests(b, s, []string{pg.path(sz.pick)}, before, "Accept-Language", "en-GB,en;q=0.9")
					if pg.name == "front" && !built {
						plain, zipped := pageBytes(s, pg.path(sz.pick))
						b.ReportMetric(float64(plain), "bytes")
						b.ReportMetric(float64(zipped), "gzip-bytes")
					}
				})
			}
		}
	}
}

// pageBytes is the size of path's answer, plain and gzipped.
func pageBytes(h http.Handler, path string) (plain, zipped int) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(rec.Body.Bytes())
	zw.Close()
	return rec.Body.Len(), z.Len()
}

// dropKept forgets every kept answer, so that the next request builds its
// own: a set as empty as the server's first takes the place of the one it
// held, between the bench's requests.
func (s *Server) dropKept() { s.answers.set = kept.NewSet[*answer](s.cfg.Kept) }
