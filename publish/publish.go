package publish

import (
	"context"
	"errors"
	"fmt"
	"html"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Site is what a publish asks and how it reads the answers.
type Site struct {
	// Handler is the site's own handler, asked in the process: a file
	// holds what it answers a reader with no credentials.
	Handler http.Handler
	// Seeds are the paths the crawl starts from; each must answer 200.
	Seeds []string
	// Skip says a path is not static (a search, a sign-in): it is neither
	// asked nor written, and the links to it are left as they are.
	Skip func(path string) bool
	// Origin is the site's address as its readers reach it
	// (https://charts.example): absolute links under it are the site's
	// own. "" when the site's links are all relative.
	Origin string
	// Order is a path's place in the writing, lower first: the files
	// pages link before the pages, the pages that lead to others after
	// them (doc.go).
	Order func(path, contentType string) int
	// Progress is told the pages asked of those known so far; nil for
	// none.
	Progress func(done, known int)
	// Pause waits d, or until ctx ends, before a page the site answered
	// busy (503 or 429) is asked again, as its Retry-After says; nil asks
	// no page twice.
	Pause func(ctx context.Context, d time.Duration) error
	// Only, when not nil, makes the publish a partial one, over a
	// directory published whole before: only these paths are asked (what
	// the data changed), with the pages they link that the directory does
	// not hold yet; no other file is asked, rewritten or removed, but for
	// a path of Only the site no longer answers with a page, whose file
	// goes. Seeds are not asked.
	Only []string
	// Again says a path a partial publish finds linked is asked even when
	// the directory holds it (a part of a sitemap the index names).
	Again func(path string) bool
}

// busyTries is how many times a page the site answers busy is asked: a
// publish on a loaded host waits its turn like a reader, never failing
// on the first busy answer.
const busyTries = 10

// Result is what a publish did.
type Result struct {
	// Files are the site's files now, Bytes their size.
	Files int
	Bytes int64
	// Written are the files whose bytes changed, WrittenBytes their size;
	// the rest were left as they were.
	Written      int
	WrittenBytes int64
	// Removed are the files a previous publish wrote that no page links
	// any more.
	Removed int
	// Dead are the links to a path the site does not answer with a page
	// (a 404 or a redirect), left as the server leaves them.
	Dead int
}

// page is one path of the site as the crawl found it.
type page struct {
	path  string // as asked, escaped
	file  string // relative to the directory, slash-separated
	ctype string
	links []string
	size  int64
	order int
	temp  string // the changed bytes beside file; "" when unchanged
	gone  bool   // a partial publish's page the site no longer answers: its file goes
}

// Publish writes site into dir (doc.go): every page reachable from the
// seeds, each changed file renamed into place in the site's order, then
// what no page links any more removed.
func Publish(ctx context.Context, dir string, site Site) (Result, error) {
	return publish(ctx, &writer{dir: dir}, site)
}

// ErrBusy is a directory another publish is writing into.
var ErrBusy = errors.New("another publish is writing into the directory")

func publish(ctx context.Context, w *writer, site Site) (res Result, err error) {
	unlock, err := lock(w.dir)
	if err != nil {
		return res, err
	}
	defer unlock()
	if err := w.sweepTemps(); err != nil {
		return res, err
	}
	defer func() {
		if err != nil {
			w.dropTemps()
		}
	}()
	if site.Only == nil {
		pages, dead, err := crawl(ctx, w, site, site.Seeds, nil)
		if err != nil {
			return res, err
		}
		res.Dead = dead
		return w.commit(pages, res)
	}
	old, err := w.readManifest()
	if err != nil {
		return res, err
	}
	held := map[string]bool{}
	for _, f := range old {
		held[f] = true
	}
	pages, dead, err := crawl(ctx, w, site, nil, held)
	if err != nil {
		return res, err
	}
	res.Dead = dead
	return w.commitPart(pages, old, res)
}

// heldFile is the file the directory holds for path p, if any: p itself
// when its last segment has an extension, else the index of p's
// directory, of whichever type it was written as.
func heldFile(held map[string]bool, p string) (string, bool) {
	u, err := url.PathUnescape(p)
	if err != nil {
		return "", false
	}
	rel := strings.TrimPrefix(u, "/")
	if path.Ext(rel) != "" {
		return rel, held[rel]
	}
	for _, ext := range slices.Sorted(maps.Values(extensions)) {
		if f := path.Join(rel, "index"+ext); held[f] {
			return f, true
		}
	}
	return "", false
}

// crawl asks site for every path reachable from seeds, staging the
// changed bytes of each beside its file. A partial publish (held, the
// files the directory holds) starts from site.Only instead and follows
// only the links to a path the directory does not hold; a path of Only
// the site answers 404 or with a redirect is a page gone, its file named
// by a page of no bytes.
func crawl(ctx context.Context, w *writer, site Site, seeds []string, held map[string]bool) ([]*page, int, error) {
	seen := map[string]bool{}
	queue := slices.Clone(seeds)
	if held != nil {
		queue = slices.Clone(site.Only)
	}
	for _, p := range queue {
		if _, ok := heldFile(held, p); held == nil || ok {
			seen[p] = true
		}
	}
	only := len(queue)
	if held == nil {
		only = 0
	}
	nseeds := len(seeds)
	var pages []*page
	dead := 0
	files := map[string]string{}
	for i := 0; i < len(queue); i++ {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if _, ok := heldFile(held, queue[i]); i < only && !ok {
			continue // not a page of the site before: asked if a page asked now links it
		}
		pg, body, status, err := ask(ctx, site, queue[i])
		switch {
		case err != nil:
			return nil, 0, err
		case status != http.StatusOK && i < only && (status == http.StatusNotFound || status == http.StatusGone || status/100 == 3):
			if f, ok := heldFile(held, queue[i]); ok {
				pages = append(pages, &page{path: queue[i], file: f, gone: true})
			}
			continue
		case status != http.StatusOK && i >= nseeds && (status == http.StatusNotFound || status/100 == 3):
			dead++
			continue
		case status != http.StatusOK:
			return nil, 0, fmt.Errorf("publish %s: the site answered %d", queue[i], status)
		}
		if other, ok := files[pg.file]; ok {
			return nil, 0, fmt.Errorf("publish %s: its file %s is %s's too", pg.path, pg.file, other)
		}
		files[pg.file] = pg.path
		if pg.temp, err = w.stage(pg.file, body); err != nil {
			return nil, 0, err
		}
		pages = append(pages, pg)
		for _, l := range pg.links {
			if _, ok := heldFile(held, l); held != nil && ok && (site.Again == nil || !site.Again(l)) {
				continue
			}
			if !seen[l] {
				seen[l] = true
				queue = append(queue, l)
			}
		}
		if site.Progress != nil {
			site.Progress(i+1, len(queue))
		}
	}
	return pages, dead, nil
}

// ask asks the site for p as a reader with no credentials would, again
// while it answers busy.
func ask(ctx context.Context, site Site, p string) (*page, []byte, int, error) {
	var req *http.Request
	var rec *httptest.ResponseRecorder
	for try := 1; ; try++ {
		req = httptest.NewRequestWithContext(ctx, http.MethodGet, p, nil)
		req.RemoteAddr = "127.0.0.1:1" // this process, not a reader
		rec = httptest.NewRecorder()
		site.Handler.ServeHTTP(rec, req)
		busy := rec.Code == http.StatusServiceUnavailable || rec.Code == http.StatusTooManyRequests
		if !busy || site.Pause == nil || try == busyTries {
			break
		}
		if err := site.Pause(ctx, retryAfter(rec.Header())); err != nil {
			return nil, nil, 0, err
		}
	}
	if rec.Code != http.StatusOK {
		return nil, nil, rec.Code, nil
	}
	ctype := rec.Header().Get("Content-Type")
	file, err := File(req.URL.Path, ctype)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("publish %s: %w", p, err)
	}
	body := rec.Body.Bytes()
	pg := &page{path: p, file: file, ctype: ctype, size: int64(len(body)), links: links(site, req.URL, ctype, body)}
	if site.Order != nil {
		pg.order = site.Order(req.URL.Path, ctype)
	}
	return pg, body, rec.Code, nil
}

