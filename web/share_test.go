package web

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/mmcdole/gofeed"
)

// publicServer serves worldDB with pub as its public address (nil: none).
func publicServer(t *testing.T, pub string, bound int) *httptest.Server {
	t.Helper()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	cfg := Config{DB: worldDB(t, t0), Listen: "127.0.0.1:0", Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) })}
	if pub != "" {
		u, err := url.Parse(pub)
		if err != nil {
			t.Fatal(err)
		}
		cfg.PublicURL = u
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.sitemapBound = bound
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// sharedPages are every reader page of worldDB, by the canonical path
// each names: the front page, the worldwide page, a chart, a category's
// chart, a video, search and a search's hits ("": none, robots.txt keeps
// crawlers off it).
var sharedPages = map[string]string{
	"/": "/", "/?region=GB": "/", "/worldwide": "/worldwide", "/charts/GB": "/charts/GB",
	"/charts/US?sort=views": "/charts/US", "/charts/US?category=10": "/charts/US?category=10",
	"/videos/hit": "/videos/hit", "/search": "/search", "/search?q=title&region=US": "",
}

var metaTag = regexp.MustCompile(`<(?:meta (?:property|name)="([^"]+)" content="([^"]*)"|link rel="(canonical|alternate)"[^>]* href="([^"]*)")`)

// headOf is a page's meta tags and head links, each name's values in order.
func headOf(page string) map[string][]string {
	head, _, _ := strings.Cut(page, "</head>")
	out := map[string][]string{}
	for _, m := range metaTag.FindAllStringSubmatch(head, -1) {
		if m[1] != "" {
			out[m[1]] = append(out[m[1]], m[2])
		} else {
			out[m[3]] = append(out[m[3]], m[4])
		}
	}
	return out
}

// TestReaderPagesNameTheirPublicAddress: with a public address, every
// reader page names its canonical address under it (a chart's without a
// run or an order, the front page's without the region asked for) in
// <link rel="canonical"> and og:url, and its feeds absolutely; without
// one, none of them, and the feeds' links stay relative. Whatever Host a
// request names changes nothing.
func TestReaderPagesNameTheirPublicAddress(t *testing.T) {
	t.Parallel()
	const pub = "https://charts.example.org/"
	withURL, without := publicServer(t, pub, 0), publicServer(t, "", 0)
	for path, canon := range sharedPages {
		req, _ := http.NewRequest("GET", withURL.URL+path, nil)
		req.Host = "evil.example.com"
		res, err := (&http.Transport{}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.ReadFrom(res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusSeeOther { // ?region= sets the cookie, then the front page
			continue
		}
		page := buf.String()
		h := headOf(page)
		want := strings.TrimSuffix(pub, "/") + canon
		if canon == "" && (len(h["canonical"])+len(h["og:url"]) > 0 || !slices.Equal(h["robots"], []string{"noindex"})) {
			t.Errorf("%s: canonical %q, og:url %q, robots %q; want none, none, noindex", path, h["canonical"], h["og:url"], h["robots"])
		}
		if canon != "" && (!slices.Equal(h["canonical"], []string{want}) || !slices.Equal(h["og:url"], []string{want}) || len(h["robots"]) > 0) {
			t.Errorf("%s: canonical %q, og:url %q, robots %q; want %s and no robots", path, h["canonical"], h["og:url"], h["robots"], want)
		}
		if !slices.Contains(h["alternate"], pub+"worldwide/feed") {
			t.Errorf("%s: feeds %q, want the worldwide feed at %sworldwide/feed", path, h["alternate"], pub)
		}
		if strings.Contains(page, "evil.example.com") {
			t.Errorf("%s: the page names the request's Host", path)
		}
		rel := headOf(string(fetch(t, without.URL+path)))
		if len(rel["canonical"])+len(rel["og:url"]) > 0 || !slices.Contains(rel["alternate"], "/worldwide/feed") {
			t.Errorf("%s without a public address: canonical %q, og:url %q, feeds %q; want none, none, /worldwide/feed", path, rel["canonical"], rel["og:url"], rel["alternate"])
		}
	}
	if h := headOf(string(fetch(t, withURL.URL+"/charts/GB"))); len(h["alternate"]) != 2 || h["alternate"][0] != pub+"charts/GB/feed" {
		t.Errorf("the GB chart's feeds: %q, want its own first, then the worldwide one", h["alternate"])
	}
}

// TestFeedsResolveWithoutTheirAddress: with a public address, a feed
// reader handed the feed's document alone (gofeed, no base URL) finds
// every link of the feed and of its entries absolute under it; without
// one, they stay relative.
func TestFeedsResolveWithoutTheirAddress(t *testing.T) {
	t.Parallel()
	const pub = "https://charts.example.org/"
	withURL, without := publicServer(t, pub, 0), publicServer(t, "", 0)
	for _, path := range []string{"/charts/GB/feed", "/worldwide/feed"} {
		f, err := gofeed.NewParser().Parse(bytes.NewReader(fetch(t, withURL.URL+path)))
		if err != nil {
			t.Fatal(err)
		}
		links := append([]string{f.FeedLink}, f.Links...)
		for _, it := range f.Items {
			links = append(links, it.Links...)
		}
		if len(f.Items) == 0 || f.FeedLink != pub+strings.TrimPrefix(path, "/") {
			t.Errorf("%s: %d entries, self %q", path, len(f.Items), f.FeedLink)
		}
		for _, l := range links {
			u, err := url.Parse(l)
			if err != nil || !u.IsAbs() || (u.Host != "charts.example.org" && u.Host != "www.youtube.com") {
				t.Errorf("%s: the link %q does not resolve without the feed's address", path, l)
			}
		}
		rel, err := gofeed.NewParser().Parse(bytes.NewReader(fetch(t, without.URL+path)))
		if err != nil {
			t.Fatal(err)
		}
		if rel.FeedLink != path || !strings.HasPrefix(rel.Items[0].Link, "/videos/") {
			t.Errorf("%s without a public address: self %q, first entry %q; want them relative", path, rel.FeedLink, rel.Items[0].Link)
		}
	}
}

// TestEveryReaderPagePreviews: every reader page carries a description and
// OpenGraph's title, type, description and a picture of 480x360 or more
// with its size and words, on Twitter's large card; with thumbnails off,
// or on search before a query (no video to picture), no picture and the
// small card.
func TestEveryReaderPagePreviews(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for _, thumbs := range []bool{true, false} {
		s, err := New(Config{DB: worldDB(t, t0), Listen: "127.0.0.1:0", NoThumbnails: !thumbs, Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) })})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(s)
		defer srv.Close()
		for path := range sharedPages {
			if strings.Contains(path, "region=") {
				continue
			}
			h := headOf(string(fetch(t, srv.URL+path)))
			for _, name := range []string{"description", "og:title", "og:type", "og:description", "og:site_name", "twitter:card"} {
				if len(h[name]) != 1 || h[name][0] == "" {
					t.Errorf("thumbnails %v, %s: %s is %q, want one", thumbs, path, name, h[name])
				}
			}
			if !thumbs || path == "/search" { // search without a query shows no video to picture
				if len(h["og:image"]) > 0 || h["twitter:card"][0] != "summary" {
					t.Errorf("thumbnails off, %s: og:image %q, card %q; want none, summary", path, h["og:image"], h["twitter:card"])
				}
				continue
			}
			img := regexp.MustCompile(`^https://i\.ytimg\.com/vi/[^/]+/hqdefault\.jpg$`)
			if len(h["og:image"]) != 1 || !img.MatchString(h["og:image"][0]) || !slices.Equal(h["og:image:width"], []string{"480"}) ||
				!slices.Equal(h["og:image:height"], []string{"360"}) || len(h["og:image:alt"]) != 1 || h["twitter:card"][0] != "summary_large_image" {
				t.Errorf("%s: og:image %q %qx%q alt %q, card %q; want hqdefault, 480x360, summary_large_image",
					path, h["og:image"], h["og:image:width"], h["og:image:height"], h["og:image:alt"], h["twitter:card"])
			}
		}
	}
}

