package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/report"
)

// TestFrontPageLeadsWithARegionsTop: the front page shows its lead
// region's latest chart (with no language asked, the first default
// region), its top 10 with thumbnail, title, channel, short views with
// when they were fetched, and age, linking to the whole chart; every
// other charted region is listed by name, by area; the category charts
// are not on it, and the quota is on its own page.
func TestFrontPageLeadsWithARegionsTop(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	regionRun(t, db, "US", "", t0, topVideos("US", t0, 12)...)
	regionRun(t, db, "US", "", t0.Add(time.Hour), topVideos("US", t0.Add(time.Hour), 12)...)
	regionRun(t, db, "GB", "", t0.Add(2*time.Hour), topVideos("GB", t0.Add(2*time.Hour), 3)...) // run ids follow start times, as one writer makes them
	regionRun(t, db, "US", "10", t0.Add(2*time.Hour), topVideos("US10", t0.Add(2*time.Hour), 5)...)
	rep := &report.Report{QuotaKey: "k", Backend: "embedded", Now: t0}
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", QuotaKey: "k", Clock: clock.Func(func() time.Time { return t0.Add(3 * time.Hour) }),
		Report: func(context.Context) (*report.Report, error) { return rep, nil }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	page := string(fetch(t, srv.URL+"/"))
	us := strings.Index(page, `<h2 id="top-US"><a href="/charts/US">United States</a>`)
	if us < 0 || strings.Contains(page, `id="top-GB"`) {
		t.Fatalf("front page: want US's top alone, got\n%s", page)
	}
	usTop := page[us:strings.Index(page, `</section>`)]
	if n := strings.Count(usTop, `<li class="entry">`); n != 10 {
		t.Errorf("US: %d videos, want the top 10", n)
	}
	for _, want := range []string{`Views at <time datetime="2026-11-20T10:00:00Z">Nov 20 10:00 UTC</time></p>`, `<img src="https://i.ytimg.com/vi/US-a/mqdefault.jpg"`,
		`<a class="title" href="/videos/US-a" lang="en" dir="auto">Title US-a</a>`, `<a class="channel" href="https://www.youtube.com/channel/UCUS-a"`,
		`title="2,000,000 views at Nov 20 10:00 UTC">2M views</span>`, `<span class="age">uploaded <time datetime="2026-11-18T08:00:00Z">Nov 18, 2026</time></span>`,
		`<span class="visually-hidden"><span lang="en" dir="auto">Title US-a</span> on YouTube</span>`, `<a href="/charts/US">The whole United States chart →</a>`} {
		if !strings.Contains(usTop, want) {
			t.Errorf("US top: no %s", want)
		}
	}
	europe, americas := strings.Index(page, `<h3 id="area-europe">Europe</h3>`), strings.Index(page, `<h3 id="area-americas">Americas</h3>`)
	if americas < 0 || europe < americas || !strings.Contains(page[europe:], `<a href="/?region=GB" title="GB">United Kingdom</a>`) ||
		!strings.Contains(page[americas:europe], `<a href="/?region=US" title="US" aria-current="true">United States</a>`) {
		t.Errorf("front page: want the Americas then Europe, each region by name, the lead marked, got\n%s", page)
	}
	if strings.Contains(page, "US10-") || strings.Contains(page, "US-k") || strings.Contains(page, "GB-a") {
		t.Errorf("front page: a category chart's video, one below the 10th, or another region's")
	}
	if strings.Contains(page, "Pools") || !strings.Contains(page, `<a href="/operator">Operator</a>`) {
		t.Errorf("front page: want the quota on its own page, linked from the header")
	}
	if op := string(fetch(t, srv.URL+"/operator")); !strings.Contains(op, "<h1>Operator</h1>") || !strings.Contains(op, "Pools") {
		t.Errorf("/operator: not the quota's page")
	}
}

// topVideos are n videos of a chart run at at, ids prefix-a, prefix-b...,
// the views falling with the rank.
func topVideos(prefix string, at time.Time, n int) []ingest.Video {
	var vs []ingest.Video
	for i := range n {
		views := int64(2_000_000 - i*1000)
		id := prefix + "-" + string(rune('a'+i))
		vs = append(vs, ingest.Video{ID: id, Title: "Title " + id, ChannelID: "UC" + id, ChannelTitle: "Channel " + id,
			ViewCount: &views, PublishedAt: at.Add(-50 * time.Hour), Thumbnail: "https://i.ytimg.com/vi/" + id + "/default.jpg"})
	}
	return vs
}

