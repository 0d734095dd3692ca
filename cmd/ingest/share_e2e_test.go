package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"
)

// publicSite is the address the served site is given with --public-url.
const publicSite = "https://charts.example.org/"

// TestFeedsChangeOnlyWithTheirEntries: `ingest serve --public-url` over a
// database `run --once` fills from the fake upstream. A feed reader handed
// a feed's document alone (gofeed, no base URL) resolves every link of it
// under the public address; a run that changes nothing upstream leaves
// each feed the same to the byte, its ETag too; a run where two videos
// trade places changes those two entries of the chart's feed and the
// worldwide feed, and no other entry.
func TestFeedsChangeOnlyWithTheirEntries(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(5, 50)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	// The test asks the API for the latest run many times while it waits:
	// a plan that never refuses it.
	plans := filepath.Join(h.dir, "plans.yaml")
	if err := os.WriteFile(plans, []byte("plans:\n  anonymous: {limit: 1000000, window: 1h}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := startServe(t, h, "--public-url", publicSite, "--api-plans", plans)
	feeds := []string{"/charts/US/feed", "/worldwide/feed"}
	first := map[string]feedAnswer{}
	for _, path := range feeds {
		first[path] = getFeed(t, base+path)
		f, err := gofeed.NewParser().Parse(bytes.NewReader(first[path].body))
		if err != nil {
			t.Fatalf("%s: a feed reader refuses it: %v", path, err)
		}
		links := append([]string{f.FeedLink}, f.Links...)
		for _, it := range f.Items {
			links = append(links, it.Links...)
		}
		if len(f.Items) == 0 || f.FeedLink != publicSite+strings.TrimPrefix(path, "/") {
			t.Errorf("%s: %d entries, self %q; want entries, self under %s", path, len(f.Items), f.FeedLink, publicSite)
		}
		for _, l := range links {
			if u, err := url.Parse(l); err != nil || !u.IsAbs() {
				t.Errorf("%s: a reader without the feed's address cannot resolve %q", path, l)
			}
		}
	}

	run, since := latestRun(t, base), keptBuilds(t, base)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	awaitRun(t, base, run)
	for _, path := range feeds {
		again := freshFeed(t, base, path, since)
		if !bytes.Equal(again.body, first[path].body) || again.etag != first[path].etag {
			t.Errorf("%s after a run that changed nothing: ETag %s then %s, bytes the same %v\n%s\n---\n%s", path, first[path].etag, again.etag,
				bytes.Equal(again.body, first[path].body), first[path].body, again.body)
		}
	}

	us := h.fake.Chart("US")
	moved := map[string]bool{us[1].ID: true, us[2].ID: true}
	h.fake.Swap("US", 2, 3)
	run = latestRun(t, base)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	awaitRun(t, base, run)
	swapAt := runStart(t, base)
	for _, path := range feeds {
		now := changedFeed(t, base, path, first[path].body)
		before, after := entriesOf(t, first[path].body), entriesOf(t, now)
		if got := updatedOf(string(now)); got != swapAt {
			t.Errorf("%s: the feed's updated is %s after the run that moved two videos, want that run's start %s", path, got, swapAt)
		}
		changed := 0
		for id, e := range after {
			switch {
			case moved[id] && updatedOf(e) != swapAt:
				t.Errorf("%s: video %s moved at the run of %s, yet its entry's updated is %s:\n%s", path, id, swapAt, updatedOf(e), e)
			case !moved[id] && e != before[id]:
				t.Errorf("%s: video %s stayed in place, yet its entry changed:\n%s\n---\n%s", path, id, before[id], e)
			case moved[id]:
				changed++
			}
		}
		if changed != 2 || len(after) != len(before) {
			t.Errorf("%s: %d of %d entries changed, want the 2 that moved of %d", path, changed, len(after), len(before))
		}
	}
}

// freshFeed is path's feed once serve has built kept answers again since
// since (its count of builds before the run): a landed run is built into
// the pages readers read, by the watcher or for the first reader after it
// (docs/api.md), so it asks until a build since then has ended, then
// reads the feed.
func freshFeed(t *testing.T, base, path string, since int64) feedAnswer {
	t.Helper()
	if !waitFor(cmdTimeout, func() bool { getFeed(t, base+path); return keptBuilds(t, base) > since }) {
		t.Fatalf("%s was never built again after the run", path)
	}
	return getFeed(t, base+path)
}

// changedFeed is path's feed once serve shows it other than was: after a
// run that changed it, its copy is served while the new one is built
// beside the requests, and another page's build may end first, so the
// change itself is what it waits for.
func changedFeed(t *testing.T, base, path string, was []byte) []byte {
	t.Helper()
	var now []byte
	if !waitFor(cmdTimeout, func() bool { now = getFeed(t, base+path).body; return !bytes.Equal(now, was) }) {
		t.Fatalf("%s never changed after the run", path)
	}
	return now
}

// keptBuilds is how many kept answers serve has built, first or beside
// the requests (ingest_web_kept_builds_total).
func keptBuilds(t *testing.T, base string) int64 {
	t.Helper()
	_, body := get(t, base+"/metrics")
	var n int64
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "ingest_web_kept_builds_total{") {
			var v float64
			if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err == nil {
				n += int64(v)
			}
		}
	}
	return n
}

