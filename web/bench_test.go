package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/yeardb"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
)

// BenchmarkRoutes serves every API answer and page on a database of one
// day and on one of a year (internal/rig/yeardb, built by scripts/bench.sh:
// INGEST_BENCH_DAY_DB and INGEST_BENCH_YEAR_DB), with the videos, times
// and words each database's picks name, and reports each route's p50, p90
// and p99: make bench prints them beside each other, with the year/day
// ratios. video-chart asks for each video of today's US chart in turn.
//
// With INGEST_BENCH_PG_DAY_URL and INGEST_BENCH_PG_YEAR_URL, the routes
// read those PostgreSQL copies of the two databases (as store's
// BenchmarkPGYear leaves them), with the SQLite databases' picks.
func BenchmarkRoutes(b *testing.B) {
	for _, size := range []string{"day", "year"} {
		path := os.Getenv("INGEST_BENCH_" + strings.ToUpper(size) + "_DB")
		if path == "" {
			b.Skip("INGEST_BENCH_DAY_DB and INGEST_BENCH_YEAR_DB name the databases (scripts/bench.sh builds them)")
		}
		benchRoutesOn(b, size, path, os.Getenv("INGEST_BENCH_PG_"+strings.ToUpper(size)+"_URL"))
	}
}

func benchRoutesOn(b *testing.B, size, path, pgURL string) {
	ctx := context.Background()
	p, err := yeardb.Pick(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	if pgURL != "" {
		path = pgURL
	}
	db, err := store.OpenExisting(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := benchServer(b, db, p.End)
	mid := url.QueryEscape(p.Mid.Format(time.RFC3339))
	routes := []struct {
		name  string
		paths []string
	}{
		{"api-search-common", []string{"/api/v1/search?q=football+highlights"}},
		{"api-search-rare", []string{"/api/v1/search?q=" + url.QueryEscape(p.Rare)}},
		{"api-search-region", []string{"/api/v1/search?q=official&region=GB&limit=50"}},
		{"api-chart-latest", []string{"/api/v1/charts/US"}},
		{"api-chart-at", []string{"/api/v1/charts/DE?at=" + mid}},
		{"api-video-busiest", []string{"/api/v1/videos/" + p.Busiest}},
		{"api-video-top", []string{"/api/v1/videos/" + p.Chart[0]}},
		{"api-video-old", []string{"/api/v1/videos/" + p.Old}},
		{"api-video-chart", prefixed("/api/v1/videos/", p.Chart)},
		{"api-quota", []string{"/api/v1/quota"}},
		{"api-runs", []string{"/api/v1/runs?limit=50"}},
		{"api-runs-region", []string{"/api/v1/runs?region=FR&kind=trending&limit=200"}},
		{"page-overview", []string{"/"}},
		{"page-chart", []string{"/charts/US"}},
		{"page-chart-at", []string{"/charts/DE?at=" + mid}},
		{"page-video-busiest", []string{"/videos/" + p.Busiest}},
		{"page-video-top", []string{"/videos/" + p.Chart[0]}},
		{"page-search", []string{"/search?q=football+highlights"}},
		{"healthz", []string{"/healthz"}},
	}
	for _, r := range routes {
		b.Run(r.name+"/"+size, func(b *testing.B) { benchRoute(b, s, r.paths) })
	}
}

func prefixed(prefix string, ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = prefix + id
	}
	return out
}

// benchServer serves db as `ingest serve` does, its clock at the data's
// end.
func benchServer(b *testing.B, db *store.DB, now time.Time) *Server {
	costs := costs.Default()
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", QuotaKey: yeardb.QuotaKey, Clock: clock.Func(func() time.Time { return now }),
		Report: func(ctx context.Context) (*report.Report, error) {
			return report.Build(ctx, report.Sources{DB: benchStore{db, ledger.New(db)}, Limiter: report.WholePools{Costs: costs}, Costs: costs,
				QuotaKey: yeardb.QuotaKey, Timetable: jobs.Timetable{Charts: regions.Charts(regions.Default...), Every: time.Hour}, Now: now})
		}})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func benchRoute(b *testing.B, h http.Handler, paths []string) {
	benchRequests(b, h, paths, nil)
}

// benchRequests asks h for paths in turn with header's name/value pairs,
// running before (when set) ahead of each request, untimed, and reports
// the requests' p50, p90 and p99.
func benchRequests(b *testing.B, h http.Handler, paths []string, before func(), header ...string) {
	var took []time.Duration
	for n := 0; b.Loop(); n++ {
		path := paths[n%len(paths)]
		req := httptest.NewRequest("GET", path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		if before != nil {
			before()
		}
		t0 := time.Now()
		h.ServeHTTP(rec, req)
		took = append(took, time.Since(t0))
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %.500s", path, rec.Code, rec.Body.String())
		}
	}
	slices.Sort(took)
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)*9/10]), "p90-ms")
	b.ReportMetric(ms(took[len(took)*99/100]), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchStore is the database as the report reads it: the store and its
// ledger.
type benchStore struct {
	*store.DB
	*ledger.Ledger
}
