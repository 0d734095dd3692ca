package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The readers' answers (the front page, charts, videos, search, and their
// JSON) change only when the store's data does, and with the ages they
// show. So each is built once per change of the store's mark
// (store.DataMark) and per minute (the finest age a page shows, "5
// minutes ago"), kept with its ETag and its gzip form, and served from
// memory; a conditional request is answered from what is kept, without
// building anything.
//
// A reader never waits for a page to be built again: while the page kept
// is out of date, it is served as it is, and one build of its new copy
// runs beside the requests (one per page at a time, and at most one per
// rebuildEvery, however often runs land), which then takes its place.
// Only a page with no copy yet is built in a request, once for all who
// ask for it meanwhile (docs/api.md, "The dashboard").
//
// Only a 200 is kept, under a bound in bytes and in answers (evict.go): a
// URL that answers 404, 410 or 400 leaves nothing behind, and URLs asked
// for once push out one another, never the pages readers keep asking for.

// markEvery is how often the store's mark is read: a run that lands is
// seen within it.
const markEvery = time.Second

// rebuildEvery is the least time between the starts of two builds of one
// kept answer: a daemon at every region lands a run every few seconds,
// and a page that reads every region's chart is not built for each.
const rebuildEvery = 5 * time.Second

// answers are the kept answers by request URI (evict.go bounds them),
// and the builds under way, so that many requests for an answer not kept
// wait for one build.
type answers struct {
	set *keptSet

	mu       sync.Mutex
	building map[string]*flight

	markMu      sync.Mutex
	mark        string
	markAt      time.Time
	markReading bool // a request reads the mark now: the others take the one known

	builds   atomic.Int64 // how many answers were built: tests and the metrics read it
	rebuilds atomic.Int64 // of them, built beside the requests for a page kept
	waited   atomic.Int64 // requests that waited for a page's first build

	// slow, when set, runs before each build's handler with its request,
	// under its deadline: the tests make a build slow with it.
	slow func(r *http.Request)
	// rebuilt, when set, is called when a build beside the requests is
	// over, with the URI's key: the tests await it.
	rebuilt func(key string)
}

// flight is one build under way: done closes when it is over, a then
// being the answer kept, nil when it was not one to keep (b is then what
// was built, for those who waited for it).
type flight struct {
	done chan struct{}
	a    *answer
	b    *buffered
}

// join is the build of key under way, and whether the caller is to run it
// (none was).
func (a *answers) join(key string) (*flight, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if f, ok := a.building[key]; ok {
		return f, false
	}
	if a.building == nil {
		a.building = map[string]*flight{}
	}
	f := &flight{done: make(chan struct{})}
	a.building[key] = f
	return f, true
}

// land ends the build of key with its answer (nil: none kept, b what
// was built instead).
func (a *answers) land(key string, f *flight, ans *answer, b *buffered) {
	f.a, f.b = ans, b
	a.mu.Lock()
	delete(a.building, key)
	a.mu.Unlock()
	close(f.done)
}

// answer is a built 200: its header, its bytes plain and compressed, and
// what it was built under.
type answer struct {
	mark     string
	minute   time.Time
	header   http.Header
	body, gz []byte
	etag     string
	modified time.Time // when these bytes were first built; zero: not said
	built    time.Time // when the build of this copy, or the last try at a new one, began
}

// currentMark is the store's data mark, read at most once per markEvery
// by one request while the others take the mark known (a busy store
// holds up no reader that has a copy to be served); "" when it cannot be
// read (nothing is then kept).
func (s *Server) currentMark(ctx context.Context, now time.Time) string {
	a := &s.answers
	a.markMu.Lock()
	if a.mark != "" && (a.markReading || now.Sub(a.markAt) < markEvery && !now.Before(a.markAt)) {
		defer a.markMu.Unlock()
		return a.mark
	}
	a.markReading = true
	a.markMu.Unlock()
	m, err := s.cfg.DB.DataMark(ctx)
	a.markMu.Lock()
	defer a.markMu.Unlock()
	a.markReading = false
	if err != nil {
		s.cfg.Logger.Debug("web: read the data mark: answers are built per request", "err", err)
		return ""
	}
	a.mark, a.markAt = m, now
	return m
}

// keptHandler serves a reader's route from the kept answers; it sends its
// own answers (Server.routes does not put it through transport).
type keptHandler struct {
	s     *Server
	build http.Handler
	// variant, when set, says which of the URI's answers r gets (its key
	// among them, found without reading the store), with the request to
	// build it from; keep false: r's answer is not kept.
	variant func(r *http.Request, mark string) (built *http.Request, key string, keep bool)
}

