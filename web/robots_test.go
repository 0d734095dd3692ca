package web

import (
	"encoding/xml"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
)

// robotsRules are the Allow and Disallow lines of robots.txt's group for
// every crawler (User-agent: *).
type robotsRules []struct {
	allow   bool
	pattern string
}

// parseRobots reads the group for User-agent: * of a robots.txt.
func parseRobots(body string) robotsRules {
	var rules robotsRules
	ours := false
	for _, line := range strings.Split(body, "\n") {
		line, _, _ = strings.Cut(line, "#")
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		switch key {
		case "user-agent":
			ours = value == "*"
		case "allow", "disallow":
			if ours && value != "" {
				rules = append(rules, struct {
					allow   bool
					pattern string
				}{key == "allow", value})
			}
		}
	}
	return rules
}

// allowed says whether a crawler may fetch pathQuery, as RFC 9309 matches:
// the longest pattern that matches wins, an Allow over a Disallow as long;
// * matches any characters, a final $ the end.
func (rules robotsRules) allowed(pathQuery string) bool {
	best, allow := -1, true
	for _, r := range rules {
		expr := "^" + strings.ReplaceAll(regexp.QuoteMeta(strings.TrimSuffix(r.pattern, "$")), `\*`, ".*")
		if strings.HasSuffix(r.pattern, "$") {
			expr += "$"
		}
		if !regexp.MustCompile(expr).MatchString(pathQuery) {
			continue
		}
		if n := len(r.pattern); n > best || n == best && r.allow {
			best, allow = n, r.allow
		}
	}
	return allow
}

var hrefAttr = regexp.MustCompile(`href="([^"]*)"`)

// readerPage says whether a link of a page is to a reader's page of this
// site: not elsewhere, not a file, a feed, the API or the operator's.
func readerPage(h string) bool {
	if !strings.HasPrefix(h, "/") || strings.HasPrefix(h, "//") || strings.Contains(h, "/feed") {
		return false
	}
	for _, not := range []string{"/static/", "/api/", "/operator", "/login", "/logout"} {
		if strings.HasPrefix(h, not) {
			return false
		}
	}
	return true
}

// TestNoCanonicalIsDisallowed: every reader page a crawler can reach from
// the front page, the sitemap and a search (following every link, robots
// or not, as people and previewers do) names as its canonical address
// only one robots.txt lets crawlers fetch, so that a crawler can read
// the page a canonical names; an earlier run's permalink is among them.
func TestNoCanonicalIsDisallowed(t *testing.T) {
	t.Parallel()
	const pub = "https://charts.example.org"
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	db := worldDB(t, t0)
	regionRun(t, db, "US", "", t0.Add(30*time.Minute), worldVideos(t0, "hit", "local")...) // the run at t0 is an earlier one now
	u, _ := url.Parse(pub + "/")
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", PublicURL: u, Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) })})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	rules := parseRobots(string(fetch(t, srv.URL+"/robots.txt")))
	if len(rules) == 0 {
		t.Fatal("robots.txt has no rules for every crawler")
	}

	queue := []string{"/", "/worldwide", "/search", "/search?q=title", "/charts/US?sort=views"}
	var set urlSet
	if err := xml.Unmarshal(fetch(t, srv.URL+"/sitemap.xml"), &set); err != nil {
		t.Fatal(err)
	}
	for _, l := range set.URLs {
		queue = append(queue, strings.TrimPrefix(l.Loc, pub))
	}
	seen, canonicals, permalinks := map[string]bool{}, 0, 0
	for len(queue) > 0 && len(seen) < 400 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			continue
		}
		page := string(b)
		for _, c := range headOf(page)["canonical"] {
			canonicals++
			target := strings.TrimPrefix(html.UnescapeString(c), pub)
			if strings.Contains(target, "at=") {
				permalinks++
			}
			if !rules.allowed(target) {
				t.Errorf("%s names %s as its canonical address, which robots.txt disallows", p, html.UnescapeString(c))
			}
		}
		for _, m := range hrefAttr.FindAllStringSubmatch(page, -1) {
			h := strings.TrimPrefix(html.UnescapeString(m[1]), pub)
			if readerPage(h) {
				h, _, _ = strings.Cut(h, "#")
				queue = append(queue, h)
			}
		}
	}
	if canonicals < 10 || permalinks == 0 {
		t.Errorf("%d pages read, %d canonical addresses, %d of an earlier run's permalink: want the crawl to reach the site's pages and a permalink", len(seen), canonicals, permalinks)
	}
}

// TestRobotsMatchesAsCrawlersDo: the matcher the test above holds pages
// to reads robots.txt as RFC 9309 says, so that its verdicts are a
// crawler's.
func TestRobotsMatchesAsCrawlersDo(t *testing.T) {
	t.Parallel()
	rules := parseRobots("User-agent: other\nDisallow: /\n\nUser-agent: *\nAllow: /\nDisallow: /search?\nDisallow: /charts/*sort=\nAllow: /charts/*at=$\n")
	for path, want := range map[string]bool{
		"/": true, "/search": true, "/search?q=x": false, "/charts/US": true, "/charts/US?sort=views": false,
		"/charts/US?at=1&sort=views": false, "/charts/US?sort=views&at=": false,
	} {
		if got := rules.allowed(path); got != want {
			t.Errorf("%s: allowed %v, want %v", path, got, want)
		}
	}
}