// feedAnswer is a feed as served: its bytes and its ETag.
type feedAnswer struct {
	body []byte
	etag string
}

func getFeed(t *testing.T, u string) feedAnswer {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v\n%s", u, res.StatusCode, err, b)
	}
	return feedAnswer{body: b, etag: res.Header.Get("ETag")}
}

var atomEntry = regexp.MustCompile(`(?s)<entry>.*?</entry>`)
var entryVideo = regexp.MustCompile(`/videos/([^"]+)"`)

// entriesOf is a feed's entries as bytes, by the video each links.
func entriesOf(t *testing.T, feed []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range atomEntry.FindAll(feed, -1) {
		m := entryVideo.FindSubmatch(e)
		if m == nil {
			t.Fatalf("an entry links no video:\n%s", e)
		}
		out[string(m[1])] = string(e)
	}
	return out
}

var updatedTag = regexp.MustCompile(`<updated>([^<]+)</updated>`)

// updatedOf is the first <updated> of an Atom document or entry: the
// feed's own, or the entry's.
func updatedOf(doc string) string {
	if m := updatedTag.FindStringSubmatch(doc); m != nil {
		return m[1]
	}
	return ""
}

// runStart is when the US chart's run that the served API shows started,
// as an Atom date.
func runStart(t *testing.T, base string) string {
	t.Helper()
	res, err := http.Get(base + "/api/v1/charts/US")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var c struct {
		At time.Time `json:"at"`
	}
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c.At.UTC().Format(time.RFC3339)
}

// latestRun is the US chart's run that the served API shows.
func latestRun(t *testing.T, base string) int64 {
	t.Helper()
	res, err := http.Get(base + "/api/v1/charts/US")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var c struct {
		RunID int64 `json:"run_id"`
	}
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c.RunID
}

// awaitRun waits until serve shows a US run after run (it reads the
// store's mark at most once a second), and the GB run started after it.
func awaitRun(t *testing.T, base string, run int64) {
	t.Helper()
	if !waitFor(30*time.Second, func() bool { return latestRun(t, base) > run }) {
		t.Fatalf("serve never showed the run after %d", run)
	}
}