// retryAfter is the wait a busy answer asks for, a second when it says
// none.
func retryAfter(h http.Header) time.Duration {
	if n, err := strconv.Atoi(h.Get("Retry-After")); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return time.Second
}

// linkAttr finds the addresses a page, a feed or a stylesheet names: its
// links and images, a sitemap's locations, a stylesheet's url().
var linkAttr = regexp.MustCompile(`(?:href|src)="([^"]*)"|<loc>([^<]*)</loc>|url\(['"]?([^'")]*)['"]?\)`)

// links are the site's own paths body names, each once, without their
// query or fragment (a static host serves the path whatever the query),
// those Skip names left out.
func links(site Site, base *url.URL, ctype string, body []byte) []string {
	if !textual(ctype) {
		return nil
	}
	var out []string
	named := map[string]bool{}
	for _, m := range linkAttr.FindAllSubmatch(body, -1) {
		raw := html.UnescapeString(string(m[1]) + string(m[2]) + string(m[3]))
		p, ok := own(site.Origin, base, raw)
		if ok && (site.Skip == nil || !site.Skip(p)) && !named[p] {
			named[p] = true
			out = append(out, p)
		}
	}
	return out
}

// own is raw, named by the page at base, as a path of the site, escaped,
// when it is one.
func own(origin string, base *url.URL, raw string) (string, bool) {
	if origin != "" && strings.HasPrefix(raw, origin) {
		raw = strings.TrimPrefix(raw, origin)
		if raw == "" || raw[0] == '?' || raw[0] == '#' {
			raw = "/" + raw
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" {
		return "", false
	}
	u = base.ResolveReference(u)
	if u.Path == "" || path.Clean(u.Path) != u.Path {
		return "", false
	}
	return u.EscapedPath(), true
}

// textual says a body may name links: a page, a feed, a sitemap, a
// stylesheet.
func textual(ctype string) bool {
	mt, _, _ := mime.ParseMediaType(ctype)
	return mt == "text/html" || mt == "text/css" || strings.HasSuffix(mt, "xml")
}

// extensions name an index file by what it holds.
var extensions = map[string]string{
	"text/html":            ".html",
	"application/json":     ".json",
	"application/atom+xml": ".atom",
	"application/xml":      ".xml",
	"text/xml":             ".xml",
	"text/plain":           ".txt",
	"text/css":             ".css",
	"image/svg+xml":        ".svg",
}

// File is the file that holds the answer to p (unescaped) of type
// ctype, relative to the directory: p itself when its last segment has
// an extension, else the index of a directory named p (doc.go).
func File(p, ctype string) (string, error) {
	if !strings.HasPrefix(p, "/") || path.Clean(p) != p {
		return "", fmt.Errorf("not a clean absolute path: %q", p)
	}
	rel := strings.TrimPrefix(p, "/")
	if path.Ext(rel) != "" {
		return rel, nil
	}
	mt, _, _ := mime.ParseMediaType(ctype)
	ext, ok := extensions[mt]
	if !ok {
		return "", fmt.Errorf("no file name for an answer of type %q", ctype)
	}
	return path.Join(rel, "index"+ext), nil
}