// TestRobotsAndSitemap: robots.txt keeps crawlers off search with a query,
// the API, the operator's page and the sign-in, and names the sitemap;
// the sitemap, valid against sitemaps.org's schema, names the front page,
// the worldwide page, every chart and each video of the latest charts,
// absolutely, and nothing of the operator's. Without a public address,
// there is no sitemap and robots.txt names none.
func TestRobotsAndSitemap(t *testing.T) {
	t.Parallel()
	const pub = "https://charts.example.org/"
	srv := publicServer(t, pub, 0)
	robots := string(fetch(t, srv.URL+"/robots.txt"))
	for _, want := range []string{"User-agent: *\n", "Disallow: /search?\n", "Disallow: /api/\n", "Disallow: /operator\n",
		"Disallow: /login\n", "Sitemap: " + pub + "sitemap.xml\n"} {
		if !strings.Contains(robots, want) {
			t.Errorf("robots.txt has no %q:\n%s", want, robots)
		}
	}
	body := fetch(t, srv.URL+"/sitemap.xml")
	validXML(t, "sitemap.xsd", body)
	var set urlSet
	if err := xml.Unmarshal(body, &set); err != nil {
		t.Fatal(err)
	}
	var locs []string
	for _, u := range set.URLs {
		locs = append(locs, u.Loc)
	}
	want := []string{pub, pub + "worldwide", pub + "charts/GB", pub + "charts/JP", pub + "charts/US", pub + "charts/US?category=10",
		pub + "videos/duo", pub + "videos/hit", pub + "videos/jp2", pub + "videos/local"}
	if !slices.Equal(locs, want) {
		t.Errorf("the sitemap names\n%q\nwant\n%q", locs, want)
	}

	bare := publicServer(t, "", 0)
	if res, _ := ask(t, bare.URL+"/sitemap.xml"); res.StatusCode != http.StatusNotFound {
		t.Errorf("without a public address the sitemap answers %d, want 404", res.StatusCode)
	}
	if r := string(fetch(t, bare.URL+"/robots.txt")); strings.Contains(r, "Sitemap:") || !strings.Contains(r, "Disallow: /search?") {
		t.Errorf("robots.txt without a public address:\n%s", r)
	}
}

