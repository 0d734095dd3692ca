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
// Only a 200 is kept, under a bound in bytes and in answers (evict.go): a
// URL that answers 404, 410 or 400 leaves nothing behind, and URLs asked
// for once push out one another, never the pages readers keep asking for.

// markEvery is how often the store's mark is read: a run that lands shows
// within it.
const markEvery = time.Second

// answers are the kept answers by request URI (evict.go bounds them),
// and the builds under way, so that many requests for an answer not kept
// wait for one build.
type answers struct {
	set *keptSet

	mu       sync.Mutex
	building map[string]*flight

	markMu sync.Mutex
	mark   string
	markAt time.Time

	builds atomic.Int64 // how many answers were built: tests read it
}

// flight is one build under way: done closes when it is over, a then
// being the answer kept, nil when it was not one to keep.
type flight struct {
	done chan struct{}
	a    *answer
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

// land ends the build of key with its answer (nil: none kept).
func (a *answers) land(key string, f *flight, ans *answer) {
	f.a = ans
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
}

// currentMark is the store's data mark, read at most once per markEvery;
// "" when it cannot be read (nothing is then kept).
func (s *Server) currentMark(ctx context.Context, now time.Time) string {
	a := &s.answers
	a.markMu.Lock()
	defer a.markMu.Unlock()
	if !a.markAt.IsZero() && now.Sub(a.markAt) < markEvery && now.After(a.markAt) {
		return a.mark
	}
	m, err := s.cfg.DB.DataMark(ctx)
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
	return &keptHandler{s: s, build: s.deadline(h)}
}

// keptVariants is kept for a page whose answer also depends on the
// request's headers: one kept answer per key variant finds (the handler
// says Vary).
func (s *Server) keptVariants(h http.HandlerFunc, variant func(*http.Request, string) (*http.Request, string, bool)) http.Handler {
	return &keptHandler{s: s, build: s.deadline(h), variant: variant}
}

func (k *keptHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := k.s
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.transport(w, r, k.build)
		return
	}
	now := s.cfg.Now()
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
	if !a.fresh(mark, minute) {
		if a = s.build(w, r, k.build, uri, a, mark, minute); a == nil {
			return
		}
	}
	s.serveAnswer(w, r, a)
}

// build makes uri's answer when it is stale (before, nil when none is
// kept), or waits for the build under way: the answer to serve, or nil
// when this one was not to be kept and has been sent.
func (s *Server) build(w http.ResponseWriter, r *http.Request, h http.Handler, uri string, before *answer, mark string, minute time.Time) *answer {
	f, lead := s.answers.join(uri)
	if !lead {
		<-f.done
		if f.a.fresh(mark, minute) {
			return f.a
		}
		s.send(w, r, s.buildAnswer(r, h))
		return nil
	}
	if a := s.answers.set.get(uri); a.fresh(mark, minute) { // built while this request looked
		s.answers.land(uri, f, a)
		return a
	}
	b := s.buildAnswer(r, h)
	if b.status != http.StatusOK || !strings.HasPrefix(b.header.Get("Cache-Control"), revalidate) {
		s.answers.land(uri, f, nil)
		s.send(w, r, b)
		return nil
	}
	a := newAnswer(b, mark, minute, before, s.cfg.Now())
	s.answers.set.put(uri, a)
	s.answers.land(uri, f, a)
	return a
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

// newAnswer keeps b's bytes with their ETag and gzip form; bytes the same
// as the answer before keep its first-built time, which Last-Modified
// says.
func newAnswer(b *buffered, mark string, minute time.Time, before *answer, now time.Time) *answer {
	body := bytes.Clone(b.buf.Bytes())
	sum := sha256.Sum256(body)
	a := &answer{mark: mark, minute: minute, header: b.header, body: body,
		etag: `W/"` + hex.EncodeToString(sum[:12]) + `"`, modified: now.Truncate(time.Second)}
	switch {
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