// kept is a reader's answer built once per change of what it shows and
// served from memory.
func (s *Server) kept(h http.HandlerFunc) http.Handler {
	return &keptHandler{s: s, build: s.deadline(s.slowed(h))}
}

// keptVariants is kept for a page whose answer also depends on the
// request's headers: one kept answer per key variant finds (the handler
// says Vary).
func (s *Server) keptVariants(h http.HandlerFunc, variant func(*http.Request, string) (*http.Request, string, bool)) http.Handler {
	return &keptHandler{s: s, build: s.deadline(s.slowed(h)), variant: variant}
}

// slowed is h after the tests' hook, when one is set (answers.slow).
func (s *Server) slowed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.answers.slow != nil {
			s.answers.slow(r)
		}
		h(w, r)
	}
}

func (k *keptHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := k.s
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.transport(w, r, k.build)
		return
	}
	now := s.cfg.Clock.Now()
	var mark string
	if s.cfg.DB != nil {
		mark = s.currentMark(r.Context(), now)
	}
	if mark == "" {
		s.transport(w, r, k.build)
		return
	}
	if s.operatorHeader(r) { // drawn for this operator alone (personal.go)
		if k.variant != nil {
			r, _, _ = k.variant(r, mark)
		}
		s.transport(w, r, k.build)
		return
	}
	uri, minute := r.URL.RequestURI(), now.Truncate(time.Minute)
	if k.variant != nil {
		built, key, keep := k.variant(r, mark)
		if !keep {
			s.transport(w, built, k.build)
			return
		}
		r, uri = built, uri+"\x00"+key
	}
	a := s.answers.set.get(uri)
	switch {
	case a.fresh(mark, minute):
	case a != nil:
		s.rebuild(r, k.build, uri, a, mark, minute, now)
	default:
		if a = s.build(w, r, k.build, uri, mark, minute); a == nil {
			return
		}
	}
	s.serveAnswer(w, r, a)
}

// build makes the first answer of uri, none being kept, or waits for the
// build under way: the answer to serve, or nil when it was not one to
// keep and has been sent. The build runs under the request's deadline,
// so a wait here is bounded by it too.
func (s *Server) build(w http.ResponseWriter, r *http.Request, h http.Handler, uri string, mark string, minute time.Time) *answer {
	f, lead := s.answers.join(uri)
	if !lead {
		s.answers.waited.Add(1)
		<-f.done
		if f.a != nil {
			return f.a
		}
		s.send(w, r, f.b.clone())
		return nil
	}
	if a := s.answers.set.get(uri); a != nil { // kept while this request looked
		s.answers.land(uri, f, a, nil)
		return a
	}
	s.answers.waited.Add(1)
	started := s.cfg.Clock.Now()
	b := s.buildAnswer(r, h)
	if !keepable(b) {
		s.answers.land(uri, f, nil, b.clone())
		s.send(w, r, b)
		return nil
	}
	a := newAnswer(b, mark, minute, nil, s.cfg.Clock.Now())
	a.built = started
	s.answers.set.put(uri, a)
	s.answers.land(uri, f, a, nil)
	return a
}

// rebuild starts the build of uri's new answer beside the requests, its
// copy before being served meanwhile: unless one is under way, or the
// copy's build began less than rebuildEvery ago. The build reads r's
// values, not its life: it goes on when r is over, under its own
// deadline.
func (s *Server) rebuild(r *http.Request, h http.Handler, uri string, before *answer, mark string, minute, now time.Time) {
	if since := now.Sub(before.built); since < rebuildEvery && since >= 0 {
		return
	}
	f, lead := s.answers.join(uri)
	if !lead {
		return
	}
	r = r.Clone(context.WithoutCancel(r.Context()))
	s.answers.rebuilds.Add(1)
	go func() {
		b := s.buildBeside(r, h)
		var a *answer
		switch {
		case keepable(b):
			a = newAnswer(b, mark, minute, before, s.cfg.Clock.Now())
			a.built = now
			s.answers.set.put(uri, a)
		case b.status >= http.StatusInternalServerError:
			// Not built this time (out of time, the store busy, a
			// failure): the copy
			// before stays, tried again after rebuildEvery.
			again := *before
			again.built = now
			s.answers.set.put(uri, &again)
		default:
			// The page is gone or wrong now (a video deleted, a region
			// no longer charted): its copy goes with it, and the next
			// request builds what it is now.
			s.answers.set.drop(uri)
		}
		s.answers.land(uri, f, a, nil)
		if s.answers.rebuilt != nil {
			s.answers.rebuilt(uri)
		}
	}()
}

