package publish

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// charts is a small site of the shape of ingest's: a front page, charts
// that link their videos and their feed, videos that link back to their
// charts, a stylesheet every page links, JSON, a dynamic search.
type charts struct {
	mu     sync.Mutex
	charts map[string][]string // region -> its videos
	broken string              // a path that answers 500
}

const origin = "https://charts.example"

func (c *charts) set(region string, videos ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.charts == nil {
		c.charts = map[string][]string{}
	}
	c.charts[region] = videos
}

func (c *charts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := r.URL.Path
	page := func(body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><link rel="stylesheet" href="/static/s.css"><a href="/">home</a> <form action="/search"></form> <a href="/search?q=x">search</a>%s</html>`, body)
	}
	switch {
	case p == c.broken:
		http.Error(w, "broken", http.StatusInternalServerError)
	case p == "/static/s.css":
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, "body{background:url(i.svg)}")
	case p == "/static/i.svg":
		w.Header().Set("Content-Type", "image/svg+xml")
		fmt.Fprint(w, "<svg/>")
	case p == "/robots.txt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "User-agent: *\n")
	case p == "/":
		var b strings.Builder
		for _, r := range slices.Sorted(maps.Keys(c.charts)) {
			fmt.Fprintf(&b, `<a href="/charts/%s?sort=views#top">%s</a>`, r, r)
		}
		page(b.String() + `<a href="/gone">gone</a>`)
	case strings.HasPrefix(p, "/charts/") && strings.HasSuffix(p, "/feed"):
		r := strings.TrimSuffix(strings.TrimPrefix(p, "/charts/"), "/feed")
		w.Header().Set("Content-Type", "application/atom+xml; charset=utf-8")
		fmt.Fprintf(w, `<feed><link href="%s/charts/%s"/>`, origin, r)
		for _, v := range c.charts[r] {
			fmt.Fprintf(w, `<entry><link href="%s/videos/%s"/></entry>`, origin, v)
		}
		fmt.Fprint(w, "</feed>")
	case strings.HasPrefix(p, "/charts/"):
		r := strings.TrimPrefix(p, "/charts/")
		vs, ok := c.charts[r]
		if !ok {
			http.NotFound(w, nil)
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, `<link rel="alternate" href="/charts/%s/feed"><a href="/api/v1/charts/%s">JSON</a>`, r, r)
		for _, v := range vs {
			fmt.Fprintf(&b, `<a href="/videos/%s">%s</a>`, v, v)
		}
		page(b.String())
	case strings.HasPrefix(p, "/api/v1/charts/"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"videos":%q}`, c.charts[strings.TrimPrefix(p, "/api/v1/charts/")])
	case strings.HasPrefix(p, "/videos/"):
		v := strings.TrimPrefix(p, "/videos/")
		var b strings.Builder
		for _, r := range slices.Sorted(maps.Keys(c.charts)) {
			for _, x := range c.charts[r] {
				if x == v {
					fmt.Fprintf(&b, `<a href="%s/charts/%s">%s</a>`, origin, r, r)
				}
			}
		}
		page(b.String())
	default:
		http.NotFound(w, nil)
	}
}

// order is the house's order over the test site's paths.
func order(p, ctype string) int {
	switch {
	case strings.HasPrefix(p, "/static/") && strings.HasSuffix(p, ".svg"):
		return -1
	case strings.HasPrefix(p, "/static/"):
		return 0
	case strings.HasPrefix(p, "/api/"):
		return 1
	case strings.HasPrefix(p, "/videos/"):
		return 2
	case strings.HasSuffix(p, "/feed"):
		return 5
	case strings.HasPrefix(p, "/charts/"):
		return 3
	}
	return 4
}

func (c *charts) site() Site {
	return Site{Handler: c, Seeds: []string{"/", "/robots.txt"}, Origin: origin, Order: order,
		Skip: func(p string) bool { return p == "/search" }}
}

// hrefs are the files the links of file name, read from disk.
var hrefs = regexp.MustCompile(`(?:href|src)="([^"]*)"`)

func linked(t *testing.T, dir, file string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range hrefs.FindAllStringSubmatch(string(b), -1) {
		p, ok := own(origin, &url.URL{Path: "/" + file}, m[1])
		if !ok || p == "/search" || p == "/gone" {
			continue
		}
		out = append(out, p)
	}
	return out
}

