package web

// The readers' site as a publish writes it into a directory (ingest
// publish, run --publish): the pages it starts from, the paths a directory
// can answer, and the order the files are written in, so that no page
// links a file not yet there. What writes them is publish/.

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/edge"
)

// Published is cfg as a publish builds its site: the site serve --public
// builds, with no token, on a loopback address (its pages are asked in the
// process, never through a port), its search form pointed at searchURL,
// or left out when that is "" (a directory answers no search), and each
// page's build bounded by PublishTimeout, its API index listing what a
// directory holds (PublishedAPI).
func Published(cfg Config, searchURL string) Config {
	cfg.Public, cfg.Token, cfg.Listen, cfg.Directory = true, "", "127.0.0.1:0", true
	cfg.SearchURL, cfg.NoSearch = searchURL, searchURL == ""
	cfg.Timeout = PublishTimeout
	return cfg
}

// PublishTimeout bounds the build of one page of a publish: the largest
// (every region's videos on the worldwide page) on a loaded host, which a
// reader's bound would cut.
const PublishTimeout = 2 * time.Minute

// PublishPlans meter the publish's own asks of its site: one client
// asking every page at once, never a reader, which the anonymous plan of
// serve would refuse part way.
var PublishPlans = func() *ratelimit.APIPlans {
	p, err := ratelimit.ParseAPIPlans("the publish's plans", []byte("plans:\n  anonymous: {limit: 1000000, window: 1s, burst: 1000000}\n"))
	if err != nil {
		panic(err)
	}
	return p
}()

// Charts is what a publish reads of the database: the charts kept.
type Charts interface {
	Charts(ctx context.Context) ([]store.ChartName, error)
}

// PublishSeeds are the pages a publish starts from: the front and
// worldwide pages with their JSON and feed, robots.txt, the sitemap where
// there is one, and each region's chart with its JSON and feed, so that a
// chart no page links is published too.
func PublishSeeds(ctx context.Context, db Charts, public *url.URL) ([]string, error) {
	seeds := []string{"/", "/worldwide", "/api/v1", "/api/v1/worldwide", "/worldwide/feed", "/robots.txt"}
	if public != nil {
		seeds = append(seeds, "/sitemap.xml")
	}
	charts, err := db.Charts(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range charts {
		if c.Category == "" {
			r := url.PathEscape(c.Region)
			seeds = append(seeds, "/charts/"+r, "/api/v1/charts/"+r, "/charts/"+r+"/feed")
		}
	}
	return seeds, nil
}

// PublishedAPI are the API's routes a publish writes files for beside the
// index: the worldwide JSON and each chart's (PublishSeeds). No page links
// a video's JSON and a directory answers no search, so a published index
// that named them would send a client to a 404.
var PublishedAPI = []string{"GET /api/v1/charts/{region}", "GET /api/v1/worldwide"}

// Origin is the site's public address as its absolute links begin.
func Origin(public *url.URL) string {
	if public == nil {
		return ""
	}
	return strings.TrimSuffix(public.String(), "/")
}

// staticPrefixes are the readers' paths a directory can answer: what is
// the same for every reader and every query. The search, the sign-in and
// the operator's routes are not among them.
var staticPrefixes = []string{"/static/", "/charts/", "/videos/", "/worldwide", "/api/v1/charts/", "/api/v1/videos/",
	"/api/v1/worldwide", "/sitemaps/"}

// NotPublished says a path is not published: a directory cannot answer it.
func NotPublished(p string) bool {
	switch p {
	case "/", "/api/v1", "/robots.txt", "/sitemap.xml":
		return false
	}
	for _, pre := range staticPrefixes {
		if strings.HasPrefix(p, pre) {
			return false
		}
	}
	return true
}

// PublishOrder is the order a publish writes the site in: the files pages
// link before the pages (the images, the stylesheets that name them, the
// JSON, the videos, the charts), then the pages that lead to them (the worldwide and front
// pages, robots.txt and the sitemap), the feeds last, since a feed
// reader's next step is a page.
func PublishOrder(p, contentType string) int {
	switch {
	case strings.HasPrefix(p, "/static/") && !strings.HasPrefix(contentType, "text/css"):
		return 0
	case strings.HasPrefix(p, "/static/"):
		return 1
	case strings.HasPrefix(p, "/api/"):
		return 2
	case strings.HasPrefix(p, "/videos/"):
		return 3
	case strings.HasPrefix(contentType, "application/atom+xml"):
		return 8
	case strings.HasPrefix(p, "/charts/"):
		return 4
	case strings.HasPrefix(p, "/worldwide"):
		return 5
	case p == "/":
		return 6
	}
	return 7
}

// ChangedPaths are the published paths whose answers c changes: the keys
// a landing purges from a cache (changedKeys), each as the paths that
// name it. whole says a publish must ask every page again: a change no
// path names alone (the whole site's key).
func ChangedPaths(c store.Changes) (paths []string, whole bool) {
	for _, k := range changedKeys(c) {
		kind, rest, _ := strings.Cut(k, ":")
		switch {
		case k == edge.SiteKey:
			return nil, true
		case k == frontKey:
			paths = append(paths, "/", "/api/v1")
		case k == worldwideKey:
			paths = append(paths, "/worldwide", "/api/v1/worldwide")
		case k == edge.Feed(worldwideKey):
			paths = append(paths, "/worldwide/feed")
		case k == "sitemap":
			paths = append(paths, "/sitemap.xml")
		case kind == "chart":
			region, _, _ := strings.Cut(rest, ":") // a category's chart is its region's page asked with a query
			r := url.PathEscape(region)
			paths = append(paths, "/charts/"+r, "/api/v1/charts/"+r)
		case kind == "feed":
			paths = append(paths, "/charts/"+url.PathEscape(rest)+"/feed")
		case kind == "video":
			v := url.PathEscape(rest)
			paths = append(paths, "/videos/"+v, "/api/v1/videos/"+v)
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths), false
}

// RepublishedWithItsIndex says a published path is asked again whenever
// the page that names it is: a part of the sitemap, which the sitemap's
// index names and nothing else.
func RepublishedWithItsIndex(p string) bool { return strings.HasPrefix(p, "/sitemaps/") }
