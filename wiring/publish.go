package wiring

// The readers' site as files: the site serve --public builds, asked in
// the process for every page a reader reaches, written by publish/.

import (
	"context"
	"net/url"
	"strings"

	"github.com/ingestworks/ingest/publish"
	"github.com/ingestworks/ingest/ratelimit"
)

// Publish is `ingest publish` (and run --publish) as its checked flags
// give it.
type Publish struct {
	// Dir is the directory the site is written into.
	Dir string
	// Serve is the site as serve --public would build it: its schedule,
	// the public address its links are under, what its pages show.
	Serve Serve
	// SearchURL is where the pages' search form points; "" leaves it out,
	// since a directory answers no search.
	SearchURL string
	// Progress is told the pages asked of those known so far; nil for
	// none.
	Progress func(done, known int)
}

// publishPlans meter the publish's own asks of its site: one client
// asking every page at once, never a reader, which the anonymous plan of
// serve would refuse part way.
var publishPlans = func() *ratelimit.APIPlans {
	p, err := ratelimit.ParseAPIPlans("the publish's plans", []byte("plans:\n  anonymous: {limit: 1000000, window: 1s, burst: 1000000}\n"))
	if err != nil {
		panic(err)
	}
	return p
}()

// Publish writes the readers' site over db into p.Dir: the site serve
// --public builds, with the search pointed at p.SearchURL, asked in the
// process for every chart, its JSON and feed, the pages they link, the
// sitemap and robots.txt.
func (h *Host) Publish(ctx context.Context, db *Database, p Publish) (publish.Result, error) {
	sv := p.Serve
	sv.Plans = publishPlans
	sv.Web.Public, sv.Web.Token, sv.Web.Listen = true, "", "127.0.0.1:0"
	sv.Web.SearchURL, sv.Web.NoSearch = p.SearchURL, p.SearchURL == ""
	ui, closeWeb, err := h.OpenWeb(ctx, db, sv)
	if err != nil {
		return publish.Result{}, err
	}
	defer closeWeb()
	seeds, err := publishSeeds(ctx, db, sv.Web.PublicURL)
	if err != nil {
		return publish.Result{}, err
	}
	return publish.Publish(ctx, p.Dir, publish.Site{Handler: ui, Seeds: seeds, Skip: notStatic, Origin: origin(sv.Web.PublicURL),
		Order: publishOrder, Progress: p.Progress})
}

// publishSeeds are the pages a publish starts from: the front and
// worldwide pages with their JSON and feed, robots.txt, the sitemap where
// there is one, and each region's chart with its JSON and feed, so that a
// chart no page links is published too.
func publishSeeds(ctx context.Context, db *Database, public *url.URL) ([]string, error) {
	seeds := []string{"/", "/worldwide", "/api/v1", "/api/v1/worldwide", "/worldwide/feed", "/robots.txt"}
	if public != nil {
		seeds = append(seeds, "/sitemap.xml")
	}
	charts, err := db.DB.Charts(ctx)
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

// origin is the site's public address as its absolute links begin.
func origin(public *url.URL) string {
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

// notStatic says a path is not published.
func notStatic(p string) bool {
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

// publishOrder is the order a publish writes the site in: the files pages
// link before the pages (the images, the stylesheets that name them, the
// JSON, the videos, the charts), then the pages that lead to them (the worldwide and front
// pages, robots.txt and the sitemap), the feeds last, since a feed
// reader's next step is a page.
func publishOrder(p, contentType string) int {
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
