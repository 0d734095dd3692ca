package wiring_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/wiring"
)

// TestALandingIsPurgedFromTheCacheInFront: serve's site with --purge-url
// sends a cache in front (a real HTTP server recording what it is sent)
// PURGE of the whole site at its start (the cache was never purged), then
// with the keys of the chart a run landed in and its videos, and /metrics
// counts both sent.
func TestALandingIsPurgedFromTheCacheInFront(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	land := func(region string, at time.Time, ids ...string) {
		t.Helper()
		id, err := db.StartRun(ctx, region, "", ingest.Trending, at)
		if err != nil {
			t.Fatal(err)
		}
		var vs []ingest.Video
		for _, v := range ids {
			vs = append(vs, ingest.Video{ID: v, Title: "Title " + v})
		}
		if err := db.SavePage(ctx, id, ingest.Page{Kind: ingest.Trending, Region: region, Number: 1, Fetched: at, Videos: vs}); err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	land("US", t0, "a", "b")
	land("GB", t0.Add(time.Minute), "b") // GB charted before: its next landing is no new chart's
	purges := make(chan string, 16)
	cache := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "PURGE" {
			purges <- r.Header.Get("xkey-purge")
		}
	}))
	defer cache.Close()
	to, _ := url.Parse(cache.URL + "/")
	srv := httptest.NewUnstartedServer(nil)
	h := &wiring.Host{Clock: clock.System, Costs: costs.Default(), Logger: slog.New(slog.DiscardHandler)}
	ui, closeFn, err := h.OpenWeb(ctx, wiring.On(db, ""), wiring.Serve{
		Schedule: wiring.Schedule{Timetable: jobs.Timetable{Every: time.Hour}, Regions: "US,GB", RegionsGiven: true},
		Plans:    ratelimit.DefaultAPIPlans(), QuotaKey: "k", Standing: ingest.StandardStanding(),
		Web: web.Config{Listen: srv.Listener.Addr().String(), Public: true, Token: uiToken}, Purge: []*url.URL{to}})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	srv.Config.Handler = ui
	srv.Start()
	defer srv.Close()
	select {
	case keys := <-purges:
		if keys != "site" {
			t.Errorf("the start purged %q of a cache never purged, want the whole site", keys)
		}
	case <-time.After(time.Minute): // the fault: no purge at the start
		t.Fatal("a cache never purged was sent no purge at the start")
	}
	land("GB", t0.Add(time.Hour), "b", "c")
	var keys string
	select {
	case keys = <-purges:
	case <-time.After(time.Minute): // the fault: no purge at all
		t.Fatal("the cache in front was sent no purge after a run landed")
	}
	for _, k := range []string{"chart:GB", "feed:GB", "worldwide", "video:b", "video:c"} {
		if !strings.Contains(" "+keys+" ", " "+k+" ") {
			t.Errorf("purged %q, want %s among the keys", keys, k)
		}
	}
	if strings.Contains(keys, "chart:US") || strings.Contains(keys, "video:a") {
		t.Errorf("purged %q: the US chart did not change", keys)
	}
	for end := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) { // the cache answered before the count
		req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+uiToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(b), `ingest_web_purges_total{outcome="sent"} 2`) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("/metrics does not count the purge sent:\n%s", grepLines(string(b), "purges"))
		}
	}
}

// grepLines are the lines of s that hold word.
func grepLines(s, word string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