// TestSiteForCrawlersAndPreviews: through the binary, robots.txt keeps
// crawlers off search with a query and the operator's routes and names
// the sitemap; the sitemap is valid against sitemaps.org's schema and
// names every chart and video under the public address; every reader
// page carries OpenGraph, a description, the worldwide feed and its
// canonical address; each upstream title carries its language. Without
// --public-url, a --public serve warns at its start and check says what
// is missing; a bad one is a usage error naming where it came from.
func TestSiteForCrawlersAndPreviews(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(5, 50)
	h.mustRun(0, "run", "--once", "--regions", "US,JP,SA")
	base := startServe(t, h, "--public-url", publicSite)

	_, robots := get(t, base+"/robots.txt")
	for _, want := range []string{"Disallow: /search?\n", "Disallow: /api/\n", "Disallow: /operator\n", "Sitemap: " + publicSite + "sitemap.xml\n"} {
		if !strings.Contains(robots, want) {
			t.Errorf("robots.txt has no %q:\n%s", want, robots)
		}
	}
	code, sitemap := get(t, base+"/sitemap.xml")
	if code != http.StatusOK {
		t.Fatalf("/sitemap.xml: %d\n%s", code, sitemap)
	}
	xsdValid(t, sitemap)
	locs := regexp.MustCompile(`<loc>([^<]+)</loc>`).FindAllStringSubmatch(sitemap, -1)
	videos := map[string]bool{}
	for _, region := range []string{"US", "JP", "SA"} {
		for _, v := range h.fake.Chart(region)[:5] {
			videos[v.ID] = true
		}
	}
	if len(locs) != 2+3+len(videos) {
		t.Errorf("the sitemap names %d addresses, want the front page, the worldwide page, 3 charts and %d videos:\n%s", len(locs), len(videos), sitemap)
	}
	for _, l := range locs {
		if !strings.HasPrefix(l[1], publicSite) || strings.Contains(l[1], "operator") || strings.Contains(l[1], "/api/") {
			t.Errorf("the sitemap names %q", l[1])
		}
	}

	var arabic string
	for _, v := range h.fake.Chart("SA")[:5] {
		if regexp.MustCompile(`\p{Arabic}`).MatchString(v.Title) {
			arabic = v.ID
			break
		}
	}
	if arabic == "" {
		t.Fatal("no Arabic title in the SA chart's top 5")
	}
	word := regexp.MustCompile(`[A-Za-z]+`).FindString(h.fake.Chart("US")[0].Title)
	pages := map[string]string{"/": "/", "/worldwide": "/worldwide", "/charts/JP": "/charts/JP", "/videos/" + arabic: "/videos/" + arabic,
		"/search?q=" + word: ""} // robots.txt keeps crawlers off a search: no canonical, noindex
	for path, canon := range pages {
		code, page := get(t, base+path)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", path, code)
		}
		head, _, _ := strings.Cut(page, "</head>")
		for _, want := range []string{`<meta name="description" content="`, `<meta property="og:title" content="`, `<meta property="og:type" content="`,
			`<meta property="og:description" content="`, `<meta property="og:image:width" content="480">`, `<meta name="twitter:card" content="summary_large_image">`,
			`<link rel="canonical" href="` + strings.TrimSuffix(publicSite, "/") + canon + `">`,
			`<meta property="og:url" content="` + strings.TrimSuffix(publicSite, "/") + canon + `">`,
			`<link rel="alternate" type="application/atom+xml" href="` + publicSite + `worldwide/feed"`} {
			if canon == "" && (strings.HasPrefix(want, `<link rel="canonical"`) || strings.HasPrefix(want, `<meta property="og:url"`)) {
				want = `<meta name="robots" content="noindex">`
			}
			if !strings.Contains(head, strings.ReplaceAll(want, "&", "&amp;")) {
				t.Errorf("%s: no %s in\n%s", path, want, head)
			}
		}
		if canon == "" && strings.Contains(head, `rel="canonical"`) {
			t.Errorf("%s: a canonical address robots.txt keeps crawlers off:\n%s", path, head)
		}
	}
	_, page := get(t, base+"/charts/JP")
	japanese := 0
	for _, v := range h.fake.Chart("JP")[:5] {
		lang := v.Language // the owner's tag of the text, else of the words spoken, else the script's
		if lang == "" && v.AudioLanguage != "zxx" {
			lang = v.AudioLanguage
		}
		if regexp.MustCompile(`\p{Han}|\p{Hiragana}|\p{Katakana}`).MatchString(v.Title) && (lang == "" || !strings.HasPrefix(lang, "ja")) {
			lang = "ja" // Han or kana on the Japanese chart, whatever another tag says
		}
		if lang == "ja" {
			japanese++
		}
		attr := ` lang="` + lang + `"`
		if lang == "" {
			attr = "" // a Latin title with no tag on the Japanese chart: no language known
		}
		if !strings.Contains(page, `href="/videos/`+v.ID+`"`+attr+` dir="auto">`) {
			t.Errorf("the JP chart's title of %s does not carry lang=%q dir=\"auto\"", v.ID, lang)
		}
	}
	if japanese == 0 {
		t.Errorf("no title of the JP chart's top 5 is tagged Japanese")
	}
	if _, page := get(t, base+"/videos/"+arabic); !regexp.MustCompile(`<h1 class="video-title" lang="ar" dir="auto">`).MatchString(page) ||
		!regexp.MustCompile(`<p class="description"( lang="[a-z-]+")? dir="auto">`).MatchString(page) || !strings.Contains(page, `<html lang="en">`) {
		t.Errorf("the Arabic video's page: its title and description are not dir=\"auto\" with their own lang on an English page")
	}

	addr := closedAddr(t)
	p := h.start("serve", "--listen", addr, "--public")
	if !waitFor(30*time.Second, func() bool { return healthy("http://" + addr) }) {
		t.Fatalf("serve --public never answered\n%s", p.out)
	}
	if !strings.Contains(p.out.String(), "no --public-url") {
		t.Errorf("serve --public without --public-url does not warn at its start:\n%s", p.out)
	}
	if res := h.mustRun(0, "check", "--offline"); !strings.Contains(res.stdout, "public url not set") {
		t.Errorf("check does not say the public address is missing:\n%s", res)
	}
	h.set("INGEST_PUBLIC_URL", publicSite)
	if res := h.mustRun(0, "check", "--offline"); !strings.Contains(res.stdout, "public url "+publicSite) {
		t.Errorf("check does not name the public address:\n%s", res)
	}
	for _, bad := range []struct{ value, says string }{
		{"charts.example.org", "want an absolute http or https URL"}, {"ftp://charts.example.org/", "want an absolute http or https URL"},
		{"https://charts.example.org/?a=1", "without a query or fragment"}, {"https://charts.example.org/#top", "without a query or fragment"},
		{"https://charts.example.org/site/", "from the root"}, {"https://u:p@charts.example.org/", "no user or password"},
	} {
		h.set("INGEST_PUBLIC_URL", bad.value)
		res := h.run("serve", "--listen", closedAddr(t))
		if res.code != 2 || !strings.Contains(res.stderr, "INGEST_PUBLIC_URL (for --public-url)") || !strings.Contains(res.stderr, bad.says) {
			t.Errorf("INGEST_PUBLIC_URL=%s: want exit 2 naming it and saying %q\n%s", bad.value, bad.says, res)
		}
		h.unset("INGEST_PUBLIC_URL")
		res = h.run("run", "--once", "--regions", "US", "--public-url", bad.value)
		if res.code != 2 || !strings.Contains(res.stderr, "--public-url:") || !strings.Contains(res.stderr, bad.says) || strings.Contains(res.stderr, "p@") {
			t.Errorf("run --public-url %s: want exit 2 naming the flag and saying %q\n%s", bad.value, bad.says, res)
		}
	}
}

// xsdValid validates a sitemap against sitemaps.org's schema (web's
// testdata) with xmllint.
func xsdValid(t *testing.T, doc string) {
	t.Helper()
	lint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint (Debian's libxml2-utils) validates the sitemap against its schema; install it to run this test")
	}
	f := filepath.Join(t.TempDir(), "sitemap.xml")
	if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(lint, "--noout", "--nonet", "--schema", filepath.Join("..", "..", "web", "testdata", "sitemaps", "sitemap.xsd"), f).CombinedOutput(); err != nil {
		t.Errorf("the sitemap is not valid against sitemaps.org's schema: %v\n%s\n%s", err, out, doc)
	}
}
