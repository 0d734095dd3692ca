package web

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/ratelimit"
)

// TestPublishOrderPutsTargetsFirst: the publish writes each kind of file
// before the kinds that link it: the images before the stylesheets that
// name them, the JSON and the videos before the charts, the charts before
// the worldwide and front pages, robots.txt and the sitemap after them,
// the feeds last; and publishes no path a directory cannot answer.
func TestPublishOrderPutsTargetsFirst(t *testing.T) {
	t.Parallel()
	in := []struct{ path, ctype string }{
		{"/static/yt.svg", "image/svg+xml"},
		{"/static/style.8136f70eac.css", "text/css; charset=utf-8"},
		{"/api/v1/charts/US", "application/json"},
		{"/videos/abc", "text/html; charset=utf-8"},
		{"/charts/US", "text/html; charset=utf-8"},
		{"/worldwide", "text/html; charset=utf-8"},
		{"/", "text/html; charset=utf-8"},
		{"/sitemap.xml", "application/xml; charset=utf-8"},
		{"/charts/US/feed", "application/atom+xml; charset=utf-8"},
	}
	for i := 1; i < len(in); i++ {
		a, b := in[i-1], in[i]
		if PublishOrder(a.path, a.ctype) >= PublishOrder(b.path, b.ctype) {
			t.Errorf("%s comes at %d, not before %s at %d", a.path, PublishOrder(a.path, a.ctype), b.path, PublishOrder(b.path, b.ctype))
		}
	}
	for _, p := range []string{"/search", "/login", "/operator", "/api/v1/search", "/quota", "/metrics", "/readyz", "/charts"} {
		if !NotPublished(p) {
			t.Errorf("%s is published", p)
		}
	}
	for _, p := range []string{"/", "/charts/US", "/videos/abc", "/api/v1", "/api/v1/charts/US", "/robots.txt", "/sitemap.xml", "/sitemaps/2.xml", "/static/yt.svg"} {
		if NotPublished(p) {
			t.Errorf("%s is left out", p)
		}
	}
}

// A publish asks its own site as serve --public builds it, whatever the
// listener's settings: public, without a token, on a loopback address of
// its own, its search pointed where the flag says or left out, each page
// given the publish's bound; and its one client asks every page at once
// (PublishPlans), where the anonymous plan of serve would refuse it part
// way.
func TestAPublishAsksThePublicSite(t *testing.T) {
	t.Parallel()
	given := Config{Listen: "0.0.0.0:8080", Token: "secret", Timeout: time.Second}
	for _, search := range []string{"", "https://example.org/search"} {
		c := Published(given, search)
		if !c.Public || c.Token != "" || !Loopback(c.Listen) || c.Timeout != PublishTimeout {
			t.Errorf("search %q: public %v, token %q, listen %q, timeout %s; want public, no token, loopback, %s",
				search, c.Public, c.Token, c.Listen, c.Timeout, PublishTimeout)
		}
		if c.SearchURL != search || c.NoSearch != (search == "") {
			t.Errorf("search %q: the site's search %q, left out %v", search, c.SearchURL, c.NoSearch)
		}
		if got := AccessFor(c.Token, c.Listen, c.Public); got != Public {
			t.Errorf("search %q: a publish's site serves %v, want the public site", search, got)
		}
	}
	anon, ok := PublishPlans.Plan(ratelimit.AnonymousPlan)
	if served, _ := ratelimit.DefaultAPIPlans().Plan(ratelimit.AnonymousPlan); !ok || anon.Burst <= served.Burst || anon.Limit <= served.Limit {
		t.Errorf("the publish's anonymous plan %+v, want more than serve's %+v at once", anon, served)
	}
}

// TestAPublishedIndexListsWhatTheDirectoryHolds: the /api/v1 a publish
// writes names the chart and worldwide JSON alone, the routes a directory
// answers; serve --public's names the search and a video's JSON too.
func TestAPublishedIndexListsWhatTheDirectoryHolds(t *testing.T) {
	t.Parallel()
	db := audienceDB(t)
	base := Config{Clock: clock.System, DB: db, Listen: ":8080", Public: true, Meter: anyMeter()}
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string
	}{
		{"published", Published(base, ""), PublishedAPI},
		{"published with a search elsewhere", Published(base, "https://example.org/search"), PublishedAPI},
		{"served", base, []string{"GET /api/v1/search", "GET /api/v1/charts/{region}", "GET /api/v1/videos/{id}", "GET /api/v1/worldwide"}},
	} {
		s, err := New(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		rec := askFrom(s, "192.0.2.1:4000", "/api/v1")
		var idx apiIndexJSON
		if err := json.Unmarshal(rec.Body.Bytes(), &idx); rec.Code != 200 || err != nil {
			t.Fatalf("%s: /api/v1 answered %d %v\n%s", tc.name, rec.Code, err, rec.Body)
		}
		var got []string
		for _, r := range idx.Routes {
			got = append(got, r.Route)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: the index lists %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestTheMuxsOwnAnswersAreKeptByNobody: the redirect the mux sends to a
// cleaned path carries the Cache-Control of every answer but a reader's
// 200: a cache in front does not keep it by its own heuristics.
func TestTheMuxsOwnAnswersAreKeptByNobody(t *testing.T) {
	t.Parallel()
	s, err := New(Config{Clock: clock.System, DB: audienceDB(t), Listen: ":8080", Public: true, Meter: anyMeter()})
	if err != nil {
		t.Fatal(err)
	}
	rec := askFrom(s, "192.0.2.1:4000", "/charts//US")
	if rec.Code/100 != 3 || rec.Header().Get("Location") != "/charts/US" || rec.Header().Get("Cache-Control") != personal {
		t.Errorf("/charts//US: %d to %q, Cache-Control %q; want a redirect to /charts/US, %q", rec.Code, rec.Header().Get("Location"), rec.Header().Get("Cache-Control"), personal)
	}
	if rec := askFrom(s, "192.0.2.1:4000", "/charts/US"); rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Cache-Control"), "public") {
		t.Errorf("/charts/US: %d, Cache-Control %q; want a reader's 200, public", rec.Code, rec.Header().Get("Cache-Control"))
	}
}
