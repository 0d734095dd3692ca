package web

import (
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// searchServer serves a database whose US chart holds 23 football videos
// and one about a lone tuba.
func searchServer(t *testing.T) *httptest.Server {
	t.Helper()
	db := storetest.Open(t)
	var vs []ingest.Video
	for i := range 23 {
		vs = append(vs, ingest.Video{ID: fmt.Sprintf("fb-%02d", i), Title: fmt.Sprintf("Football match %d", i), CategoryID: "17"})
	}
	vs = append(vs, ingest.Video{ID: "tuba", Title: "A lone tuba", CategoryID: "10"})
	chartRun(t, db, "", time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC), vs...)
	s, err := New(Config{Clock: clock.System, DB: db, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// TestSearchPageCountsAndNumbers: the page says how many videos match in
// all, numbers its hits on from the page before, says "1 hit", and an
// empty result is a sentence, not a numbered item.
func TestSearchPageCountsAndNumbers(t *testing.T) {
	t.Parallel()
	srv := searchServer(t)
	first := string(fetch(t, srv.URL+"/search?q=football"))
	if !strings.Contains(first, "23 hits for “football”") {
		t.Errorf("page 1: no total of 23 in\n%s", first)
	}
	if !strings.Contains(first, `<ol class="hits" start="1">`) || strings.Count(first, `<li class="hit">`) != 20 {
		t.Errorf("page 1: want 20 hits numbered from 1")
	}
	if strings.Contains(first, `rel="prev"`) {
		t.Errorf("page 1: a link to hits before the first")
	}
	next := regexp.MustCompile(`<a class="next" rel="next" href="([^"]+)"`).FindStringSubmatch(first)
	if next == nil {
		t.Fatalf("page 1: no link to the next hits")
	}
	second := string(fetch(t, srv.URL+strings.ReplaceAll(next[1], "&amp;", "&")))
	if !strings.Contains(second, `<ol class="hits" start="21">`) || !strings.Contains(second, "23 hits") ||
		!strings.Contains(second, "showing 21–23") || strings.Count(second, `<li class="hit">`) != 3 {
		t.Errorf("page 2: want hits 21 to 23 of 23, numbered on from 21\n%s", second)
	}
	if prev := regexp.MustCompile(`<a class="prev" rel="prev" href="([^"]+)"`).FindStringSubmatch(second); prev == nil || prev[1] != "/search?q=football" {
		t.Errorf("page 2: the link to the hits before is %v, want /search?q=football", prev)
	}
	if strings.Contains(second, `rel="next"`) {
		t.Errorf("page 2: a link to hits after the last")
	}
	one := string(fetch(t, srv.URL+"/search?q=tuba"))
	if !strings.Contains(one, "1 hit for “tuba”") {
		t.Errorf("one match: no \"1 hit\" in\n%s", one)
	}
	none := string(fetch(t, srv.URL+"/search?q=zither"))
	if strings.Contains(none, "<ol") || strings.Contains(none, "<li") && strings.Contains(none, "Nothing") ||
		!strings.Contains(none, `<p class="empty">No videos match “zither”.</p>`) {
		t.Errorf("no match: want a plain sentence, no list\n%s", none)
	}
	api := string(fetch(t, srv.URL+"/api/v1/search?q=football&limit=5"))
	if !strings.Contains(api, `"total": 23`) {
		t.Errorf("API: no total of 23 in %s", api)
	}
}

// TestSearchPageFiltersAndOrders: the search page takes a category, a
// language and an order as the API does, shows each hit's thumbnail,
// channel, short views and age, and under a hit that matched by its title
// the start of its description rather than the title again.
func TestSearchPageFiltersAndOrders(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	video := func(id, cat, lang string, views int64, age time.Duration) ingest.Video {
		return ingest.Video{ID: id, Title: "Concert " + id, Description: "Live from the hall, night " + id, CategoryID: cat,
			AudioLanguage: lang, ChannelID: "UC" + id, ChannelTitle: "Channel " + id, ViewCount: &views, PublishedAt: t0.Add(-age),
			Thumbnail: "https://i.ytimg.com/vi/" + id + "/default.jpg"}
	}
	chartRun(t, db, "", t0, video("a", "10", "hi", 1_500_000, 48*time.Hour), video("b", "10", "en", 27_207_584, 5*24*time.Hour),
		video("c", "24", "hi", 900, 3*time.Hour))
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) })})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	order := func(page string) string {
		var ids []string
		for _, m := range regexp.MustCompile(`<a class="hit-title" href="/videos/([^"]+)"`).FindAllStringSubmatch(page, -1) {
			ids = append(ids, m[1])
		}
		return strings.Join(ids, " ")
	}
	for q, want := range map[string]string{
		"q=concert&sort=views": "b a c", "q=concert&sort=newest": "c a b", "q=concert&category=music&sort=views": "b a",
		"q=concert&language=hi&sort=newest": "c a", "q=concert&category=24": "c",
	} {
		page := string(fetch(t, srv.URL+"/search?"+q))
		if got := order(page); got != want {
			t.Errorf("%s: hits %q, want %q", q, got, want)
		}
		api := string(fetch(t, srv.URL+"/api/v1/search?"+q))
		if n := strings.Count(api, `"published_at"`); n != len(strings.Fields(want)) {
			t.Errorf("%s: the API's %d hits carry published_at %d times", q, len(strings.Fields(want)), n)
		}
	}
	page := string(fetch(t, srv.URL+"/search?q=concert&sort=views"))
	for _, want := range []string{`<option value="views" selected>views</option>`, `<img src="https://i.ytimg.com/vi/b/mqdefault.jpg"`,
		`<a class="channel" href="https://www.youtube.com/channel/UCb"`, `title="27,207,584 views at Nov 20 09:00 UTC">27.2M views</span>`,
		`<span class="age">uploaded <time datetime="2026-11-15T09:00:00Z">Nov 15, 2026</time></span>`, `<p class="snippet" lang="en" dir="auto">Live from the hall, night b</p>`,
		`<mark>Concert</mark> b</a>`, `<span class="visually-hidden"><span lang="en" dir="auto">Concert b</span> on YouTube</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("search page: no %s", want)
		}
	}
	if bad := string(fetchStatus(t, srv.URL+"/api/v1/search?q=concert&sort=loudest", 400)); !strings.Contains(bad, `"parameter": "sort"`) {
		t.Errorf("a bad sort: %s", bad)
	}
}
