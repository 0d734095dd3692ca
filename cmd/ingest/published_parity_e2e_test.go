package main

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// parityAnswer is what one ask of one side answered: the body as sent
// uncompressed, and whether it came compressed.
type parityAnswer struct {
	status  int
	header  http.Header
	body    string
	gzipped bool
	wire    int64 // the body's bytes as sent
}

// counted counts the bytes read through it.
type counted struct {
	r io.Reader
	n int64
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// askParity asks base for path as a browser does, taking gzip, and keeps
// redirects as they come.
func askParity(t *testing.T, base, path string) parityAnswer {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s%s: %v", base, path, err)
	}
	defer res.Body.Close()
	wire := &counted{r: res.Body}
	var r io.Reader = wire
	gz := res.Header.Get("Content-Encoding") == "gzip"
	if gz {
		if r, err = gzip.NewReader(wire); err != nil {
			t.Fatalf("GET %s%s: gzip: %v", base, path, err)
		}
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("GET %s%s: %v", base, path, err)
	}
	return parityAnswer{res.StatusCode, res.Header, string(b), gz, wire.n}
}

// publishedPaths are the addresses a published directory answers, read
// back from its files by the rule the publish names them by.
func publishedPaths(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := "/" + filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		if strings.HasPrefix(filepath.Base(rel), ".") {
			return nil // the publish's own list, never a reader's
		}
		for _, index := range []string{"/index.html", "/index.json", "/index.atom"} {
			rel = strings.TrimSuffix(rel, index)
		}
		if rel == "" {
			rel = "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// keptBy is who may keep an answer: "public", "public immutable", or
// the header as it is otherwise. The lifetimes are left out: a directory
// is purged by no landing, so its block gives pages a minute of its own,
// where serve's follow --cache-control and --purge-url.
func keptBy(cc string) string {
	switch {
	case strings.Contains(cc, "immutable"):
		return "public immutable"
	case strings.HasPrefix(cc, "public"):
		return "public"
	}
	return cc
}

// withoutSearch is a page of serve with its search link and form taken
// out: a directory answers no search, so a publish leaves both out.
var withoutSearch = strings.NewReplacer(` <a href="/search">Search</a>`, "",
	`<form action="/search" method="get" role="search"><input type="search" name="q" placeholder="Search videos" aria-label="Search videos"></form>`, "")

// TestThePublishedSiteAnswersAsServeDoes: a directory `ingest publish`
// wrote, served by Debian's nginx on the shipped server block, and the same
// database served by `serve --public`, asked the same addresses: every
// file of the directory, a query no page reads, the chart picker in each
// case, an unknown chart, page and JSON, an address with an empty segment,
// a chart, its feed and its JSON named in small letters. Route by route the status, the
// type, who may keep it, the compression with its Vary, the redirect's
// Location, the CORS and security headers and the body agree, but for the
// differences each check names.
func TestThePublishedSiteAnswersAsServeDoes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	// nginx's workers read as nobody: the directories on the way open.
	for d := h.dir; d != "/" && d != "/tmp"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	site := filepath.Join(h.dir, "site")
	h.mustRunGrowing(0, "publish", "--public-url", publicSite, site)
	nginx := closedAddr(t)
	startNginxOn(t, nginx, site)
	served := startServe(t, h, "--public", "--public-url", publicSite)
	published := "http://" + nginx

	paths := publishedPaths(t, site)
	if !slices.Contains(paths, "/charts/GB") || !slices.Contains(paths, "/api/v1/charts/GB") || !slices.Contains(paths, "/sitemap.xml") {
		t.Fatalf("the directory holds %v: want the charts with their JSON and the sitemap", paths)
	}
	asks := append(paths, "/charts/GB?utm_source=news", "/charts?region=GB", "/charts?region=gb", "/charts", "/charts?region=GBR",
		"/charts/XX", "/api/v1/charts/XX", "/charts//US?x=1", "/charts/gb", "/charts/gB/feed", "/api/v1/charts/gb")
	compared := 0
	var plain, pubWire, srvWire int64
	for _, p := range asks {
		pub, srv := askParity(t, published, p), askParity(t, served, p)
		plain, pubWire, srvWire = plain+int64(len(pub.body)), pubWire+pub.wire, srvWire+srv.wire
		if pub.status != srv.status {
			t.Errorf("%s: published %d, served %d", p, pub.status, srv.status)
			continue
		}
		for _, k := range []string{"Content-Type", "Location", "Access-Control-Allow-Origin", "X-Content-Type-Options", "Referrer-Policy", "Content-Security-Policy"} {
			// A redirect's body is a line for whoever shows it; nginx
			// does not always name its charset.
			redirect := pub.status/100 == 3
			if a, b := pub.header.Get(k), srv.header.Get(k); a != b && (k != "Content-Type" || !redirect) {
				t.Errorf("%s: %s published %q, served %q", p, k, a, b)
			}
		}
		if a, b := keptBy(pub.header.Get("Cache-Control")), keptBy(srv.header.Get("Cache-Control")); a != b {
			t.Errorf("%s: kept by %q published, %q served", p, a, b)
		}
		// Both compress what is worth it, and say so to a cache. Vary
		// names more on serve's front page (the region a reader's
		// language or cookie leads with), which a directory's one front
		// page does not read; an answer neither compresses needs none.
		// An error's page is each side's own, nginx's too short to be
		// worth compressing.
		if pub.status == http.StatusOK && pub.gzipped != srv.gzipped {
			t.Errorf("%s: compressed published %v, served %v", p, pub.gzipped, srv.gzipped)
		}
		if pub.gzipped && !strings.Contains(pub.header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s: published compressed with Vary %q, want Accept-Encoding", p, pub.header.Get("Vary"))
		}
		switch {
		case pub.status != http.StatusOK:
			// nginx's own page for a redirect or an error, where serve
			// draws its own; a JSON error's shape is checked in deploy/.
		case p == "/api/v1":
			// The published index lists what the directory holds
			// (web.PublishedAPI), serve's its every public route.
			var idx struct{ Routes []struct{ Route string } }
			if err := json.Unmarshal([]byte(pub.body), &idx); err != nil || len(idx.Routes) == 0 {
				t.Errorf("/api/v1 published: %v\n%s", err, pub.body)
			}
			for _, r := range idx.Routes {
				fixed, _, _ := strings.Cut(strings.TrimPrefix(r.Route, "GET "), "{")
				held := slices.ContainsFunc(paths, func(p string) bool { return strings.HasPrefix(p, fixed) })
				if !held || !strings.Contains(srv.body, `"`+r.Route+`"`) {
					t.Errorf("/api/v1 published lists %s: in the directory %v, served %v", r.Route, held, strings.Contains(srv.body, `"`+r.Route+`"`))
				}
			}
		case strings.HasPrefix(pub.header.Get("Content-Type"), "text/html"):
			if pub.body != withoutSearch.Replace(srv.body) {
				t.Errorf("%s: the published page is not serve's less its search (the page published, the tree served): %s", p, firstDifference([]byte(pub.body), []byte(withoutSearch.Replace(srv.body))))
			}
		default:
			if pub.body != srv.body {
				t.Errorf("%s: published and served bodies differ (the page published, the tree served): %s", p, firstDifference([]byte(pub.body), []byte(srv.body)))
			}
		}
		compared++
	}
	t.Logf("%d addresses asked of both: %d bytes published, %d on the wire from nginx, %d from serve", compared, plain, pubWire, srvWire)
}
