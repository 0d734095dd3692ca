package web

import "testing"

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