// exists says some file of the layout answers p.
func exists(dir, p string) bool {
	rel := strings.TrimPrefix(p, "/")
	for _, name := range []string{rel, rel + "/index.html", rel + "/index.json", rel + "/index.atom", rel + "/index.txt"} {
		if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name))); err == nil && !st.IsDir() {
			return true
		}
	}
	return false
}

// publishWatched publishes c into dir, checking at each rename that every
// link of the file renamed resolves to a file there, and returns the
// links that did not, as "file -> path".
func publishWatched(t *testing.T, c *charts, dir string) (Result, []string) {
	t.Helper()
	var dangling []string
	w := &writer{dir: dir}
	w.renamed = func(file string) {
		for _, p := range linked(t, dir, file) {
			if !exists(dir, p) {
				dangling = append(dangling, file+" -> "+p)
			}
		}
	}
	res, err := publish(context.Background(), w, c.site())
	if err != nil {
		t.Fatal(err)
	}
	return res, dangling
}

// TestPublishWritesTargetsBeforePages: each page is renamed into place
// only once the files it links are there. On a first publish, only the
// links that run back to a page of a later kind (a video to its new
// chart, a chart to its new feed, any page to the front page) come before
// their target; a republish
// after the charts moved, new videos among them, leaves no link dangling
// at any moment, and a video no chart shows any more is there until its
// chart was replaced, then gone.
func TestPublishWritesTargetsBeforePages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &charts{}
	c.set("US", "a", "b")
	c.set("GB", "b", "c")
	_, dangling := publishWatched(t, c, dir)
	if !exists(dir, "/static/i.svg") {
		t.Errorf("first publish: the image the stylesheet names is not there")
	}
	for _, d := range dangling {
		file, p, _ := strings.Cut(d, " -> ")
		if order(p, "") <= order("/"+strings.TrimSuffix(strings.TrimSuffix(file, "index.html"), "/"), "") {
			t.Errorf("first publish: %s: linked before it was there, and not a link back to a later kind", d)
		}
	}

	c.set("US", "d", "b")
	w := &writer{dir: dir}
	var bad []string
	w.renamed = func(file string) {
		for _, p := range linked(t, dir, file) {
			if !exists(dir, p) {
				bad = append(bad, file+" -> "+p)
			}
		}
		if file == "charts/US/index.html" && !exists(dir, "/videos/a") {
			bad = append(bad, "videos/a removed before charts/US, which linked it, was replaced")
		}
	}
	res, err := publish(context.Background(), w, c.site())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("republish: %s", b)
	}
	if exists(dir, "/videos/a") || res.Removed != 1 {
		t.Errorf("republish: videos/a, which no page links, still there (removed %d)", res.Removed)
	}
	if _, err := os.Stat(filepath.Join(dir, "videos", "a")); err == nil {
		t.Errorf("republish: videos/a's directory left behind, empty")
	}
}

type stamp struct {
	ino   uint64
	mtime time.Time
}