// TestChartBeforeItsFirstRun: a chart with no run yet is a 404 page that
// says whether it is among the charts fetched and when its first run is
// due, with the charts there are; the API's 404 stays JSON.
func TestChartBeforeItsFirstRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	chartRun(t, db, "", t0, ingest.Video{ID: "v", Title: "V"})
	rep := &report.Report{Now: t0, Regions: []report.Region{{Code: "US/20", NextRun: t0.Add(90 * time.Minute)}}}
	s, err := New(Config{Clock: clock.System, DB: db, Listen: "127.0.0.1:0", Report: func(context.Context) (*report.Report, error) { return rep, nil }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	page := string(fetchStatus(t, srv.URL+"/charts/US?category=gaming", http.StatusNotFound))
	for _, want := range []string{"<h1>No United States · gaming chart yet</h1>", "No chart of United States · gaming stored", "its first run is due Nov 20 10:30 UTC", `<a href="/charts/US">United States</a>`} {
		if !strings.Contains(page, want) {
			t.Errorf("gaming before its first run: no %q in\n%s", want, page)
		}
	}
	if page := string(fetchStatus(t, srv.URL+"/charts/FR", http.StatusNotFound)); !strings.Contains(page, "not among the charts this ingest fetches") {
		t.Errorf("FR, not fetched: the page does not say so\n%s", page)
	}
	var body errorBody
	if err := json.Unmarshal(fetchStatus(t, srv.URL+"/api/v1/charts/US?category=gaming", http.StatusNotFound), &body); err != nil || body.Error.Code != "no_chart" {
		t.Errorf("the API: %+v, %v; want its no_chart", body, err)
	}

	// Its first run lands: its page, and its place in the pickers, at once.
	id, err := db.StartRun(ctx, "US", "20", ingest.Trending, t0.Add(90*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SavePage(ctx, id, ingest.Page{Kind: ingest.Trending, Region: "US", Number: 1, Fetched: t0.Add(90 * time.Minute),
		Videos: []ingest.Video{{ID: "g", Title: "A game", CategoryID: "20"}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0.Add(91 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if p := string(fetch(t, srv.URL+"/charts/US?category=20")); !strings.Contains(p, `href="/videos/g"`) {
		t.Errorf("gaming's first run landed: its page does not show it")
	}
	if p := string(fetch(t, srv.URL+"/charts/US")); !strings.Contains(p, `<option value="20">gaming</option>`) {
		t.Errorf("gaming's first run: the US chart's picker does not offer it")
	}
}

// TestAPICarriesWhatTheRowsShow: chart entries and search hits carry the
// upload time, the channel's id, the duration and the thumbnail, the video
// its thumbnail; with thumbnails off the thumbnail is left out of each.
func TestAPICarriesWhatTheRowsShow(t *testing.T) {
	t.Parallel()
	for _, noThumbs := range []bool{false, true} {
		db := storetest.Open(t)
		t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
		chartRun(t, db, "", t0, ingest.Video{ID: "v", Title: "Song", ChannelID: "UCx", ChannelTitle: "X", Duration: "PT3M2S",
			PublishedAt: t0.Add(-time.Hour), Thumbnail: "https://i.ytimg.com/vi/v/default.jpg"})
		s, err := New(Config{Clock: clock.System, DB: db, Listen: "127.0.0.1:0", NoThumbnails: noThumbs})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(s)
		var chart struct{ Entries []map[string]any }
		var hits struct{ Hits []map[string]any }
		var video map[string]any
		for path, into := range map[string]any{"/api/v1/charts/US": &chart, "/api/v1/search?q=song": &hits, "/api/v1/videos/v": &video} {
			if err := json.Unmarshal(fetch(t, srv.URL+path), into); err != nil {
				t.Fatal(err)
			}
		}
		srv.Close()
		db.Close()
		if len(chart.Entries) != 1 || len(hits.Hits) != 1 {
			t.Fatalf("%d entries, %d hits; want one of each", len(chart.Entries), len(hits.Hits))
		}
		for what, obj := range map[string]map[string]any{"entry": chart.Entries[0], "hit": hits.Hits[0], "video": video} {
			for f, want := range map[string]any{"published_at": "2026-11-20T08:00:00Z", "channel_id": "UCx", "duration": "PT3M2S",
				"thumbnail": "https://i.ytimg.com/vi/v/default.jpg", "views_at": "2026-11-20T09:00:00Z"} {
				got, ok := obj[f]
				switch {
				case f == "views_at" && what == "video":
				case f == "thumbnail" && noThumbs:
					if ok {
						t.Errorf("thumbnails off: the %s carries thumbnail %v", what, got)
					}
				case got != want:
					t.Errorf("thumbnails off %v: the %s's %s is %v, want %v", noThumbs, what, f, got, want)
				}
			}
		}
	}
}