// buildBeside is buildAnswer for a build beside the requests: a panic,
// which net/http would have recovered in a request, is recovered here
// too, logged and taken for a 500, so that it ends no process.
func (s *Server) buildBeside(r *http.Request, h http.Handler) (b *buffered) {
	defer func() {
		if p := recover(); p != nil {
			s.cfg.Logger.Error("web: a page's build beside the requests panicked; its copy stays", "uri", r.URL.RequestURI(), "panic", p)
			b = &buffered{header: http.Header{}, status: http.StatusInternalServerError}
		}
	}()
	return s.buildAnswer(r, h)
}

// clone is a copy of b that another request may send: sending adds to
// the header it is given.
func (b *buffered) clone() *buffered {
	c := &buffered{header: b.header.Clone(), status: b.status, wrote: b.wrote}
	c.buf.Write(b.buf.Bytes())
	return c
}

// keepable reports whether b is an answer to keep: a 200 that is to be
// revalidated.
func keepable(b *buffered) bool {
	return b.status == http.StatusOK && strings.HasPrefix(b.header.Get("Cache-Control"), revalidate)
}

// fresh reports whether a was built under mark in this minute.
func (a *answer) fresh(mark string, minute time.Time) bool {
	return a != nil && a.mark == mark && a.minute.Equal(minute)
}

// buildAnswer runs the handler into a buffer, counting the build.
func (s *Server) buildAnswer(r *http.Request, h http.Handler) *buffered {
	s.answers.builds.Add(1)
	b := &buffered{header: http.Header{}, status: http.StatusOK}
	h.ServeHTTP(b, forKept(r))
	return b
}

// setModified says t, when what an answer shows last changed, as its
// Last-Modified: a kept answer keeps it rather than the time it was built
// (newAnswer), so that a copy built again after a restart is not new to a
// client that asks If-Modified-Since. The epoch (no content yet) says
// nothing.
func setModified(h http.Header, t time.Time) {
	if t.After(time.Unix(0, 0)) {
		h.Set("Last-Modified", t.UTC().Format(http.TimeFormat))
	}
}

// newAnswer keeps b's bytes with their ETag and gzip form. Its
// Last-Modified is the content's time when the handler said it
// (setModified); else bytes the same as the answer before keep its
// first-built time.
func newAnswer(b *buffered, mark string, minute time.Time, before *answer, now time.Time) *answer {
	body := bytes.Clone(b.buf.Bytes())
	sum := sha256.Sum256(body)
	a := &answer{mark: mark, minute: minute, header: b.header, body: body,
		etag: `W/"` + hex.EncodeToString(sum[:12]) + `"`, modified: now.Truncate(time.Second)}
	content, err := http.ParseTime(b.header.Get("Last-Modified"))
	switch {
	case err == nil:
		a.modified = content
		if before != nil && before.etag == a.etag {
			a.gz = before.gz
		}
	case before != nil && before.etag == a.etag:
		a.modified, a.gz = before.modified, before.gz
	case before != nil && !a.modified.After(before.modified):
		// New bytes within the second the old ones were built: a later
		// time, so that If-Modified-Since never takes them for the old;
		// none at all while that time is still ahead of the clock.
		a.modified = before.modified.Add(time.Second)
		if a.modified.After(now) {
			a.modified = time.Time{}
		}
	}
	if a.gz == nil && len(body) >= compressMin && compressible(b.header.Get("Content-Type")) {
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.DefaultCompression) // the level is valid
		zw.Write(body)
		zw.Close()
		a.gz = z.Bytes()
	}
	return a
}

// serveAnswer sends a kept answer: http.ServeContent answers a conditional
// request (If-None-Match, If-Modified-Since) and ranges from it.
func (s *Server) serveAnswer(w http.ResponseWriter, r *http.Request, a *answer) {
	h := w.Header()
	for k, v := range a.header {
		h[k] = v
	}
	h.Set("ETag", a.etag)
	vary := "Accept-Encoding"
	if v := a.header.Get("Vary"); v != "" {
		vary = v + ", " + vary
	}
	h.Set("Vary", vary) // a fresh value: a.header's is kept, never added to
	if s.private(r) {
		h.Set("Cache-Control", "private, "+revalidate)
	}
	body := a.body
	if a.gz != nil && acceptsGzip(r) {
		body = a.gz
		h.Set("Content-Encoding", "gzip")
	}
	http.ServeContent(w, r, "", a.modified, bytes.NewReader(body))
}