func stamps(t *testing.T, dir string) map[string]stamp {
	t.Helper()
	out := map[string]stamp{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = stamp{st.Sys().(*syscall.Stat_t).Ino, st.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPublishRewritesOnlyWhatChanged: a publish over the same data
// rewrites nothing (every file keeps its inode and its time) and leaves no
// staged file; when one chart moves, only the files whose bytes changed
// are replaced.
func TestPublishRewritesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &charts{}
	c.set("US", "a", "b")
	c.set("GB", "b", "c")
	first, _ := publishWatched(t, c, dir)
	before := stamps(t, dir)
	again, _ := publishWatched(t, c, dir)
	if again.Written != 0 || again.Files != first.Files || again.Bytes != first.Bytes {
		t.Errorf("same data: wrote %d of %d files (%d bytes, first %d)", again.Written, again.Files, again.Bytes, first.Bytes)
	}
	after := stamps(t, dir)
	for f, st := range before {
		if after[f] != st {
			t.Errorf("same data: %s rewritten: %+v, was %+v", f, after[f], st)
		}
	}
	if len(after) != len(before) {
		t.Errorf("same data: %d files, was %d", len(after), len(before))
	}

	c.set("GB", "b", "e")
	moved, _ := publishWatched(t, c, dir)
	now := stamps(t, dir)
	changed := map[string]bool{"charts/GB/index.html": true, "charts/GB/feed/index.atom": true, "api/v1/charts/GB/index.json": true,
		"videos/e/index.html": true, "videos/b/index.html": false, ".ingest-published": true}
	for f, st := range now {
		if tempName.MatchString(filepath.Base(f)) {
			t.Errorf("a staged file left: %s", f)
		}
		if was, ok := before[f]; ok && (was != st) != changed[f] {
			t.Errorf("GB moved: %s replaced %v, want %v", f, was != st, changed[f])
		}
	}
	if moved.Written != 4 || moved.Removed != 1 {
		t.Errorf("GB moved: wrote %d, removed %d; want 4 (its chart, feed and JSON, the new video) and 1", moved.Written, moved.Removed)
	}
}

// TestPublishRemovesOnlyItsOwn: a file the host keeps in the directory
// (its own, never published) stays through every publish; a file a
// publish stopped half way staged is swept; a publish that fails leaves
// nothing staged behind and the directory as it was.
func TestPublishRemovesOnlyItsOwn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "CNAME"), []byte("charts.example\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "videos", "z"), 0o755)
	os.WriteFile(filepath.Join(dir, "videos", "z", "index.html"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(dir, "videos", ".index.html.publish-42"), []byte("half"), 0o644)
	c := &charts{}
	c.set("US", "a")
	publishWatched(t, c, dir)
	c.set("US", "b")
	publishWatched(t, c, dir)
	for _, f := range []string{"CNAME", "videos/z/index.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the host's own %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "videos", ".index.html.publish-42")); err == nil {
		t.Errorf("a staged file of a stopped publish left")
	}

	before := stamps(t, dir)
	c.set("US", "c")
	c.broken = "/videos/c"
	if _, err := Publish(context.Background(), dir, c.site()); err == nil || !strings.Contains(err.Error(), "/videos/c") {
		t.Fatalf("a page answering 500: err %v, want it named", err)
	}
	after := stamps(t, dir)
	for f := range after {
		if _, ok := before[f]; !ok {
			t.Errorf("a failed publish left %s", f)
		}
	}
	for f, st := range before {
		if after[f] != st {
			t.Errorf("a failed publish changed %s", f)
		}
	}
}

// TestFileLayout: every path is a file a static host finds with one
// try_files, a page and its children side by side.
func TestFileLayout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, ctype, want string }{
		{"/", "text/html; charset=utf-8", "index.html"},
		{"/charts/US", "text/html; charset=utf-8", "charts/US/index.html"},
		{"/charts/US/feed", "application/atom+xml; charset=utf-8", "charts/US/feed/index.atom"},
		{"/api/v1/charts/US", "application/json", "api/v1/charts/US/index.json"},
		{"/api/v1", "application/json; charset=utf-8", "api/v1/index.json"},
		{"/robots.txt", "text/plain; charset=utf-8", "robots.txt"},
		{"/static/style.3f2a9c1b.css", "text/css; charset=utf-8", "static/style.3f2a9c1b.css"},
		{"/sitemaps/2.xml", "application/xml; charset=utf-8", "sitemaps/2.xml"},
	} {
		got, err := File(tc.path, tc.ctype)
		if err != nil || got != tc.want {
			t.Errorf("File(%q, %q) = %q, %v; want %q", tc.path, tc.ctype, got, err, tc.want)
		}
	}
	for _, p := range []string{"/../etc/passwd", "charts", "/a//b"} {
		if got, err := File(p, "text/html"); err == nil {
			t.Errorf("File(%q) = %q, want an error", p, got)
		}
	}
}

// busySite answers 503 with Retry-After to the first asks of each page
// then serves the charts.
type busySite struct {
	*charts
	mu   sync.Mutex
	left map[string]int
}

