package web

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ingestworks/ingest/web/edge"
)

// What makes one reader's answer differ from another's is said here once,
// for this server and for the shared cache in front of it
// (deploy/varnish/ingest.vcl, tested against ReaderQuery): the path, the
// query parameters the route reads and no other, in no particular order.
// A parameter a route does not read (a campaign tag, a cache-buster) is
// dropped before the answer is looked up or built, so it makes no new
// copy here nor in the cache, and costs no build.

// readerQuery is, for each reader's route, the query parameters its
// handler reads; a route listed with none reads no query at all. A route
// that reads a parameter not listed here never sees it: add it here.
var readerQuery = map[string][]string{
	"GET /{$}":                    {"region"},
	"GET /charts":                 {"category", "language", "region"},
	"GET /charts/{region}":        {"at", "category", "language", "limit", "sort"},
	"GET /charts/{region}/feed":   nil,
	"GET /worldwide":              {"limit"},
	"GET /worldwide/feed":         {"limit"},
	"GET /videos/{id}":            nil,
	"GET /search":                 {"category", "cursor", "language", "limit", "q", "region", "sort"},
	"GET /robots.txt":             nil,
	"GET /sitemap.xml":            nil,
	"GET /sitemaps/{file}":        nil,
	staticPattern:                 nil,
	"GET /api/v1":                 nil,
	"GET /api/v1/{$}":             nil,
	"GET /api/v1/search":          {"category", "cursor", "language", "limit", "q", "region", "sort"},
	"GET /api/v1/charts/{region}": {"at", "category", "language", "limit"},
	"GET /api/v1/videos/{id}":     nil,
	"GET /api/v1/worldwide":       {"limit"},
}

// ReaderQuery is, by route pattern, the query parameters each reader's
// route reads: the rule a shared cache in front keys its copies by.
func ReaderQuery() map[string][]string {
	out := make(map[string][]string, len(readerQuery))
	for p, q := range maps.All(readerQuery) {
		out[p] = slices.Clone(q)
	}
	return out
}

// onlyQuery is h asked with r's query made canonical for a route that
// reads keep.
func onlyQuery(h http.Handler, keep []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := edge.CanonicalQuery(r.URL.RawQuery, keep); q != r.URL.RawQuery {
			u := *r.URL
			u.RawQuery = q
			r2 := new(http.Request)
			*r2 = *r
			r2.URL = &u
			r = r2
		}
		h.ServeHTTP(w, r)
	})
}

// regionPages are the readers' pages named by a region: asked with its
// code in small letters, they answer with a redirect to their one name.
var regionPages = map[string]bool{"GET /charts/{region}": true, "GET /charts/{region}/feed": true}

// permanentFor is how long any cache may keep a redirect to a page's one
// name: it never changes, so a day asks nothing of a purge.
const permanentFor = "public, max-age=86400"

// canonicalRegion is h, but a region's code not in capitals (/charts/us)
// is answered with a permanent redirect to the page named in capitals,
// which any cache may keep: one copy a page, however it was linked.
func canonicalRegion(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := r.PathValue("region")
		up := strings.ToUpper(code)
		prefix := "/charts/" + code
		if up == code || !regionCode.MatchString(up) || !strings.HasPrefix(r.URL.Path, prefix) {
			h.ServeHTTP(w, r)
			return
		}
		to := url.URL{Path: "/charts/" + up + strings.TrimPrefix(r.URL.Path, prefix), RawQuery: r.URL.RawQuery}
		w.Header().Set("Cache-Control", permanentFor)
		http.Redirect(w, r, to.RequestURI(), http.StatusMovedPermanently)
	})
}
