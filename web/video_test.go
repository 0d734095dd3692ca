package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/retention"
	"github.com/ingestworks/ingest/store"
)

// TestVideoShowsTrackedViews: a video's answer and page carry the views
// tracking read after its chart entry (video_stats), beside the entry's,
// and its ranks by chart, the unfiltered and the music one apart.
func TestVideoShowsTrackedViews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	views := int64(100)
	v := ingest.Video{ID: "vid-1", Title: "A song", ChannelTitle: "A channel", CategoryID: "10", ViewCount: &views,
		Duration: "PT22M47S", PublishedAt: t0.Add(-72 * time.Hour)}
	a, b := ingest.Video{ID: "vid-a", Title: "A", CategoryID: "24"}, ingest.Video{ID: "vid-b", Title: "B", CategoryID: "24"}
	chartRun(t, db, "", t0, a, b, v)
	chartRun(t, db, "10", t0.Add(time.Minute), v)
	if err := db.SaveStats(ctx, []ingest.VideoStats{{ID: v.ID, ViewCount: 5000, At: t0.Add(3 * time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.Func(func() time.Time { return t0.Add(4 * time.Hour) })})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()

	var got VideoJSON
	if err := json.Unmarshal(fetch(t, srv.URL+"/api/v1/videos/vid-1"), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Counts) == 0 {
		t.Fatalf("video: no views over time; want the chart entries' and tracking's")
	}
	last := got.Counts[len(got.Counts)-1]
	if len(got.History) != 2 || last.Views != 5000 || *last.At != "2026-11-20T12:00:00Z" {
		t.Errorf("video: %d chart entries, last count %d at %v; want 2 entries and the tracked 5000 at 12:00",
			len(got.History), last.Views, *last.At)
	}
	want := []VideoRegion{{Region: "US", Rank: 3, BestRank: 3, Entries: 1}, {Region: "US", Category: "10", Rank: 1, BestRank: 1, Entries: 1}}
	for i, r := range got.Regions {
		r.At = nil
		if i >= len(want) || r != want[i] {
			t.Errorf("video: charts %+v, want %+v", got.Regions, want)
			break
		}
	}
	page := string(fetch(t, srv.URL+"/videos/vid-1"))
	for _, s := range []string{"views, charts and tracking: 5K", "United States · music", `href="/charts/US?category=10"`,
		">22:47<", `href="https://www.youtube.com/watch?v=vid-1"`, ">rank (#1 at the top)<", ">views<", ">time (UTC)<",
		`<g class="series s0 d0">`, `<g class="series s1 d1">`, "<title>views, charts and tracking: 5K at Nov 20 12:00 UTC</title>"} {
		if !strings.Contains(page, s) {
			t.Errorf("video page: no %q", s)
		}
	}
}

// chartRun stores a finished run of the US chart of category ("" the
// unfiltered one) holding videos, in rank order.
func chartRun(t *testing.T, db *store.DB, category string, at time.Time, videos ...ingest.Video) {
	t.Helper()
	regionRun(t, db, "US", category, at, videos...)
}

// regionRun stores a completed run of region's chart at at.
func regionRun(t *testing.T, db *store.DB, region, category string, at time.Time, videos ...ingest.Video) {
	t.Helper()
	ctx := context.Background()
	id, err := db.StartRun(ctx, region, category, ingest.Trending, at)
	if err != nil {
		t.Fatal(err)
	}
	page := ingest.Page{Kind: ingest.Trending, Region: region, Number: 1, Fetched: at, Videos: videos}
	if err := db.SavePage(ctx, id, page); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
}

func fetch(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d\n%s", url, res.StatusCode, b)
	}
	return b
}

// TestLanguage: a video's languages are in its answer and on its page,
// and ?language= keeps a chart and a search to the videos in it.
func TestLanguage(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	hi := ingest.Video{ID: "vid-hi", Title: "derby hi", CategoryID: "10", AudioLanguage: "hi-IN", Language: "en"}
	en := ingest.Video{ID: "vid-en", Title: "derby en", CategoryID: "10", Language: "en-US"}
	none := ingest.Video{ID: "vid-none", Title: "derby none", CategoryID: "10"}
	chartRun(t, db, "", t0, en, none, hi)
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) })})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()

	var v VideoJSON
	if err := json.Unmarshal(fetch(t, srv.URL+"/api/v1/videos/vid-hi"), &v); err != nil {
		t.Fatal(err)
	}
	if v.AudioLanguage != "hi-IN" || v.Language != "en" {
		t.Errorf("video languages = %q, %q; want hi-IN, en", v.AudioLanguage, v.Language)
	}
	page := string(fetch(t, srv.URL+"/videos/vid-hi"))
	for _, s := range []string{`<dd class="audio-language">hi-IN</dd>`, `<dd class="language">en</dd>`} {
		if !strings.Contains(page, s) {
			t.Errorf("video page: no %q", s)
		}
	}
	var c ChartJSON
	if err := json.Unmarshal(fetch(t, srv.URL+"/api/v1/charts/US?language=HI"), &c); err != nil {
		t.Fatal(err)
	}
	if c.Language != "hi" || len(c.Entries) != 1 || c.Entries[0].ID != "vid-hi" || c.Entries[0].Rank != 3 {
		t.Errorf("chart in hi = %+v, want vid-hi alone at rank 3", c)
	}
	if e := c.Entries; len(e) == 1 && (e[0].AudioLanguage != "hi-IN" || e[0].Language != "en") {
		t.Errorf("chart entry languages = %q, %q; want hi-IN, en", e[0].AudioLanguage, e[0].Language)
	}
	var res SearchResult
	if err := json.Unmarshal(fetch(t, srv.URL+"/api/v1/search?q=derby&language=en"), &res); err != nil {
		t.Fatal(err)
	}
	if res.Language != "en" || len(res.Hits) != 2 {
		t.Errorf("search in en = %+v, want vid-en and vid-hi", res)
	}
	langs := map[string]string{}
	for _, h := range res.Hits {
		langs[h.ID] = h.AudioLanguage + "/" + h.Language
	}
	if langs["vid-hi"] != "hi-IN/en" || langs["vid-en"] != "/en-US" {
		t.Errorf("hits' languages = %v; want vid-hi hi-IN/en, vid-en /en-US", langs)
	}
	r, err := http.Get(srv.URL + "/api/v1/search?q=derby&language=e_n")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"parameter": "language"`) {
		t.Errorf("search with a bad language: %d %s, want 400 naming language", r.StatusCode, b)
	}
}

// TestGoneVideoAnswers410: a video the upstream no longer returns answers
// 410 with the reason and its day, on the API and the page; one never
// stored answers 404.
func TestGoneVideoAnswers410(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	chartRun(t, db, "", t0, ingest.Video{ID: "vid-gone", Title: "Gone"}, ingest.Video{ID: "vid-kept", Title: "Kept"})
	if _, err := retention.Gone(ctx, db, []string{"vid-gone"}, t0.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.Func(func() time.Time { return t0.Add(72 * time.Hour) })})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{"/api/v1/videos/vid-gone", http.StatusGone, `"gone"`},
		{"/videos/vid-gone", http.StatusGone, "2026-11-22"},
		{"/api/v1/videos/vid-never", http.StatusNotFound, `"no_video"`},
		{"/api/v1/videos/vid-kept", http.StatusOK, "Kept"},
	} {
		res, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.code || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %s; want %d with %q", c.path, res.StatusCode, body, c.code, c.want)
		}
	}
}