func (b *busySite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	n := b.left[r.URL.Path]
	b.left[r.URL.Path] = n + 1
	b.mu.Unlock()
	if n < 2 {
		w.Header().Set("Retry-After", "3")
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	b.charts.ServeHTTP(w, r)
}

// TestPublishWaitsOutABusySite: a page the site answers busy is asked
// again after the wait its Retry-After says, and the publish completes; a
// site busy past every try fails the publish naming the page.
func TestPublishWaitsOutABusySite(t *testing.T) {
	t.Parallel()
	c := &charts{}
	c.set("US", "a")
	site := c.site()
	site.Handler = &busySite{charts: c, left: map[string]int{}}
	var waits []time.Duration
	site.Pause = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	res, err := Publish(context.Background(), t.TempDir(), site)
	if err != nil || res.Files == 0 {
		t.Fatalf("a busy site: %d files, %v", res.Files, err)
	}
	if asked := res.Files + res.Dead; len(waits) != 2*asked || waits[0] != 3*time.Second {
		t.Errorf("waited %v for %d pages asked, want 3s twice for each", waits, asked)
	}
	site.Handler = &busySite{charts: c, left: map[string]int{"/": -busyTries}}
	if _, err := Publish(context.Background(), t.TempDir(), site); err == nil || !strings.Contains(err.Error(), "publish /: the site answered 503") {
		t.Errorf("a site busy past every try: %v, want the page named", err)
	}
}

// TestPublishIsOneAtATime: a publish into a directory another is writing
// into stops at once with ErrBusy, touching nothing.
func TestPublishIsOneAtATime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	unlock, err := lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := &charts{}
	c.set("US", "a")
	if _, err := Publish(context.Background(), dir, c.site()); !errors.Is(err, ErrBusy) {
		t.Errorf("a second publish: %v, want ErrBusy", err)
	}
	unlock()
	if _, err := Publish(context.Background(), dir, c.site()); err != nil {
		t.Errorf("once the first ended: %v", err)
	}
}

// TestAPartialPublishAsksWhatChangedAndWhatItNewlyLinks: over a directory
// published whole, a publish of only the paths a change names asks those
// and the pages they link that the directory does not hold, writing the
// new ones before the pages that link them; it asks no other page, keeps
// every other file, and removes the file of a named path the site no
// longer answers.
func TestAPartialPublishAsksWhatChangedAndWhatItNewlyLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &charts{}
	c.set("US", "a", "b")
	c.set("GB", "b", "c")
	publishWatched(t, c, dir) // a first publish: links back to a new page come first
	before := stamps(t, dir)

	c.set("US", "a", "d") // b leaves US, d is new
	var asked []string
	var dangling []string
	w := &writer{dir: dir}
	w.renamed = func(file string) {
		for _, p := range linked(t, dir, file) {
			if !exists(dir, p) {
				dangling = append(dangling, file+" -> "+p)
			}
		}
	}
	site := c.site()
	site.Handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		c.ServeHTTP(rw, r)
	})
	site.Only = []string{"/charts/US", "/charts/US/feed", "/api/v1/charts/US", "/videos/b", "/videos/gone-now", "/charts/XX"}
	res, err := publish(context.Background(), w, site)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(asked)
	want := []string{"/api/v1/charts/US", "/charts/US", "/charts/US/feed", "/videos/b", "/videos/d"}
	if !slices.Equal(asked, want) {
		t.Errorf("the partial publish asked %v, want %v: the named paths the directory holds, and the new video", asked, want)
	}
	if len(dangling) > 0 {
		t.Errorf("links dangling while the partial publish renamed its files: %v", dangling)
	}
	after := stamps(t, dir)
	for _, f := range []string{"index.html", "charts/GB/index.html", "videos/a/index.html", "videos/c/index.html"} {
		if before[f] != after[f] {
			t.Errorf("%s was rewritten by a partial publish that did not name it", f)
		}
	}
	if !exists(dir, "/videos/d") || res.Written == 0 {
		t.Errorf("the new video's page is not there (written %d)", res.Written)
	}

	// A named page the site no longer answers goes, with its file.
	c.set("US")
	delete(c.charts, "US")
	site.Only = []string{"/charts/US"}
	if _, err := publish(context.Background(), w, site); err != nil {
		t.Fatal(err)
	}
	if exists(dir, "/charts/US") {
		t.Errorf("a chart the site no longer answers is still in the directory after a partial publish named it")
	}
	files, err := w.readManifest()
	if err != nil || slices.Contains(files, "charts/US/index.html") {
		t.Errorf("the manifest still lists the chart gone: %v %v", files, err)
	}
}
