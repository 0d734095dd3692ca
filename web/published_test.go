package web

import (
	"testing"
	"time"

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
