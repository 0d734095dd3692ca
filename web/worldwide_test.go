package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// worldVideos are the videos of ids, ranked in that order.
func worldVideos(at time.Time, ids ...string) []ingest.Video {
	var vs []ingest.Video
	for i, id := range ids {
		views := int64(1_000_000 - i*1000)
		vs = append(vs, ingest.Video{ID: id, Title: "Title " + id, ChannelID: "UC" + id, ChannelTitle: "Channel " + id,
			ViewCount: &views, PublishedAt: at.Add(-30 * time.Hour), Thumbnail: "https://i.ytimg.com/vi/" + id + "/default.jpg"})
	}
	return vs
}

// worldDB holds three regions' charts: hit is #2 in the US, #1 in the
// United Kingdom and #3 in Japan; duo #2 in the United Kingdom and #1 in
// Japan; local #1 in the US alone. A category chart's video is in none.
func worldDB(t *testing.T, t0 time.Time) *store.DB {
	t.Helper()
	db := storetest.Open(t)
	regionRun(t, db, "US", "", t0, worldVideos(t0, "local", "hit")...)
	regionRun(t, db, "GB", "", t0.Add(time.Minute), worldVideos(t0, "hit", "duo")...)
	regionRun(t, db, "JP", "", t0.Add(2*time.Minute), worldVideos(t0, "duo", "jp2", "hit")...)
	regionRun(t, db, "US", "10", t0.Add(3*time.Minute), worldVideos(t0, "music")...)
	return db
}

func worldServer(t *testing.T, derived bool) (*Server, *httptest.Server) {
	t.Helper()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	s, err := New(Config{DB: worldDB(t, t0), Listen: "127.0.0.1:0", Derived: derived, Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) })})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

func worldwideOf(t *testing.T, url string) WorldwideJSON {
	t.Helper()
	var w WorldwideJSON
	if err := json.Unmarshal(fetch(t, url), &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestWorldwideGathersTheRegionsCharts: /api/v1/worldwide holds every
// video of the regions' latest unfiltered charts, each with the regions
// it charts in, by area, its rank in each and its best rank; without the
// computed figures they go by best rank (then the region's name), with
// them by how many regions chart them, and the answer says which.
func TestWorldwideGathersTheRegionsCharts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		derived bool
		order   string
		ids     []string
	}{
		{false, "best_rank", []string{"duo", "hit", "local", "jp2"}}, // #1 Japan, #1 United Kingdom, #1 United States, #2
		{true, "regions", []string{"hit", "duo", "local", "jp2"}},    // 3 regions, 2, then #1 before #2
	} {
		_, srv := worldServer(t, tc.derived)
		w := worldwideOf(t, srv.URL+"/api/v1/worldwide")
		var ids []string
		for _, v := range w.Videos {
			ids = append(ids, v.ID)
		}
		if !slices.Equal(ids, tc.ids) || w.Order != tc.order || w.Derived != tc.derived || w.Regions != 3 {
			t.Errorf("derived %v: videos %v, order %q, derived %v, %d regions; want %v, %q, %v, 3", tc.derived, ids, w.Order, w.Derived, w.Regions, tc.ids, tc.order, tc.derived)
		}
		if w.Oldest == nil || w.At == nil || *w.Oldest != "2026-11-20T09:00:00Z" || *w.At != "2026-11-20T09:02:00Z" {
			t.Errorf("derived %v: the runs' span %v..%v, want 09:00..09:02", tc.derived, w.Oldest, w.At)
		}
	}
	_, srv := worldServer(t, false)
	w := worldwideOf(t, srv.URL+"/api/v1/worldwide")
	hit := w.Videos[1]
	var where []string
	for _, a := range hit.Areas {
		for _, r := range a.Regions {
			where = append(where, a.Area+"/"+r.Name+"#"+strconv.Itoa(r.Rank))
		}
	}
	var want []string
	for _, a := range regions.Areas { // the areas' order, as the front page lists them
		switch a {
		case regions.Americas:
			want = append(want, a+"/United States#2")
		case regions.Europe:
			want = append(want, a+"/United Kingdom#1")
		case regions.Asia:
			want = append(want, a+"/Japan#3")
		}
	}
	if hit.ID != "hit" || hit.BestRank != 1 || hit.BestRegion != "GB" || hit.RegionCount != 3 || !slices.Equal(where, want) {
		t.Errorf("hit: %s best #%d in %s, %d regions %v; want #1 in GB, 3 regions %v", hit.ID, hit.BestRank, hit.BestRegion, hit.RegionCount, where, want)
	}
	if got := worldwideOf(t, srv.URL+"/api/v1/worldwide?limit=2"); len(got.Videos) != 2 {
		t.Errorf("limit=2: %d videos", len(got.Videos))
	}
	if res, _ := ask(t, srv.URL+"/api/v1/worldwide?limit=many"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("limit=many: %d, want 400", res.StatusCode)
	}
}

// TestWorldwidePage: the page lists the videos with where they chart,
// says its order and whose it is, names its feed, and the front page
// links it. (It is kept like the other readers' answers: cache_test.go.)
func TestWorldwidePage(t *testing.T) {
	t.Parallel()
	for _, derived := range []bool{false, true} {
		_, srv := worldServer(t, derived)
		page := string(fetch(t, srv.URL+"/worldwide"))
		label := "In order of best rank: each video's highest place in any region's chart, as YouTube ranks it"
		if derived {
			label = `<p class="provenance computed order">Order computed by ingest: the videos in the most regions' charts first`
		}
		for _, want := range []string{"<h1>Trending worldwide</h1>", label,
			`<link rel="alternate" type="application/atom+xml" href="/worldwide/feed"`,
			`<a class="title" href="/videos/hit" lang="en" dir="auto">Title hit</a>`, `<summary>In 3 regions</summary>`,
			`<a href="/charts/GB">United Kingdom</a> <span class="place">#1</span>`,
			`From the latest chart of each of 3 regions`} {
			if !strings.Contains(page, want) {
				t.Errorf("derived %v: the worldwide page has no %s", derived, want)
			}
		}
		if strings.Contains(page, "music") {
			t.Errorf("derived %v: a category chart's video is on the worldwide page", derived)
		}
		if !strings.Contains(string(fetch(t, srv.URL+"/")), `<a href="/worldwide">`) {
			t.Errorf("the front page does not link the worldwide page")
		}
	}
}