// TestSitemapIndexPastItsBound: past the addresses one sitemap file may
// hold, /sitemap.xml is an index (valid against the protocol's schema) of
// files that each hold at most that many, together every address once.
func TestSitemapIndexPastItsBound(t *testing.T) {
	t.Parallel()
	const pub = "https://charts.example.org/"
	whole := publicServer(t, pub, 0)
	var all urlSet
	if err := xml.Unmarshal(fetch(t, whole.URL+"/sitemap.xml"), &all); err != nil {
		t.Fatal(err)
	}
	srv := publicServer(t, pub, 4)
	body := fetch(t, srv.URL+"/sitemap.xml")
	validXML(t, "siteindex.xsd", body)
	var idx sitemapIndex
	if err := xml.Unmarshal(body, &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Sitemaps) != (len(all.URLs)+3)/4 {
		t.Fatalf("an index of %d files for %d addresses, 4 a file:\n%s", len(idx.Sitemaps), len(all.URLs), body)
	}
	var got []sitemapURL
	for i, sm := range idx.Sitemaps {
		path, ok := strings.CutPrefix(sm.Loc, pub)
		if !ok || path != "sitemaps/"+string(rune('1'+i))+".xml" {
			t.Fatalf("file %d of the index is at %q", i+1, sm.Loc)
		}
		part := fetch(t, srv.URL+"/"+path)
		validXML(t, "sitemap.xsd", part)
		var set urlSet
		if err := xml.Unmarshal(part, &set); err != nil {
			t.Fatal(err)
		}
		if len(set.URLs) > 4 {
			t.Errorf("%s holds %d addresses, over 4", path, len(set.URLs))
		}
		got = append(got, set.URLs...)
	}
	if !slices.Equal(got, all.URLs) {
		t.Errorf("the index's files hold\n%v\nwant\n%v", got, all.URLs)
	}
	for _, path := range []string{"/sitemaps/0.xml", "/sitemaps/9.xml", "/sitemaps/01.xml", "/sitemaps/1"} {
		if res, _ := ask(t, srv.URL+path); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, res.StatusCode)
		}
	}
}

// validXML validates body against testdata/sitemaps' schema with xmllint.
func validXML(t *testing.T, schema string, body []byte) {
	t.Helper()
	lint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint (Debian's libxml2-utils) validates the sitemap against its schema; install it to run this test")
	}
	f := filepath.Join(t.TempDir(), "doc.xml")
	if err := os.WriteFile(f, body, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(lint, "--noout", "--nonet", "--schema", filepath.Join("testdata", "sitemaps", schema), f).CombinedOutput()
	if err != nil {
		t.Errorf("not valid against %s: %v\n%s\n%s", schema, err, out, body)
	}
}
