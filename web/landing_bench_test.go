package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/yeardb"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// landEvery is how often a run lands in BenchmarkWorldwideWhileRunsLand:
// about what a daemon at every region at --every 5m lands.
const landEvery = 2 * time.Second

// BenchmarkWorldwideWhileRunsLand serves /charts/US and /worldwide in
// turn, side by side, over a day of every catalogued region's charts
// (internal/rig/yeardb) while a run of one region after another lands every
// landEvery, on the server's own clock: each page's p50, p90, p99 and
// slowest, and the worldwide page's p50 over the chart's. Run it long
// enough for runs to land (-benchtime 20s).
func BenchmarkWorldwideWhileRunsLand(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "all.db")
	codes := regions.Builtin.Codes()
	if err := yeardb.BuildWith(ctx, path, yeardb.Options{Days: 1, Regions: codes}); err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	latest, err := db.LatestCharts(ctx)
	if err != nil {
		b.Fatal(err)
	}
	vids := make([]int64, len(latest))
	for i, e := range latest {
		vids[i] = e.Vid
	}
	stored, err := db.VideosOf(ctx, vids)
	if err != nil {
		b.Fatal(err)
	}
	charts := map[string][]ingest.Video{}
	for _, e := range latest {
		charts[e.Region] = append(charts[e.Region], stored[e.Vid].Video)
	}
	s, err := New(Config{Clock: clock.System, DB: db, Listen: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}

	stop := make(chan struct{})
	var landing sync.WaitGroup
	landed := 0
	landing.Go(func() {
		tick := time.NewTicker(landEvery)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			region := codes[i%len(codes)]
			if err := landRun(ctx, db, region, charts[region]); err != nil {
				b.Error(err)
				return
			}
			landed++
		}
	})

	pages := []string{"/charts/US", "/worldwide"}
	took := make([][]time.Duration, len(pages))
	for _, p := range pages { // their first builds, untimed
		s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	for n := 0; b.Loop(); n++ {
		i := n % len(pages)
		req := httptest.NewRequest("GET", pages[i], nil)
		rec := httptest.NewRecorder()
		t0 := time.Now()
		s.ServeHTTP(rec, req)
		took[i] = append(took[i], time.Since(t0))
		if rec.Code != 200 {
			b.Fatalf("%s: %d %.300s", pages[i], rec.Code, rec.Body.String())
		}
	}
	close(stop)
	landing.Wait()
	p50 := make([]float64, len(pages))
	for i, p := range pages {
		slices.Sort(took[i])
		name := map[string]string{"/charts/US": "chart", "/worldwide": "worldwide"}[p]
		p50[i] = ms(took[i][len(took[i])/2])
		b.ReportMetric(p50[i], name+"-p50-ms")
		b.ReportMetric(ms(took[i][len(took[i])*9/10]), name+"-p90-ms")
		b.ReportMetric(ms(took[i][len(took[i])*99/100]), name+"-p99-ms")
		b.ReportMetric(ms(took[i][len(took[i])-1]), name+"-max-ms")
	}
	b.ReportMetric(p50[1]/p50[0], "worldwide/chart-p50")
	_, beside, waited := s.Builds()
	b.ReportMetric(float64(landed), "runs-landed")
	b.ReportMetric(float64(beside), "built-beside")
	b.ReportMetric(float64(waited), "waited")
	b.ReportMetric(0, "ns/op")
}

// landRun stores a completed run of region's chart, now.
func landRun(ctx context.Context, db *store.DB, region string, videos []ingest.Video) error {
	at := time.Now().UTC()
	id, err := db.StartRun(ctx, region, "", ingest.Trending, at)
	if err != nil {
		return err
	}
	if err := db.SavePage(ctx, id, ingest.Page{Kind: ingest.Trending, Region: region, Number: 1, Fetched: at, Videos: videos}); err != nil {
		return err
	}
	return db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(time.Millisecond)})
}

// BenchmarkWorldwideBuild builds the pages across regions by their
// handlers, past what is kept (what a landing costs each), over a day of
// every catalogued region's charts, side by side with a region's chart
// page, the baseline: each build's mean and the worldwide page's and its
// feed's over the chart's.
func BenchmarkWorldwideBuild(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "all.db")
	if err := yeardb.BuildWith(ctx, path, yeardb.Options{Days: 1, Regions: regions.Builtin.Codes()}); err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s, err := New(Config{Clock: clock.System, DB: db, Listen: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	builds := []struct {
		name, uri string
		h         func(w http.ResponseWriter, r *http.Request)
	}{
		{"chart", "/charts/US", s.chartPage},
		{"worldwide", "/worldwide", s.worldwidePage},
		{"feed", "/worldwide/feed", s.worldwideFeed},
	}
	took := make([]time.Duration, len(builds))
	for n := 0; b.Loop(); n++ {
		i := n % len(builds)
		req := httptest.NewRequest("GET", builds[i].uri, nil)
		req.SetPathValue("region", "US")
		rec := httptest.NewRecorder()
		t0 := time.Now()
		builds[i].h(rec, req)
		took[i] += time.Since(t0)
		if rec.Code != 200 {
			b.Fatalf("%s: %d %.300s", builds[i].uri, rec.Code, rec.Body.String())
		}
	}
	each := float64(max(b.N/len(builds), 1))
	for i, c := range builds {
		b.ReportMetric(ms(took[i])/each, c.name+"-ms")
	}
	b.ReportMetric(float64(took[1])/float64(took[0]), "worldwide/chart")
	b.ReportMetric(float64(took[2])/float64(took[0]), "feed/chart")
}
