package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
)

// benchRegions are the eight default regions.
var benchRegions = []string{"US", "GB", "DE", "FR", "IN", "BR", "CA", "AU"}

// benchWords make titles: a few words every title shares, many rare ones.
var benchWords = []string{"football", "highlights", "music", "official", "trailer", "live", "news", "review",
	"recipe", "gaming", "vlog", "remix", "goals", "interview", "tutorial", "unboxing"}

const benchQuotaKey = "bench"

// buildYear writes days of hourly trending runs of the eight regions, each
// a chart of chart videos over pages of 50, with one videos.list call in
// the ledger per page, ending at end. Videos trend for about a day and a
// half, climbing and falling, their views growing. It uses only the
// store's own writer, as the daemon does; swap it for internal/yeardb when
// that lands.
func buildYear(ctx context.Context, path string, days, chart int, end time.Time) error {
	db, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	start := end.Truncate(time.Hour).Add(-time.Duration(days*24) * time.Hour)
	call := 0
	for h := range days * 24 {
		for ri, region := range benchRegions {
			at := start.Add(time.Duration(h)*time.Hour + time.Duration(ri)*7*time.Minute)
			id, err := db.StartRun(ctx, region, ingest.Trending, at)
			if err != nil {
				return err
			}
			videos := benchChart(region, h, chart, at)
			for n := 0; n*50 < len(videos); n++ {
				call++
				c := ingest.Call{QuotaKey: benchQuotaKey, ID: "c" + strconv.Itoa(call), At: at.Add(time.Duration(n) * time.Second),
					Op: ingest.OpVideosList, Region: region, RunID: id, Charges: []ingest.Charge{{Pool: "default", Units: 1}}}
				if err := db.RecordCall(ctx, c); err != nil {
					return err
				}
				page := ingest.Page{Kind: ingest.Trending, Region: region, Number: n + 1, Fetched: c.At,
					Videos: videos[n*50 : min(len(videos), n*50+50)]}
				if err := db.SavePage(ctx, id, page); err != nil {
					return err
				}
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(time.Minute)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// benchChart is region's chart at hour h: video k of the region's stream
// enters at hour k*6/chart... so a chart turns over in chart/4 hours.
func benchChart(region string, h, chart int, at time.Time) []ingest.Video {
	first := h * 4 // four new videos an hour
	out := make([]ingest.Video, 0, chart)
	for k := first; k < first+chart; k++ {
		age := h - k/4 + chart/4 // hours since it entered
		views := int64(1000 + (k*7919)%500_000 + age*age*1000)
		w1, w2 := benchWords[k%len(benchWords)], benchWords[(k/len(benchWords))%len(benchWords)]
		out = append(out, ingest.Video{ID: fmt.Sprintf("%s-%07d", region, k),
			Title:       fmt.Sprintf("%s %s %s episode %d", region, w1, w2, k),
			Description: fmt.Sprintf("All about %s and %s. Rare word zq%d.", w1, w2, k),
			Tags:        []string{w1, w2}, ChannelID: "UC" + region, ChannelTitle: region + " channel " + strconv.Itoa(k%40),
			CategoryID: strconv.Itoa(10 + k%10), Duration: "PT4M", PublishedAt: at.Add(-time.Duration(age) * time.Hour),
			ViewCount: &views})
	}
	// Ranked by views: a video climbs while its views grow faster than
	// its neighbours'.
	slices.SortStableFunc(out, func(a, b ingest.Video) int { return int(*b.ViewCount - *a.ViewCount) })
	return out
}

var (
	yearOnce sync.Once
	yearPath string
	yearErr  error
	kept     bool // INGEST_BENCH_DB: not ours to build or remove
	yearEnd  = time.Now().UTC().Truncate(time.Hour)
)

// TestMain removes the bench's database when the run ends.
func TestMain(m *testing.M) {
	code := m.Run()
	if yearPath != "" && !kept {
		os.RemoveAll(filepath.Dir(yearPath))
	}
	os.Exit(code)
}

// yearDB builds the database once per bench run, in a temp dir TestMain
// removes. INGEST_BENCH_DAYS (default 365) and
// INGEST_BENCH_CHART (videos a chart, default 200) size it;
// INGEST_BENCH_DB names a database built before instead (kept), whose
// data must end at the current hour, as buildYear's does.
func yearDB(b *testing.B) (*store.DB, int) {
	days, chart := envInt("INGEST_BENCH_DAYS", 365), envInt("INGEST_BENCH_CHART", 200)
	if p := os.Getenv("INGEST_BENCH_DB"); p != "" {
		yearPath, kept = p, true // built before, by this bench or another generator
	}
	yearOnce.Do(func() {
		if kept {
			return
		}
		dir, err := os.MkdirTemp("", "ingest-web-bench-")
		if err != nil {
			yearErr = err
			return
		}
		yearPath = filepath.Join(dir, "year.db")
		t0 := time.Now()
		yearErr = buildYear(context.Background(), yearPath, days, chart, yearEnd)
		fmt.Fprintf(os.Stderr, "built %d days x %d regions x %d videos in %s: %s\n", days, len(benchRegions), chart,
			time.Since(t0).Round(time.Second), yearPath)
	})
	if yearErr != nil {
		b.Fatal(yearErr)
	}
	db, err := store.OpenExisting(context.Background(), yearPath)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db, days
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkRoutes serves every API answer and page over a year of hourly
// runs and reports each one's p50 and p99 (target: p50 < 50 ms).
func BenchmarkRoutes(b *testing.B) {
	db, days := yearDB(b)
	costs := ingest.DefaultCosts()
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", QuotaKey: benchQuotaKey, Report: func(ctx context.Context) (*report.Report, error) {
		return report.Build(ctx, report.Sources{DB: db, Limiter: report.WholePools{Costs: costs}, Costs: costs,
			QuotaKey: benchQuotaKey, Regions: benchRegions, Every: time.Hour, Now: yearEnd})
	}})
	if err != nil {
		b.Fatal(err)
	}
	mid := yearEnd.Add(-time.Duration(days*12) * time.Hour).Format(time.RFC3339)
	// A video that was in the US chart half a year ago, and one in now.
	old := fmt.Sprintf("US-%07d", days*12*4)
	now := fmt.Sprintf("US-%07d", days*24*4+10)
	routes := []struct{ name, path string }{
		{"api-search-common", "/api/v1/search?q=football+highlights"},
		{"api-search-rare", "/api/v1/search?q=zq1234"},
		{"api-search-region", "/api/v1/search?q=music&region=GB&limit=50"},
		{"api-chart-latest", "/api/v1/charts/US"},
		{"api-chart-at", "/api/v1/charts/DE?at=" + mid},
		{"api-video-now", "/api/v1/videos/" + now},
		{"api-video-old", "/api/v1/videos/" + old},
		{"api-quota", "/api/v1/quota"},
		{"api-runs", "/api/v1/runs?limit=50"},
		{"api-runs-region", "/api/v1/runs?region=FR&kind=trending&limit=200"},
		{"page-overview", "/"},
		{"page-chart", "/charts/US"},
		{"page-chart-at", "/charts/DE?at=" + mid},
		{"page-video", "/videos/" + now},
		{"page-search", "/search?q=football+highlights"},
	}
	for _, r := range routes {
		b.Run(r.name, func(b *testing.B) { benchRoute(b, s, r.path) })
	}
}

func benchRoute(b *testing.B, h http.Handler, path string) {
	req := httptest.NewRequest("GET", path, nil)
	var took []time.Duration
	for b.Loop() {
		rec := httptest.NewRecorder()
		t0 := time.Now()
		h.ServeHTTP(rec, req)
		took = append(took, time.Since(t0))
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
		}
	}
	slices.Sort(took)
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[len(took)*99/100]), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
